package breaker

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrInvalidRetry is wrapped by the error Retry.Do returns for a Retry it cannot run: Attempts
// below 1, a negative Within, a nil Manager or function (then before any call), or a negative
// wait from Backoff (then after the call it followed).
var ErrInvalidRetry = errors.New("breaker: invalid retry")

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
// retry library; Retry is a loop that uses it.
func (m *Manager) RetryWait(err error) (wait time.Duration, retry bool) {
	wait, retry, _ = retryWait(err, m.Now())
	return wait, retry
}

// retryWait is RetryWait at now; rejected says that err is a rejection.
func retryWait(err error, now time.Time) (wait time.Duration, retry, rejected bool) {
	if err == nil {
		return 0, false, false
	}
	var blocked *BlockError
	if errors.As(err, &blocked) {
		if blocked.RetryAt.IsZero() {
			return 0, false, true
		}
		return max(blocked.RetryAt.Sub(now), 0), true, true
	}
	d, _ := RetryAfterOf(err)
	return max(d, 0), true, false
}

// Retry is a retry loop around Manager.Do that waits as long as the breakers and the dependency
// say, so that it neither spins on an open breaker nor defeats it. After a rejection it waits
// until the rejection's RetryAt, and never calls before; a rejection without a RetryAt ends the
// loop (see Manager.RetryWait). After a failure it waits the longer of Backoff and the
// failure's RetryAfter hint.
//
// A rejection is never counted as a failure. Each attempt is its own call to Do, so a rejected
// attempt counts in no window, and the breakers count only the calls they let through. A
// rejection that fn brings back from a call to another resource counts neither way for this
// one (where Do alone would count it as a failure): that resource's breaker has counted what
// failed, and this one should not trip on its rejections. An explicit CountAs wins.
//
// The zero value does not run: Attempts must be at least 1. A Retry holds no state of its own,
// so one value may serve many loops at once, as far as its functions allow.
type Retry struct {
	// Attempts is the most calls to Do, the first included, whether the breakers let them
	// through or not. It must be at least 1.
	Attempts int
	// Within bounds the loop by the Manager's clock, from its first call: a wait that would
	// end later stops the loop at once with the last error, rather than sleep past the bound.
	// 0: no bound but Attempts and ctx. It must not be negative.
	Within time.Duration
	// Backoff is the wait after the n-th call (n from 1) when it failed, and the least wait
	// when the failure had a RetryAfter hint; nil: none. It is not asked after a rejection,
	// whose wait RetryAt sets. A negative wait stops the loop with ErrInvalidRetry.
	Backoff func(n int) time.Duration
	// Retryable says whether a failure is worth another call (a bad request is not); nil:
	// every failure is. It is not asked about rejections.
	Retryable func(err error) bool
	// Sleep waits d, or until ctx is done and then returns its error; nil: a timer. A test
	// gives one that advances a fake clock.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Do calls m.Do(ctx, resource, fn) until it returns nil, and returns nil; or until the loop
// ends, and returns the last call's error: Attempts were made, a failure is not Retryable, a
// rejection has no RetryAt, or the next wait would end past Within or past ctx's deadline.
// When ctx is done before a call, or Sleep fails, it returns an error that matches both that
// error (context.Canceled, say) and the last call's; ctx done before the first call returns
// ctx's error alone.
func (r Retry) Do(ctx context.Context, m *Manager, resource string, fn func(context.Context) error) error {
	if err := r.validate(m, fn); err != nil {
		return err
	}
	sleep := r.Sleep
	if sleep == nil {
		sleep = sleepFor
	}
	attempt := func(ctx context.Context) error {
		err := fn(ctx)
		if _, marked := markOf(err); !marked && err != nil && errors.As(err, new(*BlockError)) {
			return CountAs(err, Ignore)
		}
		return err
	}
	deadline := m.Now().Add(r.Within)
	var last error
	for n := 1; ; n++ {
		if err := ctx.Err(); err != nil {
			return stopped(err, last)
		}
		last = uncounted(m.Do(ctx, resource, attempt))
		if last == nil || n >= r.Attempts {
			return last
		}
		now := m.Now()
		wait, again, rejected := retryWait(last, now)
		if !again || !rejected && r.Retryable != nil && !r.Retryable(last) {
			return last
		}
		if !rejected && r.Backoff != nil {
			b := r.Backoff(n)
			if b < 0 {
				return fmt.Errorf("%w: Backoff(%d) is %v, want at least 0 (last attempt: %w)", ErrInvalidRetry, n, b, last)
			}
			wait = max(wait, b)
		}
		if r.Within > 0 && now.Add(wait).After(deadline) {
			return last
		}
		if d, ok := ctx.Deadline(); ok && time.Until(d) < wait {
			return last // ctx would end during the wait: say why the call failed, not that time ran out
		}
		if wait > 0 {
			if err := sleep(ctx, wait); err != nil {
				return stopped(err, last)
			}
		}
	}
}

// validate reports why r cannot run fn through m, or nil.
func (r Retry) validate(m *Manager, fn func(context.Context) error) error {
	switch {
	case r.Attempts < 1:
		return fmt.Errorf("%w: Attempts is %d, want at least 1", ErrInvalidRetry, r.Attempts)
	case r.Within < 0:
		return fmt.Errorf("%w: Within is %v, want 0 (no bound) or more", ErrInvalidRetry, r.Within)
	case m == nil:
		return fmt.Errorf("%w: the Manager is nil", ErrInvalidRetry)
	case fn == nil:
		return fmt.Errorf("%w: the function is nil", ErrInvalidRetry)
	}
	return nil
}

// stopped is the error of a loop that cause ended after the call that failed with last.
func stopped(cause, last error) error {
	if last == nil {
		return cause
	}
	return fmt.Errorf("breaker: retry stopped: %w (last attempt: %w)", cause, last)
}

// sleepFor waits d on a timer, or until ctx is done. It starts no goroutine.
func sleepFor(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
