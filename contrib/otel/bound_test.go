package breakerotel_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/halfopen/breaker"
	breakerotel "github.com/halfopen/breaker/contrib/otel"
)

// passedByResource collects breaker.calls and returns its passed points by resource.
func (f *fixture) passedByResource() map[string]int64 {
	f.t.Helper()
	m, ok := f.metric(breakerotel.CallsName)
	require.True(f.t, ok, "no data for %s", breakerotel.CallsName)
	sum, ok := m.Data.(metricdata.Sum[int64])
	require.True(f.t, ok, "%T", m.Data)
	got := make(map[string]int64)
	for _, p := range sum.DataPoints {
		outcome, _ := p.Attributes.Value(breakerotel.OutcomeKey)
		resource, _ := p.Attributes.Value(breakerotel.ResourceKey)
		if outcome.AsString() == breakerotel.OutcomePassed {
			got[resource.AsString()] = p.Value
		}
	}
	return got
}

// Given WithMaxResources(3), when ten resources are called twice each, one call failing, then
// the first three keep attribute sets of their own, the other seven count under
// OverflowResource, and a name that has sets keeps them after the overflow began.
func TestMaxResources(t *testing.T) {
	f := newFixture(t, nil, breakerotel.WithMaxResources(3))
	for i := range 10 {
		name := fmt.Sprintf("r%d", i)
		require.NoError(t, f.call(name, 250*time.Millisecond, nil))
		require.ErrorIs(t, f.call(name, 500*time.Millisecond, errDown), errDown)
	}
	require.NoError(t, f.call("r0", 250*time.Millisecond, nil))

	over := breakerotel.OverflowResource
	f.assertData(breakerotel.CallsName, counter(
		calls("r0", breakerotel.OutcomePassed, 3),
		calls("r0", breakerotel.OutcomeFailed, 1),
		calls("r1", breakerotel.OutcomePassed, 2),
		calls("r1", breakerotel.OutcomeFailed, 1),
		calls("r2", breakerotel.OutcomePassed, 2),
		calls("r2", breakerotel.OutcomeFailed, 1),
		calls(over, breakerotel.OutcomePassed, 14),
		calls(over, breakerotel.OutcomeFailed, 7),
	))
	overflowRTs := make([]float64, 0, 14)
	for range 7 {
		overflowRTs = append(overflowRTs, 0.25, 0.5)
	}
	f.assertData(breakerotel.DurationName, histogram(
		durations("r0", 0.25, 0.5, 0.25),
		durations("r1", 0.25, 0.5),
		durations("r2", 0.25, 0.5),
		durations(over, overflowRTs...),
	))
}

// Given WithMaxResources(1), when the breakers of two resources trip, then the transitions of
// the second count under OverflowResource, as its calls do.
func TestMaxResourcesTransitions(t *testing.T) {
	errorCount := func(resource string) breaker.Rule {
		return breaker.Rule{Resource: resource, Strategy: breaker.ErrorCount, Threshold: 1,
			MinRequestAmount: 1, RetryTimeout: time.Second}
	}
	f := newFixture(t, []breaker.Rule{errorCount("first"), errorCount("second")},
		breakerotel.WithMaxResources(1))
	require.ErrorIs(t, f.call("first", 0, errDown), errDown)
	require.ErrorIs(t, f.call("second", 0, errDown), errDown)
	require.ErrorIs(t, f.call("second", 0, nil), breaker.ErrOpen)

	over := breakerotel.OverflowResource
	f.assertData(breakerotel.CallsName, counter(
		calls("first", breakerotel.OutcomePassed, 1),
		calls("first", breakerotel.OutcomeFailed, 1),
		calls(over, breakerotel.OutcomePassed, 1),
		calls(over, breakerotel.OutcomeFailed, 1),
		calls(over, breakerotel.OutcomeBlocked, 1),
	))
	f.assertData(breakerotel.TransitionsName, counter(
		transitions("first", breaker.Closed, breaker.Open, breaker.ThresholdExceeded, 1),
		transitions(over, breaker.Closed, breaker.Open, breaker.ThresholdExceeded, 1),
	))
}

// Given no option, when DefaultMaxResources+5 resources are called once each (as a server
// naming requests by path would), then DefaultMaxResources of them have points of their own
// and the overflow counts exactly the other 5.
func TestDefaultMaxResources(t *testing.T) {
	const extra = 5
	f := newFixture(t, nil)
	for i := range breakerotel.DefaultMaxResources + extra {
		require.NoError(t, f.call(fmt.Sprintf("GET /wp-admin/%d.php", i), 0, nil))
	}

	passed := f.passedByResource()
	assert.Len(t, passed, breakerotel.DefaultMaxResources+1)
	assert.Equal(t, int64(extra), passed[breakerotel.OverflowResource])
	last := fmt.Sprintf("GET /wp-admin/%d.php", breakerotel.DefaultMaxResources-1)
	assert.Equal(t, int64(1), passed[last], "the last name within the bound")
	first := fmt.Sprintf("GET /wp-admin/%d.php", breakerotel.DefaultMaxResources)
	assert.NotContains(t, passed, first, "the first name past it")
}

// Given goroutines that each call 200 resources of their own, then (under -race) exactly 10
// names get points of their own, and the overflow counts every other call.
func TestMaxResourcesConcurrent(t *testing.T) {
	const goroutines, names, bound = 4, 200, 10
	f := newFixture(t, nil, breakerotel.WithMaxResources(bound))
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range names {
				assert.NoError(t, f.call(fmt.Sprintf("g%d-%d", g, i), 0, nil))
			}
		})
	}
	wg.Wait()

	passed := f.passedByResource()
	require.Len(t, passed, bound+1)
	for name, n := range passed {
		if name != breakerotel.OverflowResource {
			assert.Equal(t, int64(1), n, name)
		}
	}
	assert.Equal(t, int64(goroutines*names-bound), passed[breakerotel.OverflowResource])
}

// WithMaxResources below 1 keeps the default.
func TestMaxResourcesBelowOne(t *testing.T) {
	for _, give := range []int{0, -1} {
		f := newFixture(t, nil, breakerotel.WithMaxResources(give))
		for i := range 3 {
			require.NoError(t, f.call(fmt.Sprintf("r%d", i), 0, nil))
		}
		assert.Equal(t, map[string]int64{"r0": 1, "r1": 1, "r2": 1}, f.passedByResource(), "WithMaxResources(%d)", give)
	}
}
