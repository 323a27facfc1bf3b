package breaker_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/internal/inlinecheck"
)

// A resource with no rules passes every call.
func TestNoRulesPasses(t *testing.T) {
	h := newHarness(t, errorCount(1, 1))
	for i := 0; i < 10; i++ {
		e, err := h.m.Enter("unruled")
		require.NoError(t, err)
		assert.Equal(t, "unruled", e.Resource())
		e.SetError(errDown)
		e.Exit()
	}
	called := 0
	err := h.m.Do(t.Context(), "unruled", func(context.Context) error { called++; return errDown })
	assert.Equal(t, errDown, err)
	assert.Equal(t, 1, called)
	assert.Nil(t, h.m.Breakers("unruled"))
	assert.Empty(t, h.events.all())
}

// Do and Execute return the block error without calling fn.
func TestDoBlockedDoesNotCallFn(t *testing.T) {
	h := newHarness(t, errorCount(1, 1))
	err := h.m.Do(t.Context(), "svc", func(context.Context) error { return errDown })
	require.Equal(t, errDown, err)

	called := false
	err = h.m.Do(t.Context(), "svc", func(context.Context) error { called = true; return nil })
	assert.False(t, called)
	assert.ErrorIs(t, err, breaker.ErrOpen)

	v, err := breaker.Execute(t.Context(), h.m, "svc", func(context.Context) (int, error) { called = true; return 7, nil })
	assert.False(t, called)
	assert.Zero(t, v)
	var be *breaker.BlockError
	require.ErrorAs(t, err, &be)
	assert.Equal(t, "svc", be.Resource)
	assert.Equal(t, breaker.Open, be.State)
}

// A panic in fn is a failure, whatever the Classifier says of other errors, through an Entry
// (with slots) or not; the call exits and the panic goes on.
func TestDoPanicCountsAsFailure(t *testing.T) {
	for _, tc := range []struct{ withSlots, forgiving bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
		withSlots := tc.withSlots
		t.Run(fmt.Sprintf("slots=%v,forgiving=%v", withSlots, tc.forgiving), func(t *testing.T) {
			h := newHarness(t)
			var opts []breaker.Option
			opts = append(opts, breaker.WithClock(h.clock))
			slots, log := newSlots("a")
			if withSlots {
				opts = append(opts, breaker.WithSlots(slots[0]))
			}
			if tc.forgiving {
				opts = append(opts, breaker.WithClassifier(func(error) breaker.Outcome { return breaker.Success }))
			}
			h.m = breaker.NewManager(opts...)
			require.NoError(t, h.m.LoadRules([]breaker.Rule{errorCount(1, 1)}))
			assert.PanicsWithValue(t, "fn broke", func() {
				_ = h.m.Do(t.Context(), "svc", func(context.Context) error { panic("fn broke") })
			})
			assert.Equal(t, breaker.Open, h.state("svc", 0))
			if withSlots {
				assert.Equal(t, []string{"a.entry", "a.exit(breaker: call panicked)"}, *log)
			}
			assert.Panics(t, func() {
				_, _ = breaker.Execute(t.Context(), h.m, "other", func(context.Context) (int, error) { panic("x") })
			})
		})
	}
}

// A call passes only if every breaker admits it; a due breaker is not moved to HALF_OPEN by a
// call another breaker rejects.
func TestEveryBreakerMustAdmit(t *testing.T) {
	short := errorCount(1, 1)
	long := errorCount(1, 1)
	long.RetryTimeout = time.Minute
	h := newHarness(t, short, long)
	h.completeN("svc", 1, errDown) // trips both
	require.Equal(t, breaker.Open, h.state("svc", 0))
	require.Equal(t, breaker.Open, h.state("svc", 1))
	h.events.reset()

	h.at(5 * time.Second) // short is due, long is not
	err := h.complete("svc", 0, nil)
	var be *breaker.BlockError
	require.ErrorAs(t, err, &be)
	assert.Equal(t, time.Minute, be.Rule.RetryTimeout, "the rejecting rule is named")
	assert.Equal(t, breaker.Open, h.state("svc", 0))
	assert.Empty(t, h.events.transitions())

	h.at(time.Minute) // both due: the call probes both
	probe, err := h.m.Enter("svc")
	require.NoError(t, err)
	assert.Equal(t, breaker.HalfOpen, h.state("svc", 0))
	assert.Equal(t, breaker.HalfOpen, h.state("svc", 1))
	probe.Exit()
	assert.Equal(t, breaker.Closed, h.state("svc", 0))
	assert.Equal(t, breaker.Closed, h.state("svc", 1))
}

// When a call has taken one breaker's probe and another call wins the next breaker's
// probe first, the first call gives its probe back (ProbeBlocked) and is rejected. The race is
// made deterministic by an observer, which runs on the goroutine that took the first probe.
func TestProbeRaceGivesBackTheProbe(t *testing.T) {
	a, b := errorCount(1, 1), errorCount(1, 1)
	b.RetryTimeout = 5*time.Second + time.Millisecond // a different rule, due at the same step
	h := newHarness(t, a, b)
	h.completeN("svc", 1, errDown) // trips both
	h.at(10 * time.Second)
	breakerB := h.m.Breakers("svc")[1]
	var rival *breaker.Rival
	h.m.AddObserver(breaker.ObserverFunc(func(c breaker.StateChange) {
		if c.Reason == breaker.RetryTimeoutElapsed && c.Rule == a && rival == nil {
			rival = breaker.NewRival(h.m)
			require.True(t, rival.Pass(breakerB), "the rival takes B's probe first")
		}
	}))
	h.events.reset()

	err := h.complete("svc", 0, nil)
	var be *breaker.BlockError
	require.ErrorAs(t, err, &be)
	assert.Equal(t, b, *be.Rule, "rejected by the breaker whose probe it lost")
	assert.Equal(t, breaker.HalfOpen, be.State)
	assert.Equal(t, []string{probing, probing, "HALF_OPEN->OPEN ProbeBlocked"}, h.events.transitions())
	assert.Equal(t, breaker.Open, h.state("svc", 0), "A's probe was given back")
	assert.Equal(t, breaker.HalfOpen, h.state("svc", 1))

	assert.ErrorIs(t, h.complete("svc", 0, nil), breaker.ErrOpen, "B's probe is still in flight")
	rival.Complete(breakerB, nil) // the rival's probe succeeds
	require.Equal(t, breaker.Closed, h.state("svc", 1))
	require.NoError(t, h.complete("svc", 0, nil), "A's retry time was unchanged: the next call probes it")
	assert.Equal(t, breaker.Closed, h.state("svc", 0))
}

// With a Timeout, fn's context has a deadline of at most admission + Timeout, and never later
// than the caller's own.
func TestTimeoutDeadline(t *testing.T) {
	m := breaker.NewManager()
	require.NoError(t, m.LoadResources(map[string]breaker.ResourceConfig{"svc": {Timeout: time.Minute}}))
	before := time.Now()
	var deadline time.Time
	require.NoError(t, m.Do(context.Background(), "svc", func(ctx context.Context) error {
		var ok bool
		deadline, ok = ctx.Deadline()
		require.True(t, ok)
		return nil
	}))
	assert.False(t, deadline.Before(before.Add(time.Minute)))
	assert.False(t, deadline.After(time.Now().Add(time.Minute)))

	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	want, _ := ctx.Deadline()
	require.NoError(t, m.Do(ctx, "svc", func(ctx context.Context) error {
		deadline, _ = ctx.Deadline()
		return nil
	}))
	assert.Equal(t, want, deadline, "the caller's earlier deadline stands")

	_, err := breaker.Execute(context.Background(), m, "other", func(ctx context.Context) (int, error) {
		_, ok := ctx.Deadline()
		assert.False(t, ok, "a resource without a Timeout gets the caller's context")
		return 0, nil
	})
	require.NoError(t, err)
}

// A dependency that hangs trips an ErrorRatio rule after MinRequestAmount calls have run
// into the timeout, through Do, a Handle and Enter with Entry.WithTimeout.
func TestTimeoutTripsOnAHang(t *testing.T) {
	hang := func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }
	h := newHarness(t, errorRatio(1, 3))
	require.NoError(t, h.m.LoadResources(map[string]breaker.ResourceConfig{"svc": {Timeout: 5 * time.Millisecond}}))
	assert.ErrorIs(t, h.m.Do(context.Background(), "svc", hang), context.DeadlineExceeded)
	assert.ErrorIs(t, h.m.Handle("svc").Do(context.Background(), hang), context.DeadlineExceeded)
	e, err := h.m.Enter("svc")
	require.NoError(t, err)
	ctx, cancel := e.WithTimeout(context.Background())
	e.SetError(hang(ctx))
	cancel()
	e.Exit()
	assert.Equal(t, []string{tripped}, h.events.transitions())
	assert.ErrorIs(t, h.m.Do(context.Background(), "svc", hang), breaker.ErrOpen)
}

// The RT of a call that ran into the timeout counts for SlowRequestRatio.
func TestTimeoutCountsAsSlow(t *testing.T) {
	h := newHarness(t, slowRatio(1, 2))
	require.NoError(t, h.m.LoadResources(map[string]breaker.ResourceConfig{"svc": {Timeout: 5 * time.Millisecond}}))
	for i := 0; i < 2; i++ {
		err := h.m.Do(context.Background(), "svc", func(ctx context.Context) error {
			<-ctx.Done()
			h.clock.Advance(100 * time.Millisecond) // the Manager's clock sees the wait
			return ctx.Err()
		})
		assert.ErrorIs(t, err, context.DeadlineExceeded)
	}
	assert.Equal(t, []string{tripped}, h.events.transitions())
}

// A call cut off at the resource's Timeout counts as slow, also when the Timeout is shorter
// than MaxAllowedRT, so a hang trips a slow-call rule.
func TestCutOffCallIsSlow(t *testing.T) {
	slow := slowRatio(1, 2)
	slow.MaxAllowedRT = time.Hour
	hang := func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }
	tests := []struct {
		name string
		call func(h *harness) error
	}{
		{"Do", func(h *harness) error { return h.m.Do(context.Background(), "svc", hang) }},
		{"Resource.Do", func(h *harness) error { return h.m.Handle("svc").Do(context.Background(), hang) }},
		{"Entry.WithTimeout", func(h *harness) error {
			e, err := h.m.Enter("svc")
			if err != nil {
				return err
			}
			ctx, cancel := e.WithTimeout(context.Background())
			defer cancel()
			e.SetError(hang(ctx))
			e.Exit()
			return nil
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, slow)
			require.NoError(t, h.m.LoadResources(map[string]breaker.ResourceConfig{"svc": {Timeout: time.Nanosecond}}))
			_ = tt.call(h)
			assert.Equal(t, breaker.Closed, h.state("svc", 0), "one call is below MinRequestAmount")
			_ = tt.call(h)
			assert.Equal(t, breaker.Open, h.state("svc", 0), "two cut-off calls are two slow calls")
		})
	}
}

// Given a function that ignores its context and returns nil after the resource's Timeout has
// passed (as code written for hystrix-go's goroutine often does), then the call failed, and is
// slow for a SlowRequestRatio rule: its caller waited past what it was promised. Through Do, a
// Handle, Execute, Entry.Run and Enter with WithTimeout; the function's nil still goes to the
// caller, and the library abandons nothing.
func TestCallPastItsTimeoutFailedWhateverItReturned(t *testing.T) {
	lateNil := func(ctx context.Context) error { <-ctx.Done(); return nil }
	calls := map[string]func(h *harness) error{
		"Do":     func(h *harness) error { return h.m.Do(context.Background(), "svc", lateNil) },
		"Handle": func(h *harness) error { return h.m.Handle("svc").Do(context.Background(), lateNil) },
		"Execute": func(h *harness) error {
			_, err := breaker.Execute(context.Background(), h.m, "svc", func(ctx context.Context) (int, error) {
				return 0, lateNil(ctx)
			})
			return err
		},
		"Entry.Run": func(h *harness) error {
			e, err := h.m.Enter("svc")
			require.NoError(t, err)
			return e.Run(context.Background(), lateNil)
		},
		"Entry.WithTimeout": func(h *harness) error {
			e, err := h.m.Enter("svc")
			require.NoError(t, err)
			ctx, cancel := e.WithTimeout(context.Background())
			defer cancel()
			e.SetError(lateNil(ctx))
			e.Exit()
			return nil
		},
	}
	slow := slowRatio(1, 1)
	slow.MaxAllowedRT = time.Hour
	for name, call := range calls {
		for _, rule := range []breaker.Rule{errorCount(1, 1), slow} {
			t.Run(name+" "+rule.Strategy.String(), func(t *testing.T) {
				h := newHarness(t, rule)
				require.NoError(t, h.m.LoadResources(map[string]breaker.ResourceConfig{"svc": {Timeout: time.Nanosecond}}))
				assert.NoError(t, call(h), "the function's own result")
				assert.Equal(t, []string{tripped}, h.events.transitions())
			})
		}
	}
}

// Given a resource with a Timeout, when a call runs past it and then returns a refusal with a
// retry hint, then it counts as a plain failure: the Timeout decides, so the breaker it trips
// stays OPEN for its RetryTimeout, not for the late answer's hint.
func TestCallPastItsTimeoutTakesNoHint(t *testing.T) {
	r := errorCount(1, 1)
	r.RetryTimeout, r.MaxRetryTimeout = time.Second, 10*time.Second
	h := newHarness(t, r)
	require.NoError(t, h.m.LoadResources(map[string]breaker.ResourceConfig{"svc": {Timeout: time.Nanosecond}}))
	lateRefusal := func(ctx context.Context) error { <-ctx.Done(); return refusedFor(3 * time.Second) }
	err := h.m.Do(context.Background(), "svc", lateRefusal)
	assert.ErrorIs(t, err, errQuota, "the caller gets the answer as it is")
	assert.Equal(t, []string{tripped}, h.events.transitions())
	assert.Equal(t, h.clock.Now().Add(time.Second), h.stats().RetryAt)
}

// A call that ends at the caller's own, earlier deadline was not cut off by the library: the
// rule judges it by its response time alone.
func TestCallerDeadlineIsNotACutOff(t *testing.T) {
	slow := slowRatio(1, 1)
	slow.MaxAllowedRT = time.Hour
	h := newHarness(t, slow)
	require.NoError(t, h.m.LoadResources(map[string]breaker.ResourceConfig{"svc": {Timeout: time.Hour}}))
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	for range 3 {
		_ = h.m.Do(ctx, "svc", func(ctx context.Context) error { return ctx.Err() })
	}
	assert.Equal(t, breaker.Closed, h.state("svc", 0))
}

// The fast paths of a call, which their comments promise small enough to inline, are: Do by
// name, a read of the clock, the breaker slot's entry, the classification of a call's error,
// how a call ended (its caller's cancellation), and the check of a call past the resource's
// Timeout. (TryPass itself cannot be: any function that loads an atomic pointer and calls one
// that is not inlined costs Go's inliner more than its budget of 80.)
func TestFastPathsInline(t *testing.T) {
	inlinecheck.Inlined(t, "(*Manager).Do", "(*timeline).now", "(*Ticket).enterBreakers", "(*Manager).classify",
		"endingOf", "(*limit).outlived", "(*Ticket).stripeFor")
}
