package breakerotel

import (
	"context"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakerdebug"
)

// callObserver feeds the calls of a Manager to the calls counter and the duration histogram.
type callObserver struct{ ins *Instruments }

var _ breaker.CallObserver = callObserver{}

// causes and modes are the values of CauseKey and ModeKey in the order of the arrays of
// resourceSets.
var (
	causes = [...]string{breaker.BlockedByBreaker: CauseOpen, breaker.BlockedByForce: CauseForcedOpen,
		breaker.BlockedByLimit: CauseConcurrencyLimit, breaker.BlockedBySlot: CauseSlot,
		breaker.BlockedByName: CauseNameTooLong, breaker.BlockedByRampUp: CauseRampingUp,
		breaker.BlockedByPacing: CausePacing}
	modes = [...]string{ModeDryRun, ModeForceClosed}
)

// modeOf returns the index in modes of why the breaker of dry let its call through.
func modeOf(dry *breaker.BlockError) int {
	if dry.Rule != nil && dry.Rule.DryRun {
		return 0
	}
	return 1
}

// resourceSets are the measurement options of one resource name, or of the overflow, built
// when the name is first seen. The slices are passed as variadic arguments as they are, so a
// call allocates nothing.
type resourceSets struct {
	resource     attribute.KeyValue // breaker.resource: the name made UTF-8, or OverflowResource
	passed       []metric.AddOption
	failed, slow []metric.AddOption
	blocked      [len(causes)][]metric.AddOption
	wouldReject  [len(modes)][]metric.AddOption
	duration     []metric.RecordOption
	// minute is its last minute of calls, for breaker.call.duration.max and breaker.uncalled,
	// which the histogram and the counter, kept since the start, cannot tell.
	minute breakerdebug.LastMinute
}

// OnCall counts c; see the outcome constants.
func (o callObserver) OnCall(c breaker.CallInfo) {
	ins := o.ins
	if ins.closed.Load() || c.NotCalled != nil { // not a call: its context was done before admission
		return
	}
	sets := ins.resourceSets(c.Resource)
	sets.minute.Record(c.At, c.Blocked == nil, c.RT)
	ctx := context.Background() // CallInfo carries no context
	if c.Blocked != nil {
		ins.calls.Add(ctx, 1, sets.blocked[c.Blocked.Kind()]...)
		return
	}
	ins.calls.Add(ctx, 1, sets.passed...)
	if c.Outcome == breaker.Failure {
		ins.calls.Add(ctx, 1, sets.failed...)
	}
	if c.Slow {
		ins.calls.Add(ctx, 1, sets.slow...)
	}
	if c.DryRun != nil {
		ins.calls.Add(ctx, 1, sets.wouldReject[modeOf(c.DryRun)]...)
	}
	ins.duration.Record(ctx, c.RT.Seconds(), sets.duration...)
}

// resourceSets returns the measurement options of resource: its own while the bounds have room
// for it or it has them already, else the overflow's. A name too long to keep, or any new name
// once the Instruments are full, takes no lock and allocates nothing.
func (ins *Instruments) resourceSets(resource string) *resourceSets {
	if len(resource) > ins.maxNameLength {
		return ins.overflow
	}
	if s, ok := ins.resources.Load(resource); ok {
		return s.(*resourceSets)
	}
	if ins.full.Load() {
		return ins.overflow
	}
	return ins.newResourceSets(resource)
}

// newResourceSets is the slow path of resourceSets, kept out of line so the fast path stays
// small: it builds the sets of resource if the bounds on names and on their bytes allow, and
// otherwise marks the Instruments full. The sets hold copies of resource, never the caller's
// string, which may hold a much larger one.
func (ins *Instruments) newResourceSets(resource string) *resourceSets {
	ins.namesMu.Lock()
	defer ins.namesMu.Unlock()
	if s, ok := ins.resources.Load(resource); ok {
		return s.(*resourceSets)
	}
	value := resourceValue(resource)
	size := len(resource)
	if value != resource {
		size += len(value) // a second string: the name rewritten as UTF-8
	}
	if ins.named >= ins.maxResources || size > ins.maxNameBytes-ins.nameBytes {
		ins.full.Store(true)
		return ins.overflow
	}
	name := strings.Clone(resource)
	if value == resource {
		value = name
	} else {
		value = strings.Clone(value) // no spare capacity of the builder that made it
	}
	s := ins.buildSets(value)
	ins.resources.Store(name, s)
	ins.named++
	ins.nameBytes += size
	return s
}

// buildSets builds the measurement options of the breaker.resource value, which is UTF-8.
func (ins *Instruments) buildSets(value string) *resourceSets {
	res := ResourceKey.String(value)
	add := func(kvs ...attribute.KeyValue) []metric.AddOption {
		return []metric.AddOption{metric.WithAttributeSet(ins.set(append([]attribute.KeyValue{res}, kvs...)...))}
	}
	s := &resourceSets{
		resource: res,
		passed:   add(OutcomeKey.String(OutcomePassed)),
		failed:   add(OutcomeKey.String(OutcomeFailed)),
		slow:     add(OutcomeKey.String(OutcomeSlow)),
		duration: []metric.RecordOption{metric.WithAttributeSet(ins.set(res))},
	}
	for i, cause := range causes {
		s.blocked[i] = add(OutcomeKey.String(OutcomeBlocked), CauseKey.String(cause))
	}
	for i, mode := range modes {
		s.wouldReject[i] = add(OutcomeKey.String(OutcomeWouldReject), ModeKey.String(mode))
	}
	return s
}
