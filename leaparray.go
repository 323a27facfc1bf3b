package breaker

import (
	"sync"
	"time"

	"go.uber.org/atomic"
)

// leapArray is a sliding window of equal buckets. Times are nanoseconds since the manager's
// epoch. At time t the window holds the bucket containing t and the buckets before it, one
// StatInterval in all.
//
// The window never runs backwards: a call whose time falls before the newest bucket is counted
// in that newest bucket, so a clock that steps back loses nothing.
//
// Counting is lock-free. A call inside the newest bucket, the common case, costs two loads and
// one atomic add, with no division. A bucket is reset under mu, once, by the first call to
// reach it in a new lap, and only published after it is zeroed, so no count lands before the
// reset.
//
// A bucket's two counts live in one 64-bit word, so they are added, read and reset together:
// no reader can pair one lap's total with another's bad count, and bad never exceeds total.
type leapArray struct {
	bucketLen int64
	interval  int64
	newest    atomic.Pointer[bucket] // the bucket with the latest start
	lastBad   atomic.Int64           // start of the newest bucket that counted a bad call
	mu        sync.Mutex             // serialises bucket resets
	buckets   []bucket
}

type bucket struct {
	start  atomic.Int64
	counts atomic.Uint64 // total in the high 32 bits, bad in the low 32
}

// The packing of a bucket's counts. Since bad <= total < 2^32, adding a bad call never carries
// into the total. A bucket whose total reaches halveAt has both counts halved, keeping its
// ratio; the 2^31 calls of headroom above halveAt cannot all be in flight at once, so the
// total never wraps.
const (
	goodCall uint64 = 1 << 32
	badCall  uint64 = 1<<32 | 1
	halveAt  uint64 = 1 << 31
)

// unpack splits a bucket's word into its counts.
func unpack(w uint64) (total, bad uint64) { return w >> 32, w & (1<<32 - 1) }

func newLeapArray(interval time.Duration, buckets uint32) *leapArray {
	w := &leapArray{
		bucketLen: int64(interval) / int64(buckets),
		interval:  int64(interval),
		buckets:   make([]bucket, buckets),
	}
	w.lastBad.Store(noStart)
	for i := range w.buckets {
		w.buckets[i].start.Store(noStart)
	}
	w.newest.Store(&w.buckets[0])
	return w
}

// add counts one call completed at now, bad or not, and returns the start of the bucket that
// counted it.
func (w *leapArray) add(now int64, bad bool) int64 {
	b := w.newest.Load()
	start := b.start.Load()
	if now >= start+w.bucketLen {
		b, start = w.advance(now)
	}
	// Otherwise now falls in the newest bucket, or before it when the clock stepped back.
	add := goodCall
	if bad {
		// Published before the count, so a reader that sees the count sees this too.
		raiseTo(&w.lastBad, start)
		add = badCall
	}
	if b.counts.Add(add) >= halveAt<<32 {
		halve(&b.counts)
	}
	return start
}

// halve halves both counts of a bucket whose total reached halveAt, unless another call did.
func halve(counts *atomic.Uint64) {
	for {
		old := counts.Load()
		total, bad := unpack(old)
		if total < halveAt || counts.CompareAndSwap(old, total/2<<32|bad/2) {
			return
		}
	}
}

// advance finds the bucket for now, which is past the newest bucket, resets it if it still
// holds an older lap, and makes it the newest.
func (w *leapArray) advance(now int64) (*bucket, int64) {
	k := floorDiv(now, w.bucketLen)
	start := k * w.bucketLen
	n := int64(len(w.buckets))
	b := &w.buckets[(k%n+n)%n]
	if s := b.start.Load(); s < start {
		w.mu.Lock()
		if b.start.Load() < start {
			// Zeroed before the new start is published: no count of the new lap is lost.
			b.counts.Store(0)
			b.start.Store(start)
		}
		w.mu.Unlock()
	} else if s > start {
		// The window moved a whole lap while this call was on its way: count it in the
		// newest bucket.
		newest := w.newest.Load()
		return newest, newest.start.Load()
	}
	for {
		cur := w.newest.Load()
		if cur.start.Load() >= start || w.newest.CompareAndSwap(cur, b) {
			return b, start
		}
	}
}

// headAt returns the start of the newest bucket of the window at now, without counting.
func (w *leapArray) headAt(now int64) int64 {
	newest := w.newest.Load().start.Load()
	if now < newest+w.bucketLen {
		return newest
	}
	return floorDiv(now, w.bucketLen) * w.bucketLen
}

// sum returns the calls in the window whose newest bucket starts at head.
func (w *leapArray) sum(head int64) (total, bad uint64) {
	oldest := head - w.interval
	for i := range w.buckets {
		b := &w.buckets[i]
		if s := b.start.Load(); s > oldest && s <= head {
			t, f := unpack(b.counts.Load())
			total += t
			bad += f
		}
	}
	return total, bad
}

// mayHoldBad reports whether the window whose newest bucket starts at head may hold a bad
// call. When it cannot, a good call cannot trip the breaker and the window need not be summed.
func (w *leapArray) mayHoldBad(head int64) bool {
	return w.lastBad.Load() > head-w.interval
}

// floorDiv divides rounding down, also for negative t.
func floorDiv(t, step int64) int64 {
	q := t / step
	if t%step < 0 {
		q--
	}
	return q
}

// raiseTo sets a to v if v is greater.
func raiseTo(a *atomic.Int64, v int64) {
	for {
		old := a.Load()
		if v <= old || a.CompareAndSwap(old, v) {
			return
		}
	}
}
