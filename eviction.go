package breaker

import (
	"cmp"
	"slices"
)

// The template entries are bounded (WithMaxTemplateBreakers): a new name that needs room makes
// the idlest entries go, those that hold nothing a dependency has shown first.

// makeRoom drops entries until n more units (breakers, and settings from a template setting)
// and a name of nameLen bytes fit in the bounds (WithMaxTemplateBreakers, and what the memory
// budget leaves for names), idlest first. It drops at least a sixteenth of the bound, but of
// idle entries only: an entry with a breaker OPEN, HALF_OPEN, ramping up or pacing holds what
// is known of its dependency, and one with calls in flight under its template settings holds
// their count, so it is dropped only while there is still no room. It returns the transitions
// to report, and whether there was no room at first (the Manager then releases the counts no
// entry uses: evict). It requires mu held.
func (d *templateBreakers) makeRoom(n int, nameLen int64, now int64) (changes []StateChange, full bool) {
	room := func() bool {
		return int(d.count.Load()+d.settings.Load())+n <= d.limit && d.bytes+nameLen <= d.maxBytes
	}
	if room() {
		return nil, false
	}
	all := make([]idleness, 0, d.names.Load())
	d.each(func(e *templateEntry) { all = append(all, e.idlenessAt(now)) })
	batch := max(1, d.limit/16)
	var names []string
	drop := func(e *templateEntry) {
		changes = append(changes, d.drop(e, Evicted, now)...)
		names = append(names, e.name)
	}
	// dropClosed walks idlest first. Only the entries it looks at are read for their state.
	dropClosed := func(idlest []idleness) {
		for _, c := range idlest {
			if len(names) >= batch && room() {
				return
			}
			if !c.e.dropped.Load() && !c.e.holds(now) {
				drop(c.e)
			}
		}
	}
	// Usually the idlest few hold enough CLOSED ones, and only they need sorting.
	dropClosed(idlest(all, 2*batch))
	if len(names) < batch || !room() {
		slices.SortFunc(all, (idleness).compare)
		dropClosed(all)
		for _, c := range all {
			if room() {
				break
			}
			if !c.e.dropped.Load() {
				drop(c.e)
			}
		}
	}
	d.dropped.Add(uint64(len(names)))
	return changes, true
}

// idleness orders entries for dropping: idle the longest first, then made first.
type idleness struct {
	idle uint64 // ns since the entry was used
	made uint64
	e    *templateEntry
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
