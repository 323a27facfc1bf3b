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
