package breaker_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
)

// A call that took exactly MaxAllowedRT is not slow; one nanosecond more is.
func TestSlowMeansGreaterThanMaxAllowedRT(t *testing.T) {
	tests := []struct {
		name     string
		give     time.Duration
		wantOpen bool
	}{
		{"equal is not slow", 50 * time.Millisecond, false},
		{"one ns more is slow", 50*time.Millisecond + 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, slowRatio(1.0, 3))
			for i := 0; i < 3; i++ {
				require.NoError(t, h.complete("svc", tt.give, nil))
			}
			assert.Equal(t, tt.wantOpen, h.state("svc", 0) == breaker.Open)
		})
	}
}

// SlowRequestRatio measures time only; a fast failing call is not slow.
func TestSlowRatioIgnoresErrors(t *testing.T) {
	h := newHarness(t, slowRatio(0.5, 4))
	h.completeN("svc", 10, errDown)
	assert.Equal(t, breaker.Closed, h.state("svc", 0))
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

// enterN enters n calls to "svc" and returns their entries, still in flight.
func (h *harness) enterN(n int) []*breaker.Entry {
	h.t.Helper()
	var es []*breaker.Entry
	for i := range n {
		e, err := h.m.Enter("svc")
		require.NoError(h.t, err, "call %d", i)
		es = append(es, e)
	}
	return es
}

// Given five calls that hang, with no Timeout, then a slow rule (MaxAllowedRT 50ms, buckets of
// 100ms) trips on the first call that arrives once their bucket has been over for
// MaxAllowedRT, at 150ms, and not on one a nanosecond before.
func TestHungCallsTripASlowRule(t *testing.T) {
	h := newHarness(t, slowRatio(0.5, 5))
	hung := h.enterN(5)
	h.at(150*time.Millisecond - 1)
	require.NoError(t, h.complete("svc", 0, nil))
	assert.Empty(t, h.events.transitions(), "the hung calls have not all run past MaxAllowedRT")
	h.at(150 * time.Millisecond)
	require.NoError(t, h.complete("svc", 0, nil), "the call that finds them slow is admitted")
	assert.Equal(t, []string{tripped}, h.events.transitions())
	assert.Equal(t, 5.0/6, h.events.last().Snapshot, "5 hung calls of 6 in the window")
	_, err := h.m.Enter("svc")
	assert.ErrorIs(t, err, breaker.ErrOpen)
	for _, e := range hung {
		e.Exit()
	}
}

// Given hung calls counted as slow while in flight, when they return, then they count
// nothing more: the window holds each call once.
func TestHungCallCountsOnce(t *testing.T) {
	h := newHarness(t, slowRatio(1, 100))
	hung := h.enterN(5)
	h.at(150 * time.Millisecond)
	require.NoError(t, h.complete("svc", 0, nil))
	st := h.m.Breakers("svc")[0].Stats()
	require.Equal(t, [2]uint64{6, 5}, [2]uint64{st.Total, st.Bad}, "five slow while in flight, one fast")
	h.at(200 * time.Millisecond)
	for _, e := range hung {
		e.Exit()
	}
	st = h.m.Breakers("svc")[0].Stats()
	assert.Equal(t, [2]uint64{6, 5}, [2]uint64{st.Total, st.Bad}, "the hung calls returned")
	assert.Empty(t, h.events.transitions())
}

// Given a slow rule's probe still in flight past MaxAllowedRT, then the next call fails the
// probe (ProbeFailed) and is rejected, and the probe's own return later changes nothing.
func TestSlowProbeFailsBeforeItReturns(t *testing.T) {
	rule := slowRatio(0.5, 5)
	h := newHarness(t, rule)
	for range 5 {
		require.NoError(t, h.complete("svc", 60*time.Millisecond, nil))
	}
	require.Equal(t, breaker.Open, h.state("svc", 0))
	h.clock.Advance(rule.RetryTimeout)
	probe, err := h.m.Enter("svc")
	require.NoError(t, err)
	h.clock.Advance(rule.MaxAllowedRT)
	_, err = h.m.Enter("svc")
	require.ErrorIs(t, err, breaker.ErrOpen, "the probe has run exactly MaxAllowedRT: not slow yet")
	h.clock.Advance(1)
	_, err = h.m.Enter("svc")
	require.ErrorIs(t, err, breaker.ErrOpen)
	want := []string{tripped, "OPEN->HALF_OPEN RetryTimeoutElapsed", "HALF_OPEN->OPEN ProbeFailed"}
	assert.Equal(t, want, h.events.transitions())
	probe.Exit()
	assert.Equal(t, want, h.events.transitions(), "the probe's return is stale")
	assert.Equal(t, breaker.Open, h.state("svc", 0))
}

// A reload that raises MaxAllowedRT reaches the calls in flight: given two calls in flight
// when MaxAllowedRT goes from 50 ms to 10 s, when they have run 1 s, then they are not slow,
// neither in flight nor when they return, and the breaker stays CLOSED.
func TestReloadRaisingMaxAllowedRTReachesCallsInFlight(t *testing.T) {
	rule := slowRatio(0.5, 2)
	h := newHarness(t, rule)
	hung := h.enterN(2)
	raised := rule
	raised.MaxAllowedRT = 10 * time.Second
	require.NoError(t, h.m.LoadRules([]breaker.Rule{raised}))
	h.clock.Advance(time.Second)
	require.NoError(t, h.complete("svc", 0, nil), "judges the calls in flight")
	require.NoError(t, h.complete("svc", 0, nil))
	exitAll(hung)
	st := h.m.Breakers("svc")[0].Stats()
	assert.Equal(t, breaker.Closed, st.State)
	assert.Equal(t, uint64(4), st.Total)
	assert.Zero(t, st.Bad, "a 1 s call is not slow against 10 s")

	// Calls entered after the reload are judged by 10 s too: hung for 10 s and a bucket, slow.
	hung = h.enterN(2)
	h.clock.Advance(10*time.Second + 200*time.Millisecond)
	require.NoError(t, h.complete("svc", 0, nil))
	assert.Equal(t, []string{tripped}, h.events.transitions(), "two hung calls of three trip it")
	exitAll(hung)
}

// A reload that lowers MaxAllowedRT reaches the calls in flight: given four calls in flight
// when MaxAllowedRT goes from 10 s to 50 ms, when they have hung for 1 s, then the next call
// counts them slow and trips the breaker, as a rule loaded with 50 ms from the start would.
// A call that has run less than the new value is not counted.
func TestReloadLoweringMaxAllowedRTReachesCallsInFlight(t *testing.T) {
	for _, entered := range []string{"before the reload", "after the reload"} {
		t.Run(entered, func(t *testing.T) {
			rule := slowRatio(0.8, 4)
			rule.MaxAllowedRT = 10 * time.Second
			h := newHarness(t, rule)
			lowered := rule
			lowered.MaxAllowedRT = 50 * time.Millisecond
			var hung []*breaker.Entry
			if entered == "before the reload" {
				hung = h.enterN(4)
				require.NoError(t, h.m.LoadRules([]breaker.Rule{lowered}))
			} else {
				require.NoError(t, h.m.LoadRules([]breaker.Rule{lowered}))
				hung = h.enterN(4)
			}
			h.clock.Advance(time.Second)
			fresh := h.enterN(1)
			assert.Equal(t, []string{tripped}, h.events.transitions(), "four hung calls trip it")
			assert.Equal(t, 1.0, h.events.last().Snapshot, "the fresh call is not slow yet")
			exitAll(hung)
			exitAll(fresh)
		})
	}
}

// A call in flight across a step back of the clock longer than the ring of calls in flight
// spans counts once when it returns, as an ErrorRatio rule counts it: given three calls in
// flight, when the clock steps back an hour and another call passes, then all four count.
func TestCallsInFlightCountAcrossAClockStepBack(t *testing.T) {
	for _, rule := range []breaker.Rule{errorRatio(0.9, 100), slowRatio(0.9, 100)} {
		t.Run(rule.Strategy.String(), func(t *testing.T) {
			h := newHarness(t, rule)
			h.at(time.Hour)
			inFlight := h.enterN(3)
			h.clock.Advance(-time.Hour)
			require.NoError(t, h.complete("svc", 0, nil))
			exitAll(inFlight)
			assert.Equal(t, uint64(4), h.m.Breakers("svc")[0].Stats().Total)
		})
	}
	// And slow by their response time: three calls that return 60 ms after they entered, by a
	// clock that stepped back an hour and on again, count once each, slow, when they return.
	h := newHarness(t, slowRatio(1, 3))
	h.at(time.Hour)
	inFlight := h.enterN(3)
	h.clock.Advance(-time.Hour)
	require.NoError(t, h.complete("svc", 0, nil))
	h.clock.Advance(time.Hour + 60*time.Millisecond) // the call above has left the window
	exitAll(inFlight[:2])
	st := h.m.Breakers("svc")[0].Stats()
	assert.Equal(t, [2]uint64{2, 2}, [2]uint64{st.Total, st.Bad}, "two calls, both slow")
	exitAll(inFlight[2:])
	assert.Equal(t, []string{tripped}, h.events.transitions(), "the third trips it")
	assert.Equal(t, 1.0, h.events.last().Snapshot)
}
