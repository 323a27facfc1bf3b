package breakerprom

import (
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakerdebug"
)

// Label values of breaker_rejected_total's cause label: who rejected a blocked call.
const (
	// CauseOpen: a breaker of the resource, OPEN or HALF_OPEN with its probe in flight.
	CauseOpen = "open"
	// CauseForcedOpen: the resource is ForceOpen (breaker.ErrForcedOpen); no breaker moved.
	CauseForcedOpen = "forced_open"
	// CauseConcurrencyLimit: the call would have taken the calls in flight past the
	// resource's MaxConcurrency (breaker.ErrConcurrencyLimit).
	CauseConcurrencyLimit = "concurrency_limit"
	// CauseSlot: a slot of the Manager (breaker.WithSlots).
	CauseSlot = "slot"
	// CauseNameTooLong: a template matches the resource, but its name is too long to keep
	// (breaker.ErrNameTooLong).
	CauseNameTooLong = "name_too_long"
	// CauseRampingUp: a breaker ramping up after recovery held the call back
	// (breaker.ErrRampingUp).
	CauseRampingUp = "ramping_up"
	// CausePacing: a breaker pacing a dependency that fails part of its calls held the call
	// back (breaker.ErrPacing).
	CausePacing = "pacing"
)

// Label values of breaker_would_reject_total's mode label: why a breaker that would have
// rejected a call let it through.
const (
	// ModeDryRun: the breaker's rule is DryRun.
	ModeDryRun = "dry_run"
	// ModeForceClosed: the resource is ForceClosed.
	ModeForceClosed = "force_closed"
)

// causes and modes are the label values in the order of the arrays of callSeries.
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

// resourceEntry is one resource name that has series of its own, or the overflow.
type resourceEntry struct {
	label string // the resource label: the name made valid UTF-8, or OverflowResource
	once  sync.Once
	calls *callSeries // set by once, at the first call
	// minute is its last minute of calls, for breaker_call_duration_max_seconds and
	// breaker_uncalled, which the histogram and the counters, kept since the start, cannot tell.
	minute breakerdebug.LastMinute
}

// callSeries is the series of one resource's calls, taken from the vectors once so that a call
// only adds to them.
type callSeries struct {
	passed, blocked, failed, slow prometheus.Counter
	rejected                      [len(causes)]prometheus.Counter
	wouldReject                   [len(modes)]prometheus.Counter
	rt                            prometheus.Observer
}

// callObserver counts a Manager's calls into its Collector.
type callObserver struct{ c *Collector }

// OnCall counts one call. In steady state it allocates nothing: a map load and a few atomic
// adds; the call's time is the Manager's reading (CallInfo.At).
func (o callObserver) OnCall(info breaker.CallInfo) {
	if info.NotCalled != nil {
		return // not a call: its context was done before it was admitted
	}
	e := o.c.entryOf(info.Resource)
	e.minute.Record(info.At, info.Blocked == nil, info.RT)
	r := o.c.seriesOf(e)
	if info.Blocked != nil {
		r.blocked.Inc()
		r.rejected[info.Blocked.Kind()].Inc()
		return
	}
	r.passed.Inc()
	if info.Outcome == breaker.Failure {
		r.failed.Inc()
	}
	if info.Slow {
		r.slow.Inc()
	}
	if info.DryRun != nil {
		r.wouldReject[modeOf(info.DryRun)].Inc()
	}
	r.rt.Observe(info.RT.Seconds())
}

// seriesOf returns the call series of the entry e, creating them at its first call.
func (c *Collector) seriesOf(e *resourceEntry) *callSeries {
	e.once.Do(func() { e.calls = c.newCallSeries(e.label) })
	return e.calls
}

// newCallSeries creates the call series of the resource label, every outcome, cause and mode
// at once, so that each shows as zero until it happens.
func (c *Collector) newCallSeries(label string) *callSeries {
	s := &callSeries{
		passed:  c.calls.WithLabelValues(label, OutcomePassed),
		blocked: c.calls.WithLabelValues(label, OutcomeBlocked),
		failed:  c.calls.WithLabelValues(label, OutcomeFailed),
		slow:    c.calls.WithLabelValues(label, OutcomeSlow),
		rt:      c.rt.WithLabelValues(label),
	}
	for i, cause := range causes {
		s.rejected[i] = c.rejected.WithLabelValues(label, cause)
	}
	for i, mode := range modes {
		s.wouldReject[i] = c.wouldReject.WithLabelValues(label, mode)
	}
	return s
}

// entryOf returns the entry of resource: its own while the Collector has room for it or has
// one for it already, else the overflow. A name too long to keep, or any new name once the
// Collector is full, takes no lock and allocates nothing.
func (c *Collector) entryOf(resource string) *resourceEntry {
	if len(resource) > c.maxNameLength {
		return c.overflow
	}
	if e, ok := c.resources.Load(resource); ok {
		return e.(*resourceEntry)
	}
	if c.full.Load() {
		return c.overflow
	}
	return c.newEntry(resource)
}

// newEntry is the slow path of entryOf: it gives resource an entry of its own if the bounds
// on names and on their bytes allow, and otherwise marks the Collector full. The entry keeps
// copies of resource, never the caller's string, which may hold a much larger one.
func (c *Collector) newEntry(resource string) *resourceEntry {
	c.namesMu.Lock()
	defer c.namesMu.Unlock()
	if e, ok := c.resources.Load(resource); ok {
		return e.(*resourceEntry)
	}
	label := labelValue(resource)
	size := len(resource)
	if label != resource {
		size += len(label) // a second string: the name rewritten as UTF-8
	}
	if c.named >= c.maxResources || size > c.maxNameBytes-c.nameBytes {
		c.full.Store(true)
		return c.overflow
	}
	name := strings.Clone(resource)
	if label == resource {
		label = name
	} else {
		label = strings.Clone(label) // no spare capacity of the builder that made it
	}
	e := &resourceEntry{label: label}
	c.resources.Store(name, e)
	c.named++
	c.nameBytes += size
	return e
}
