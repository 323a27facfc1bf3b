package breaker_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
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

// A panic in fn is a failure; the call exits and the panic goes on.
func TestDoPanicCountsAsFailure(t *testing.T) {
	for _, withSlots := range []bool{false, true} {
		t.Run(fmt.Sprintf("slots=%v", withSlots), func(t *testing.T) {
			h := newHarness(t)
			var opts []breaker.Option
			opts = append(opts, breaker.WithClock(h.clock))
			slots, log := newSlots("a")
			if withSlots {
				opts = append(opts, breaker.WithSlots(slots[0]))
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
	var rival *breaker.Entry
	h.m.AddObserver(breaker.ObserverFunc(func(c breaker.StateChange) {
		if c.Reason == breaker.RetryTimeoutElapsed && c.Rule == a && rival == nil {
			rival, _ = h.m.Enter("elsewhere")
			require.True(t, breakerB.TryPass(rival), "the rival takes B's probe first")
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
	breakerB.OnRequestComplete(rival) // the rival's probe succeeds
	require.Equal(t, breaker.Closed, h.state("svc", 1))
	require.NoError(t, h.complete("svc", 0, nil), "A's retry time was unchanged: the next call probes it")
	assert.Equal(t, breaker.Closed, h.state("svc", 0))
}
