package breakerprom_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakerview"
	breakerprom "github.com/halfopen/breaker/contrib/prometheus"
)

const maxFamily = "breaker_call_duration_max_seconds"

// Given calls of 10ms, 80ms and 20ms, then a rejected call and, 30 seconds on, one of 30ms, when
// the Collector is scraped, then breaker_call_duration_max_seconds is the 80ms call's until its
// second is a minute behind the scrape, as on every surface; then the 30ms call's; then
// nothing, once no call of the minute is left.
func TestCallDurationMax(t *testing.T) {
	f := newFixture(t, errorCount("inventory", 1))
	start := f.clock.Now()
	require.NoError(t, f.call("payments", 10*time.Millisecond, nil))
	require.NoError(t, f.call("payments", 80*time.Millisecond, nil))
	require.NoError(t, f.call("payments", 20*time.Millisecond, nil))
	assert.ErrorIs(t, f.call("inventory", 5*time.Millisecond, errDown), errDown)
	assert.ErrorIs(t, f.call("inventory", time.Second, nil), breaker.ErrOpen) // rejected: no RT
	assertMetrics(t, f.c, `
		breaker_call_duration_max_seconds{resource="inventory"} 0.005
		breaker_call_duration_max_seconds{resource="payments"} 0.08
	`, maxFamily)

	f.clock.Set(start.Add(30 * time.Second))
	require.NoError(t, f.call("payments", 30*time.Millisecond, nil))
	f.clock.Set(start.Add(59*time.Second + 999*time.Millisecond))
	assertMetrics(t, f.c, `
		breaker_call_duration_max_seconds{resource="inventory"} 0.005
		breaker_call_duration_max_seconds{resource="payments"} 0.08
	`, maxFamily)

	f.clock.Set(start.Add(60 * time.Second)) // the first second has left the minute
	assertMetrics(t, f.c, `
		breaker_call_duration_max_seconds{resource="payments"} 0.03
	`, maxFamily)

	f.clock.Set(start.Add(100 * time.Second))
	assertMetrics(t, f.c, ``, maxFamily)
}

// Given a bound of two names, two names that share a label and a clock that steps back, then
// breaker_call_duration_max_seconds has one series per label, the longest call of the names
// under it, the names past the bound under _other, and a step ahead of the clock is not read.
func TestCallDurationMaxLabels(t *testing.T) {
	f := newFixtureWith(t, []breakerprom.Option{breakerprom.WithLimits(breakerview.Limits{Names: 2})}, nil)
	require.NoError(t, f.call("a\xff", 10*time.Millisecond, nil))
	require.NoError(t, f.call("a\xfe", 30*time.Millisecond, nil))
	require.NoError(t, f.call("b", 40*time.Millisecond, nil)) // past the bound
	assertMetrics(t, f.c, `
		breaker_call_duration_max_seconds{resource="_other"} 0.04
		breaker_call_duration_max_seconds{resource="a�"} 0.03
	`, maxFamily)

	f.clock.Advance(-time.Hour)
	assertMetrics(t, f.c, ``, maxFamily)
}
