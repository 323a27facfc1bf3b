package breaker

import (
	"sync"
	"unsafe"

	"go.uber.org/atomic"
)

// This file is what makes a call slow: a response time over MaxAllowedRT, a cut at the
// resource's Timeout, or running past MaxAllowedRT while still in flight (the ring of calls in
// flight, flight, below).

// ResponseTimeBreaker is the breaker of a SlowRequestRatio rule. It counts a call as slow when
// its response time, from Enter to Exit, is greater than the rule's MaxAllowedRT, or while it
// is still in flight once it has run longer, and trips when slow calls / calls in its window
// reach the threshold. A probe succeeds when it is not slow, whatever its error.
type ResponseTimeBreaker struct{ circuit }

var _ CircuitBreaker = (*ResponseTimeBreaker)(nil)

// isSlow reports whether a call that ended as res is slow: it took longer than maxRT (one that
// took exactly maxRT is not), or it was cut off at the deadline of the resource's Timeout,
// which may be shorter than maxRT: a call that had to be cut off was too slow.
func isSlow(res *result, maxRT int64) bool { return res.rt > maxRT || res.cutOff }

// slowIgnored reports whether a call that counts neither way by its error was already slow:
// SlowRequestRatio counts it as slow, since a caller that gave up on a slow call does not make
// it fast.
func (c *circuit) slowIgnored(res *result) bool {
	return res.o == Ignore && c.strategy == SlowRequestRatio && isSlow(res, c.tune.Load().maxRT)
}

// probeSlow reports whether the probe of the HALF_OPEN period p, in flight at now, is already a
// slow call: a SlowRequestRatio breaker's probe that has run longer than MaxAllowedRT has
// failed, and its own completion will count nothing.
func (c *circuit) probeSlow(p *period, now int64) bool {
	return c.strategy == SlowRequestRatio && now-(p.deadline-p.probeFor) > c.tune.Load().maxRT
}

// enterFlight counts a call that the CLOSED period p admitted at now among p's calls in
// flight, after counting as slow those that have run longer than MaxAllowedRT. It returns the
// call's ticket, and the period whose ring holds it: p, or, when the clock stepped back past a
// ring that holds calls, a copy of p with a ring started again at now (see reflight). The
// calls of the old ring leave it when they return, and count then, by their response time.
func (c *circuit) enterFlight(p *period, now int64) (*period, uint64) {
	for {
		c.judgeFlight(p, now)
		ticket, slow, again := p.flight.enter(now)
		c.countSlow(p, slow, now)
		if !again {
			return p, ticket
		}
		q := c.reflight(p, newFlight(c.bucketLen(), c.tune.Load().maxRT), nil)
		if q == nil {
			return p, 0 // p is over: the call counts nothing in it
		}
		p = q
	}
}

// leaveFlight takes the call that a completed at now out of the calls in flight of its
// period, after counting as slow those of p, the period it counts in now, that have run longer
// than MaxAllowedRT. It reports whether the call was counted so while in flight: then it
// counts nothing more.
func (c *circuit) leaveFlight(p *period, a *admission, now int64) bool {
	c.judgeFlight(p, now)
	return a.p.flight.leave(a.ticket)
}

// judgeFlight counts as slow, in the window's newest bucket, the calls in flight of p whose
// slot has been over for MaxAllowedRT at now: those of its ring, and those of the ring a
// reload of MaxAllowedRT replaced, once the new ring is due too (at most a slot later).
func (c *circuit) judgeFlight(p *period, now int64) {
	if !p.flight.due(now) {
		return
	}
	slow := p.flight.judge(now)
	if p.oldFlight != nil {
		slow += p.oldFlight.judge(now)
	}
	c.countSlow(p, slow, now)
}

// reflight replaces the CLOSED period p with a copy whose calls in flight are counted in the
// ring f, with those of old judged too, and returns the copy, or the copy another call made
// first; nil when p is over. It is not a transition: the copy keeps p's generation and shares
// its window (see current), and the calls p admitted leave p's ring.
func (c *circuit) reflight(p *period, f, old *flight) *period {
	q := p.withFlight(f, old)
	if c.cur.CompareAndSwap(p, q) {
		return q
	}
	return c.current(p)
}

// retuneFlight applies a reloaded MaxAllowedRT to the calls in flight of the current CLOSED
// period: its rings judge them by maxRT from now on, and, when maxRT needs a larger ring, a
// new ring counts the calls from now on while the old one's calls are judged with it. A ring
// that an earlier reload replaced is let go, its calls counted when they return.
func (c *circuit) retuneFlight(maxRT int64) {
	for {
		p := c.cur.Load()
		f := p.flight
		if f == nil || p.retired {
			return // a period made from now on has a ring for maxRT
		}
		f.retune(maxRT)
		if p.oldFlight != nil {
			p.oldFlight.retune(maxRT)
		}
		if width, n := flightShape(c.bucketLen(), maxRT); width == f.width && n <= len(f.slots) {
			return
		}
		if q := c.reflight(p, newFlight(c.bucketLen(), maxRT), f); q == nil || q.oldFlight == f {
			return // replaced, or p is over
		}
	}
}

// countSlow counts n calls in flight as slow at now, and trips p if its window then meets the
// threshold.
func (c *circuit) countSlow(p *period, n uint64, now int64) {
	switch {
	case n == 0:
	case p.calls != nil:
		c.countCalls(p, n, true, now, 0)
	default:
		c.judge(p, p.window.add(now, n, true), now, 0)
	}
}

// flight counts the calls in flight of a SlowRequestRatio breaker's CLOSED period by when they
// started, so that a call still running past MaxAllowedRT counts as slow before it returns:
// a dependency that hangs completes nothing, and a breaker that counted only completed calls
// would never see it.
//
// Calls are counted in the slots of a ring by their start, each slot as wide as a bucket of the
// window (wider for a MaxAllowedRT of more than a thousand buckets). Once a slot has been over
// for MaxAllowedRT, every call of it still in flight has run longer than that: the next call
// to enter or complete finds the slot due and counts those calls as slow, in the window's
// newest bucket. When such a call returns, it counts nothing more. The ring spans MaxAllowedRT
// and two slots, so a slot is due, and judged, before a later start takes it over.
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
type flight struct {
	width  int64        // of a slot
	after  atomic.Int64 // how long after the start of the latest slot judged the next is due: 2 widths + MaxAllowedRT
	slots  []flightSlot
	head   atomic.Uint64 // the index in slots of the slot of the latest start
	judged atomic.Int64  // the start of the latest slot judged
	mu     sync.Mutex    // serialises moves of head
}

type flightSlot struct {
	start atomic.Int64
	word  atomic.Uint64 // lap in the high 24 bits, waiting in the next 20, counted in the low 20
}

const (
	flightCountBits = 20
	flightCountMask = 1<<flightCountBits - 1
	flightWaiting   = 1 << flightCountBits
	flightLapShift  = 2 * flightCountBits
	flightLapMask   = 1<<24 - 1
	maxFlightSlots  = 1024 // a MaxAllowedRT of more buckets gets wider slots instead
)

// A ticket is what a call that entered the ring keeps to leave it: its slot's index and lap,
// and a flag, so that the zero ticket is a call the ring does not hold.
const flightTicket = 1 << 63

func unpackFlight(w uint64) (lap, waiting, counted uint64) {
	return w >> flightLapShift, w >> flightCountBits & flightCountMask, w & flightCountMask
}

// newFlight makes the ring of a period, for a window of buckets of length and maxRT. Its
// slots start about 146 years before the epoch, as a new window's buckets do, so the first
// call starts the ring again at its time.
func newFlight(length, maxRT int64) *flight {
	width, n := flightShape(length, maxRT)
	f := &flight{width: width, slots: make([]flightSlot, n)}
	f.after.Store(2*width + maxRT)
	noStart := -(1 << 62) / width * width
	for i := range f.slots {
		s := &f.slots[i]
		s.start.Store(noStart - int64(n-i)*width)
		s.word.Store(f.lapOf(s.start.Load()) << flightLapShift)
	}
	f.slots[0].start.Store(noStart)
	f.slots[0].word.Store(f.lapOf(noStart) << flightLapShift)
	f.judged.Store(noStart - width) // head is slots[0]
	return f
}

// flightShape returns the slot width and the number of slots of the ring for a window of
// buckets of length, and maxRT: enough slots to span maxRT and two more.
func flightShape(length, maxRT int64) (width int64, n int) {
	width = length
	for maxRT/width+3 > maxFlightSlots {
		width *= 2
	}
	return width, int(maxRT/width + 3)
}

// flightBytes is what the ring of a rule takes: its slots and its header, rounded up.
func flightBytes(length, maxRT int64) int64 {
	_, n := flightShape(length, maxRT)
	return int64(n)*int64(unsafe.Sizeof(flightSlot{})) + 96
}

// lapOf is the lap of the slot that holds the calls started from start. A slot whose word's
// lap is not lapOf(its start) holds no calls that count: the ring started again since.
func (f *flight) lapOf(start int64) uint64 { return uint64(start/f.width) & flightLapMask }

// retune makes the ring judge its calls by maxRT from now on.
func (f *flight) retune(maxRT int64) { f.after.Store(2*f.width + maxRT) }

// tryEnter is enter for a call that starts in the head slot while no slot is due, the common
// case, small enough to be inlined: it returns the call's ticket, or 0 when enter must run.
func (f *flight) tryEnter(now int64) uint64 {
	i := f.head.Load()
	s := &f.slots[i]
	if uint64(now-s.start.Load()) >= uint64(f.width) || f.due(now) {
		return 0
	}
	return flightTicket | i<<24 | s.word.Add(flightWaiting)>>flightLapShift
}

// tryLeave is leave for a call held (a ticket not 0) in a lap that no judgement counted, the
// common case, small enough to be inlined: it reports whether it took the call out. The
// caller judges first if a slot is due.
func (f *flight) tryLeave(ticket uint64) bool {
	s := &f.slots[ticket>>24&(maxFlightSlots*2-1)]
	old := s.word.Load()
	// Of its lap, none counted and some waiting: without its lap, the word holds waiting calls
	// only, at least one. (A lap that came round again may hold none, and leave decides.)
	rest := old ^ (ticket&flightLapMask)<<flightLapShift
	return rest-flightWaiting < flightCountMask<<flightCountBits && rest&flightCountMask == 0 &&
		s.word.CompareAndSwap(old, old-flightWaiting)
}

// enter counts a call that starts at now. It returns the call's ticket (0: not held, for a
// clock that stepped back to a slot that has moved on since), and the calls of an earlier lap
// of the slot it moved to that no judgement counted yet: slow, for the caller to count. again
// says that the clock stepped back past the ring, or so far ahead that the ticks wrapped, while
// the ring holds calls: the call must enter a new ring, started at now.
func (f *flight) enter(now int64) (ticket, slow uint64, again bool) {
	i := f.head.Load()
	if uint64(now-f.slots[i].start.Load()) >= uint64(f.width) {
		var ok bool
		if i, slow, ok, again = f.move(now); !ok {
			return 0, slow, again
		}
	}
	lap, _, _ := unpackFlight(f.slots[i].word.Add(flightWaiting))
	return flightTicket | i<<24 | lap, slow, false
}

// move returns the index of the slot for a call that starts at now, outside the head slot: a
// later slot, which it makes the head; the slot of an earlier start, while it still holds that
// start (a clock that stepped back a little, or a call that read the clock just before another
// moved the head), else not ok; or, for a clock that stepped back past the ring, or so far
// ahead that the ticks wrapped, the head of the ring started again at now, if it holds no
// calls (a new ring's first call comes here), else not ok and again.
func (f *flight) move(now int64) (idx, slow uint64, ok, again bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	head := f.head.Load()
	s := &f.slots[head]
	d := now - s.start.Load()
	n := int64(len(f.slots))
	switch {
	case d >= 0 && d < f.width:
		return head, 0, true, false // another call moved it
	case d < 0 && d > -n*f.width:
		back := (-d + f.width - 1) / f.width
		earlier := uint64((int64(head) - back%n + n) % n)
		return earlier, 0, f.slots[earlier].start.Load() == s.start.Load()-back*f.width, false
	case d < 0 || d >= 1<<62:
		if !f.restart(now) {
			return 0, 0, false, true
		}
		return head, 0, true, false
	}
	steps := d / f.width
	idx = uint64((int64(head) + steps%n) % n)
	next := &f.slots[idx]
	// A new lap of the slot. Its last lap is due, so its calls still in flight are slow:
	// judge counts them unless this takes them first.
	start, oldStart := s.start.Load()+steps*f.width, next.start.Load()
	old := next.word.Swap(f.lapOf(start) << flightLapShift)
	next.start.Store(start)
	f.head.Store(idx)
	if lap, waiting, _ := unpackFlight(old); lap == f.lapOf(oldStart) {
		return idx, waiting, true, false
	}
	return idx, 0, true, false
}

// restart starts the ring again with its head slot at now's, if no slot holds a call: each
// slot's word is replaced only while it holds none, with a lap that disagrees with its start,
// so that no judgement counts it and a call that enters it meanwhile leaves it uncounted. It
// requires mu held.
func (f *flight) restart(now int64) bool {
	for i := range f.slots {
		o := &f.slots[i]
		for {
			old := o.word.Load()
			if _, waiting, counted := unpackFlight(old); waiting+counted > 0 {
				return false
			}
			if o.word.CompareAndSwap(old, (f.lapOf(o.start.Load())+1)<<flightLapShift) {
				break
			}
		}
	}
	s := &f.slots[f.head.Load()]
	blank := s.word.Load()
	if _, waiting, counted := unpackFlight(blank); waiting+counted > 0 {
		return false
	}
	start := now - floorMod(now, f.width)
	s.start.Store(start)
	if !s.word.CompareAndSwap(blank, f.lapOf(start)<<flightLapShift) {
		return false // a call entered the head slot meanwhile: it leaves uncounted
	}
	f.judged.Store(start - f.width)
	return true
}

// leave takes a call with ticket out of flight when it returns, and reports whether it was
// counted as slow while in flight, so that it counts nothing more.
func (f *flight) leave(ticket uint64) (counted bool) {
	if ticket == 0 {
		return false
	}
	s, lap := &f.slots[ticket>>24&(maxFlightSlots*2-1)], ticket&flightLapMask
	for {
		old := s.word.Load()
		l, waiting, done := unpackFlight(old)
		switch {
		case l != lap:
			return true // its lap was judged and the slot moved on, or the ring started again
		case done > 0:
			if s.word.CompareAndSwap(old, old-1) {
				return true
			}
		case waiting > 0:
			if s.word.CompareAndSwap(old, old-flightWaiting) {
				return false
			}
		default:
			return true
		}
	}
}

// due reports whether a slot has become due at now since the last judgement.
func (f *flight) due(now int64) bool { return now-f.judged.Load() >= f.after.Load() }

// judge counts as slow, once, the calls still in flight in every slot due at now, and returns
// how many it counted.
func (f *flight) judge(now int64) uint64 {
	last := now - (f.after.Load() - f.width) // a slot is due a width and MaxAllowedRT after its start
	last -= floorMod(last, f.width)          // the start of the latest slot due
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
func (f *flight) countDue(after, last int64) uint64 {
	var slow uint64
	for i := range f.slots {
		s := &f.slots[i]
		start := s.start.Load()
		if start-after <= 0 || start-last > 0 {
			continue
		}
		for {
			old := s.word.Load()
			lap, waiting, _ := unpackFlight(old)
			if waiting == 0 || lap != f.lapOf(start) {
				break // nothing in flight, or the slot moved on since start was read
			}
			if s.word.CompareAndSwap(old, old-waiting*flightWaiting+waiting) {
				slow += waiting
				break
			}
		}
	}
	return slow
}
