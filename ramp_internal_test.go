package breaker

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/halfopen/breaker/internal/window"
)

// counts returns the counts of the ramp's current bucket.
func (r *ramp) counts() rampCounts { return unpackRamp(r.current.Load().counts.Load()) }

// Given more calls in one bucket than a ramp's counts hold, all of them succeeding, then the
// counts stop at their bound instead of wrapping, and the calls go on being admitted.
func TestRampCountsSaturate(t *testing.T) {
	r, rampUp := newRamp(0, int64(100*time.Millisecond), int64(time.Second)), &tuning{rampUp: int64(time.Hour)}
	for i := range 70_000 {
		admitted, step := r.admit(0, rampUp)
		if !admitted || step != rampOn {
			t.Fatalf("call %d: admitted %v, step %v", i, admitted, step)
		}
		r.completed(0, rampUp, window.Good, 0)
	}
	assert.Equal(t, rampCounts{offered: maxRampCount, admitted: maxRampCount, succeeded: maxRampCount}, r.counts())
	assert.Equal(t, int64(0), r.current.Load().start)
}

// Given a ramp in its second bucket that holds calls back, when a call comes with a reading of
// the clock from the bucket before (read before another call moved the ramp on, and used after
// a pause), then it counts in the current bucket and is held back as that bucket's counts say,
// rather than starting an earlier bucket afresh; its retry time is the end of that bucket.
func TestRampStaleReadingCountsInTheCurrentBucket(t *testing.T) {
	length, rampUp := int64(100*time.Millisecond), &tuning{rampUp: int64(time.Hour)}
	r := newRamp(0, length, 10*length)
	at := int64(150 * time.Millisecond)
	for i, want := range []bool{true, true, false} {
		admitted, step := r.admit(at, rampUp)
		assert.Equal(t, rampOn, step)
		assert.Equal(t, want, admitted, "call %d", i)
	}
	stale := int64(99 * time.Millisecond)
	admitted, step := r.admit(stale, rampUp)
	assert.Equal(t, rampOn, step)
	assert.False(t, admitted, "held back as the current bucket says")
	assert.Equal(t, rampCounts{offered: 4, admitted: 2}, r.counts())
	assert.Equal(t, 2*length, r.retryAt(stale, rampUp), "after the bucket it counted in, not the reading's next")
}
