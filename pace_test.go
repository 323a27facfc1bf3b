package breaker_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakertest"
)

const (
	pacingStarted = "CLOSED->CLOSED PacingStarted"
	pacingEnded   = "CLOSED->CLOSED PacingEnded"
)

// paceRule is errorRatio(0.5, 4) over a 1s window of 10 buckets of 100ms, which paces instead
// of opening while the dependency still serves calls.
func paceRule() breaker.Rule {
	r := errorRatio(0.5, 4)
	r.Pace = true
	return r
}

// startPacing makes the harness's "svc" pace at the start of a bucket: two calls succeed and
// two fail, which meets 0.5 with successes in the window.
func (h *harness) startPacing() {
	h.t.Helper()
	h.completeN("svc", 2, nil)
	h.completeN("svc", 2, errDown)
	require.Equal(h.t, []string{pacingStarted}, h.events.transitions())
}

// stats returns the Stats of the first breaker of "svc".
func (h *harness) stats() breaker.Stats { return h.m.Breakers("svc")[0].Stats() }

// Given a rule that paces, when its window meets the threshold while calls still succeed, then
// the breaker stays CLOSED and observers hear pacing start, with the ratio that met the
// threshold; the rest of the bucket is held back with an error of its own that matches
// ErrBlocked but not ErrOpen and names the next bucket.
func TestPaceStartsInsteadOfOpening(t *testing.T) {
	h := newHarness(t, paceRule())
	h.startPacing()
	c := h.events.last()
	assert.Equal(t, 0.5, c.Snapshot)
	assert.Equal(t, uint64(1), c.Generation, "pacing is a change observers count")
	assert.Equal(t, breaker.Closed, h.state("svc", 0))
	st := h.stats()
	assert.True(t, st.Pacing)
	assert.False(t, st.RampingUp)
	assert.Equal(t, uint64(4), st.Total, "the window keeps its calls")

	h.clock.Advance(10 * time.Millisecond)
	err := h.complete("svc", 0, nil)
	be := blockOf(t, err)
	assert.ErrorIs(t, err, breaker.ErrPacing)
	assert.ErrorIs(t, err, breaker.ErrBlocked)
	assert.NotErrorIs(t, err, breaker.ErrOpen)
	assert.Equal(t, breaker.BlockedByPacing, be.Kind())
	assert.Equal(t, "pacing", be.Kind().String())
	assert.Equal(t, breaker.Closed, be.State)
	assert.Equal(t, breakertest.Start.Add(100*time.Millisecond), be.RetryAt, "the next bucket")
	assert.Contains(t, be.Error(), "held back: pacing")
}

// Given a pacing breaker in front of a dependency that serves 4 calls a bucket and fails the
// rest, then it admits 6 calls a bucket (1.5 × 4) for as long as that lasts: the dependency
// serves all it can, failures stay a third, and the breaker neither opens nor stops pacing.
func TestPaceHoldsACapacityLimitedDependency(t *testing.T) {
	h := newHarness(t, paceRule())
	h.startPacing()
	h.clock.Advance(100 * time.Millisecond)
	servesFour := func(i int) error { return failIf(i >= 4) }
	passed, _ := h.offerBucket(servesFour)
	assert.Equal(t, 5, passed, "the first bucket after the start: the bucket before showed 2")
	for b := 2; b < 40; b++ {
		passed, held := h.offerBucket(servesFour)
		require.Equal(t, 6, passed, "bucket %d", b)
		require.Len(t, held, 14)
		require.ErrorIs(t, held[0], breaker.ErrPacing)
	}
	assert.Equal(t, []string{pacingStarted}, h.events.transitions())
	assert.True(t, h.stats().Pacing)
}

// Given a pacing breaker whose dependency stops serving, then it offers it about a call a
// bucket and opens once the window holds no success: 11 calls in the second it takes the
// window's last successes to age out.
func TestPaceOpensWhenTheWindowHoldsNoSuccess(t *testing.T) {
	h := newHarness(t, paceRule())
	h.startPacing()
	h.clock.Advance(100 * time.Millisecond)
	sent := 0
	for range 10 {
		passed, _ := h.offerBucket(func(int) error { return errDown })
		sent += passed
	}
	assert.Equal(t, []string{pacingStarted, tripped}, h.events.transitions())
	assert.Equal(t, 1.0, h.events.last().Snapshot)
	assert.Equal(t, 11, sent, "2 in the first bucket (the one before showed 2 successes), then 1 a bucket")
}

// Given a pacing rule that also judges its newest buckets, when they fail as a hard outage's
// do, then the breaker opens at once (FastTrip) rather than pace.
func TestPaceLeavesAFastTripToOpen(t *testing.T) {
	r := paceRule()
	r.FastBuckets, r.FastThreshold = 2, 0.8
	h := newHarness(t, r)
	h.completeN("svc", 4, nil)
	h.at(500 * time.Millisecond)
	h.completeN("svc", 4, errDown)
	assert.Equal(t, []string{"CLOSED->OPEN FastTrip"}, h.events.transitions())
}

// Given a pacing breaker, when a whole bucket takes every call offered, then pacing ends at its
// end: the next call hears it, passes, and the breaker no longer paces.
func TestPaceEndsAtABucketThatHeldNothingBack(t *testing.T) {
	h := newHarness(t, paceRule())
	h.startPacing()
	h.clock.Advance(100 * time.Millisecond)
	passed, _ := h.offerBucket(func(int) error { return nil })
	assert.Equal(t, 20, passed, "each success lets 1.5 more through")
	assert.True(t, h.stats().Pacing, "the bucket has not ended")
	h.clock.Advance(5 * time.Millisecond)
	require.NoError(t, h.complete("svc", 0, nil))
	assert.Equal(t, []string{pacingStarted, pacingEnded}, h.events.transitions())
	assert.Equal(t, uint64(2), h.events.last().Generation)
	assert.False(t, h.stats().Pacing)
}

// Given a pacing breaker, when the bucket it started in takes no more calls, then pacing goes on
// in the next: that bucket's calls before the start, all admitted, were not paced, so they do
// not end it.
func TestPaceGoesOnPastAQuietFirstBucket(t *testing.T) {
	h := newHarness(t, paceRule())
	h.startPacing()
	h.at(100 * time.Millisecond)
	require.NoError(t, h.complete("svc", 0, nil))
	assert.Equal(t, []string{pacingStarted}, h.events.transitions())
	assert.True(t, h.stats().Pacing)
}

// Given a pacing breaker, when a reload turns Pace off and keeps the breaker, then the next
// call ends pacing and passes; Reset while pacing is heard as a CLOSED → CLOSED Reset.
func TestPaceEndsByReloadOrReset(t *testing.T) {
	h := newHarness(t, paceRule())
	h.startPacing()
	require.NoError(t, h.m.LoadRules([]breaker.Rule{errorRatio(0.5, 4)}))
	require.NoError(t, h.complete("svc", 0, nil))
	assert.Equal(t, []string{pacingStarted, pacingEnded}, h.events.transitions())
	assert.False(t, h.stats().Pacing)

	h = newHarness(t, paceRule())
	h.startPacing()
	h.m.Reset("svc")
	assert.Equal(t, []string{pacingStarted, "CLOSED->CLOSED Reset"}, h.events.transitions())
	assert.False(t, h.stats().Pacing)
	assert.Equal(t, uint64(0), h.stats().Total, "the window starts empty")
}

// Given a pacing breaker, when a reload drops its rule, then observers hear the pacing end as a
// CLOSED → CLOSED RuleChanged, as they hear an OPEN breaker's drop.
func TestPaceEndsWhenItsRuleIsDropped(t *testing.T) {
	h := newHarness(t, paceRule())
	h.startPacing()
	require.NoError(t, h.m.LoadRules(nil))
	assert.Equal(t, []string{pacingStarted, "CLOSED->CLOSED RuleChanged"}, h.events.transitions())
}

// Given a SlowRequestRatio rule that paces, when half of the window's calls are slow and the
// others fast, then it paces too, counting a fast call as one the dependency served.
func TestPaceSlowCalls(t *testing.T) {
	r := slowRatio(0.5, 4)
	r.Pace = true
	h := newHarness(t, r)
	require.NoError(t, h.complete("svc", 0, nil))
	require.NoError(t, h.complete("svc", 0, nil))
	require.NoError(t, h.complete("svc", 60*time.Millisecond, nil))
	require.NoError(t, h.complete("svc", 60*time.Millisecond, nil))
	assert.Equal(t, []string{pacingStarted}, h.events.transitions())
	assert.True(t, h.stats().Pacing)
}

// Given a rule that paces and ramps up, when the window meets the threshold during the ramp
// after recovery while calls succeed, then the ramp goes on instead of opening: it is the same
// pacing, entered from HALF_OPEN. Without Pace the same calls open it.
func TestPaceKeepsARampAfterRecoveryGoing(t *testing.T) {
	for _, pace := range []bool{true, false} {
		r := rampRule()
		r.MinRequestAmount, r.Pace = 2, pace
		h := newHarness(t, r)
		h.completeN("svc", 2, errDown)
		h.clock.Advance(5 * time.Second)
		h.completeN("svc", 1, nil) // the probe: CLOSED, ramping up
		h.events.reset()
		require.NoError(t, h.complete("svc", 0, nil)) // the window starts empty at the probe
		require.NoError(t, h.complete("svc", 0, errDown))
		if pace {
			assert.Empty(t, h.events.transitions(), "still ramping")
			assert.True(t, h.stats().RampingUp)
		} else {
			assert.Equal(t, []string{tripped}, h.events.transitions())
		}
	}
}

// Given a rule whose strategy counts failures, or whose window is a count of calls, then Pace
// is refused with a reason.
func TestPaceNeedsARatioOverTime(t *testing.T) {
	for _, r := range []breaker.Rule{errorCount(3, 3), callsRule(0.5, 10),
		{Resource: "svc", Strategy: breaker.ConsecutiveErrors, Threshold: 3, RetryTimeout: time.Second}} {
		r.Pace = true
		var re *breaker.RuleError
		require.True(t, errors.As(r.Validate(), &re), "%v", r.Strategy)
		assert.Equal(t, "Pace", re.Field)
	}
}
