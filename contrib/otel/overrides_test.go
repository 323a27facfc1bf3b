package breakerotel_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/halfopen/breaker"
	breakerotel "github.com/halfopen/breaker/contrib/otel"
)

// quiet keeps the Manager's log lines of overrides out of the test output.
var quiet = breaker.WithLogger(slog.New(slog.DiscardHandler))

// newOverrideFixture is newFixture with a Manager that logs nothing.
func newOverrideFixture(t *testing.T, rules []breaker.Rule, opts ...breakerotel.Option) *fixture {
	t.Helper()
	return newFixtureWith(t, rules, opts, quiet)
}

// override forces resource for d with a note.
func (f *fixture) override(resource string, force breaker.Force, d time.Duration) {
	f.t.Helper()
	_, err := f.m.Override(resource, force, d, "INC-7")
	require.NoError(f.t, err)
}

// Given a tripped breaker, when overrides of its resource and of a resource without rules
// begin, end and expire, then the transitions counter counts the trip only: an override moves
// no breaker.
func TestOverrideIsNoTransition(t *testing.T) {
	f := newOverrideFixture(t, []breaker.Rule{errorCount("svc", 1)})
	require.ErrorIs(t, f.call("svc", 0, errDown), errDown) // trips

	f.override("svc", breaker.ForceClosed, time.Hour)
	f.override("unruled", breaker.ForceOpen, time.Minute)
	require.True(t, f.m.EndOverride("svc"))
	f.clock.Advance(time.Minute)
	assert.NoError(t, f.call("unruled", 0, nil), "the first call after its end expires it")
	require.Empty(t, overridesOf(f.m))

	f.assertData(breakerotel.TransitionsName, counter(
		transitions("svc", breaker.Closed, breaker.Open, breaker.ThresholdExceeded, 1),
	))
}

// overridden is breaker.override's data point of resource forced to force, n overrides.
func overridden(resource string, force breaker.Force, n int64) metricdata.DataPoint[int64] {
	return metricdata.DataPoint[int64]{Value: n, Attributes: set(
		breakerotel.ResourceKey.String(resource), breakerotel.ForceKey.String(force.String()))}
}

// overrideEnd is breaker.override.end's data point of resource forced to force, ending at the
// Unix time end.
func overrideEnd(resource string, force breaker.Force, end float64) metricdata.DataPoint[float64] {
	return metricdata.DataPoint[float64]{Value: end, Attributes: set(
		breakerotel.ResourceKey.String(resource), breakerotel.ForceKey.String(force.String()))}
}

func floatGauge(points ...metricdata.DataPoint[float64]) metricdata.Gauge[float64] {
	return metricdata.Gauge[float64]{DataPoints: points}
}

// assertNoOverrides checks that neither override gauge reports.
func (f *fixture) assertNoOverrides() {
	f.t.Helper()
	for _, name := range []string{breakerotel.OverrideName, breakerotel.OverrideEndName} {
		_, ok := f.metric(name)
		assert.False(f.t, ok, "%s reports", name)
	}
}

// Given overrides of a resource with rules and of two without, then each shows in
// breaker.override with its force, and its end in breaker.override.end; an override ended
// goes at once, one whose end came goes without a call.
func TestOverrideGauges(t *testing.T) {
	f := newOverrideFixture(t, []breaker.Rule{errorCount("svc", 1)})
	f.assertNoOverrides()
	f.override("svc", breaker.ForceClosed, 90*time.Minute) // ends at 1767231000
	f.override("payments", breaker.ForceOpen, 30*time.Minute)
	f.override("legacy", breaker.Auto, time.Hour)
	require.Equal(t, int64(1767225600), f.m.Now().Unix(), "the fake clock's start")
	f.assertData(breakerotel.OverrideName, gauge(
		overridden("legacy", breaker.Auto, 1),
		overridden("payments", breaker.ForceOpen, 1),
		overridden("svc", breaker.ForceClosed, 1),
	))
	f.assertData(breakerotel.OverrideEndName, floatGauge(
		overrideEnd("legacy", breaker.Auto, 1767229200),
		overrideEnd("payments", breaker.ForceOpen, 1767227400),
		overrideEnd("svc", breaker.ForceClosed, 1767231000),
	))

	require.True(t, f.m.EndOverride("svc"))
	f.clock.Advance(30 * time.Minute) // the end of the override of payments
	f.assertData(breakerotel.OverrideName, gauge(overridden("legacy", breaker.Auto, 1)))
	f.assertData(breakerotel.OverrideEndName, floatGauge(overrideEnd("legacy", breaker.Auto, 1767229200)))

	f.override("legacy", breaker.ForceOpen, 15*time.Minute) // replaces it
	f.assertData(breakerotel.OverrideName, gauge(overridden("legacy", breaker.ForceOpen, 1)))
	f.assertData(breakerotel.OverrideEndName, floatGauge(overrideEnd("legacy", breaker.ForceOpen, 1767228300)))
	f.clock.Advance(15 * time.Minute)
	f.assertNoOverrides()
}

// Given a tripped breaker, then the state gauge says breaker.dry_run true while an override
// forces its resource closed, also over settings that do not, and false while an override
// lifts the ForceClosed of its settings.
func TestOverrideDryRun(t *testing.T) {
	f := newOverrideFixture(t, []breaker.Rule{errorCount("svc", 1)})
	require.ErrorIs(t, f.call("svc", 0, errDown), errDown) // trips

	f.override("svc", breaker.ForceClosed, time.Hour)
	f.assertData(breakerotel.StateName, gauge(stateDry("svc", "ErrorCount#0", breaker.Open, true)))
	f.settings(map[string]breaker.ResourceConfig{"svc": {Force: breaker.ForceClosed}})
	f.override("svc", breaker.Auto, time.Hour)
	f.assertData(breakerotel.StateName, gauge(state("svc", "ErrorCount#0", breaker.Open)))
	require.True(t, f.m.EndOverride("svc"))
	f.assertData(breakerotel.StateName, gauge(stateDry("svc", "ErrorCount#0", breaker.Open, true)))
}

// overridesOf is the overrides in force, by resource name, as a Snapshot reads them.
func overridesOf(m *breaker.Manager) []breaker.OverrideInfo {
	var out []breaker.OverrideInfo
	snap := m.Snapshot()
	for _, r := range snap.Resources {
		if r.Override != nil {
			out = append(out, *r.Override)
		}
	}
	return out
}
