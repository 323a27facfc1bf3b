package breaker

// ResponseTimeBreaker is the breaker of a SlowRequestRatio rule. It counts a call as slow when
// its response time, from Enter to Exit, is greater than the rule's MaxAllowedRT, and trips
// when slow calls / calls in its window reach the threshold. A probe succeeds when it is not
// slow, whatever its error.
type ResponseTimeBreaker struct{ circuit }

var _ CircuitBreaker = (*ResponseTimeBreaker)(nil)

// isSlow reports whether a call that took rt is slow. One that took exactly maxRT is not.
func isSlow(rt, maxRT int64) bool { return rt > maxRT }
