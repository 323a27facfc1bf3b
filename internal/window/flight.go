package window

import (
	"sync"
	"unsafe"

	"sync/atomic"
)

// Flight counts calls in flight by when they started, so that a call still running past a
// limit (a slow rule's MaxAllowedRT) counts as slow before it returns: a dependency that hangs
// completes nothing, and a breaker that counted only completed calls would never see it.
//
// Calls are counted in the slots of a ring by their start, each slot as wide as a bucket of the
// window (wider for a limit of more than a thousand buckets). Once a slot has been over for the
// limit, every call of it still in flight has run longer than that: the next call to enter or
// complete finds the slot due (Due) and Judge counts those calls as slow, for the caller to
// count in its window. When such a call returns, it counts nothing more (Leave). The ring spans
// the limit and two slots, so a slot is due, and judged, before a later start takes it over.
//
// A slot's counts are one word: its lap (the slot's number on the grid of starts, which says
// which start it holds), the calls in flight not yet counted, and those counted while in
// flight. So a call that returns and a call that judges the slot cannot both count it. Calls of
// one slot and lap are told apart only by number: a call that returns takes a counted place
// first if the slot has one. So after a clock that stepped back to the very slot of an older
// call, that call may take the place of a newer one: the window then holds the right number
// of calls, with the older call's outcome for the newer one's.
// Entering costs one atomic add; moving on to the next slot takes mu, once a slot, as the
// window does.
//
// A slot has such a word in every stripe (stripes.go): a call enters its stripe's (stripe 0,
// until the calls of its window contend and the caller stripes them), its seat names the
// word, and it leaves the same word; a judgement and a move go through every stripe's word of
// a slot, each as one slot of one stripe.
type Flight struct {
	width  int64           // of a slot
	after  atomic.Int64    // how long after the start of the latest slot judged the next is due: 2 widths + MaxAllowedRT
	starts []atomic.Int64  // of each slot
	head   atomic.Uint64   // the index in starts of the slot of the latest start
	judged atomic.Int64    // the start of the latest slot judged
	mu     sync.Mutex      // serialises moves of head
	stride int             // the words of a stripe (stripes.go)
	words  []atomic.Uint64 // of slot i in a stripe at(stripe, stride, i, len(words)): lap in the high 24 bits, waiting in the next 20, counted in the low 20
}

const (
	flightCountBits = 20
	flightCountMask = 1<<flightCountBits - 1
	flightWaiting   = 1 << flightCountBits
	flightLapShift  = 2 * flightCountBits
	flightLapMask   = 1<<24 - 1
	maxFlightSlots  = 1024 // a MaxAllowedRT of more buckets gets wider slots instead
)

// A seat is what a call that entered the ring keeps to leave it: the index in words of the
// word it entered (from bit 24; words are at most maxFlightSlots, as stripes.go lays them out)
// and its lap, and a flag, so that the zero seat is a call the ring does not hold.
const (
	flightSeated    = 1 << 63
	flightWordShift = 24
	flightWordMask  = 2*maxFlightSlots - 1
)

func unpackFlight(w uint64) (lap, waiting, counted uint64) {
	return w >> flightLapShift, w >> flightCountBits & flightCountMask, w & flightCountMask
}

// NewFlight returns an empty ring for a window of buckets of length and the limit maxRT, with
// its counts in s stripes: a power of two of at most 8, such as Stripes of its slots
// (FlightShape). Its slots start about 146 years before tick 0, as a new window's buckets do,
// so the first call starts the ring again at its time.
func NewFlight(length, maxRT int64, s int) *Flight {
	width, n := FlightShape(length, maxRT)
	stride, words := layout(n, s)
	f := &Flight{width: width, starts: make([]atomic.Int64, n), stride: stride, words: make([]atomic.Uint64, words)}
	f.after.Store(2*width + maxRT)
	noStart := -(1 << 62) / width * width
	for i := range f.starts {
		f.starts[i].Store(noStart - int64(n-i)*width)
	}
	f.starts[0].Store(noStart)
	for i := range f.starts {
		f.setAll(i, f.lapOf(f.starts[i].Load())<<flightLapShift)
	}
	f.judged.Store(noStart - width) // head is slots[0]
	return f
}

// word returns the word of slot i in stripe.
func (f *Flight) word(i int, stripe uint8) *atomic.Uint64 {
	return &f.words[at(stripe, f.stride, i, len(f.words))]
}

// stripes returns the ring's stripes.
func (f *Flight) stripes() int { return len(f.words) / f.stride }

// setAll stores w in the word of slot i in every stripe.
func (f *Flight) setAll(i int, w uint64) {
	for st := range f.stripes() {
		f.word(i, uint8(st)).Store(w)
	}
}

// FlightShape returns the slot width and the number of slots of the ring for a window of
// buckets of length, and maxRT: enough slots to span maxRT and two more.
func FlightShape(length, maxRT int64) (width int64, n int) {
	width = length
	for maxRT/width+3 > maxFlightSlots {
		width *= 2
	}
	return width, int(maxRT/width + 3)
}

// FlightBytes is what the ring for length and maxRT striped for procs processors takes: its
// slots, their stripes and its header, rounded up.
func FlightBytes(length, maxRT int64, procs int) int64 {
	_, n := FlightShape(length, maxRT)
	return int64(n)*int64(unsafe.Sizeof(atomic.Int64{})) + StripedBytes(n, procs) + 112
}

// lapOf is the lap of the slot that holds the calls started from start. A slot whose word's
// lap is not lapOf(its start) holds no calls that count: the ring started again since.
func (f *Flight) lapOf(start int64) uint64 { return uint64(start/f.width) & flightLapMask }

// Retune makes the ring judge its calls by the limit maxRT from now on.
func (f *Flight) Retune(maxRT int64) { f.after.Store(2*f.width + maxRT) }

// Fits reports whether the ring spans maxRT as a ring made for it would (FlightShape): a
// retuned ring judges its calls by it.
func (f *Flight) Fits(length, maxRT int64) bool {
	width, n := FlightShape(length, maxRT)
	return width == f.width && n <= len(f.starts)
}

// TryEnter is Enter for a call that starts in the head slot, in stripe 0, the common case,
// small enough to inline (TestFastPathsInline holds it): it returns the call's seat, or 0
// when Enter must run. The caller judges first if a slot is Due. Calls that contend for the
// ring (the caller knows: their window is striped) enter by TryEnterOn instead.
func (f *Flight) TryEnter(now int64) uint64 {
	i := f.head.Load()
	if uint64(now-f.starts[i].Load()) >= uint64(f.width) {
		return 0
	}
	return flightSeated | i<<flightWordShift | f.words[i].Add(flightWaiting)>>flightLapShift
}

// TryEnterOn is TryEnter in stripe, small enough to inline too.
func (f *Flight) TryEnterOn(now int64, stripe uint8) uint64 {
	i := f.head.Load()
	if uint64(now-f.starts[i].Load()) >= uint64(f.width) {
		return 0
	}
	w := (int(stripe)*f.stride | int(i)) & (len(f.words) - 1) // at, written out to inline
	return flightSeated | uint64(w)<<flightWordShift | f.words[w].Add(flightWaiting)>>flightLapShift
}

// TryLeave is Leave for a call held (a seat not 0) in a lap that no judgement counted, the
// common case, small enough to inline (TestFastPathsInline holds it): it reports whether it
// took the call out. The caller judges first if a slot is Due.
func (f *Flight) TryLeave(seat uint64) bool {
	w := &f.words[seat>>flightWordShift&flightWordMask]
	old := w.Load()
	// Of its lap, none counted and some waiting: without its lap, the word holds waiting calls
	// only, at least one. (A lap that came round again may hold none, and leave decides.)
	rest := old ^ (seat&flightLapMask)<<flightLapShift
	return rest-flightWaiting < flightCountMask<<flightCountBits && rest&flightCountMask == 0 &&
		w.CompareAndSwap(old, old-flightWaiting)
}

// Enter counts a call that starts at now, in stripe. It returns the call's seat (0: not held, for a
// clock that stepped back to a slot that has moved on since), and the calls of an earlier lap
// of the slot it moved to that no judgement counted yet: slow, for the caller to count. again
// says that the clock stepped back past the ring, or so far ahead that the ticks wrapped, while
// the ring holds calls: the call must enter a new ring, started at now.
func (f *Flight) Enter(now int64, stripe uint8) (seat, slow uint64, again bool) {
	i := f.head.Load()
	if uint64(now-f.starts[i].Load()) >= uint64(f.width) {
		var ok bool
		if i, slow, ok, again = f.move(now); !ok {
			return 0, slow, again
		}
	}
	w := at(stripe, f.stride, int(i), len(f.words))
	lap, _, _ := unpackFlight(f.words[w].Add(flightWaiting))
	return flightSeated | uint64(w)<<flightWordShift | lap, slow, false
}

// move returns the index of the slot for a call that starts at now, outside the head slot: a
// later slot, which it makes the head; the slot of an earlier start, while it still holds that
// start (a clock that stepped back a little, or a call that read the clock just before another
// moved the head), else not ok; or, for a clock that stepped back past the ring, or so far
// ahead that the ticks wrapped, the head of the ring started again at now, if it holds no
// calls (a new ring's first call comes here), else not ok and again.
func (f *Flight) move(now int64) (idx, slow uint64, ok, again bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	head := f.head.Load()
	headStart := f.starts[head].Load()
	d := now - headStart
	n := int64(len(f.starts))
	switch {
	case d >= 0 && d < f.width:
		return head, 0, true, false // another call moved it
	case d < 0 && d > -n*f.width:
		back := (-d + f.width - 1) / f.width
		earlier := uint64((int64(head) - back%n + n) % n)
		return earlier, 0, f.starts[earlier].Load() == headStart-back*f.width, false
	case d < 0 || d >= 1<<62:
		if !f.restart(now) {
			return 0, 0, false, true
		}
		return head, 0, true, false
	}
	steps := d / f.width
	idx = uint64((int64(head) + steps%n) % n)

	// A new lap of the slot. Its last lap is due, so its calls still in flight are slow:
	// judge counts them unless this takes them first.
	start, oldStart := headStart+steps*f.width, f.starts[idx].Load()
	for st := range f.stripes() {
		old := f.word(int(idx), uint8(st)).Swap(f.lapOf(start) << flightLapShift)
		if lap, waiting, _ := unpackFlight(old); lap == f.lapOf(oldStart) {
			slow += waiting
		}
	}
	f.starts[idx].Store(start)
	f.head.Store(idx)
	return idx, slow, true, false
}

// restart starts the ring again with its head slot at now's, if no slot holds a call: each
// slot's word is replaced only while it holds none, with a lap that disagrees with its start,
// so that no judgement counts it and a call that enters it meanwhile leaves it uncounted. It
// requires mu held.
func (f *Flight) restart(now int64) bool {
	for i := range f.starts {
		for st := range f.stripes() {
			if !f.blank(f.word(i, uint8(st)), (f.lapOf(f.starts[i].Load())+1)<<flightLapShift) {
				return false
			}
		}
	}
	head := int(f.head.Load())
	start := now - FloorMod(now, f.width)
	blank := (f.lapOf(f.starts[head].Load()) + 1) << flightLapShift
	f.starts[head].Store(start)
	for st := range f.stripes() {
		if !f.word(head, uint8(st)).CompareAndSwap(blank, f.lapOf(start)<<flightLapShift) {
			return false // a call entered the head slot meanwhile: it leaves uncounted
		}
	}
	f.judged.Store(start - f.width)
	return true
}

// blank replaces the word w with blank, if it holds no call, and reports whether it did.
func (f *Flight) blank(w *atomic.Uint64, blank uint64) bool {
	for {
		old := w.Load()
		if _, waiting, counted := unpackFlight(old); waiting+counted > 0 {
			return false
		}
		if w.CompareAndSwap(old, blank) {
			return true
		}
	}
}

// Leave takes a call with seat out of flight when it returns, and reports whether it was
// counted as slow while in flight, so that it counts nothing more.
func (f *Flight) Leave(seat uint64) (counted bool) {
	if seat == 0 {
		return false
	}
	w, lap := &f.words[seat>>flightWordShift&flightWordMask], seat&flightLapMask
	for {
		old := w.Load()
		l, waiting, done := unpackFlight(old)
		switch {
		case l != lap:
			return true // its lap was judged and the slot moved on, or the ring started again
		case done > 0:
			if w.CompareAndSwap(old, old-1) {
				return true
			}
		case waiting > 0:
			if w.CompareAndSwap(old, old-flightWaiting) {
				return false
			}
		default:
			return true
		}
	}
}

// Due reports whether a slot has become due at now since the last judgement.
func (f *Flight) Due(now int64) bool { return now-f.judged.Load() >= f.after.Load() }

// Judge counts as slow, once, the calls still in flight in every slot due at now, and returns
// how many it counted.
func (f *Flight) Judge(now int64) uint64 {
	last := now - (f.after.Load() - f.width) // a slot is due a width and MaxAllowedRT after its start
	last -= FloorMod(last, f.width)          // the start of the latest slot due
	for {
		old := f.judged.Load()
		if last-old <= 0 {
			return 0
		}
		if f.judged.CompareAndSwap(old, last) {
			return f.countDue(old, last)
		}
	}
}

// countDue moves the calls in flight of the slots that start in (after, last] to counted.
func (f *Flight) countDue(after, last int64) uint64 {
	var slow uint64
	for i := range f.starts {
		start := f.starts[i].Load()
		if start-after <= 0 || start-last > 0 {
			continue
		}
		for st := range f.stripes() {
			slow += f.countWord(f.word(i, uint8(st)), f.lapOf(start))
		}
	}
	return slow
}

// countWord moves the calls in flight of the word w, of a slot due in its lap, to counted, and
// returns how many it moved.
func (f *Flight) countWord(w *atomic.Uint64, lap uint64) uint64 {
	for {
		old := w.Load()
		l, waiting, _ := unpackFlight(old)
		if waiting == 0 || l != lap {
			return 0 // nothing in flight, or the slot moved on since its start was read
		}
		if w.CompareAndSwap(old, old-waiting*flightWaiting+waiting) {
			return waiting
		}
	}
}
