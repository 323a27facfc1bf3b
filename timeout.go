package breaker

import (
	"context"
	"errors"
	"time"
)

// WithTimeout returns ctx with a deadline of the resource's Timeout (ResourceConfig) from now,
// never later than ctx's own, and its cancel function, which the caller must call when the
// call ends. For a resource without a Timeout it returns ctx itself and a cancel function
// that does nothing. Do, Execute and Resource handles apply the Timeout themselves; use this
// with Enter and Exit. A call that then ends with context.DeadlineExceeded at this deadline,
// and not at an earlier one of ctx's, counts as slow for SlowRequestRatio, whatever its
// MaxAllowedRT.
func (e *Entry) WithTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if e == nil || e.timeout <= 0 {
		return ctx, func() {}
	}
	ctx, cancel, lim := withTimeout(ctx, e.timeout)
	if lim != nil {
		e.limit.Store(lim)
	}
	return ctx, cancel
}

// limit is a context whose deadline the library set from a resource's Timeout.
type limit struct{ ctx context.Context }

// withTimeout is context.WithTimeout, with the limit to judge the call by: nil when the
// parent's own deadline comes first, so that reaching it is the caller's doing.
func withTimeout(parent context.Context, timeout time.Duration) (context.Context, context.CancelFunc, *limit) {
	ctx, cancel := context.WithTimeout(parent, timeout)
	ours, _ := ctx.Deadline()
	if theirs, ok := parent.Deadline(); ok && !theirs.After(ours) {
		return ctx, cancel, nil
	}
	return ctx, cancel, &limit{ctx}
}

// cut reports whether a call that ended with err was cut off at the deadline of l. It is
// small enough to inline, so a call without a Timeout, or one that succeeded, pays for two
// comparisons.
func (l *limit) cut(err error) bool { return l != nil && err != nil && l.reached(err) }

func (l *limit) reached(err error) bool {
	return l.ctx.Err() == context.DeadlineExceeded && errors.Is(err, context.DeadlineExceeded)
}

// cutOff reports whether e's call, ended with err, was cut off at the deadline WithTimeout set.
func (e *Entry) cutOff(err error) bool { return err != nil && e.limit.Load().cut(err) }

// timeoutOf returns the Timeout of a resource's settings, or 0.
func (res *resource) timeoutOf() time.Duration {
	if res == nil || res.set == nil {
		return 0
	}
	return res.set.Timeout
}
