package breaker_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
)

// A failure that carries the dependency's retry hint holds the breaker OPEN at least that
// long, within MaxRetryTimeout (RetryTimeout when that is 0), on a trip and on a failed probe.
func TestRetryAfterHint(t *testing.T) {
	tests := []struct {
		name    string
		max     time.Duration
		hint    time.Duration
		wantFor time.Duration
	}{
		{"the hint when longer", time.Minute, 30 * time.Second, 30 * time.Second},
		{"capped at MaxRetryTimeout", time.Minute, time.Hour, time.Minute},
		{"the OPEN time when longer", time.Minute, 100 * time.Millisecond, time.Second},
		{"no backoff: capped at RetryTimeout", 0, 30 * time.Second, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rule := errorCount(1, 1)
			rule.RetryTimeout, rule.MaxRetryTimeout = time.Second, tt.max
			h := newHarness(t, rule)
			require.NoError(t, h.complete("svc", 0, breaker.RetryAfter(errDown, tt.hint)))
			assert.Equal(t, h.clock.Now().Add(tt.wantFor), h.m.Breakers("svc")[0].Stats().RetryAt, "after the trip")
			be := blockOf(t, h.complete("svc", 0, nil))
			assert.Equal(t, h.clock.Now().Add(tt.wantFor), be.RetryAt)

			h.clock.Advance(tt.wantFor)
			err := h.m.Do(context.Background(), "svc", func(context.Context) error {
				return breaker.RetryAfter(errDown, tt.hint)
			})
			require.ErrorIs(t, err, errDown)
			assert.Equal(t, []string{tripped, probing, reopened}, h.events.transitions())
			want := max(tt.wantFor, min(2*time.Second, max(tt.max, time.Second))) // backed off, or the hint
			assert.Equal(t, h.clock.Now().Add(want), h.m.Breakers("svc")[0].Stats().RetryAt, "after the probe")
		})
	}
}

func TestRetryAfterOf(t *testing.T) {
	err := fmt.Errorf("wrapped: %w", breaker.RetryAfter(errDown, 3*time.Second))
	d, ok := breaker.RetryAfterOf(err)
	assert.True(t, ok)
	assert.Equal(t, 3*time.Second, d)
	assert.ErrorIs(t, err, errDown)
	assert.Equal(t, "wrapped: "+errDown.Error(), err.Error())
	_, ok = breaker.RetryAfterOf(errDown)
	assert.False(t, ok)
	assert.NoError(t, breaker.RetryAfter(nil, time.Second))
}

// RetryAfterOf finds a hint inside joined errors too, and reading a failed call's hint, which
// every failed call does, allocates nothing.
func TestRetryAfterOfJoinedAndWithoutAllocating(t *testing.T) {
	joined := errors.Join(errors.New("first"), fmt.Errorf("second: %w", breaker.RetryAfter(errDown, 2*time.Second)))
	d, ok := breaker.RetryAfterOf(joined)
	assert.True(t, ok)
	assert.Equal(t, 2*time.Second, d)
	_, ok = breaker.RetryAfterOf(errors.Join(errDown, nil))
	assert.False(t, ok)

	m := breaker.NewManager()
	require.NoError(t, m.LoadRules([]breaker.Rule{{Resource: "svc", Strategy: breaker.ErrorRatio, Threshold: 1,
		MinRequestAmount: 1 << 30, RetryTimeout: time.Second}}))
	ctx := context.Background()
	wrapped := fmt.Errorf("call: %w", errDown)
	fail := func(context.Context) error { return wrapped }
	assert.Zero(t, testing.AllocsPerRun(100, func() { _ = m.Do(ctx, "svc", fail) }), "a failed call")
}
