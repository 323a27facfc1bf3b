package breakerprom_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
	breakerprom "github.com/halfopen/breaker/contrib/prometheus"
)

// quiet keeps the Manager's log lines of overrides out of the test output.
var quiet = breaker.WithLogger(slog.New(slog.DiscardHandler))

// newOverrideFixture is newFixture with a Manager that logs nothing, and Collector options.
func newOverrideFixture(t *testing.T, opts []breakerprom.Option, rules ...breaker.Rule) *fixture {
	t.Helper()
	return newFixtureWith(t, opts, []breaker.Option{quiet}, rules...)
}

// override forces resource for d with a note.
func (f *fixture) override(resource string, force breaker.Force, d time.Duration) {
	f.t.Helper()
	_, err := f.m.Override(resource, force, d, "INC-7")
	require.NoError(f.t, err)
}

// Given a tripped breaker, when overrides of its resource and of a resource without rules
// begin, end and expire, then breaker_transitions_total counts the trip only: an override
// moves no breaker.
func TestOverrideIsNoTransition(t *testing.T) {
	f := newOverrideFixture(t, nil, errorCount("svc", 1))
	assert.ErrorIs(t, f.call("svc", 0, errDown), errDown) // trips

	f.override("svc", breaker.ForceClosed, time.Hour)
	f.override("unruled", breaker.ForceOpen, time.Minute)
	require.True(t, f.m.EndOverride("svc"))
	f.clock.Advance(time.Minute)
	assert.NoError(t, f.call("unruled", 0, nil), "the first call after its end expires it")
	require.Empty(t, overridesOf(f.m))

	assertMetrics(t, f.c, `
		breaker_transitions_total{dry_run="false",from="CLOSED",reason="ThresholdExceeded",resource="svc",to="OPEN"} 1
	`, "breaker_transitions_total")
}

// overrideFamilies are the families of the override gauges.
var overrideFamilies = []string{"breaker_override", "breaker_override_end_timestamp_seconds"}

// Given overrides of a resource with rules and of two without, then each shows in
// breaker_override with its force, and its end in breaker_override_end_timestamp_seconds;
// an override ended goes at once, one whose end came goes without a call.
func TestOverrideGauges(t *testing.T) {
	f := newOverrideFixture(t, nil, errorCount("svc", 1))
	f.override("svc", breaker.ForceClosed, 90*time.Minute) // ends at 1767231000
	f.override("payments", breaker.ForceOpen, 30*time.Minute)
	f.override("legacy", breaker.Auto, time.Hour)
	require.Equal(t, 1767225600., float64(f.m.Now().Unix()), "the fake clock's start")
	assertMetrics(t, f.c, `
		breaker_override{force="auto",resource="legacy"} 1
		breaker_override{force="open",resource="payments"} 1
		breaker_override{force="closed",resource="svc"} 1
		breaker_override_end_timestamp_seconds{force="auto",resource="legacy"} 1767229200
		breaker_override_end_timestamp_seconds{force="open",resource="payments"} 1767227400
		breaker_override_end_timestamp_seconds{force="closed",resource="svc"} 1767231000
	`, overrideFamilies...)

	require.True(t, f.m.EndOverride("svc"))
	f.clock.Advance(30 * time.Minute) // the end of the override of payments
	assertMetrics(t, f.c, `
		breaker_override{force="auto",resource="legacy"} 1
		breaker_override_end_timestamp_seconds{force="auto",resource="legacy"} 1767229200
	`, overrideFamilies...)

	f.override("legacy", breaker.ForceOpen, 15*time.Minute) // replaces it
	assertMetrics(t, f.c, `
		breaker_override{force="open",resource="legacy"} 1
		breaker_override_end_timestamp_seconds{force="open",resource="legacy"} 1767228300
	`, overrideFamilies...)
	f.clock.Advance(15 * time.Minute)
	assertMetrics(t, f.c, ``, overrideFamilies...)
}

// Given a tripped breaker, then breaker_state says dry_run="true" while an override forces its
// resource closed, also over settings that do not, and "false" while an override lifts the
// ForceClosed of its settings.
func TestOverrideDryRun(t *testing.T) {
	f := newOverrideFixture(t, nil, errorCount("svc", 1))
	assert.ErrorIs(t, f.call("svc", 0, errDown), errDown) // trips

	f.override("svc", breaker.ForceClosed, time.Hour)
	assertMetrics(t, f.c, `breaker_state{dry_run="true",resource="svc",rule="ErrorCount#0"} 1`, "breaker_state")
	f.settings(map[string]breaker.ResourceConfig{"svc": {Force: breaker.ForceClosed}})
	f.override("svc", breaker.Auto, time.Hour)
	assertMetrics(t, f.c, `breaker_state{dry_run="false",resource="svc",rule="ErrorCount#0"} 1`, "breaker_state")
	require.True(t, f.m.EndOverride("svc"))
	assertMetrics(t, f.c, `breaker_state{dry_run="true",resource="svc",rule="ErrorCount#0"} 1`, "breaker_state")
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
