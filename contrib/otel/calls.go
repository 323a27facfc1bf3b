package breakerotel

import (
	"context"

	"go.opentelemetry.io/otel/metric"

	"github.com/halfopen/breaker"
)

// callObserver feeds the calls of a Manager to the calls counter and the duration histogram.
type callObserver struct{ ins *Instruments }

var _ breaker.CallObserver = callObserver{}

// resourceSets are the measurement options of one resource, built on its first call. The
// slices are passed as variadic arguments as they are, so a call allocates nothing.
type resourceSets struct {
	passed, blocked, failed, slow []metric.AddOption
	duration                      []metric.RecordOption
}

// OnCall counts c; see the outcome constants.
func (o callObserver) OnCall(c breaker.CallInfo) {
	ins := o.ins
	if ins.closed.Load() {
		return
	}
	sets := ins.resourceSets(c.Resource)
	ctx := context.Background() // CallInfo carries no context
	if c.Blocked != nil {
		ins.calls.Add(ctx, 1, sets.blocked...)
		return
	}
	ins.calls.Add(ctx, 1, sets.passed...)
	if c.Outcome == breaker.Failure {
		ins.calls.Add(ctx, 1, sets.failed...)
	}
	if c.Slow {
		ins.calls.Add(ctx, 1, sets.slow...)
	}
	ins.duration.Record(ctx, c.RT.Seconds(), sets.duration...)
}

// resourceSets returns the measurement options of resource, building them on its first call.
func (ins *Instruments) resourceSets(resource string) *resourceSets {
	if s, ok := ins.resources.Load(resource); ok {
		return s.(*resourceSets)
	}
	return ins.newResourceSets(resource)
}

// newResourceSets is the slow path of resourceSets, kept out of line so the fast path stays
// small. Two goroutines may build the sets of one resource at once; one wins and both use it.
func (ins *Instruments) newResourceSets(resource string) *resourceSets {
	res := ResourceKey.String(resource)
	outcome := func(name string) []metric.AddOption {
		return []metric.AddOption{metric.WithAttributeSet(ins.set(res, OutcomeKey.String(name)))}
	}
	s := &resourceSets{
		passed:   outcome(OutcomePassed),
		blocked:  outcome(OutcomeBlocked),
		failed:   outcome(OutcomeFailed),
		slow:     outcome(OutcomeSlow),
		duration: []metric.RecordOption{metric.WithAttributeSet(ins.set(res))},
	}
	actual, _ := ins.resources.LoadOrStore(resource, s)
	return actual.(*resourceSets)
}
