package breaker

import (
	"context"
	"time"
)

// WithTimeout returns ctx with a deadline of the resource's Timeout (ResourceConfig) from now,
// never later than ctx's own, and its cancel function, which the caller must call when the
// call ends. For a resource without a Timeout it returns ctx itself and a cancel function
// that does nothing. Do, Execute and Resource handles apply the Timeout themselves; use this
// with Enter and Exit.
func (e *Entry) WithTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if e == nil || e.timeout <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, e.timeout)
}

// timeoutOf returns the Timeout of a resource's settings, or 0.
func (res *resource) timeoutOf() time.Duration {
	if res == nil || res.set == nil {
		return 0
	}
	return res.set.Timeout
}
