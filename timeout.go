package breaker

import (
	"context"
	"time"
)

// A resource's Timeout is a deadline on the context its calls' functions get (Do, Execute,
// handles, Entry.WithTimeout). A call that runs past that deadline failed, and is slow for
// SlowRequestRatio, whatever it returned: its caller waited longer than it was promised. The
// library abandons no call (it starts no goroutine), so a function that ignores its context
// still returns when it returns, and its result goes to its caller as it is. A call that ends at
// the caller's own, earlier deadline counts as its error says.

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

// outlived reports whether the call ran past the deadline of l: it is over (nil, the caller's
// own deadline came first, has none).
func (l *limit) outlived() bool { return l != nil && l.ctx.Err() == context.DeadlineExceeded }

// ending is endingOf for a call that ran with the limit l: outlived once l's deadline has
// passed, whatever the call returned and whatever its caller did after.
func (l *limit) ending(caller context.Context, err error) ending {
	if l.outlived() {
		return outlived
	}
	return endingOf(caller, err)
}

// timeoutOf returns the Timeout of a resource's settings, or 0.
func (res *resource) timeoutOf() time.Duration {
	if res == nil || res.set == nil {
		return 0
	}
	return res.set.Timeout
}
