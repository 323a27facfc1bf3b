package breaker_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
)

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
		assert.Equal(t, breaker.Stats{Rule: b.Rule(), State: breaker.Closed, Total: 3, Bad: 2}, b.Stats(), "breaker %d", i)
	}
	h.completeN("svc", 8, errDown) // 10 errors: the first rule trips, and rejects the next call
	assert.Equal(t, breaker.Open, h.state("svc", 0))
	assert.Equal(t, breaker.Closed, h.state("svc", 5))
	assert.ErrorIs(t, h.complete("svc", 0, nil), breaker.ErrOpen)
}
