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
	name                          string // the value of ResourceKey: the name, or OverflowResource
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

// resourceSets returns the measurement options of resource, building them on its first call,
// or those of OverflowResource once ins.maxResources names have their own.
func (ins *Instruments) resourceSets(resource string) *resourceSets {
	if s, ok := ins.resources.Load(resource); ok {
		return s.(*resourceSets)
	}
	if s := ins.overflow.Load(); s != nil {
		return s
	}
	return ins.newResourceSets(resource)
}

// newResourceSets is the slow path of resourceSets, kept out of line so the fast path stays
// small. The count and the map change together under ins.resourcesMu, so the bound is exact
// however many goroutines race here.
func (ins *Instruments) newResourceSets(resource string) *resourceSets {
	ins.resourcesMu.Lock()
	defer ins.resourcesMu.Unlock()
	if s, ok := ins.resources.Load(resource); ok {
		return s.(*resourceSets)
	}
	if s := ins.overflow.Load(); s != nil {
		return s
	}
	if ins.named == ins.maxResources {
		s := ins.buildSets(OverflowResource)
		ins.overflow.Store(s)
		return s
	}
	s := ins.buildSets(resource)
	ins.resources.Store(resource, s)
	ins.named++
	return s
}

// buildSets builds the measurement options of the resource called name.
func (ins *Instruments) buildSets(name string) *resourceSets {
	res := ResourceKey.String(name)
	outcome := func(o string) []metric.AddOption {
		return []metric.AddOption{metric.WithAttributeSet(ins.set(res, OutcomeKey.String(o)))}
	}
	return &resourceSets{
		name:     name,
		passed:   outcome(OutcomePassed),
		blocked:  outcome(OutcomeBlocked),
		failed:   outcome(OutcomeFailed),
		slow:     outcome(OutcomeSlow),
		duration: []metric.RecordOption{metric.WithAttributeSet(ins.set(res))},
	}
}
