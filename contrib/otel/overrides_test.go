package breakerotel_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
	require.Empty(t, f.m.Overrides())

	f.assertData(breakerotel.TransitionsName, counter(
		transitions("svc", breaker.Closed, breaker.Open, breaker.ThresholdExceeded, 1),
	))
}
