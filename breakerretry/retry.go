// Package breakerretry is a retry loop around breaker.Manager.Do that waits as long as the
// breakers and the dependency say, so that it neither spins on an open breaker nor defeats it:
//
//	retry := breakerretry.Policy{Attempts: 5, Within: time.Minute, Backoff: backoff}
//	err := retry.Do(ctx, m, "payments", charge)
//
// With a retry library of your own, Manager.RetryWait gives the same wait.
package breakerretry

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/halfopen/breaker"
)

// ErrInvalid is wrapped by the error Policy.Do returns for a Policy it cannot run: Attempts
// below 1, a negative Within, a nil Manager or function (then before any call), or a negative
// wait from Backoff (then after the call it followed).
var ErrInvalid = errors.New("breakerretry: invalid policy")

// Policy says how a loop retries. After a rejection it waits until the rejection's RetryAt, and
// never calls before; a rejection without a RetryAt ends the loop (see Manager.RetryWait). After
// a failure it waits the longer of Backoff and the failure's RetryAfter hint.
//
// A rejection is never counted as a failure. Each attempt is its own call to Do, so a rejected
// attempt counts in no window, and the breakers count only the calls they let through. A
// rejection that fn brings back from a call to another resource counts neither way for this
// one (where Do alone would count it as a failure): that resource's breaker has counted what
// failed, and this one should not trip on its rejections. An explicit breaker.CountAs wins.
//
// The zero value does not run: Attempts must be at least 1. A Policy holds no state of its own,
// so one value may serve many loops at once, as far as its functions allow.
type Policy struct {
	// Attempts is the most calls to Do, the first included, whether the breakers let them
	// through or not. It must be at least 1.
	Attempts int
	// Within bounds the loop by the Manager's clock, from its first call: a wait that would
	// end later stops the loop at once with the last error, rather than sleep past the bound.
	// 0: no bound but Attempts and ctx. It must not be negative.
	Within time.Duration
	// Backoff is the wait after the n-th call (n from 1) when it failed, and the least wait
	// when the failure had a RetryAfter hint; nil: none. It is not asked after a rejection,
	// whose wait RetryAt sets. A negative wait stops the loop with ErrInvalid.
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
func (p Policy) Do(ctx context.Context, m *breaker.Manager, resource string, fn func(context.Context) error) error {
	if err := p.validate(m, fn); err != nil {
		return err
	}
	sleep := p.Sleep
	if sleep == nil {
		sleep = sleepFor
	}
	attempt := func(ctx context.Context) error {
		err := fn(ctx)
		if _, marked := breaker.CountedAs(err); !marked && isRejection(err) {
			return breaker.CountAs(err, breaker.Ignore)
		}
		return err
	}
	deadline := m.Now().Add(p.Within)
	var last error
	for n := 1; ; n++ {
		if err := ctx.Err(); err != nil {
			return stopped(err, last)
		}
		last = m.Do(ctx, resource, attempt)
		if last == nil || n >= p.Attempts {
			return last
		}
		wait, again := m.RetryWait(last)
		rejected := isRejection(last)
		if !again || !rejected && p.Retryable != nil && !p.Retryable(last) {
			return last
		}
		if !rejected && p.Backoff != nil {
			b := p.Backoff(n)
			if b < 0 {
				return fmt.Errorf("%w: Backoff(%d) is %v, want at least 0 (last attempt: %w)", ErrInvalid, n, b, last)
			}
			wait = max(wait, b)
		}
		if p.Within > 0 && m.Now().Add(wait).After(deadline) {
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

// isRejection reports whether err is, or wraps, a breaker's rejection.
func isRejection(err error) bool {
	var blocked *breaker.BlockError
	return errors.As(err, &blocked)
}

// validate reports why p cannot run fn through m, or nil.
func (p Policy) validate(m *breaker.Manager, fn func(context.Context) error) error {
	switch {
	case p.Attempts < 1:
		return fmt.Errorf("%w: Attempts is %d, want at least 1", ErrInvalid, p.Attempts)
	case p.Within < 0:
		return fmt.Errorf("%w: Within is %v, want 0 (no bound) or more", ErrInvalid, p.Within)
	case m == nil:
		return fmt.Errorf("%w: the Manager is nil", ErrInvalid)
	case fn == nil:
		return fmt.Errorf("%w: the function is nil", ErrInvalid)
	}
	return nil
}

// stopped is the error of a loop that cause ended after the call that failed with last.
func stopped(cause, last error) error {
	if last == nil {
		return cause
	}
	return fmt.Errorf("breakerretry: stopped: %w (last attempt: %w)", cause, last)
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
