package breaker_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ErrorRatio still ignores a canceled call, however slow.
func TestErrorStrategiesIgnoreCanceled(t *testing.T) {
	h := newHarness(t, errorRatio(0.5, 1))
	require.NoError(t, h.complete("svc", time.Hour, context.Canceled))
	assert.Equal(t, uint64(0), h.m.Breakers("svc")[0].Stats().Total)
}
