package breakerprom

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/halfopen/breaker"
)

// overrideSeries is the labels of the override gauges of one override, or of those counted
// together under one resource label.
type overrideSeries struct{ resource, force string }

// collectOverrides sends breaker_override and breaker_override_end_timestamp_seconds for the
// overrides in force in snap. Their resources take names of the bound, in name order, as calls
// do: the overrides of names past it are counted together under OverflowResource, by force,
// with the latest end.
func (c *Collector) collectOverrides(snap *breaker.Snapshot, ch chan<- prometheus.Metric) {
	count := make(map[overrideSeries]int)
	end := make(map[overrideSeries]time.Time)
	for i := range snap.Resources {
		o := snap.Resources[i].Override
		if o == nil {
			continue
		}
		s := overrideSeries{resource: c.entryOf(o.Resource).label, force: o.Force.String()}
		count[s]++
		if o.Until.After(end[s]) {
			end[s] = o.Until
		}
	}
	for s, n := range count {
		ch <- prometheus.MustNewConstMetric(c.override, prometheus.GaugeValue, float64(n), s.resource, s.force)
		ch <- prometheus.MustNewConstMetric(c.overrideEnd, prometheus.GaugeValue, unixSeconds(end[s]),
			s.resource, s.force)
	}
}

// unixSeconds is t in seconds since the Unix epoch, as Prometheus timestamps are.
func unixSeconds(t time.Time) float64 {
	return float64(t.Unix()) + float64(t.Nanosecond())/1e9
}
