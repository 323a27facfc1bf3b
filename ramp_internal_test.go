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
	r := newRamp(0, int64(time.Hour), int64(100*time.Millisecond))
	for i := range 70_000 {
		admitted, on := r.admit(0)
		if !admitted || !on {
			t.Fatalf("call %d: admitted %v, ramp on %v", i, admitted, on)
		}
		r.completed(0, false)
	}
	b := unpackRamp(r.current.Load())
	assert.Equal(t, rampBucket{seq: r.seqAt(0), offered: maxRampCount, admitted: maxRampCount,
		succeeded: maxRampCount}, b)
}
