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

// uncalled is the data point of breaker.uncalled of resource, with the called name nearest.
func uncalled(resource, nearest string) metricdata.DataPoint[int64] {
	return metricdata.DataPoint[int64]{Value: 1, Attributes: set(
		breakerotel.ResourceKey.String(resource), breakerotel.NearestKey.String(nearest))}
}

// Given a rule for "paymnets", a typo, settings for "legacy", and calls to "payments" each
// second, when the Instruments are collected, then breaker.uncalled has no data until they have
// heard a minute of calls; then it names paymnets with breaker.nearest "payments", and legacy,
// near no called name, with ""; once paymnets is called, only legacy.
func TestUncalled(t *testing.T) {
	f := newOverrideFixture(t, []breaker.Rule{errorCount("payments", 5), errorCount("paymnets", 5)})
	require.NoError(t, f.m.LoadResources(map[string]breaker.ResourceConfig{"legacy": {MaxConcurrency: 1}}))
	for range 59 {
		f.clock.Advance(time.Second)
		require.NoError(t, f.call("payments", 0, nil))
	}
	f.clock.Advance(time.Second - time.Millisecond)
	f.assertNoData(breakerotel.UncalledName) // not yet a minute

	f.clock.Advance(time.Millisecond)
	m, ok := f.metric(breakerotel.UncalledName)
	require.True(t, ok)
	assert.Equal(t, "1", m.Unit)
	assert.NotEmpty(t, m.Description)
	f.assertData(breakerotel.UncalledName, gauge(uncalled("legacy", ""), uncalled("paymnets", "payments")))

	require.NoError(t, f.call("paymnets", 0, nil))
	f.assertData(breakerotel.UncalledName, gauge(uncalled("legacy", "")))
}

// Given a minute in which a call was measured as _other, past the bound on names, then
// breaker.uncalled has no data: that call may have been the configured name's.
func TestUncalledOverflow(t *testing.T) {
	f := newFixture(t, []breaker.Rule{errorCount("paymnets", 5)}, breakerotel.WithLimits(breakerview.Limits{Names: 1}))
	require.NoError(t, f.call("payments", 0, nil))
	f.clock.Advance(30 * time.Second)
	require.NoError(t, f.call("refunds", 0, nil)) // past the bound
	f.clock.Advance(30 * time.Second)
	f.assertNoData(breakerotel.UncalledName)

	f.clock.Advance(30 * time.Second) // the _other call has left the minute
	require.NoError(t, f.call("payments", 0, nil))
	f.assertData(breakerotel.UncalledName, gauge(uncalled("paymnets", "payments")))
}

// Given a bound of one name, taken by a resource really named as the overflow, and a minute of
// its calls, then its calls are measured as "_other\uFFFD", and leave breaker.uncalled on; a call
// of a name past the bound is measured as "_other", and turns it off.
func TestResourceNamedAsTheOverflow(t *testing.T) {
	f := newFixture(t, []breaker.Rule{errorCount("paymnets", 5)}, breakerotel.WithLimits(breakerview.Limits{Names: 1}))
	require.NoError(t, f.call(breakerview.Overflow, 0, nil))
	f.clock.Advance(time.Minute)
	require.NoError(t, f.call(breakerview.Overflow, 0, nil))
	f.assertData(breakerotel.UncalledName, gauge(uncalled("paymnets", "")))

	require.NoError(t, f.call("refunds", 0, nil)) // past the bound
	f.assertData(breakerotel.CallsName, counter(calls("_other\uFFFD", breakerotel.OutcomePassed, 2),
		calls(breakerview.Overflow, breakerotel.OutcomePassed, 1)))
	f.assertNoData(breakerotel.UncalledName)
}
