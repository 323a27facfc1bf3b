package breaker_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakertest"
)

// The clock steps back an hour while a probe is in flight. The next call finds the probe
// overdue (its deadline is 50 minutes ahead, more than ProbeTimeout), instead of being
// rejected for an hour.
func TestClockBackDuringProbeDoesNotWedge(t *testing.T) {
	rule := errorCount(1, 1)
	rule.ProbeTimeout = 10 * time.Minute
	h := newHarness(t, rule)
	h.completeN("svc", 1, errDown)
	h.clock.Advance(5 * time.Second)
	_, err := h.m.Enter("svc") // the probe, never exited
	require.NoError(t, err)
	h.clock.Advance(-time.Hour)

	_, err = h.m.Enter("svc")
	assert.ErrorIs(t, err, breaker.ErrOpen, "the probe counts as timed out, and OPEN starts again")
	assert.Equal(t, []string{tripped, probing, "HALF_OPEN->OPEN ProbeTimedOut"}, h.events.transitions())
	h.clock.Advance(5 * time.Second)
	require.NoError(t, h.complete("svc", 0, nil), "the next retry time is RetryTimeout after the step back")
	assert.Equal(t, breaker.Closed, h.state("svc", 0))
}

// The clock steps back an hour while OPEN: the retry time is an hour and 5s ahead, more
// than RetryTimeout, so the next call probes.
func TestClockBackWhileOpenDoesNotExtendIt(t *testing.T) {
	h := newHarness(t, errorCount(1, 1))
	h.completeN("svc", 1, errDown)
	h.clock.Advance(-time.Hour)
	require.NoError(t, h.complete("svc", 0, nil))
	assert.Equal(t, []string{tripped, probing, recovered}, h.events.transitions())
}

// A step back of the clock that leaves the retry time more than RetryTimeout ahead counts as
// due; a small one, that leaves it within RetryTimeout, still waits for it.
func TestClockSmallStepBackStillWaits(t *testing.T) {
	h := newHarness(t, errorCount(1, 1))
	h.completeN("svc", 1, errDown)
	h.clock.Advance(-time.Second) // the retry time is 6s ahead, more than 5s
	assert.NoError(t, h.complete("svc", 0, nil), "more than RetryTimeout ahead counts as due")

	h = newHarness(t, errorCount(1, 1))
	h.completeN("svc", 1, errDown)
	h.clock.Advance(time.Second)
	h.clock.Advance(-500 * time.Millisecond) // the retry time is 4.5s ahead
	assert.ErrorIs(t, h.complete("svc", 0, nil), breaker.ErrOpen)
}

// A call canceled by its caller after 240ms, against MaxAllowedRT 100ms, counts as slow.
func TestCanceledSlowCallCountsAsSlow(t *testing.T) {
	rule := breaker.Rule{Resource: "svc", Strategy: breaker.SlowRequestRatio, Threshold: 1,
		MaxAllowedRT: 100 * time.Millisecond, MinRequestAmount: 3, RetryTimeout: 5 * time.Second}
	h := newHarness(t, rule)
	for i := 0; i < 3; i++ {
		require.NoError(t, h.complete("svc", 240*time.Millisecond, context.Canceled))
	}
	assert.Equal(t, breaker.Open, h.state("svc", 0))
	assert.Equal(t, 1.0, h.events.last().Snapshot)
}

// A call canceled sooner than MaxAllowedRT still counts neither way.
func TestCanceledFastCallCountsNeitherWay(t *testing.T) {
	rule := breaker.Rule{Resource: "svc", Strategy: breaker.SlowRequestRatio, Threshold: 0.5,
		MaxAllowedRT: 100 * time.Millisecond, MinRequestAmount: 2, RetryTimeout: 5 * time.Second}
	h := newHarness(t, rule)
	require.NoError(t, h.complete("svc", 240*time.Millisecond, nil))
	require.NoError(t, h.complete("svc", 50*time.Millisecond, context.Canceled))
	assert.Equal(t, uint64(1), h.m.Breakers("svc")[0].Stats().Total, "the canceled call is not counted")
	assert.Equal(t, breaker.Closed, h.state("svc", 0))
}

// A canceled probe that was already slow fails; one canceled sooner is given back.
func TestCanceledProbeFailsWhenAlreadySlow(t *testing.T) {
	rule := slowRatio(1, 1)
	h := newHarness(t, rule)
	require.NoError(t, h.complete("svc", time.Second, nil))
	h.clock.Advance(5 * time.Second)
	require.NoError(t, h.complete("svc", 10*time.Millisecond, context.Canceled))
	assert.Equal(t, []string{tripped, probing, "HALF_OPEN->OPEN ProbeIgnored"}, h.events.transitions())
	require.NoError(t, h.complete("svc", 60*time.Millisecond, context.Canceled))
	assert.Equal(t, []string{tripped, probing, "HALF_OPEN->OPEN ProbeIgnored", probing, reopened},
		h.events.transitions())
}

// ErrorRatio still ignores a canceled call, however slow.
func TestErrorStrategiesIgnoreCanceled(t *testing.T) {
	h := newHarness(t, errorRatio(0.5, 1))
	require.NoError(t, h.complete("svc", time.Hour, context.Canceled))
	assert.Equal(t, uint64(0), h.m.Breakers("svc")[0].Stats().Total)
}

// {ErrorCount, Threshold 3} with the default MinRequestAmount trips on the third failure in a
// row: the default needs no more calls than Threshold. An explicit MinRequestAmount keeps its
// meaning.
func TestErrorCountDefaultMinRequestAmount(t *testing.T) {
	tests := []struct {
		give      breaker.Rule
		wantTrips int // the failure that trips
	}{
		{give: errorCount(1, 0), wantTrips: 1},
		{give: errorCount(3, 0), wantTrips: 3},
		{give: errorCount(5, 0), wantTrips: 5},
		{give: errorCount(7, 0), wantTrips: 7},
		{give: errorCount(3, 5), wantTrips: 5}, // an explicit MinRequestAmount keeps its meaning
	}
	for _, tt := range tests {
		h := newHarness(t, tt.give)
		h.completeN("svc", tt.wantTrips-1, errDown)
		assert.Equal(t, breaker.Closed, h.state("svc", 0), "%+v after %d failures", tt.give, tt.wantTrips-1)
		h.completeN("svc", 1, errDown)
		assert.Equal(t, breaker.Open, h.state("svc", 0), "%+v after %d failures", tt.give, tt.wantTrips)
	}
}

// ErrorCount's default MinRequestAmount is part of the rule's identity: MinRequestAmount 3
// spelled out is the same rule as {ErrorCount, Threshold 3}, and keeps its breaker.
func TestErrorCountDefaultMinimumIsPartOfIdentity(t *testing.T) {
	r := errorCount(3, 0)
	h := newHarness(t, r)
	before := h.m.Breakers("svc")[0]
	spelled := r
	spelled.MinRequestAmount = 3
	require.NoError(t, h.m.LoadRules([]breaker.Rule{spelled}))
	assert.Same(t, before, h.m.Breakers("svc")[0])
	assert.ErrorIs(t, h.m.LoadRules([]breaker.Rule{r, spelled}), breaker.ErrInvalidRule, "the two are one rule")
	five := r
	five.MinRequestAmount = 5
	require.NoError(t, h.m.LoadRules([]breaker.Rule{r, five}), "an explicit 5 is another rule")
}

// A call rejected by several breakers names the latest retry time among them: with two OPEN
// rules retrying in 2s and 60s, every rejection says 60s, whichever rule rejects first.
func TestRejectionNamesLatestRetryTime(t *testing.T) {
	short := errorCount(1, 1)
	short.RetryTimeout = 2 * time.Second
	long := errorCount(1, 1)
	long.RetryTimeout = time.Minute
	for _, rules := range [][]breaker.Rule{{short, long}, {long, short}} {
		h := newHarness(t, rules...)
		h.completeN("svc", 1, errDown)
		want := breakertest.Start.Add(time.Minute)
		for _, at := range []time.Duration{0, 2 * time.Second, 30 * time.Second} {
			h.at(at)
			err := h.complete("svc", 0, nil)
			var be *breaker.BlockError
			require.True(t, errors.As(err, &be), "at %v: %v", at, err)
			assert.Equal(t, want, be.RetryAt, "at %v", at)
			assert.Equal(t, time.Minute, be.Rule.RetryTimeout, "at %v", at)
		}
	}
}

// Removing a rule and adding it back restarts Generation, but Seq, which increases across the
// whole Manager, keeps increasing.
func TestSeqIncreasesAcrossReloads(t *testing.T) {
	h := newHarness(t, errorCount(1, 1))
	h.completeN("svc", 1, errDown) // OPEN, generation 1
	require.NoError(t, h.m.LoadRules(nil))
	require.NoError(t, h.m.LoadRules([]breaker.Rule{errorCount(1, 1)}))
	h.completeN("svc", 1, errDown) // OPEN again, generation 1 of the new breaker

	all := h.events.all()
	require.Len(t, all, 3)
	assert.Equal(t, []uint64{1, 2, 1}, []uint64{all[0].Generation, all[1].Generation, all[2].Generation})
	assert.Less(t, all[0].Seq, all[1].Seq)
	assert.Less(t, all[1].Seq, all[2].Seq)
	assert.NotZero(t, all[0].Seq)
}
