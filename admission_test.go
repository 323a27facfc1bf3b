package breaker_test

import (
	"context"
	"fmt"
	"testing"

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
