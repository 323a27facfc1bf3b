package breakerprom_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker/breakerview"
	breakerprom "github.com/halfopen/breaker/contrib/prometheus"
)

// doneContexts are a context canceled and one past its deadline, both done before the call.
func doneContexts(t *testing.T) map[string]context.Context {
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancelExpired := context.WithDeadline(context.Background(), time.Unix(0, 0))
	t.Cleanup(cancelExpired)
	return map[string]context.Context{"canceled": canceled, "past its deadline": expired}
}

// Given calls whose context is canceled, or past its deadline, to a resource with a rule and
// to one without, then the Collector counts none of them: no call series exists for either
// resource, no transition is counted, and the breaker's state is still CLOSED.
func TestCallsDoNotCountACallWhoseContextWasDone(t *testing.T) {
	f := newFixture(t, errorCount("inventory", 1))
	called := 0
	fn := func(context.Context) error { called++; return errDown }
	for _, ctx := range doneContexts(t) {
		for range 3 {
			require.ErrorIs(t, f.m.Do(ctx, "inventory", fn), ctx.Err())
			require.ErrorIs(t, f.m.Do(ctx, "cache", fn), ctx.Err())
		}
	}
	require.Zero(t, called, "no call was made")

	for _, family := range []string{"breaker_calls_total", "breaker_rejected_total",
		"breaker_would_reject_total", "breaker_rt_seconds", "breaker_transitions_total"} {
		assert.Empty(t, samples(t, f.c, family), family)
	}
	assertMetrics(t, f.c, `
		breaker_state{dry_run="false",resource="inventory",rule="ErrorCount#0"} 0
	`, "breaker_state")
}

// Given a Collector that keeps one resource name apart, when calls are not made because their
// context was done, then they take no name: the next call that ran keeps its own series.
func TestACallWhoseContextWasDoneTakesNoResourceName(t *testing.T) {
	f := newFixtureWith(t, []breakerprom.Option{breakerprom.WithLimits(breakerview.Limits{Names: 1})}, nil)
	for name, ctx := range doneContexts(t) {
		require.ErrorIs(t, f.m.Do(ctx, name, func(context.Context) error { return nil }), ctx.Err())
	}
	require.NoError(t, f.call("kept", 0, nil))
	assert.Equal(t, map[string]float64{"kept": 1}, passedByResource(t, f.c))
}
