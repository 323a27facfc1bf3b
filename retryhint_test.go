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
