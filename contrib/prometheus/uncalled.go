package breakerprom

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakerdebug"
)

// sendUncalled sends breaker_uncalled, 1 for each name of snap configured and not called, as
// breakerdebug.Uncalled finds them among called, the names called in the last minute at now:
// the status page's "uncalled", as a metric. It sends nothing in the first minute since c began
// to watch the Manager (since, by its clock), when a name without calls may just not have had
// its turn yet; nor while calls past the bounds counted in the minute, under OverflowResource,
// which may be any name's.
func (c *Collector) sendUncalled(snap *breaker.Snapshot, called map[string]uint64, now, since time.Time,
	ch chan<- prometheus.Metric) {
	if now.Before(since.Add(time.Minute)) {
		return
	}
	sent := map[[2]string]bool{} // names that differ only in bytes not UTF-8 share their labels
	for _, u := range breakerdebug.Uncalled(snap, called) {
		labels := [2]string{labelValue(u.Name), labelValue(u.Nearest)}
		if !sent[labels] {
			sent[labels] = true
			ch <- prometheus.MustNewConstMetric(c.uncalled, prometheus.GaugeValue, 1, labels[0], labels[1])
		}
	}
}
