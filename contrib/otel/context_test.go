package breakerotel_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakerview"
	breakerotel "github.com/halfopen/breaker/contrib/otel"
)

// doneContexts are a context canceled and one past its deadline, both done before the call.
func doneContexts(t *testing.T) map[string]context.Context {
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancelExpired := context.WithDeadline(context.Background(), time.Unix(0, 0))
	t.Cleanup(cancelExpired)
	return map[string]context.Context{"canceled": canceled, "past its deadline": expired}
}

// points collects and returns the data points of the metric called name, none when it has no
// data.
func (f *fixture) points(name string) int {
	f.t.Helper()
	got, ok := f.metric(name)
	if !ok {
		return 0
	}
	switch data := got.Data.(type) {
	case metricdata.Sum[int64]:
		return len(data.DataPoints)
	case metricdata.Histogram[float64]:
		return len(data.DataPoints)
	}
	require.FailNow(f.t, "unexpected aggregation", "%s: %T", name, got.Data)
	return 0
}

// Given calls whose context is canceled, or past its deadline, to a resource with a rule and
// to one without, then the Instruments measure none of them: the calls counter, the duration
// histogram and the transitions counter have no data point, and the breaker's state is still
// CLOSED.
func TestCallsDoNotCountACallWhoseContextWasDone(t *testing.T) {
	f := newFixture(t, []breaker.Rule{errorCount("inventory", 1)})
	called := 0
	fn := func(context.Context) error { called++; return errDown }
	for _, ctx := range doneContexts(t) {
		for range 3 {
			require.ErrorIs(t, f.m.Do(ctx, "inventory", fn), ctx.Err())
			require.ErrorIs(t, f.m.Do(ctx, "cache", fn), ctx.Err())
		}
	}
	require.Zero(t, called, "no call was made")

	for _, name := range []string{breakerotel.CallsName, breakerotel.DurationName, breakerotel.TransitionsName} {
		assert.Zero(t, f.points(name), name)
	}
	f.assertData(breakerotel.StateName, gauge(state("inventory", "ErrorCount#0", breaker.Closed)))
}

// Given Instruments that keep one resource name apart, when calls are not made because their
// context was done, then they take no name: the next call that ran is measured under its own.
func TestACallWhoseContextWasDoneTakesNoResourceName(t *testing.T) {
	f := newFixture(t, nil, breakerotel.WithLimits(breakerview.Limits{Names: 1}))
	for name, ctx := range doneContexts(t) {
		require.ErrorIs(t, f.m.Do(ctx, name, func(context.Context) error { return nil }), ctx.Err())
	}
	require.NoError(t, f.call("kept", 0, nil))
	assert.Equal(t, map[string]int64{"kept": 1}, f.passedByResource())
}
