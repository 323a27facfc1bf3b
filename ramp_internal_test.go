package breaker

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// Given more calls in one bucket than a ramp's counts hold, all of them succeeding, then the
// counts stop at their bound instead of wrapping into a fresh bucket's, and the calls go on
// being admitted.
func TestRampCountsSaturate(t *testing.T) {
	r, rampUp := newRamp(0, int64(100*time.Millisecond)), &tuning{rampUp: int64(time.Hour)}
	for i := range 70_000 {
		admitted, on := r.admit(0, rampUp)
		if !admitted || !on {
			t.Fatalf("call %d: admitted %v, ramp on %v", i, admitted, on)
		}
		r.completed(0, rampUp, false)
	}
	b := unpackRamp(r.current.Load())
	assert.Equal(t, rampBucket{seq: r.seqAt(0), offered: maxRampCount, admitted: maxRampCount,
		succeeded: maxRampCount}, b)
}

// Given a ramp in its second bucket that holds calls back, when a call comes with a reading of
// the clock from the bucket before (read before another call moved the ramp on, and used after
// a pause), then it counts in the current bucket and is held back as that bucket's counts say,
// rather than starting an earlier bucket afresh.
func TestRampStaleReadingCountsInTheCurrentBucket(t *testing.T) {
	length, rampUp := int64(100*time.Millisecond), &tuning{rampUp: int64(time.Hour)}
	r := newRamp(0, length)
	at := int64(150 * time.Millisecond)
	for i, want := range []bool{true, true, false} {
		admitted, on := r.admit(at, rampUp)
		assert.True(t, on)
		assert.Equal(t, want, admitted, "call %d", i)
	}
	admitted, on := r.admit(int64(99*time.Millisecond), rampUp)
	assert.True(t, on)
	assert.False(t, admitted, "held back as the current bucket says")
	assert.Equal(t, rampBucket{seq: r.seqAt(at), offered: 4, admitted: 2}, unpackRamp(r.current.Load()))
}
