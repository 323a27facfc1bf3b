package breaker

// ResponseTimeBreaker is the breaker of a SlowRequestRatio rule. It counts a call as slow when
// its response time, from Enter to Exit, is greater than the rule's MaxAllowedRT, or while it
// is still in flight once it has run longer (flight.go), and trips when slow calls / calls in
// its window reach the threshold. A probe succeeds when it is not slow, whatever its error.
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
// call's ticket.
func (c *circuit) enterFlight(p *period, now int64) uint64 {
	c.judgeFlight(p, now)
	ticket, slow := p.flight.enter(now)
	c.countSlow(p, slow, now)
	return ticket
}

// leaveFlight takes the call with ticket, which completed at now in p, out of flight, after
// counting as slow those that have run longer than MaxAllowedRT. It reports whether the call
// was counted so while in flight: then it counts nothing more.
func (c *circuit) leaveFlight(p *period, ticket uint64, now int64) bool {
	c.judgeFlight(p, now)
	return p.flight.leave(ticket)
}

// judgeFlight counts as slow, in the window's newest bucket, the calls in flight of p whose
// slot has been over for MaxAllowedRT at now.
func (c *circuit) judgeFlight(p *period, now int64) {
	if p.flight.due(now) {
		c.countSlow(p, p.flight.judge(now), now)
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
