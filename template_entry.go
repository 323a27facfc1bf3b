package breaker

import (
	"slices"

	"go.uber.org/atomic"
)

// templateEntry is the breakers of one resource made from a template, and its settings.
type templateEntry struct {
	name    string
	made    uint64                   // its place among the entries made: ties of used go oldest first
	res     atomic.Pointer[resource] // replaced at every reload of rules or settings
	used    atomic.Int64             // when a call last completed or was rejected, in units of 2^20 ns (about 1 ms)
	dropped atomic.Bool
}

// touch marks e used at now, when a call its breakers admitted ended or one of them rejected a
// call (the clock is read then anyway). It writes only when the millisecond changed, so that
// parallel callers of one resource seldom write the same cache line.
func (e *templateEntry) touch(now int64) {
	if t := now >> 20; e.used.Load() != t {
		e.used.Store(t)
	}
}

// holds reports whether e holds at now what an idle entry does not: a breaker OPEN, HALF_OPEN,
// ramping up or pacing, or calls in flight counted by its template settings.
func (e *templateEntry) holds(now int64) bool {
	res := e.res.Load()
	if res.set != nil && res.set.template && res.set.inflight.Load() != 0 {
		return true
	}
	return slices.ContainsFunc(res.breakers, func(b *circuit) bool { return b.knows(now) })
}

// idlenessAt is how idle e is at now. Ticks wrap (clock.go), so idleness is measured back from
// now, never by comparing two ticks; a use after now, which only a clock that stepped back can
// make, was before the step, and counts as the longest ago.
func (e *templateEntry) idlenessAt(now int64) idleness {
	return idleness{idle: uint64(now - e.used.Load()<<20), made: e.made, e: e}
}
