package window

import (
	"sync"
	"time"
	"unsafe"

	"go.uber.org/atomic"
)

// Sliding is a sliding window of equal buckets. At time t it holds the bucket containing t and
// the buckets before it, one interval in all.
//
// A small step back of the clock loses nothing: a call whose time falls before the newest
// bucket, by less than the window, is counted in that newest bucket. A call a whole window or
// more before it (the clock stepped far back) starts the window again at its time, empty, so
// that the window keeps sliding on the clock's new course instead of counting into one bucket
// until the clock catches up.
//
// Counting is lock-free. A call inside the newest bucket, the common case, costs two loads and
// one atomic add, with no division. The window moves under mu: a bucket is reset, once, by the
// first call to reach it in a new lap, and only published after it is zeroed, so no count
// lands before the reset.
//
// A bucket's two counts live in one 64-bit word, so they are added, read and reset together:
// no reader can pair one lap's total with another's bad count, and bad never exceeds total.
type Sliding struct {
	bucketLen int64
	interval  int64
	newest    atomic.Pointer[bucket] // the bucket with the latest start
	lastBad   atomic.Int64           // start of the newest bucket that counted a bad call
	mu        sync.Mutex             // serialises moves of the window
	slot      int                    // the index of newest in buckets; written under mu
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

// SlidingBytes is what the buckets of a window of n buckets take.
func SlidingBytes(n uint32) int64 { return int64(n) * int64(unsafe.Sizeof(bucket{})) }

// NewSliding returns an empty window of interval, in buckets of equal length.
func NewSliding(interval time.Duration, buckets uint32) *Sliding {
	w := &Sliding{
		bucketLen: int64(interval) / int64(buckets),
		interval:  int64(interval),
		buckets:   make([]bucket, buckets),
	}
	// The buckets start about 146 years before the epoch, on the grid of bucket starts that
	// passes through it, so a window made near the epoch moves from there onto that grid, and
	// one made far from it starts again at its first call.
	noStart := -(1 << 62) / w.bucketLen * w.bucketLen
	w.lastBad.Store(noStart - w.interval)
	for i := range w.buckets {
		w.buckets[i].start.Store(noStart)
	}
	w.newest.Store(&w.buckets[0])
	return w
}

// Add counts n calls completed at now, bad or not, and returns the start of the bucket that
// counted them.
func (w *Sliding) Add(now int64, n uint64, bad bool) int64 {
	b := w.newest.Load()
	start := b.start.Load()
	if uint64(now-start) >= uint64(w.bucketLen) {
		b, start = w.locate(now)
	}
	add := n * goodCall
	if bad {
		// Published before the count, so a reader that sees the count sees this too.
		raiseTo(&w.lastBad, start)
		add = n * badCall
	}
	if b.counts.Add(add) >= halveAt<<32 {
		halve(&b.counts)
	}
	return start
}

// AddGood is Add for one good call inside the newest bucket, the common case, small enough to
// inline (TestFastPathsInline holds it): it reports false, having counted nothing, when Add
// must count the call instead. Calls that pass the test of the total together may take it a few
// past halveAt; the next call, through Add, halves it.
func (w *Sliding) AddGood(now int64) (int64, bool) {
	b := w.newest.Load()
	start := b.start.Load()
	if uint64(now-start) >= uint64(w.bucketLen) || b.counts.Load() >= (halveAt-1)<<32 {
		return 0, false
	}
	b.counts.Add(goodCall)
	return start, true
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

// locate returns the bucket that counts a call at now, which is not inside the newest bucket,
// and its start, moving the window when now is past the newest bucket or far before it.
func (w *Sliding) locate(now int64) (*bucket, int64) {
	b := w.newest.Load()
	if start := b.start.Load(); w.inNewest(now - start) {
		return b, start // another call moved the window first, or the clock stepped back a little
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	b = w.newest.Load()
	start := b.start.Load()
	d := now - start
	switch {
	case w.inNewest(d):
		return b, start
	case d > 0:
		return w.advance(start, d)
	default:
		return w.restart(now - FloorMod(now, w.bucketLen)) // on the grid through the epoch, as advance keeps it
	}
}

// inNewest reports whether a call d after the start of the newest bucket counts in it: inside
// it, or before it by less than the window.
func (w *Sliding) inNewest(d int64) bool {
	return d < w.bucketLen && d > -w.interval
}

// advance makes the bucket of the call d after start, the start of the newest bucket, the
// newest, on the same grid of bucket starts. The buckets it passes over hold older laps, out
// of the window from now on. It requires mu held.
func (w *Sliding) advance(start, d int64) (*bucket, int64) {
	steps := d / w.bucketLen
	n := int64(len(w.buckets))
	w.slot = int((int64(w.slot) + steps%n) % n)
	b := &w.buckets[w.slot]
	start += steps * w.bucketLen
	// Zeroed before the new start is published: no count of the new lap is lost.
	b.counts.Store(0)
	b.start.Store(start)
	w.newest.Store(b)
	return b, start
}

// restart empties the window, with its newest bucket at start: the clock stepped far back, or
// so far ahead that the difference of ticks wrapped. The other buckets move just out of the
// window, so that no count of the old course is summed again. A call on its way may still
// count a bad call of the old window in the new one, so the new window may hold a bad call
// until it has moved on by a whole window. It requires mu held.
func (w *Sliding) restart(start int64) (*bucket, int64) {
	for i := range w.buckets {
		w.buckets[i].counts.Store(0)
		if i != w.slot {
			w.buckets[i].start.Store(start - w.interval)
		}
	}
	w.lastBad.Store(start)
	b := &w.buckets[w.slot]
	b.start.Store(start) // published after the zeroing, as in advance
	return b, start
}

// HeadAt returns the start of the newest bucket of the window at now, without counting.
func (w *Sliding) HeadAt(now int64) int64 {
	start := w.newest.Load().start.Load()
	d := now - start
	if w.inNewest(d) {
		return start
	}
	return now - FloorMod(now, w.bucketLen) // where locate would move the window: every start is on the grid through 0
}

// Sum returns the calls in the window whose newest bucket starts at head.
func (w *Sliding) Sum(head int64) (total, bad uint64) {
	all, _ := w.Sums(head, 0)
	return all.Total, all.Bad
}

// Counts are the calls of some buckets of a window, or of a window of calls, and the bad ones
// among them.
type Counts struct{ Total, Bad uint64 }

// Sums returns the calls in the window whose newest bucket starts at head, and those in its
// buckets that start less than span before head (the newest span/bucketLen buckets; none when
// span is 0), in one pass over the same buckets.
func (w *Sliding) Sums(head, span int64) (all, newest Counts) {
	for i := range w.buckets {
		b := &w.buckets[i]
		if age := uint64(head - b.start.Load()); age < uint64(w.interval) { // in (head-interval, head]
			t, f := unpack(b.counts.Load())
			all.Total += t
			all.Bad += f
			if age < uint64(span) {
				newest.Total += t
				newest.Bad += f
			}
		}
	}
	return all, newest
}

// MayHoldBad reports whether the window whose newest bucket starts at head may hold a bad
// call. When it cannot, a good call cannot trip the breaker and the window need not be summed.
// A last bad start that seems to lie ahead of head (the clock stepped back, or the ticks
// wrapped) may hold one.
func (w *Sliding) MayHoldBad(head int64) bool {
	return head-w.lastBad.Load() < w.interval
}

// FloorMod returns t modulo step, in [0, step), also for negative t.
func FloorMod(t, step int64) int64 {
	r := t % step
	if r < 0 {
		r += step
	}
	return r
}

// raiseTo sets a to v if v is later.
func raiseTo(a *atomic.Int64, v int64) {
	for {
		old := a.Load()
		if v-old <= 0 || a.CompareAndSwap(old, v) {
			return
		}
	}
}
