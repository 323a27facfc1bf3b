package breakerretry_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakerretry"
	"github.com/halfopen/breaker/breakertest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// retryRig is a Manager on a fake clock with a dependency whose calls it records, a Sleep that
// moves the clock instead of waiting, and a count of every call to Do, let through or not.
type retryRig struct {
	t          *testing.T
	clock      *breakertest.Clock
	m          *breaker.Manager
	answer     func(n int) error // the dependency's answer to its n-th call (from 1)
	calls      []time.Duration   // when the dependency was called, as offsets from breakertest.Start
	waits      []time.Duration   // what the loop slept
	duringWait func()            // runs at each wait, before the clock moves; nil: nothing
	attempts   int               // calls to Do, rejected ones included
	rejected   int               // of those, the ones not let through
}

func newRetryRig(t *testing.T, rules ...breaker.Rule) *retryRig {
	t.Helper()
	r := &retryRig{t: t, clock: breakertest.NewClock(), answer: func(int) error { return nil }}
	r.m = breaker.NewManager(breaker.WithClock(r.clock), breaker.WithCallObserver(func(c breaker.CallInfo) {
		r.attempts++
		if c.Blocked != nil {
			r.rejected++
		}
	}))
	require.NoError(t, r.m.LoadRules(rules))
	return r
}

func (r *retryRig) call(context.Context) error {
	r.calls = append(r.calls, r.clock.Now().Sub(breakertest.Start))
	return r.answer(len(r.calls))
}

func (r *retryRig) sleep(_ context.Context, d time.Duration) error {
	r.waits = append(r.waits, d)
	if r.duringWait != nil {
		r.duringWait()
	}
	r.clock.Advance(d)
	return nil
}

// retry runs the loop p against the rig's dependency, with the rig's Sleep.
func (r *retryRig) retry(ctx context.Context, p breakerretry.Policy) error {
	p.Sleep = r.sleep
	return p.Do(ctx, r.m, "svc", r.call)
}

// trip makes n failed calls at the current time.
func (r *retryRig) trip(n int) {
	r.t.Helper()
	for range n {
		require.ErrorIs(r.t, r.m.Do(context.Background(), "svc", func(context.Context) error { return errDown }), errDown)
	}
	r.attempts, r.rejected = 0, 0
}

func (r *retryRig) now() time.Duration { return r.clock.Now().Sub(breakertest.Start) }

func (r *retryRig) stats(i int) breaker.Stats { return r.m.Breakers("svc")[i].Stats() }

// errDown is the error of a call that failed.
var errDown = errors.New("downstream failed")

// errorCount and errorRatio are rules of "svc" with RetryTimeout 5s over the default window, a
// second of ten buckets.
func errorCount(threshold float64, minRequests uint64) breaker.Rule {
	return breaker.Rule{Resource: "svc", Strategy: breaker.ErrorCount, Threshold: threshold,
		MinRequestAmount: minRequests, RetryTimeout: 5 * time.Second}
}

func errorRatio(threshold float64, minRequests uint64) breaker.Rule {
	return breaker.Rule{Resource: "svc", Strategy: breaker.ErrorRatio, Threshold: threshold,
		MinRequestAmount: minRequests, RetryTimeout: 5 * time.Second}
}

func constantBackoff(d time.Duration) func(int) time.Duration {
	return func(int) time.Duration { return d }
}

// Given a breaker OPEN until 5s, when a loop starts at 1s, then its first call is rejected,
// it sleeps exactly the 4s to RetryAt, calling nothing meanwhile, and the probe at 5s succeeds.
func TestRetryWaitsUntilRetryAtWhileOpen(t *testing.T) {
	r := newRetryRig(t, errorCount(1, 1)) // RetryTimeout 5s
	r.trip(1)
	r.clock.Advance(time.Second)
	var callsDuringWait []int
	r.duringWait = func() { callsDuringWait = append(callsDuringWait, len(r.calls)) }

	err := r.retry(context.Background(), breakerretry.Policy{Attempts: 3, Backoff: constantBackoff(100 * time.Millisecond)})

	require.NoError(t, err)
	assert.Equal(t, []time.Duration{4 * time.Second}, r.waits, "one wait, to RetryAt, not the backoff")
	assert.Equal(t, []int{0}, callsDuringWait, "no call to the dependency before RetryAt")
	assert.Equal(t, []time.Duration{5 * time.Second}, r.calls, "the one call is the probe, at RetryAt")
	assert.Equal(t, 2, r.attempts)
	assert.Equal(t, 1, r.rejected)
	assert.Equal(t, breaker.Closed, r.m.Breakers("svc")[0].State())
}

// Given another caller's probe in flight, when a loop calls, then it is rejected and waits
// until the rejection's RetryAt (the start of the bucket after next, 200ms on), not at once.
func TestRetryWaitsWhileAProbeIsInFlight(t *testing.T) {
	r := newRetryRig(t, errorCount(1, 1)) // a 1s window of 10 buckets, RetryTimeout 5s
	r.trip(1)
	r.clock.Advance(5 * time.Second)
	probe, err := r.m.Enter("svc")
	require.NoError(t, err)
	r.duringWait = probe.Exit // the probe succeeds while the loop waits

	err = r.retry(context.Background(), breakerretry.Policy{Attempts: 2})

	require.NoError(t, err)
	assert.Equal(t, []time.Duration{200 * time.Millisecond}, r.waits)
	assert.Equal(t, []time.Duration{5*time.Second + 200*time.Millisecond}, r.calls)
	assert.Equal(t, 1, r.rejected)
}

// Given a dependency that answers "retry after 2s", then the next call is 2s later, not after
// the shorter backoff; a longer backoff wins over a shorter hint.
func TestRetryHonoursRetryAfter(t *testing.T) {
	tests := []struct {
		name    string
		backoff time.Duration
		want    time.Duration
	}{
		{"the hint is longer than the backoff", 100 * time.Millisecond, 2 * time.Second},
		{"the backoff is longer than the hint", 3 * time.Second, 3 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRetryRig(t) // no rules: only the hint and the backoff decide
			r.answer = func(n int) error {
				if n == 1 {
					return breaker.RetryAfter(errDown, 2*time.Second)
				}
				return nil
			}

			err := r.retry(context.Background(), breakerretry.Policy{Attempts: 3, Backoff: constantBackoff(tt.backoff)})

			require.NoError(t, err)
			assert.Equal(t, []time.Duration{tt.want}, r.waits)
			assert.Equal(t, []time.Duration{0, tt.want}, r.calls)
		})
	}
}

// Given a dependency that always fails, then the loop makes exactly Attempts calls, sleeps
// between them and not after the last, and returns the last failure.
func TestRetryCapsAttempts(t *testing.T) {
	r := newRetryRig(t)
	r.answer = func(int) error { return errDown }

	err := r.retry(context.Background(), breakerretry.Policy{Attempts: 4,
		Backoff: func(n int) time.Duration { return time.Duration(n) * time.Second }})

	assert.ErrorIs(t, err, errDown)
	assert.Equal(t, []time.Duration{0, time.Second, 3 * time.Second, 6 * time.Second}, r.calls)
	assert.Equal(t, []time.Duration{time.Second, 2 * time.Second, 3 * time.Second}, r.waits)
	assert.Equal(t, 4, r.attempts)
}

// Given a failure that trips the breaker at 0s (RetryAt 5s) and a backoff of 1s, then a loop
// bounded Within 4s stops at 1s with the rejection instead of sleeping past its bound, and one
// bounded Within 5s waits to RetryAt, the bound's last instant, and calls.
func TestRetryStopsBeforeARetryAtPastWithin(t *testing.T) {
	tests := []struct {
		name      string
		within    time.Duration
		wantErr   error
		wantWaits []time.Duration
		wantCalls []time.Duration
		wantNow   time.Duration
	}{
		{"RetryAt past the bound", 4 * time.Second, breaker.ErrOpen,
			[]time.Duration{time.Second}, []time.Duration{0}, time.Second},
		{"RetryAt at the bound", 5 * time.Second, nil,
			[]time.Duration{time.Second, 4 * time.Second}, []time.Duration{0, 5 * time.Second}, 5 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRetryRig(t, errorCount(1, 1))
			r.answer = func(n int) error {
				if n == 1 {
					return errDown
				}
				return nil
			}

			err := r.retry(context.Background(), breakerretry.Policy{Attempts: 10, Within: tt.within,
				Backoff: constantBackoff(time.Second)})

			if tt.wantErr == nil {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, tt.wantErr)
			}
			assert.Equal(t, tt.wantWaits, r.waits)
			assert.Equal(t, tt.wantCalls, r.calls)
			assert.Equal(t, tt.wantNow, r.now())
		})
	}
}

// Given a breaker OPEN for 2h and a context with 1h left, then the loop returns the rejection
// at once, rather than sleep until the context expires.
func TestRetryStopsBeforeARetryAtPastTheContextDeadline(t *testing.T) {
	rule := errorCount(1, 1)
	rule.RetryTimeout = 2 * time.Hour
	r := newRetryRig(t, rule)
	r.trip(1)
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()

	err := r.retry(ctx, breakerretry.Policy{Attempts: 3})

	assert.ErrorIs(t, err, breaker.ErrOpen)
	assert.NotErrorIs(t, err, context.DeadlineExceeded)
	assert.Empty(t, r.waits)
	assert.Equal(t, 1, r.attempts)
}

// Given two rules, one CLOSED that counts every call in a 60s window and one OPEN, then the
// loop's rejected attempts add nothing to the counting rule's window: only the probe does.
func TestRetryRejectedAttemptsAddNothingToTheWindow(t *testing.T) {
	counting := breaker.Rule{Resource: "svc", Strategy: breaker.ErrorRatio, Threshold: 1,
		MinRequestAmount: 100, StatInterval: time.Minute, RetryTimeout: time.Second}
	r := newRetryRig(t, counting, errorCount(2, 1))
	r.trip(2)
	require.Equal(t, breaker.Open, r.m.Breakers("svc")[1].State())
	require.Equal(t, uint64(2), r.stats(0).Total)
	var during []breaker.Stats
	r.duringWait = func() { during = append(during, r.stats(0)) }
	r.clock.Advance(4 * time.Second)

	err := r.retry(context.Background(), breakerretry.Policy{Attempts: 3})

	require.NoError(t, err)
	require.Len(t, during, 1)
	assert.Equal(t, uint64(2), during[0].Total, "the rejected attempt is not in the window")
	assert.Equal(t, uint64(2), during[0].Bad)
	assert.Equal(t, uint64(3), r.stats(0).Total, "the probe is")
	assert.Equal(t, uint64(2), r.stats(0).Bad)
	assert.Equal(t, 1, r.rejected)
}

// Given a function that brings back the rejection of a call to another resource, then that
// rejection is not counted as a failure of this resource, and the loop waits for its RetryAt.
func TestRetryDoesNotCountANestedRejection(t *testing.T) {
	inner := errorCount(1, 1)
	inner.Resource = "inner" // RetryTimeout 5s
	outer := errorRatio(1, 100)
	outer.StatInterval = time.Minute // the window still holds the first attempt at 5s
	r := newRetryRig(t, outer, inner)
	ctx := context.Background()
	require.ErrorIs(t, r.m.Do(ctx, "inner", func(context.Context) error { return errDown }), errDown)
	var innerCalls int
	fn := func(ctx context.Context) error {
		return r.m.Do(ctx, "inner", func(context.Context) error { innerCalls++; return nil })
	}

	err := breakerretry.Policy{Attempts: 2, Sleep: r.sleep}.Do(ctx, r.m, "svc", fn)

	require.NoError(t, err)
	assert.Equal(t, []time.Duration{5 * time.Second}, r.waits, "until the inner rejection's RetryAt")
	assert.Equal(t, 1, innerCalls)
	stats := r.stats(0)
	assert.Equal(t, uint64(1), stats.Total, "only the call that succeeded")
	assert.Equal(t, uint64(0), stats.Bad)
}

// Given a function that says how its rejection counts, then CountAs wins.
func TestRetryKeepsAnExplicitCountOfANestedRejection(t *testing.T) {
	r := newRetryRig(t, errorRatio(1, 100))
	blocked := &breaker.BlockError{Resource: "inner"} // no RetryAt: the loop stops after it
	fn := func(context.Context) error { return breaker.CountAs(blocked, breaker.Failure) }

	err := breakerretry.Policy{Attempts: 2, Sleep: r.sleep}.Do(context.Background(), r.m, "svc", fn)

	assert.Same(t, blocked, err)
	assert.Equal(t, uint64(1), r.stats(0).Bad)
}

// Given a rejection without a RetryAt (the resource is forced open), then the loop stops at
// once with it: no wait, and no second call to Do.
func TestRetryStopsOnARejectionWithoutRetryAt(t *testing.T) {
	r := newRetryRig(t)
	require.NoError(t, r.m.LoadResources(map[string]breaker.ResourceConfig{"svc": {Force: breaker.ForceOpen}}))

	err := r.retry(context.Background(), breakerretry.Policy{Attempts: 5, Backoff: constantBackoff(time.Second)})

	assert.ErrorIs(t, err, breaker.ErrForcedOpen)
	assert.Empty(t, r.waits)
	assert.Equal(t, 1, r.attempts)
}

// Given a failure that Retryable turns down, then the loop returns it after one call.
func TestRetryStopsOnAFailureNotRetryable(t *testing.T) {
	errBadRequest := errors.New("400 bad request")
	r := newRetryRig(t)
	r.answer = func(int) error { return errBadRequest }

	err := r.retry(context.Background(), breakerretry.Policy{Attempts: 5,
		Retryable: func(err error) bool { return !errors.Is(err, errBadRequest) }})

	assert.Same(t, errBadRequest, err)
	assert.Len(t, r.calls, 1)
	assert.Empty(t, r.waits)
}

// Given a context canceled before a call, during a wait, or while the default timer runs, or a
// Sleep that fails, then the loop stops with an error that says so and, after a call, what
// that call said.
func TestRetryStopsWhenTheContextIsCanceled(t *testing.T) {
	t.Run("before the first call", func(t *testing.T) {
		r := newRetryRig(t)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()

		err := r.retry(ctx, breakerretry.Policy{Attempts: 3})

		assert.Same(t, context.Canceled, err)
		assert.Empty(t, r.calls)
	})
	t.Run("during a wait", func(t *testing.T) {
		r := newRetryRig(t)
		r.answer = func(int) error { return errDown }
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		p := breakerretry.Policy{Attempts: 3, Backoff: constantBackoff(time.Second),
			Sleep: func(ctx context.Context, d time.Duration) error {
				cancel()
				return ctx.Err()
			}}

		err := p.Do(ctx, r.m, "svc", r.call)

		assert.ErrorIs(t, err, context.Canceled)
		assert.ErrorIs(t, err, errDown)
		assert.Len(t, r.calls, 1)
	})
	t.Run("a Sleep that fails", func(t *testing.T) {
		r := newRetryRig(t)
		r.answer = func(int) error { return errDown }
		errInterrupted := errors.New("sleep interrupted")
		p := breakerretry.Policy{Attempts: 3, Backoff: constantBackoff(time.Second),
			Sleep: func(context.Context, time.Duration) error { return errInterrupted }}

		err := p.Do(context.Background(), r.m, "svc", r.call)

		assert.ErrorIs(t, err, errInterrupted)
		assert.ErrorIs(t, err, errDown)
		assert.Len(t, r.calls, 1)
	})
	t.Run("on the default timer", func(t *testing.T) {
		r := newRetryRig(t)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		fn := func(context.Context) error {
			cancel() // the caller gives up while the call runs; the loop then waits an hour
			return errDown
		}

		err := breakerretry.Policy{Attempts: 3, Backoff: constantBackoff(time.Hour)}.Do(ctx, r.m, "svc", fn)

		assert.ErrorIs(t, err, context.Canceled)
		assert.ErrorIs(t, err, errDown)
	})
}

// Given a Policy that cannot run, then Do says why, with ErrInvalid, and does not panic.
func TestRetryRejectsBadInput(t *testing.T) {
	m := breaker.NewManager(breaker.WithClock(breakertest.NewClock()))
	calls := 0
	fn := func(context.Context) error { calls++; return errDown }
	tests := []struct {
		name      string
		give      breakerretry.Policy
		m         *breaker.Manager
		fn        func(context.Context) error
		want      string
		wantCalls int
	}{
		{"zero attempts", breakerretry.Policy{}, m, fn, "Attempts is 0, want at least 1", 0},
		{"negative attempts", breakerretry.Policy{Attempts: -1}, m, fn, "Attempts is -1, want at least 1", 0},
		{"negative within", breakerretry.Policy{Attempts: 1, Within: -time.Second}, m, fn, "Within is -1s", 0},
		{"nil manager", breakerretry.Policy{Attempts: 1}, nil, fn, "the Manager is nil", 0},
		{"nil function", breakerretry.Policy{Attempts: 1}, m, nil, "the function is nil", 0},
		{"negative backoff", breakerretry.Policy{Attempts: 2, Backoff: constantBackoff(-time.Second)}, m, fn,
			"Backoff(1) is -1s, want at least 0 (last attempt: downstream failed)", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls = 0
			var err error
			require.NotPanics(t, func() { err = tt.give.Do(context.Background(), tt.m, "svc", tt.fn) })
			assert.ErrorIs(t, err, breakerretry.ErrInvalid)
			assert.ErrorContains(t, err, tt.want)
			assert.Equal(t, tt.wantCalls, calls)
		})
	}
}
