package breaker_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
)

// A Handle behaves as the Manager's methods do, and follows reloads.
func TestHandle(t *testing.T) {
	h := newHarness(t)
	svc := h.m.Handle("svc") // taken before any rule exists
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
func TestHandleWithSlots(t *testing.T) {
	slots, log := newSlots("a")
	h := slotHarness(t, slots, errorCount(1, 1))
	svc := h.m.Handle("svc")
	assert.Equal(t, errDown, svc.Do(context.Background(), fail))
	assert.Equal(t, []string{"a.entry", "a.exit(downstream failed)"}, *log)
	h.clock.Advance(5 * time.Second)
	require.NoError(t, svc.Do(context.Background(), succeed))
	assert.Equal(t, breaker.Closed, h.state("svc", 0))
}
