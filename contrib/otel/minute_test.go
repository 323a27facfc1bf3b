package breakerotel_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakerview"
	breakerotel "github.com/halfopen/breaker/contrib/otel"
)

// longest is the data point of breaker.call.duration.max of resource.
func longest(resource string, seconds float64) metricdata.DataPoint[float64] {
	return metricdata.DataPoint[float64]{Value: seconds, Attributes: set(breakerotel.ResourceKey.String(resource))}
}

// assertNoData checks that the metric called name has no data point: the reader then leaves
// it out.
func (f *fixture) assertNoData(name string) {
	f.t.Helper()
	_, ok := f.metric(name)
	assert.False(f.t, ok, "%s has data", name)
}

// Given calls of 10ms, 80ms and 20ms, then a rejected call and, 30 seconds on, one of 30ms, when
// the Instruments are collected, then breaker.call.duration.max, a gauge in seconds, is the
// 80ms call's until its second is a minute behind the collection, as on every surface; then the
// 30ms call's; then nothing, once no call of the minute is left.
func TestCallDurationMax(t *testing.T) {
	f := newFixture(t, []breaker.Rule{errorCount("inventory", 1)})
	start := f.clock.Now()
	require.NoError(t, f.call("payments", 10*time.Millisecond, nil))
	require.NoError(t, f.call("payments", 80*time.Millisecond, nil))
	require.NoError(t, f.call("payments", 20*time.Millisecond, nil))
	require.ErrorIs(t, f.call("inventory", 5*time.Millisecond, errDown), errDown)
	require.ErrorIs(t, f.call("inventory", time.Second, nil), breaker.ErrOpen) // rejected: no RT
	m, ok := f.metric(breakerotel.CallDurationMaxName)
	require.True(t, ok)
	assert.Equal(t, "s", m.Unit)
	assert.NotEmpty(t, m.Description)
	f.assertData(breakerotel.CallDurationMaxName, metricdata.Gauge[float64]{DataPoints: []metricdata.DataPoint[float64]{
		longest("inventory", 0.005), longest("payments", 0.08),
	}})

	f.clock.Set(start.Add(30 * time.Second))
	require.NoError(t, f.call("payments", 30*time.Millisecond, nil))
	f.clock.Set(start.Add(59*time.Second + 999*time.Millisecond))
	f.assertData(breakerotel.CallDurationMaxName, metricdata.Gauge[float64]{DataPoints: []metricdata.DataPoint[float64]{
		longest("inventory", 0.005), longest("payments", 0.08),
	}})

	f.clock.Set(start.Add(60 * time.Second)) // the first second has left the minute
	f.assertData(breakerotel.CallDurationMaxName, metricdata.Gauge[float64]{DataPoints: []metricdata.DataPoint[float64]{
		longest("payments", 0.03),
	}})

	f.clock.Set(start.Add(100 * time.Second))
	f.assertNoData(breakerotel.CallDurationMaxName)
}

// Given a bound of two names, two names that share a breaker.resource and a clock that steps
// back, then breaker.call.duration.max has one data point per breaker.resource, the longest
// call of the names under it, the names past the bound under _other, and a step ahead of the
// clock is not read.
func TestCallDurationMaxResources(t *testing.T) {
	f := newFixture(t, nil, breakerotel.WithLimits(breakerview.Limits{Names: 2}))
	require.NoError(t, f.call("a\xff", 10*time.Millisecond, nil))
	require.NoError(t, f.call("a\xfe", 30*time.Millisecond, nil))
	require.NoError(t, f.call("b", 40*time.Millisecond, nil)) // past the bound
	f.assertData(breakerotel.CallDurationMaxName, metricdata.Gauge[float64]{DataPoints: []metricdata.DataPoint[float64]{
		longest("a\uFFFD", 0.03), longest(breakerview.Overflow, 0.04),
	}})

	f.clock.Advance(-time.Hour)
	f.assertNoData(breakerotel.CallDurationMaxName)
}
