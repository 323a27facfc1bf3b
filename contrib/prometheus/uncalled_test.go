package breakerprom_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakerview"
	breakerprom "github.com/halfopen/breaker/contrib/prometheus"
)

const uncalledFamily = "breaker_uncalled"

// Given a rule for "paymnets", a typo, settings for "legacy", and calls to "payments" each
// second, when the Collector is scraped, then breaker_uncalled is absent until it has observed
// a minute; then it names paymnets with nearest="payments", and legacy, near no called name,
// with nearest=""; once paymnets is called, only legacy.
func TestUncalled(t *testing.T) {
	f := newFixtureWith(t, nil, []breaker.Option{quiet}, errorCount("payments", 5), errorCount("paymnets", 5))
	require.NoError(t, f.m.LoadResources(map[string]breaker.ResourceConfig{"legacy": {MaxConcurrency: 1}}))
	for range 59 {
		f.clock.Advance(time.Second)
		require.NoError(t, f.call("payments", 0, nil))
	}
	f.clock.Advance(time.Second - time.Millisecond)
	assertMetrics(t, f.c, ``, uncalledFamily) // not yet a minute

	f.clock.Advance(time.Millisecond)
	assertMetrics(t, f.c, `
		breaker_uncalled{nearest="",resource="legacy"} 1
		breaker_uncalled{nearest="payments",resource="paymnets"} 1
	`, uncalledFamily)

	require.NoError(t, f.call("paymnets", 0, nil))
	assertMetrics(t, f.c, `breaker_uncalled{nearest="",resource="legacy"} 1`, uncalledFamily)
}

// Given a minute in which a call was counted under _other, past the bound on names, then
// breaker_uncalled is absent: that call may have been the configured name's. So it is for a
// Collector that watches no Manager, which has no configuration to read.
func TestUncalledAbsent(t *testing.T) {
	f := newFixtureWith(t, []breakerprom.Option{breakerprom.WithLimits(breakerview.Limits{Names: 1})}, nil, errorCount("paymnets", 5))
	require.NoError(t, f.call("payments", 0, nil))
	f.clock.Advance(30 * time.Second)
	require.NoError(t, f.call("refunds", 0, nil)) // past the bound
	f.clock.Advance(30 * time.Second)
	assertMetrics(t, f.c, ``, uncalledFamily)

	f.clock.Advance(30 * time.Second) // the _other call has left the minute
	require.NoError(t, f.call("payments", 0, nil))
	assertMetrics(t, f.c, `breaker_uncalled{nearest="payments",resource="paymnets"} 1`, uncalledFamily)

	f.c.Watch(nil)
	assertMetrics(t, f.c, ``, uncalledFamily)
}
