package breakerdebug

import (
	"cmp"
	"slices"
	"sync"

	"github.com/halfopen/breaker"
)

// recent is an Observer that keeps the last keep state changes in a ring buffer, whatever
// resources they are of: a bound that no number of names can grow. It runs on
// the goroutine of the call that made each transition, so it only copies the change under
// its mutex. It is safe for concurrent use.
type recent struct {
	mu   sync.Mutex
	buf  [keep]breaker.StateChange
	next int // where the next change goes
	n    int // how many of buf hold changes
}

var _ breaker.Observer = (*recent)(nil)

// OnStateChange keeps c, dropping the oldest change once keep are held.
func (r *recent) OnStateChange(c breaker.StateChange) {
	r.mu.Lock()
	r.buf[r.next] = c
	r.next = (r.next + 1) % keep
	r.n = min(r.n+1, keep)
	r.mu.Unlock()
}

// newestFirst returns a copy of the kept changes, the latest first by Seq: changes made on
// different goroutines may be reported out of order, and Seq puts them back in the order they
// happened.
func (r *recent) newestFirst() []breaker.StateChange {
	r.mu.Lock()
	out := make([]breaker.StateChange, r.n)
	for i := range out {
		out[i] = r.buf[(r.next-1-i+keep)%keep]
	}
	r.mu.Unlock()
	slices.SortStableFunc(out, func(a, b breaker.StateChange) int { return cmp.Compare(b.Seq, a.Seq) })
	return out
}
