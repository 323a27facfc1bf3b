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
