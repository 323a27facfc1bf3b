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
