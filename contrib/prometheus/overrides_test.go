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
	require.Empty(t, f.m.Overrides())

	assertMetrics(t, f.c, `
		breaker_transitions_total{dry_run="false",from="CLOSED",reason="ThresholdExceeded",resource="svc",to="OPEN"} 1
	`, "breaker_transitions_total")
}
