package breaker_test

import (
	"context"
	"errors"
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

// RT runs from Enter to Exit on the manager's clock.
func TestResponseTimeFromEnterToExit(t *testing.T) {
	h := newHarness(t, slowRatio(0.5, 2))
	e, err := h.m.Enter("svc")
	require.NoError(t, err)
	h.clock.Advance(50 * time.Millisecond)
	e.Exit()
	require.Equal(t, breaker.Closed, h.state("svc", 0))

	e, err = h.m.Enter("svc")
	require.NoError(t, err)
	h.clock.Advance(51 * time.Millisecond)
	e.Exit()
	assert.Equal(t, breaker.Open, h.state("svc", 0))
}

// A second Exit, and SetError after Exit, do nothing.
func TestExitTwiceAndSetErrorAfterExit(t *testing.T) {
	h := newHarness(t, errorCount(2, 1))
	e, err := h.m.Enter("svc")
	require.NoError(t, err)
	e.SetError(errDown)
	e.Exit()
	e.Exit()
	assert.Equal(t, breaker.Closed, h.state("svc", 0), "counted once")

	ok, err := h.m.Enter("svc")
	require.NoError(t, err)
	ok.Exit()
	ok.SetError(errDown)
	assert.NoError(t, ok.Err())
	ok.Exit()
	assert.Equal(t, breaker.Closed, h.state("svc", 0))

	e.SetError(nil)
	assert.Equal(t, errDown, e.Err(), "SetError(nil) is ignored")
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

// Do: fn's error is the outcome; context.Canceled counts neither way.
func TestDoOutcomes(t *testing.T) {
	tests := []struct {
		name     string
		give     error
		wantOpen bool
	}{
		{"nil is a success", nil, false},
		{"an error is a failure", errDown, true},
		{"a wrapped error is a failure", fmt.Errorf("call: %w", errDown), true},
		{"context.Canceled counts neither way", context.Canceled, false},
		{"wrapped context.Canceled counts neither way", fmt.Errorf("call: %w", context.Canceled), false},
		{"context.DeadlineExceeded is a failure", context.DeadlineExceeded, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// ErrorRatio 0.5 of at least 2 calls: one success, then the call under test.
			h := newHarness(t, errorRatio(0.5, 2))
			require.NoError(t, h.m.Do(t.Context(), "svc", func(context.Context) error { return nil }))
			err := h.m.Do(t.Context(), "svc", func(context.Context) error { return tt.give })
			assert.Equal(t, tt.give, err)
			assert.Equal(t, tt.wantOpen, h.state("svc", 0) == breaker.Open)
			if tt.give != nil && !tt.wantOpen {
				// Not counted at all: the next error makes 1 of 2 counted calls, which trips.
				assert.Equal(t, errDown, h.m.Do(t.Context(), "svc", func(context.Context) error { return errDown }))
				assert.Equal(t, breaker.Open, h.state("svc", 0))
			}
		})
	}
}

// A canceled probe counts neither way: the breaker reopens with the retry time unchanged.
func TestCanceledProbe(t *testing.T) {
	h := newHarness(t, errorCount(1, 1))
	h.completeN("svc", 1, errDown)
	h.at(5 * time.Second)
	err := h.m.Do(t.Context(), "svc", func(context.Context) error { return context.Canceled })
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, breaker.Open, h.state("svc", 0))
	assert.Equal(t, "HALF_OPEN->OPEN ProbeIgnored", h.events.transitions()[2])
	require.NoError(t, h.complete("svc", 0, nil), "the next call may probe at once")
	assert.Equal(t, breaker.Closed, h.state("svc", 0))
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

// A breaker's rejection matches ErrBlocked and ErrOpen, also wrapped, and its message names
// the rule, by its ID when it has one.
func TestBlockErrorMatching(t *testing.T) {
	h := newHarness(t, errorCount(1, 1))
	h.completeN("svc", 1, errDown)
	err := h.m.Do(t.Context(), "svc", func(context.Context) error { return nil })
	assert.ErrorIs(t, err, breaker.ErrBlocked)
	assert.ErrorIs(t, err, breaker.ErrOpen)
	assert.NotErrorIs(t, err, errDown)
	var be *breaker.BlockError
	require.ErrorAs(t, err, &be)
	assert.Nil(t, be.Cause)
	assert.Equal(t, `breaker: call to "svc" rejected: circuit OPEN by rule ErrorCount`, be.Error())
	wrapped := fmt.Errorf("get order: %w", err)
	assert.ErrorIs(t, wrapped, breaker.ErrOpen)

	named := errorCount(1, 1)
	named.ID = "orders-errors"
	require.NoError(t, h.m.LoadRules([]breaker.Rule{named})) // same rule, new ID: still OPEN
	err = h.m.Do(t.Context(), "svc", func(context.Context) error { return nil })
	assert.EqualError(t, err, `breaker: call to "svc" rejected: circuit OPEN by rule "orders-errors" (ErrorCount)`)
	assert.False(t, errors.Is(errDown, breaker.ErrBlocked))
}

// Rejections cost no allocation: a breaker hands out one error per period.
func TestRejectionReusesError(t *testing.T) {
	h := newHarness(t, errorCount(1, 1))
	h.completeN("svc", 1, errDown)
	first := h.complete("svc", 0, nil)
	second := h.complete("svc", 0, nil)
	assert.Same(t, first, second)
}

// WithClock(nil) and WithLogger(nil) keep the defaults rather than failing later.
func TestNilOptionsKeepDefaults(t *testing.T) {
	m := breaker.NewManager(breaker.WithClock(nil), breaker.WithLogger(nil))
	require.NoError(t, m.LoadRules([]breaker.Rule{errorCount(1, 1)}))
	err := m.Do(t.Context(), "svc", func(context.Context) error { return errDown })
	assert.Equal(t, errDown, err)
	assert.Equal(t, breaker.Open, m.Breakers("svc")[0].State())
}

// A caller changing the BlockError it was handed changes no rule.
func TestBlockErrorRuleIsACopy(t *testing.T) {
	h := newHarness(t, errorCount(1, 1))
	h.completeN("svc", 1, errDown)
	var be *breaker.BlockError
	require.ErrorAs(t, h.complete("svc", 0, nil), &be)
	be.Rule.Resource = "changed"
	be.Rule.Threshold = 42
	assert.Equal(t, errorCount(1, 1), h.m.Breakers("svc")[0].Rule())
	h.at(5 * time.Second)
	h.completeN("svc", 1, errDown) // the probe fails: the next report names the rule as loaded
	assert.Equal(t, errorCount(1, 1), h.events.last().Rule)
}

// A breaker can be driven by hand through the CircuitBreaker interface.
func TestDriveBreakerByHand(t *testing.T) {
	h := newHarness(t, slowRatio(1, 1))
	b := h.m.Breakers("svc")[0]
	e, err := h.m.Enter("elsewhere") // an entry no breaker checked
	require.NoError(t, err)
	require.True(t, b.TryPass(e))
	h.clock.Advance(time.Second)
	b.OnRequestComplete(e)
	assert.Equal(t, breaker.Open, b.State(), "slow by its own RT")
	b.OnRequestComplete(e)
	e.Exit()
	assert.Equal(t, []string{tripped}, h.events.transitions(), "completed once")

	other, err := h.m.Enter("elsewhere")
	require.NoError(t, err)
	assert.False(t, b.TryPass(other))
	b.OnRequestComplete(other) // never admitted: nothing happens
	b.OnRequestComplete(nil)
	assert.False(t, b.TryPass(nil), "OPEN: no call passes")
	assert.Equal(t, breaker.Open, b.State())
}

// A resource with more rules than an Entry holds inline: every breaker admits and counts,
// through Do and through Enter and Exit.
func TestManyRulesOnOneResource(t *testing.T) {
	var rules []breaker.Rule
	for i := 0; i < 6; i++ {
		rules = append(rules, errorCount(float64(10+i), 1))
	}
	h := newHarness(t, rules...)
	require.NoError(t, h.complete("svc", 0, errDown))
	assert.Equal(t, errDown, h.m.Do(t.Context(), "svc", fail))
	require.NoError(t, h.complete("svc", 0, nil))
	for i, b := range h.m.Breakers("svc") {
		assert.Equal(t, breaker.Stats{State: breaker.Closed, Total: 3, Bad: 2}, b.Stats(), "breaker %d", i)
	}
	h.completeN("svc", 8, errDown) // 10 errors: the first rule trips, and rejects the next call
	assert.Equal(t, breaker.Open, h.state("svc", 0))
	assert.Equal(t, breaker.Closed, h.state("svc", 5))
	assert.ErrorIs(t, h.complete("svc", 0, nil), breaker.ErrOpen)
}

// TryPass takes the probe of a breaker whose retry time has come, and only one.
func TestTryPassTakesTheProbe(t *testing.T) {
	h := newHarness(t, errorRatio(1, 1))
	h.completeN("svc", 1, errDown)
	b := h.m.Breakers("svc")[0]
	e1, _ := h.m.Enter("elsewhere")
	e2, _ := h.m.Enter("elsewhere")
	assert.False(t, b.TryPass(e1), "before the retry time")
	h.at(5 * time.Second)
	assert.True(t, b.TryPass(e1))
	assert.Equal(t, breaker.HalfOpen, b.State())
	assert.False(t, b.TryPass(e2), "one probe")
	b.OnRequestComplete(e1)
	assert.Equal(t, breaker.Closed, b.State())
}
