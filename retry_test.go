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
	"github.com/halfopen/breaker/breakertest"
)

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

// RetryWait tells a retry library how long the breaker and the dependency ask it to wait, and
// whether to try again at all.
func TestRetryWait(t *testing.T) {
	clock := breakertest.NewClock()
	m := breaker.NewManager(breaker.WithClock(clock))
	require.NoError(t, m.LoadRules([]breaker.Rule{errorCount(1, 1)})) // RetryTimeout 5s
	require.ErrorIs(t, m.Do(context.Background(), "svc", func(context.Context) error { return errDown }), errDown)
	clock.Advance(1500 * time.Millisecond)
	open := m.Do(context.Background(), "svc", func(context.Context) error { return nil })
	require.ErrorIs(t, open, breaker.ErrOpen)
	forced := &breaker.BlockError{Resource: "svc", Cause: breaker.ErrForcedOpen}
	tests := []struct {
		name      string
		give      error
		wantWait  time.Duration
		wantRetry bool
	}{
		{"success", nil, 0, false},
		{"rejection: until RetryAt", open, 3500 * time.Millisecond, true},
		{"wrapped rejection", errors.Join(errDown, open), 3500 * time.Millisecond, true},
		{"rejection without RetryAt", forced, 0, false},
		{"retry hint", breaker.RetryAfter(errDown, 2*time.Second), 2 * time.Second, true},
		{"negative retry hint", breaker.RetryAfter(errDown, -time.Second), 0, true},
		{"plain failure", errDown, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wait, retry := m.RetryWait(tt.give)
			assert.Equal(t, tt.wantWait, wait)
			assert.Equal(t, tt.wantRetry, retry)
		})
	}
	clock.Advance(time.Hour)
	wait, retry := m.RetryWait(open)
	assert.Equal(t, time.Duration(0), wait, "a RetryAt that has passed asks for no wait")
	assert.True(t, retry)
}
