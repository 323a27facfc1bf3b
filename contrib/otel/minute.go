package breakerotel

import (
	"time"

	"go.opentelemetry.io/otel/metric"

	"github.com/halfopen/breaker"
)

// observeLastMinute reports breaker.call.duration.max from the last minute of each resource's
// sets at the time of snap, and breaker.uncalled from the names called in it, once the
// Instruments have watched the Manager for a minute since since. Of names
// that share a breaker.resource, it takes the longest call of them all; the calls of names past
// the bounds count as OverflowResource.
func (ins *Instruments) observeLastMinute(o metric.Observer, snap *breaker.Snapshot, since time.Time) {
	now := snap.At
	called := map[string]uint64{}
	longest := map[string]time.Duration{} // by breaker.resource
	add := func(name string, s *resourceSets) {
		calls, rtMax, ran := s.minute.Read(now)
		if calls > 0 {
			called[name] += calls
		}
		resource := s.resource.Value.AsString()
		if held, ok := longest[resource]; ran && (!ok || rtMax > held) {
			longest[resource] = rtMax
		}
	}
	ins.resources.Range(func(name, s any) bool {
		add(name.(string), s.(*resourceSets))
		return true
	})
	add(OverflowResource, ins.overflow)
	for resource, rtMax := range longest {
		opt := metric.WithAttributeSet(ins.set(ResourceKey.String(resource)))
		o.ObserveFloat64(ins.callMax, rtMax.Seconds(), opt)
	}
	ins.observeUncalled(o, snap, called, now, since)
}
