package breaker

import (
	"errors"
	"time"
)

// RetryWait says how long a caller should wait, at least, before it calls again after a call
// that ended with err, and whether calling again can help at all:
//
//   - nil: 0 and false, there is nothing to retry;
//   - a *BlockError with a RetryAt: the time until RetryAt by the Manager's clock, and true. A
//     call before then would only be rejected again;
//   - a *BlockError without a RetryAt (ForceOpen, MaxConcurrency, a slot, a name too long): 0
//     and false. Nothing says when a call would pass, and retrying only adds load;
//   - an error marked with RetryAfter: the dependency's hint (a negative one counts as none),
//     and true;
//   - any other error: 0 and true, the caller's own backoff decides.
//
// A rejection is found anywhere in err's chain, also one that a call to another resource,
// nested in the function, brought back. RetryWait is for the delay and abort functions of a
// retry library; package breakerretry is a loop that uses it.
func (m *Manager) RetryWait(err error) (wait time.Duration, retry bool) {
	if err == nil {
		return 0, false
	}
	var blocked *BlockError
	if errors.As(err, &blocked) {
		if blocked.RetryAt.IsZero() {
			return 0, false
		}
		return max(blocked.RetryAt.Sub(m.Now()), 0), true
	}
	d, _ := retryAfterOf(err)
	return max(d, 0), true
}

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

// retryAfterOf returns the hint that RetryAfter attached to err or an error it wraps
// (Manager.RetryWait gives it to callers).
func retryAfterOf(err error) (time.Duration, bool) {
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
	d, _ := retryAfterOf(err)
	return int64(max(d, 0))
}
