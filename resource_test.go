package breaker_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
)

// A Resource handle behaves as the Manager's methods do, and follows reloads.
func TestResourceHandle(t *testing.T) {
	h := newHarness(t)
	svc := h.m.Resource("svc") // taken before any rule exists
	assert.Equal(t, "svc", svc.Name())
	require.NoError(t, svc.Do(t.Context(), succeed))

	require.NoError(t, h.m.LoadRules([]breaker.Rule{errorCount(1, 1)}))
	assert.Equal(t, errDown, svc.Do(t.Context(), fail))
	assert.ErrorIs(t, svc.Do(t.Context(), succeed), breaker.ErrOpen, "the handle sees the new rule")
	_, err := svc.Enter()
	assert.ErrorIs(t, err, breaker.ErrOpen)
	_, err = h.m.Enter("svc")
	assert.ErrorIs(t, err, breaker.ErrOpen, "the same breaker as by name")

	require.NoError(t, h.m.LoadRules(nil))
	e, err := svc.Enter()
	require.NoError(t, err)
	assert.Equal(t, "svc", e.Resource())
	e.Exit()
	assert.Equal(t, errDown, svc.Do(t.Context(), fail), "no rules: passes")
}

// Handles go through the slots too.
func TestResourceHandleWithSlots(t *testing.T) {
	slots, log := newSlots("a")
	h := slotHarness(t, slots, errorCount(1, 1))
	svc := h.m.Resource("svc")
	assert.Equal(t, errDown, svc.Do(context.Background(), fail))
	assert.Equal(t, []string{"a.entry", "a.exit(downstream failed)"}, *log)
	h.clock.Advance(5 * time.Second)
	require.NoError(t, svc.Do(context.Background(), succeed))
	assert.Equal(t, breaker.Closed, h.state("svc", 0))
}

// A handle's DoWithFallback falls back on a block or a failure, and not on a success.
func TestResourceDoWithFallback(t *testing.T) {
	h := newHarness(t, errorCount(1, 1))
	r := h.m.Resource("svc")
	var fellBack []error
	fallback := func(_ context.Context, err error) error { fellBack = append(fellBack, err); return nil }
	ctx := context.Background()
	require.NoError(t, r.DoWithFallback(ctx, func(context.Context) error { return nil }, fallback))
	require.NoError(t, r.DoWithFallback(ctx, func(context.Context) error { return errDown }, fallback))
	require.NoError(t, r.DoWithFallback(ctx, func(context.Context) error { return nil }, fallback))
	require.Len(t, fellBack, 2)
	assert.ErrorIs(t, fellBack[0], errDown)
	assert.ErrorIs(t, fellBack[1], breaker.ErrOpen)
	assert.ErrorIs(t, r.DoWithFallback(ctx, func(context.Context) error { return nil }, nil), breaker.ErrOpen,
		"a nil fallback makes it Do")
}
