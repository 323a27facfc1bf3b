package breaker

import (
	"context"
	"errors"
	"time"
)

// A resource's Timeout is a deadline on the context its calls' functions get (Do, Execute,
// handles, Entry.WithTimeout). A call cut off at that deadline counts as failed, and
// as slow for SlowRequestRatio; one that ends at the caller's own, earlier deadline does not.

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

// timeoutOf returns the Timeout of a resource's settings, or 0.
func (res *resource) timeoutOf() time.Duration {
	if res == nil || res.set == nil {
		return 0
	}
	return res.set.Timeout
}
