package breaker

// ExceptionBreaker is the breaker of an ErrorRatio or ErrorCount rule. It counts a call as
// failed when it ends with an error that the Manager classifies as a failure, and trips when
// failed calls / calls (ErrorRatio) or failed calls (ErrorCount) in its window reach the
// threshold. A probe succeeds when it does not fail.
type ExceptionBreaker struct{ circuit }

var _ CircuitBreaker = (*ExceptionBreaker)(nil)
