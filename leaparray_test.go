package breaker_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
)

// A 1s window of ten buckets slides: at 1950ms the errors made at 900ms have left it, and
// those made at 1100ms are still in it.
func TestWindowSlides(t *testing.T) {
	r := errorCount(11, 1) // StatInterval 1s, 10 buckets by default
	h := newHarness(t, r)
	h.at(900 * time.Millisecond)
	h.completeN("svc", 6, errDown)
	h.at(1100 * time.Millisecond)
	h.completeN("svc", 4, errDown) // 10 in the window
	require.Equal(t, breaker.Closed, h.state("svc", 0))

	h.at(1950 * time.Millisecond) // the 900ms bucket has left: 4 remain
	h.completeN("svc", 6, errDown)
	assert.Equal(t, breaker.Closed, h.state("svc", 0), "10 errors in the window, not 16")
	h.completeN("svc", 1, errDown)
	assert.Equal(t, breaker.Open, h.state("svc", 0))
	assert.Equal(t, 11.0, h.events.last().Snapshot)
}

// At 1100ms, the errors at 900ms and 1100ms are all in the window.
func TestWindowHoldsPreviousBuckets(t *testing.T) {
	h := newHarness(t, errorCount(10, 1))
	h.at(900 * time.Millisecond)
	h.completeN("svc", 6, errDown)
	h.at(1100 * time.Millisecond)
	h.completeN("svc", 3, errDown)
	require.Equal(t, breaker.Closed, h.state("svc", 0))
	h.completeN("svc", 1, errDown)
	assert.Equal(t, breaker.Open, h.state("svc", 0))
	assert.Equal(t, 10.0, h.events.last().Snapshot)
}
