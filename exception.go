package breaker

// ExceptionBreaker is the breaker of an ErrorRatio, ErrorCount or ConsecutiveErrors rule. It
// counts a call as failed when it ends with an error that the Manager classifies as a failure,
// and trips when failed calls / calls (ErrorRatio) or failed calls (ErrorCount) in its window,
// or failed calls in a row (ConsecutiveErrors), reach the threshold. A probe succeeds when it
// does not fail.
type ExceptionBreaker struct{ circuit }

var _ CircuitBreaker = (*ExceptionBreaker)(nil)
