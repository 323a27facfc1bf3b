package breaker

import "github.com/halfopen/breaker/internal/window"

// This file is what makes a call slow: a response time over MaxAllowedRT, a cut at the
// resource's Timeout, or running past MaxAllowedRT while still in flight (the ring of calls in
// flight, window.Flight).

// ResponseTimeBreaker is the breaker of a SlowRequestRatio rule. It counts a call as slow when
// its response time, from Enter to Exit, is greater than the rule's MaxAllowedRT, or while it
// is still in flight once it has run longer, and trips when slow calls / calls in its window
// reach the threshold. A probe succeeds when it is not slow, whatever its error.
type ResponseTimeBreaker struct{ circuit }

var _ CircuitBreaker = (*ResponseTimeBreaker)(nil)

// isSlow reports whether a call that ended as res is slow: it took longer than maxRT (one that
// took exactly maxRT is not), or it ran past the resource's Timeout, which may be shorter than
// maxRT: a call its caller waited too long for was too slow.
func isSlow(res *result, maxRT int64) bool { return res.rt > maxRT || res.cutOff }

// judged: a call counts against the rule when it was slow, whatever its error; a call that
// counts neither way by its error counts all the same when it was slow, since a caller that gave
// up on a slow call does not make it fast.
func (b *ResponseTimeBreaker) judged(res result) (bool, window.Mark) {
	if isSlow(&res, b.tune.Load().maxRT) {
		return true, window.Bad
	}
	return res.o != Ignore, window.Good
}

// slow reports whether the call that ended as res was slow.
func (b *ResponseTimeBreaker) slow(res result) bool { return isSlow(&res, b.tune.Load().maxRT) }

// measure: the share of slow calls.
func (b *ResponseTimeBreaker) measure(t *tuning, all window.Counts) (float64, bool) {
	m := float64(all.Bad) / float64(all.Total)
	return m, m >= t.threshold
}

// failedInFlight: a probe that has run longer than MaxAllowedRT is a slow call already, and its
// own completion will count nothing.
func (b *ResponseTimeBreaker) failedInFlight(p *period, now int64) bool {
	return now-(p.deadline-p.probeFor) > b.tune.Load().maxRT
}

// counters: a window of the rule's shape, and a ring of the calls in flight.
func (b *ResponseTimeBreaker) counters(q *period) {
	b.leap.fill(q, b.stripes)
	q.flight = b.newFlight(b.tune.Load().maxRT)
}

// retuned: a new MaxAllowedRT judges the calls in flight too.
func (b *ResponseTimeBreaker) retuned(old, t *tuning) {
	if t.maxRT != old.maxRT {
		b.retuneFlight(t.maxRT)
	}
}

// newFlight returns an empty ring of calls in flight for the limit maxRT.
func (c *circuit) newFlight(maxRT int64) *window.Flight {
	length := c.leap.bucketLen()
	_, n := window.FlightShape(length, maxRT)
	return window.NewFlight(length, maxRT, c.stripes(n))
}

// enterFlight counts a call that the CLOSED period p admitted at now among p's calls in
// flight, in stripe, after counting as slow those that have run longer than MaxAllowedRT. It
// returns the call's seat in the ring, and the period whose ring holds it: p, or, when the
// clock stepped back past a ring that holds calls, a copy of p with a ring started again at
// now (see reflight). The calls of the old ring leave it when they return, and count then, by their
// response time.
func (c *circuit) enterFlight(p *period, now int64, stripe uint8) (*period, uint64) {
	for {
		c.judgeFlight(p, now, stripe)
		seat, slow, again := p.flight.Enter(now, stripe)
		c.countSlow(p, slow, now, stripe)
		if !again {
			return p, seat
		}
		q := c.reflight(p, c.newFlight(c.tune.Load().maxRT), nil)
		if q == nil {
			return p, 0 // p is over: the call counts nothing in it
		}
		p = q
	}
}

// leaveFlight takes the call in seat out of the ring of calls in flight that holds it, after
// counting as slow the calls of p, the period it counts in now, that have run longer than
// MaxAllowedRT (in stripe). It reports whether the call was counted so while in flight: then it
// counts nothing more.
func (c *circuit) leaveFlight(p *period, ring *window.Flight, seat uint64, now int64, stripe uint8) bool {
	c.judgeFlight(p, now, stripe)
	return ring.Leave(seat)
}

// judgeFlight counts as slow, in the window's newest bucket (in stripe), the calls in flight of p whose
// slot has been over for MaxAllowedRT at now: those of its ring, and those of the ring a
// reload of MaxAllowedRT replaced, once the new ring is due too (at most a slot later).
func (c *circuit) judgeFlight(p *period, now int64, stripe uint8) {
	if !p.flight.Due(now) {
		return
	}
	slow := p.flight.Judge(now)
	if p.oldFlight != nil {
		slow += p.oldFlight.Judge(now)
	}
	c.countSlow(p, slow, now, stripe)
}

// reflight replaces the CLOSED period p with a copy whose calls in flight are counted in the
// ring f, with those of old judged too, and returns the copy, or the copy another call made
// first; nil when p is over. It is not a transition: the copy keeps p's generation and shares
// its window (see current), and the calls p admitted leave p's ring.
func (c *circuit) reflight(p *period, f, old *window.Flight) *period {
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
		f.Retune(maxRT)
		if p.oldFlight != nil {
			p.oldFlight.Retune(maxRT)
		}
		if f.Fits(c.leap.bucketLen(), maxRT) {
			return
		}
		if q := c.reflight(p, c.newFlight(maxRT), f); q == nil || q.oldFlight == f {
			return // replaced, or p is over
		}
	}
}

// countSlow counts n calls in flight as slow at now, in stripe, and trips p if its window then
// meets the threshold. For a ramp or pacing they are a loss, as a slow call that returned is:
// a hung dependency is offered no more than it has served.
func (c *circuit) countSlow(p *period, n uint64, now int64, stripe uint8) {
	switch {
	case n == 0:
		return
	case p.calls != nil:
		c.countCalls(p, n, window.Bad, now, 0)
		return
	}
	head := p.window.Add(now, n, window.Bad, stripe)
	if p.ramp != nil && p.ramp.completed(now, c.tune.Load(), window.Bad, 0) == rampDead {
		c.died(p, now)
		return
	}
	c.judge(p, head, now, 0, window.Bad)
}
