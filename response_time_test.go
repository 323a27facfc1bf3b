package breaker_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
)

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
