package breakerprom

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/halfopen/breaker"
)

// collectLastMinute sends breaker_call_duration_max_seconds from the last minute of each
// resource entry, and breaker_uncalled from the names called in it, unless snap is nil: at the
// Snapshot's time, or the system clock's while c watches no Manager (whose default clock that
// is). Of names that share a resource label, the label takes the longest call
// of them all; the names of calls past the bounds count as OverflowResource.
func (c *Collector) collectLastMinute(snap *breaker.Snapshot, since time.Time, ch chan<- prometheus.Metric) {
	now := time.Now()
	if snap != nil {
		now = snap.At
	}
	called := map[string]uint64{}
	longest := map[string]time.Duration{} // by resource label
	add := func(name string, e *resourceEntry) {
		calls, rtMax, ran := e.minute.Read(now)
		if calls > 0 {
			called[name] += calls
		}
		if held, ok := longest[e.label]; ran && (!ok || rtMax > held) {
			longest[e.label] = rtMax
		}
	}
	c.resources.Range(func(name, e any) bool {
		add(name.(string), e.(*resourceEntry))
		return true
	})
	add(OverflowResource, c.overflow)
	for label, rtMax := range longest {
		ch <- prometheus.MustNewConstMetric(c.callMax, prometheus.GaugeValue, rtMax.Seconds(), label)
	}
	if snap != nil {
		c.sendUncalled(snap, called, now, since, ch)
	}
}
