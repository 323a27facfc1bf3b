package benchmarks

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/retrypolicy"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakertest"
)

// These tests compose breaker with failsafe-go's RetryPolicy, a retry library a service may
// already use, in the order that keeps the breaker working: the policy around Manager.Do, one
// Do per attempt, so the breaker sees every attempt and counts only those it lets through.

// retryDelay is the delay function a service gives failsafe-go: after a rejection, until the
// rejection's RetryAt (so the next attempt is not rejected again); after a failure, the
// longer of its RetryAfter hint and backoff.
func retryDelay(m *breaker.Manager, backoff func(attempts int) time.Duration) failsafe.DelayFunc[any] {
	return func(exec failsafe.ExecutionAttempt[any]) time.Duration {
		wait, _ := m.RetryWait(exec.LastError())
		var blocked *breaker.BlockError
		if errors.As(exec.LastError(), &blocked) {
			return wait
		}
		return max(wait, backoff(exec.Attempts()))
	}
}

// retryAbort is the abort condition that goes with it: a rejection that names no retry time
// (ForceOpen, MaxConcurrency, a slot) ends the execution, since nothing says when a call
// would pass.
func retryAbort(m *breaker.Manager) func(any, error) bool {
	return func(_ any, err error) bool {
		_, retry := m.RetryWait(err)
		return err != nil && !retry
	}
}

// retryBackoff is 100ms, 200ms, then 250ms.
func retryBackoff(attempts int) time.Duration {
	return min(100*time.Millisecond<<(attempts-1), 250*time.Millisecond)
}

// onFakeClock runs a delay function on the fake clock: failsafe-go sleeps on real timers,
// which a fake clock cannot drive, so the clock moves by the delay chosen, which is recorded,
// and failsafe-go sleeps 0. A service gives failsafe-go the delay function itself.
func onFakeClock(clock *breakertest.Clock, delays *[]time.Duration, delay failsafe.DelayFunc[any]) failsafe.DelayFunc[any] {
	return func(exec failsafe.ExecutionAttempt[any]) time.Duration {
		d := delay(exec)
		*delays = append(*delays, d)
		clock.Advance(d)
		return 0
	}
}

// retryRun is a ledger down for its first 2.5s behind a Manager on a fake clock with two rules:
// "trips" opens on the third failure within 10s for 1s; "counts" never trips (it needs 100
// calls) and shows what the breakers counted.
type retryRun struct {
	clock    *breakertest.Clock
	m        *breaker.Manager
	attempts int // calls to Do, rejected or not
	rejected int
	calls    int // calls that reached the ledger
	delays   []time.Duration
}

func newRetryRun(t *testing.T) *retryRun {
	t.Helper()
	r := &retryRun{clock: breakertest.NewClock()}
	r.m = breaker.NewManager(breaker.WithClock(r.clock), breaker.WithCallObserver(func(c breaker.CallInfo) {
		r.attempts++
		if c.Blocked != nil {
			r.rejected++
		}
	}))
	err := r.m.LoadRules([]breaker.Rule{
		{ID: "counts", Resource: "ledger", Strategy: breaker.ErrorRatio, Threshold: 1,
			MinRequestAmount: 100, StatInterval: time.Minute, RetryTimeout: time.Second},
		{ID: "trips", Resource: "ledger", Strategy: breaker.ErrorCount, Threshold: 3,
			MinRequestAmount: 1, StatInterval: 10 * time.Second, RetryTimeout: time.Second},
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

var errLedgerDown = errors.New("ledger: 503 service unavailable")

func (r *retryRun) ledger(context.Context) error {
	r.calls++
	if r.clock.Now().Sub(breakertest.Start) < 2500*time.Millisecond {
		return errLedgerDown
	}
	return nil
}

// execute runs one request through failsafe-go with the policy p.
func (r *retryRun) execute(p retrypolicy.RetryPolicy[any]) error {
	return failsafe.With[any](p).RunWithExecution(func(exec failsafe.Execution[any]) error {
		return r.m.Do(exec.Context(), "ledger", r.ledger)
	})
}

func (r *retryRun) counted() breaker.Stats { return r.m.Breakers("ledger")[0].Stats() }

// Given the ledger's outage, when failsafe-go retries with the delay function, then each
// rejection is followed by a wait to its RetryAt, where the next attempt is the probe: 9
// attempts, 3 of them rejected without a call, and the probe at 3.3s succeeds. The breakers
// count the 6 calls that reached the ledger, not the rejections.
func TestRetryFailsafeWaitsUntilRetryAt(t *testing.T) {
	r := newRetryRun(t)
	p := retrypolicy.NewBuilder[any]().
		WithMaxAttempts(10).
		WithDelayFunc(onFakeClock(r.clock, &r.delays, retryDelay(r.m, retryBackoff))).
		AbortIf(retryAbort(r.m)).
		ReturnLastFailure().
		Build()

	if err := r.execute(p); err != nil {
		t.Fatalf("the request failed: %v", err)
	}

	ms := time.Millisecond
	wantDelays := []time.Duration{100 * ms, 200 * ms, 250 * ms, 750 * ms, 250 * ms, 750 * ms, 250 * ms, 750 * ms}
	if !slices.Equal(r.delays, wantDelays) {
		t.Errorf("delays: got %v, want %v (a rejection waits until RetryAt, a failure backs off)", r.delays, wantDelays)
	}
	if r.attempts != 9 || r.rejected != 3 || r.calls != 6 {
		t.Errorf("attempts, rejected, calls: got %d, %d, %d, want 9, 3, 6", r.attempts, r.rejected, r.calls)
	}
	if got := r.clock.Now().Sub(breakertest.Start); got != 3300*ms {
		t.Errorf("the request succeeded at %v, want 3.3s (the third RetryAt)", got)
	}
	if s := r.counted(); s.Total != 6 || s.Bad != 5 {
		t.Errorf("the window counted %d calls, %d bad, want the 6 that ran, 5 bad: no rejection", s.Total, s.Bad)
	}
}

// Given the same outage, when failsafe-go retries with its usual fixed delay instead, then
// once the breaker trips every attempt is rejected before RetryAt, and the request gives up
// with the rejection, its attempts spent on the open breaker.
func TestRetryFailsafeWithoutTheDelayFunctionSpendsItsAttempts(t *testing.T) {
	r := newRetryRun(t)
	fixed := func(failsafe.ExecutionAttempt[any]) time.Duration { return 100 * time.Millisecond }
	p := retrypolicy.NewBuilder[any]().
		WithMaxAttempts(10).
		WithDelayFunc(onFakeClock(r.clock, &r.delays, fixed)).
		ReturnLastFailure().
		Build()

	err := r.execute(p)

	if !errors.Is(err, breaker.ErrOpen) {
		t.Fatalf("got %v, want the rejection", err)
	}
	if r.attempts != 10 || r.rejected != 7 || r.calls != 3 {
		t.Errorf("attempts, rejected, calls: got %d, %d, %d, want 10, 3 calls that tripped it, 7 rejected",
			r.attempts, r.rejected, r.calls)
	}
}

// Given a rejection without a RetryAt (the resource is forced open), then the abort
// condition ends the execution after the one attempt, with no delay.
func TestRetryFailsafeAbortsOnARejectionWithoutRetryAt(t *testing.T) {
	r := newRetryRun(t)
	if err := r.m.LoadResources(map[string]breaker.ResourceConfig{"ledger": {Force: breaker.ForceOpen}}); err != nil {
		t.Fatal(err)
	}
	p := retrypolicy.NewBuilder[any]().
		WithMaxAttempts(10).
		WithDelayFunc(onFakeClock(r.clock, &r.delays, retryDelay(r.m, retryBackoff))).
		AbortIf(retryAbort(r.m)).
		Build()

	err := r.execute(p)

	if !errors.Is(err, breaker.ErrForcedOpen) {
		t.Fatalf("got %v, want the forced-open rejection", err)
	}
	if r.attempts != 1 || len(r.delays) != 0 {
		t.Errorf("attempts, delays: got %d, %v, want 1, none", r.attempts, r.delays)
	}
}
