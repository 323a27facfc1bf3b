package breakerotel

import (
	"time"

	"go.opentelemetry.io/otel/metric"

	"github.com/halfopen/breaker"
)

// overrideSeries is the attributes of the override gauges of one override, or of those
// counted together under one breaker.resource.
type overrideSeries struct{ resource, force string }

// observeOverrides reports breaker.override and breaker.override.end for the overrides in force
// in snap. Their resources take names of the bound, in name order, as calls do: the overrides
// of names past it are counted together as OverflowResource, by force, with the latest end.
func (ins *Instruments) observeOverrides(o metric.Observer, snap *breaker.Snapshot) {
	count := make(map[overrideSeries]int64)
	end := make(map[overrideSeries]time.Time)
	for i := range snap.Resources {
		ov := snap.Resources[i].Override
		if ov == nil {
			continue
		}
		s := overrideSeries{resource: ins.resourceSets(ov.Resource).resource.Value.AsString(), force: ov.Force.String()}
		count[s]++
		if ov.Until.After(end[s]) {
			end[s] = ov.Until
		}
	}
	for s, n := range count {
		opt := metric.WithAttributeSet(ins.set(ResourceKey.String(s.resource), ForceKey.String(s.force)))
		o.ObserveInt64(ins.override, n, opt)
		o.ObserveFloat64(ins.overrideEnd, unixSeconds(end[s]), opt)
	}
}

// unixSeconds is t in seconds since the Unix epoch.
func unixSeconds(t time.Time) float64 {
	return float64(t.Unix()) + float64(t.Nanosecond())/1e9
}
