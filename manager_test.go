package breaker_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
)

// The package-level API drives the default Manager: a transition is reported exactly once per
// observer.
func TestDefaultManager(t *testing.T) {
	require.NoError(t, breaker.LoadRules([]breaker.Rule{{Resource: "default-svc", Strategy: breaker.ErrorCount,
		Threshold: 1, MinRequestAmount: 1, RetryTimeout: time.Hour}}))
	t.Cleanup(func() { require.NoError(t, breaker.LoadRules(nil)) })
	rec := &recorder{}
	remove := breaker.AddObserver(rec)
	defer remove()

	e, err := breaker.Enter("default-svc")
	require.NoError(t, err)
	e.SetError(errDown)
	e.Exit()
	assert.Equal(t, []string{tripped}, rec.transitions())
	assert.ErrorIs(t, breaker.Do(t.Context(), "default-svc", nil), breaker.ErrOpen)
	assert.Same(t, breaker.Default(), breaker.Default())
	assert.Len(t, breaker.Default().Breakers("default-svc"), 1)
}

// Rules returns a copy in load order; changing it changes nothing.
func TestRulesReturnsACopy(t *testing.T) {
	h := newHarness(t, errorCount(1, 1), slowRatio(1, 1))
	rules := h.m.Rules()
	require.Len(t, rules, 2)
	assert.Equal(t, breaker.ErrorCount, rules[0].Strategy)
	rules[0].Threshold = 99
	assert.Equal(t, 1.0, h.m.Rules()[0].Threshold)
	assert.Equal(t, 1.0, h.m.Breakers("svc")[0].Rule().Threshold)
}

// Reset closes every breaker of the resource with an empty window; observers hear Reset
// from those that were not CLOSED.
func TestReset(t *testing.T) {
	open, closed := errorCount(1, 1), errorRatio(0.5, 4)
	h := newHarness(t, open, closed)
	h.completeN("svc", 1, errDown) // trips the count rule; the ratio rule holds 1 call
	require.Equal(t, uint64(1), h.m.Breakers("svc")[1].Stats().Total)
	h.events.reset()

	h.m.Reset("svc")
	assert.Equal(t, []string{"OPEN->CLOSED Reset"}, h.events.transitions())
	for i, b := range h.m.Breakers("svc") {
		st := b.Stats()
		assert.Equal(t, breaker.Closed, st.State, "breaker %d", i)
		assert.Zero(t, st.Total, "breaker %d: the window starts empty", i)
	}
	require.NoError(t, h.complete("svc", 0, nil))
	h.m.Reset("nothing") // no rules: nothing happens
	h.m.Reset("svc")     // all CLOSED: no event
	assert.Len(t, h.events.all(), 1)
}

// A call admitted before Reset does not count in the new window.
func TestResetMakesEarlierCallsStale(t *testing.T) {
	h := newHarness(t, errorCount(1, 1))
	e, err := h.m.Enter("svc")
	require.NoError(t, err)
	h.m.Reset("svc")
	e.SetError(errDown)
	e.Exit()
	assert.Equal(t, breaker.Closed, h.state("svc", 0))
}
