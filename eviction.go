package breaker

import (
	"cmp"
	"slices"
)

// The template entries are bounded (WithMaxTemplateBreakers): a new name that needs room makes
// the idlest entries go, those that hold nothing a dependency has shown first.

// holds reports whether e holds at now what an idle entry does not: a breaker OPEN, HALF_OPEN,
// ramping up or pacing, or calls in flight counted by its template settings.
func (e *templateEntry) holds(now int64) bool {
	res := e.res.Load()
	if res.set != nil && res.set.template && res.set.inflight.Load() != 0 {
		return true
	}
	return slices.ContainsFunc(res.breakers, func(b *circuit) bool { return b.knows(now) })
}

// idleness orders entries for dropping: idle the longest first, then made first.
type idleness struct {
	idle uint64 // ns since the entry was used
	made uint64
	e    *templateEntry
}

// idlenessAt is how idle e is at now. Ticks wrap (clock.go), so idleness is measured back from
// now, never by comparing two ticks; a use after now, which only a clock that stepped back can
// make, was before the step, and counts as the longest ago.
func (e *templateEntry) idlenessAt(now int64) idleness {
	return idleness{idle: uint64(now - e.used.Load()<<20), made: e.made, e: e}
}

func (a idleness) compare(b idleness) int {
	if a.idle != b.idle {
		return cmp.Compare(b.idle, a.idle)
	}
	return cmp.Compare(a.made, b.made)
}

// idlest reorders all so that its first k are its k idlest, sorted, and returns them. It keeps
// a max-heap of the idlest seen so far in all[:k], which touches most entries once.
func idlest(all []idleness, k int) []idleness {
	if k >= len(all) {
		slices.SortFunc(all, (idleness).compare)
		return all
	}
	h := all[:k]
	for i := k/2 - 1; i >= 0; i-- {
		siftDown(h, i)
	}
	for i := k; i < len(all); i++ {
		if all[i].compare(h[0]) < 0 {
			h[0], all[i] = all[i], h[0]
			siftDown(h, 0)
		}
	}
	slices.SortFunc(h, (idleness).compare)
	return h
}

// siftDown restores the max-heap h from i down.
func siftDown(h []idleness, i int) {
	for {
		largest := i
		for _, c := range []int{2*i + 1, 2*i + 2} {
			if c < len(h) && h[c].compare(h[largest]) > 0 {
				largest = c
			}
		}
		if largest == i {
			return
		}
		h[i], h[largest] = h[largest], h[i]
		i = largest
	}
}
