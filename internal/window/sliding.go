package window

import (
	"sync"
	"time"
	"unsafe"

	"sync/atomic"
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
// Counting is lock-free. A call inside the newest bucket, the common case, costs three loads
// and one compare-and-swap, with no division. The window moves under mu: a bucket is reset,
// once, by the first call to reach it in a new lap, and only published after it is zeroed, so
// no count lands before the reset.
//
// A bucket's two counts live in one 64-bit word, so they are added, read and reset together:
// no reader can pair one lap's total with another's bad count, and bad never exceeds total.
// The refusals among the bad calls have a word of their own in each bucket, added before the
// bad call is, so that a reader may miss a refusal's bad call for a moment but never takes a
// refusal for a failure; they are not striped, as a refusal is no call of the fast path.
// Until calls contend for a bucket's word, every call counts in it, as Java's LongAdder counts
// in its base; from the first compare-and-swap lost, the window is striped (stripes.go): each
// call counts in its processor's stripe, and the window's counts are the base words' and the
// stripes' sum. A window of one stripe has none, and counts in its base words only.
type Sliding struct {
	bucketLen int64
	interval  int64
	newest    atomic.Pointer[bucket] // the bucket with the latest start; written under mu
	lastBad   atomic.Int64           // start of the newest bucket that counted a bad call
	striped   atomic.Bool            // calls contended for a word: each counts in its processor's stripe from then on
	mu        sync.Mutex             // serialises moves of the window
	stride    int                    // the words of a stripe (stripes.go)
	buckets   []bucket
	stripes   []atomic.Uint64 // of bucket i in a stripe at(stripe, stride, i, len(stripes)); none for one stripe
}

type bucket struct {
	start   atomic.Int64
	counts  atomic.Uint64 // the base word: total in the high 32 bits, bad in the low 32
	refused atomic.Uint32 // the refusals among the bad calls, of every stripe
	i       uint32        // its index in buckets
}

// The packing of a bucket's counts. Since bad <= total < 2^32, adding a bad call never carries
// into the total. A word whose total reaches halveAt has both counts halved, keeping its
// ratio; the 2^31 calls of headroom above halveAt cannot all be in flight at once, so the
// total never wraps.
const (
	goodCall uint64 = 1 << 32
	badCall  uint64 = 1<<32 | 1
	halveAt  uint64 = 1 << 31
)

// unpack splits a bucket's word into its counts.
func unpack(w uint64) (total, bad uint64) { return w >> 32, w & (1<<32 - 1) }

// SlidingBytes is what the buckets of a window of n buckets striped for procs processors take,
// their stripes included (a window of one stripe has none beside its base words).
func SlidingBytes(n uint32, procs int) int64 {
	buckets := int64(n) * int64(unsafe.Sizeof(bucket{}))
	if Stripes(int(n), procs) == 1 {
		return buckets
	}
	return buckets + StripedBytes(int(n), procs)
}

// NewSliding returns an empty window of interval, in buckets of equal length, with its counts in
// s stripes once calls contend for them: a power of two of at most 8, such as Stripes(buckets).
func NewSliding(interval time.Duration, buckets uint32, s int) *Sliding {
	w := &Sliding{
		bucketLen: int64(interval) / int64(buckets),
		interval:  int64(interval),
		buckets:   make([]bucket, buckets),
	}
	if s > 1 {
		stride, words := layout(int(buckets), s)
		w.stride, w.stripes = stride, make([]atomic.Uint64, words)
	}
	// The buckets start about 146 years before the epoch, on the grid of bucket starts that
	// passes through it, so a window made near the epoch moves from there onto that grid, and
	// one made far from it starts again at its first call.
	noStart := -(1 << 62) / w.bucketLen * w.bucketLen
	w.lastBad.Store(noStart - w.interval)
	for i := range w.buckets {
		w.buckets[i].start.Store(noStart)
		w.buckets[i].i = uint32(i)
	}
	w.newest.Store(&w.buckets[0])
	return w
}

// Stripes returns the window's stripes: 1 for one without stripes beside its base words.
func (w *Sliding) Stripes() int { return max(w.stripeCount(), 1) }

// stripeCount returns the stripes beside the base words: 0 or more than 1.
func (w *Sliding) stripeCount() int {
	if w.stripes == nil {
		return 0
	}
	return len(w.stripes) / w.stride
}

// word returns the word of b that a call in stripe counts in: its base word while the window is
// not striped, else its word in stripe.
func (w *Sliding) word(b *bucket, stripe uint8) *atomic.Uint64 {
	if w.stripes == nil || !w.striped.Load() {
		return &b.counts
	}
	return &w.stripes[at(stripe, w.stride, int(b.i), len(w.stripes))]
}

// Stripe makes the window striped now, if it has stripes, as if calls had contended for it.
func (w *Sliding) Stripe() {
	if w.stripes != nil {
		w.striped.Store(true)
	}
}

// Striped reports whether calls have contended for the window's words: from then on each call
// counts in its processor's stripe (AddGoodOn); until then every call counts in its bucket's
// base word (AddGood), and a call that runs alone on a resource pays nothing for the stripes.
func (w *Sliding) Striped() bool { return w.striped.Load() }

// Add counts n calls completed at now, marked m, and returns the start of the bucket that
// counted them: in stripe once the window is Striped. A good call that comes here although it
// lies in the newest bucket, below the halving, lost its compare-and-swap in AddGood to another
// call: the window is striped from then on, if it has stripes.
func (w *Sliding) Add(now int64, n uint64, m Mark, stripe uint8) int64 {
	b := w.newest.Load()
	start := b.start.Load()
	switch {
	case uint64(now-start) >= uint64(w.bucketLen):
		b, start = w.locate(now)
	case m == Good && n == 1 && !w.striped.Load() && b.counts.Load() < (halveAt-1)<<32:
		w.Stripe()
	}
	add := n * goodCall
	if m != Good {
		// Published before the count, so a reader that sees the count sees this too.
		raiseTo(&w.lastBad, start)
		add = n * badCall
		if m == Refused {
			b.refused.Add(uint32(n))
		}
	}
	if c := w.word(b, stripe); c.Add(add) >= halveAt<<32 {
		halve(c)
	}
	return start
}

// AddGood is Add for one good call inside the newest bucket of a window that is not Striped,
// the common case, small enough to inline (TestFastPathsInline holds it): it reports false,
// having counted nothing, when Add must count the call instead, also when another call changed
// the word first.
func (w *Sliding) AddGood(now int64) (int64, bool) {
	b := w.newest.Load()
	start := b.start.Load()
	old := b.counts.Load()
	if uint64(now-start) >= uint64(w.bucketLen) || old >= (halveAt-1)<<32 || !b.counts.CompareAndSwap(old, old+goodCall) {
		return 0, false
	}
	return start, true
}

// AddGoodOn is AddGood for a Striped window, small enough to inline too: the call counts in
// stripe, with an atomic add, since calls on other processors write other stripes. Calls that
// pass the test of the total together may take it a few past halveAt; the next call, through
// Add, halves it.
func (w *Sliding) AddGoodOn(now int64, stripe uint8) (int64, bool) {
	b := w.newest.Load()
	start := b.start.Load()
	c := &w.stripes[(int(stripe)*w.stride|int(b.i))&(len(w.stripes)-1)] // at, written out to inline
	if uint64(now-start) >= uint64(w.bucketLen) || c.Load() >= (halveAt-1)<<32 {
		return 0, false
	}
	c.Add(goodCall)
	return start, true
}

// halve halves both counts of a bucket's word whose total reached halveAt, unless another call
// did. The word's ratio is kept; the sum's moves by at most what a word of 2^31 calls holds.
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
	i := int((int64(w.newest.Load().i) + steps%n) % n)
	b := &w.buckets[i]
	start += steps * w.bucketLen
	w.zero(i) // before the new start is published: no count of the new lap is lost
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
	b := w.newest.Load()
	for i := range w.buckets {
		w.zero(i)
		if o := &w.buckets[i]; o != b {
			o.start.Store(start - w.interval)
		}
	}
	w.lastBad.Store(start)
	b.start.Store(start) // published after the zeroing, as in advance
	return b, start
}

// zero zeroes the counts of bucket i: its base words, and its word in every stripe.
func (w *Sliding) zero(i int) {
	w.buckets[i].counts.Store(0)
	w.buckets[i].refused.Store(0)
	for s := range w.stripeCount() {
		w.stripes[at(uint8(s), w.stride, i, len(w.stripes))].Store(0)
	}
}

// countsOf returns the counts of bucket i: its base words' and its stripes'.
func (w *Sliding) countsOf(i int) Counts {
	total, bad := unpack(w.buckets[i].counts.Load())
	for s := range w.stripeCount() {
		t, f := unpack(w.stripes[at(uint8(s), w.stride, i, len(w.stripes))].Load())
		total, bad = total+t, bad+f
	}
	// Read after the bad calls, which Add counts after their refusals: every refusal among
	// the bad calls read is read too.
	refused := uint64(w.buckets[i].refused.Load())
	return Counts{Total: total, Bad: bad, Refused: min(refused, bad)}
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

// Sums returns the calls in the window whose newest bucket starts at head, and those in its
// buckets that start less than span before head (the newest span/bucketLen buckets; none when
// span is 0), in one pass over the same buckets.
func (w *Sliding) Sums(head, span int64) (all, newest Counts) {
	for i := range w.buckets {
		age := uint64(head - w.buckets[i].start.Load())
		if age >= uint64(w.interval) {
			continue // not in (head-interval, head]
		}
		c := w.countsOf(i)
		all.add(c)
		if age < uint64(span) {
			newest.add(c)
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
