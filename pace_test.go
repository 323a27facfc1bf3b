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

// Given a pacing breaker whose dependency dies, then it opens at the end of the first bucket in
// which calls failed and none succeeded, with ThresholdExceeded and the bucket's ratio: 2 calls
// reach the dead dependency (the bucket before showed 2 successes), though that is fewer than
// MinRequestAmount.
func TestPaceOpensAtTheEndOfABucketWithNoSuccess(t *testing.T) {
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
	assert.Equal(t, breakertest.Start.Add(200*time.Millisecond), h.events.last().At, "at the first call of the next bucket")
	assert.Equal(t, 2, sent)
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
	h.clock.Advance(-time.Millisecond) // a moment before the bucket's end
	assert.True(t, h.stats().Pacing, "the bucket has not ended")
	h.clock.Advance(time.Millisecond)
	assert.False(t, h.stats().Pacing, "Stats reads the end of the bucket without a call")
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

// Given the README's rule at low traffic (a call every 100ms: two buckets never hold
// MinRequestAmount), when the dependency goes hard down, then the window that meets the
// threshold while it still holds the healthy calls opens the breaker rather than pace: its
// newest buckets failed whole, however few calls they hold.
func TestPaceLeavesALowTrafficHardOutageToOpen(t *testing.T) {
	r := errorRatio(0.5, 10)
	r.Pace, r.FastBuckets = true, 2
	h := newHarness(t, r)
	for range 10 {
		require.NoError(t, h.complete("svc", 0, nil))
		h.clock.Advance(100 * time.Millisecond)
	}
	for i := range 5 {
		require.NoError(t, h.complete("svc", 0, errDown), "failure %d", i)
		h.clock.Advance(100 * time.Millisecond)
	}
	assert.Equal(t, []string{"CLOSED->OPEN FastTrip"}, h.events.transitions(), "at the fifth failure, 400ms in")
	assert.Equal(t, breakertest.Start.Add(1400*time.Millisecond), h.events.last().At)
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

// Given a pacing breaker, when no call comes for a quiet spell, then pacing has ended when it
// is over: Stats says so before any call, the first call passes and observers hear pacing end,
// and a healthy dependency then gets every call, 5 a bucket for 100 buckets.
func TestPaceEndsAfterAQuietSpell(t *testing.T) {
	for _, tt := range quietSpells {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, paceRule())
			h.startPacing()
			require.ErrorIs(t, h.complete("svc", 0, nil), breaker.ErrPacing, "the bucket holds calls back")
			h.clock.Advance(tt.give)
			assert.False(t, h.stats().Pacing)
			for b := range 100 {
				for i := range 5 {
					require.NoError(t, h.complete("svc", 0, nil), "bucket %d, call %d", b, i)
				}
				h.clock.Advance(100 * time.Millisecond)
			}
			assert.Equal(t, []string{pacingStarted, pacingEnded}, h.events.transitions())
			assert.Equal(t, breakertest.Start.Add(tt.give), h.events.last().At, "heard at the first call")
		})
	}
}

// Given a slow rule that paces with a call still in flight, when pacing ends after a quiet
// spell, then the first call after it is admitted by the period that follows pacing, where it
// finds the old call slow: one slow call, below MinRequestAmount, trips nothing (while pacing,
// a window with no good call trips whatever its count).
func TestPaceEndedJudgesCallsInFlightWithoutPacing(t *testing.T) {
	r := slowRatio(0.5, 4)
	r.Pace = true
	h := newHarness(t, r)
	hung, err := h.m.Enter("svc")
	require.NoError(t, err)
	require.NoError(t, h.complete("svc", 0, nil))
	require.NoError(t, h.complete("svc", 60*time.Millisecond, nil))
	require.NoError(t, h.complete("svc", 60*time.Millisecond, nil))
	require.NoError(t, h.complete("svc", 0, nil))
	require.Equal(t, []string{pacingStarted}, h.events.transitions())

	h.clock.Advance(time.Hour)
	require.NoError(t, h.complete("svc", 0, nil))

	assert.Equal(t, []string{pacingStarted, pacingEnded}, h.events.transitions(), "no trip")
	assert.Equal(t, breaker.Closed, h.state("svc", 0))
	hung.Exit()
}

// Given a slow rule that paces, when the dependency hangs (nothing returns, and no Timeout cuts
// the calls off), then pacing offers it no more than 1.5 times the successes of the bucket
// before, at least one call a bucket, never a share of the 100 calls offered each bucket; a
// call still in flight past MaxAllowedRT is a loss, so the bucket that finds it slow has calls
// and no success, and the breaker opens at its end.
func TestPaceOffersAHungDependencyOnlyWhatItServed(t *testing.T) {
	r := slowRatio(0.5, 4)
	r.Pace = true
	h := newHarness(t, r)
	start, _ := enterN(h.m, "svc", 4)
	exitAll(start[:2]) // fast
	h.clock.Advance(60 * time.Millisecond)
	exitAll(start[2:]) // slow: 2 of 4
	require.Equal(t, []string{pacingStarted}, h.events.transitions())

	h.at(100 * time.Millisecond)
	var passed []int
	for range 4 {
		n := 0
		for range 100 { // 100 calls a bucket, 1ms apart
			hung, _ := enterN(h.m, "svc", 1)
			n += len(hung)
			h.clock.Advance(time.Millisecond)
		}
		passed = append(passed, n)
	}
	// 1.5 × the 2 fast calls of the bucket before; then 1 each, since nothing succeeds; the
	// third bucket's first call finds the first's 3 slow, and its end opens the breaker.
	assert.Equal(t, []int{3, 1, 1, 0}, passed, "calls into the hang, bucket by bucket")
	assert.Equal(t, []string{pacingStarted, tripped}, h.events.transitions())
	assert.Equal(t, breakertest.Start.Add(400*time.Millisecond), h.events.last().At)
}

// Given the recommended rule (ErrorRatio with FastBuckets 2, MinRequestAmount 5, Pace) pacing a
// dependency that serves 2 calls a bucket, when it dies, then the breaker opens with
// ThresholdExceeded at the end of the first bucket with failures and no success, though pacing
// let it have too few calls for the fast trip.
func TestPaceOpensWithinTwoBucketsOfADeath(t *testing.T) {
	r := errorRatio(0.5, 5)
	r.FastBuckets, r.Pace = 2, true
	h := newHarness(t, r)
	for b := range 2 {
		h.at(time.Duration(b) * 100 * time.Millisecond)
		h.completeN("svc", 2, nil)
		h.completeN("svc", 2, errDown)
	}
	require.Equal(t, []string{pacingStarted}, h.events.transitions(), "0.5 of 8, in the newest buckets too: not 0.8")
	servesTwo := func(i int) error { return failIf(i >= 2) }
	for b := 2; b < 5; b++ {
		h.at(time.Duration(b) * 100 * time.Millisecond)
		passed, _ := h.offerBucket(servesTwo)
		require.Equal(t, 3, passed, "bucket %d: 1.5 × 2", b)
	}
	h.at(500 * time.Millisecond) // dies
	sent := 0
	for b := 5; b < 9 && h.state("svc", 0) == breaker.Closed; b++ {
		h.at(time.Duration(b) * 100 * time.Millisecond)
		passed, _ := h.offerBucket(func(int) error { return errDown })
		sent += passed
	}
	assert.Equal(t, []string{pacingStarted, tripped}, h.events.transitions())
	assert.Equal(t, breakertest.Start.Add(600*time.Millisecond), h.events.last().At, "at the end of the bucket it died in")
	assert.Equal(t, 2, sent, "the first call, and one more spread over the bucket by the 2 before")
}

// Given a resource with two rules that pace, when the error rule holds calls back and the slow
// rule admits every call it is offered, then the slow rule's pacing ends at the end of its
// first whole bucket: the calls it admitted that the error rule rejected are given back to it
// whole, so they do not count as held back by it. The error rule goes on pacing.
func TestPaceIsPerRule(t *testing.T) {
	errRule := paceRule()
	errRule.ID = "errors"
	slowRule := slowRatio(0.4, 4)
	slowRule.ID, slowRule.Pace = "slow", true
	h := newHarness(t, errRule, slowRule)
	h.startPacing() // the error rule: 2 of 4 failed; the slow rule saw 4 fast calls
	h.at(100 * time.Millisecond)
	slow, err := enterN(h.m, "svc", 4) // the error rule's pace admits 1.5 × 2
	require.ErrorIs(t, err, breaker.ErrPacing)
	require.Len(t, slow, 3)
	h.clock.Advance(60 * time.Millisecond)
	exitAll(slow) // slow successes: 3 of 7 slow, and the slow rule paces too
	require.Equal(t, []string{pacingStarted, pacingStarted}, h.events.transitions())

	servesTwo := func(i int) error { return failIf(i >= 2) }
	for b := 2; b < 14; b++ {
		h.at(time.Duration(b) * 100 * time.Millisecond)
		passed, held := h.offerBucket(servesTwo)
		require.Equal(t, 3, passed, "bucket %d: the error rule's pace", b)
		require.Len(t, held, 17)
	}
	slowEnds := 0
	for _, c := range h.events.all() {
		if c.Reason == breaker.PacingEnded {
			assert.Equal(t, "slow", c.Rule.ID)
			assert.Equal(t, breakertest.Start.Add(300*time.Millisecond), c.At, "at its first whole bucket's end")
			slowEnds++
		}
	}
	assert.Equal(t, 1, slowEnds, "the slow rule held nothing back; the error rule holds calls back")
	assert.False(t, h.m.Breakers("svc")[1].Stats().Pacing)
	assert.True(t, h.m.Breakers("svc")[0].Stats().Pacing)
}
