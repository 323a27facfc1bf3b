package breakerotel_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/halfopen/breaker"
	breakerotel "github.com/halfopen/breaker/contrib/otel"
)

// Given a bound of 2 resource names, when calls come under 5 names, then the first 2 keep
// series of their own and the other 3 are measured, exactly, as breaker.resource "_other":
// calls by outcome and cause, durations and transitions; a name seen before the bound filled
// keeps its own. The state gauge, read from the rules, keeps each rule's own name.
func TestMaxResources(t *testing.T) {
	f := newFixture(t, []breaker.Rule{errorCount("c", 1), errorCount("e", 1)},
		breakerotel.WithMaxResources(2))

	require.NoError(t, f.call("a", 62500*time.Microsecond, nil)) // a: its own
	require.NoError(t, f.call("b", 125*time.Millisecond, nil))   // b: its own; the bound is full
	require.ErrorIs(t, f.call("c", 250*time.Millisecond, errDown), errDown)
	require.ErrorIs(t, f.call("c", 0, nil), breaker.ErrOpen)
	require.NoError(t, f.call("d", 500*time.Millisecond, nil))
	require.ErrorIs(t, f.call("e", 250*time.Millisecond, errDown), errDown)
	require.ErrorIs(t, f.call("e", 0, nil), breaker.ErrOpen)
	require.NoError(t, f.call("a", 62500*time.Microsecond, nil)) // still its own

	const other = breakerotel.OverflowResource
	f.assertData(breakerotel.CallsName, counter(
		calls("a", breakerotel.OutcomePassed, 2),
		calls("b", breakerotel.OutcomePassed, 1),
		calls(other, breakerotel.OutcomePassed, 3),
		calls(other, breakerotel.OutcomeFailed, 2),
		blocked(other, breakerotel.CauseOpen, 2),
	))
	f.assertData(breakerotel.DurationName, histogram(
		durations("a", 0.0625, 0.0625),
		durations("b", 0.125),
		durations(other, 0.25, 0.5, 0.25),
	))
	f.assertData(breakerotel.TransitionsName, counter(
		transitions(other, breaker.Closed, breaker.Open, breaker.ThresholdExceeded, 2),
	))
	f.assertData(breakerotel.StateName, gauge(
		state("c", "ErrorCount#0", breaker.Open),
		state("e", "ErrorCount#0", breaker.Open),
	))
}

// Given the default bound, when 5,000 distinct names each make a call from 4 goroutines at
// once, then the calls counter and the histogram hold DefaultMaxResources names and the overflow only, and
// every call is counted exactly once.
func TestDefaultMaxResources(t *testing.T) {
	const names, goroutines = 5000, 4
	f := newFixture(t, nil)
	ok := func(context.Context) error { return nil }
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := g; i < names; i += goroutines {
				_ = f.m.Do(context.Background(), "path/"+strconv.Itoa(i), ok)
			}
		})
	}
	wg.Wait()

	got, found := f.metric(breakerotel.CallsName)
	require.True(t, found)
	points := got.Data.(metricdata.Sum[int64]).DataPoints
	require.Len(t, points, breakerotel.DefaultMaxResources+1)
	var total, overflow int64
	for _, p := range points {
		total += p.Value
		if v, _ := p.Attributes.Value(breakerotel.ResourceKey); v.AsString() == breakerotel.OverflowResource {
			overflow = p.Value
		} else {
			assert.Equal(t, int64(1), p.Value, v.AsString())
		}
	}
	assert.Equal(t, int64(names), total)
	assert.Equal(t, int64(names-breakerotel.DefaultMaxResources), overflow)

	got, found = f.metric(breakerotel.DurationName)
	require.True(t, found)
	assert.Len(t, got.Data.(metricdata.Histogram[float64]).DataPoints, breakerotel.DefaultMaxResources+1)
}

// Given WithMaxResources with a bound below 1, then the default bound holds.
func TestMaxResourcesBelowOne(t *testing.T) {
	for _, n := range []int{0, -1} {
		f := newFixture(t, nil, breakerotel.WithMaxResources(n))
		for i := range breakerotel.DefaultMaxResources + 3 {
			require.NoError(t, f.call(strconv.Itoa(i), 0, nil))
		}
		got, found := f.metric(breakerotel.CallsName)
		require.True(t, found)
		assert.Len(t, got.Data.(metricdata.Sum[int64]).DataPoints, breakerotel.DefaultMaxResources+1, "n=%d", n)
	}
}
