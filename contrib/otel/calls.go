package breakerotel

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakerview"
)

// callObserver feeds the calls of a Manager to the calls counter and the duration histogram.
type callObserver struct{ ins *Instruments }

// resourceSets are the measurement options of one resource label, built when the name is first
// seen. The slices are passed as variadic arguments as they are, so a call allocates nothing.
type resourceSets struct {
	passed                []metric.AddOption
	failed, refused, slow []metric.AddOption
	blocked               [len(breakerview.Causes)][]metric.AddOption
	wouldReject           [len(breakerview.DryModes)][]metric.AddOption
	duration              []metric.RecordOption
}

// OnCall counts c, in its resource's attribute sets and its last minute; see the outcome
// constants.
func (o callObserver) OnCall(c breaker.CallInfo) {
	ins := o.ins
	if ins.closed.Load() {
		return
	}
	e := ins.calls.Record(c)
	if e == nil {
		return // not a call: its context was done before it was admitted
	}
	sets := e.Value()
	ctx := context.Background() // CallInfo carries no context
	if c.Blocked != nil {
		if k := c.Blocked.Kind(); int(k) < len(sets.blocked) {
			ins.callsTotal.Add(ctx, 1, sets.blocked[k]...)
		}
		return
	}
	ins.callsTotal.Add(ctx, 1, sets.passed...)
	switch c.Outcome {
	case breaker.Failure:
		ins.callsTotal.Add(ctx, 1, sets.failed...)
	case breaker.Refused:
		ins.callsTotal.Add(ctx, 1, sets.refused...)
	}
	if c.Slow {
		ins.callsTotal.Add(ctx, 1, sets.slow...)
	}
	if c.DryRun != nil {
		ins.callsTotal.Add(ctx, 1, sets.wouldReject[breakerview.DryModeOf(c.DryRun)]...)
	}
	ins.duration.Record(ctx, c.RT.Seconds(), sets.duration...)
}

// buildSets builds the measurement options of the breaker.resource value label, which is
// UTF-8.
func (ins *Instruments) buildSets(label string) *resourceSets {
	res := ResourceKey.String(label)
	add := func(kvs ...attribute.KeyValue) []metric.AddOption {
		return []metric.AddOption{metric.WithAttributeSet(ins.set(append([]attribute.KeyValue{res}, kvs...)...))}
	}
	s := &resourceSets{
		passed:   add(OutcomeKey.String(OutcomePassed)),
		failed:   add(OutcomeKey.String(OutcomeFailed)),
		refused:  add(OutcomeKey.String(OutcomeRefused)),
		slow:     add(OutcomeKey.String(OutcomeSlow)),
		duration: []metric.RecordOption{metric.WithAttributeSet(ins.set(res))},
	}
	for i, cause := range breakerview.Causes {
		s.blocked[i] = add(OutcomeKey.String(OutcomeBlocked), CauseKey.String(cause.String()))
	}
	for i, mode := range breakerview.DryModes {
		s.wouldReject[i] = add(OutcomeKey.String(OutcomeWouldReject), ModeKey.String(mode.String()))
	}
	return s
}
