package breaker

import (
	"time"
)

// RetryAfter returns err marked with the dependency's own word on when to call again, such as
// an HTTP Retry-After header or a gRPC RetryInfo: when the call counts as failed and trips its
// breaker, or fails its probe, the breaker stays OPEN at least d, but no longer than
// MaxRetryTimeout (RetryTimeout when that is 0), so that a wrong hint cannot hold recovery
// back. errors.Is and errors.As see through the mark; a nil err stays nil.
func RetryAfter(err error, d time.Duration) error {
	if err == nil {
		return nil
	}
	return &retryAfterError{err: err, after: d}
}

// RetryAfterOf returns the hint that RetryAfter attached to err or an error it wraps.
func RetryAfterOf(err error) (time.Duration, bool) {
	if e, ok := inChain[*retryAfterError](err); ok {
		return e.after, true
	}
	return 0, false
}

type retryAfterError struct {
	err   error
	after time.Duration
}

func (e *retryAfterError) Error() string { return e.err.Error() }
func (e *retryAfterError) Unwrap() error { return e.err }

// retryHint is the hint of err in nanoseconds, 0 when it has none.
func retryHint(err error) int64 {
	if err == nil {
		return 0
	}
	d, _ := RetryAfterOf(err)
	return int64(max(d, 0))
}
