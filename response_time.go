package breaker

// ResponseTimeBreaker is the breaker of a SlowRequestRatio rule. It counts a call as slow when
// its response time, from Enter to Exit, is greater than the rule's MaxAllowedRT, and trips
// when slow calls / calls in its window reach the threshold. A probe succeeds when it is not
// slow, whatever its error.
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
