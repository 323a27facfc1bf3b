package breaker

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// A bucket's two counts are one word: bad calls add to both, good calls to the total only.
func TestBucketCountsArePacked(t *testing.T) {
	w := newLeapArray(time.Second, 10)
	w.add(0, true)
	w.add(0, false)
	w.add(50*int64(time.Millisecond), true)
	total, bad := w.sum(w.headAt(0))
	assert.Equal(t, uint64(3), total)
	assert.Equal(t, uint64(2), bad)
}

// A bucket whose total reaches 2^31 has both counts halved, keeping its ratio, so the packed
// total never wraps into garbage.
func TestBucketHalvesBeforeItOverflows(t *testing.T) {
	tests := []struct {
		name      string
		giveTotal uint64
		giveBad   uint64
		addBad    bool
		wantTotal uint64
		wantBad   uint64
	}{
		{name: "one below the bound stays", giveTotal: halveAt - 2, giveBad: 10, wantTotal: halveAt - 1, wantBad: 10},
		{name: "reaching the bound halves", giveTotal: halveAt - 1, giveBad: halveAt / 4, addBad: true,
			wantTotal: halveAt / 2, wantBad: (halveAt/4 + 1) / 2},
		{name: "all bad stays all bad", giveTotal: halveAt - 1, giveBad: halveAt - 1, addBad: true,
			wantTotal: halveAt / 2, wantBad: halveAt / 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newLeapArray(time.Second, 1)
			w.add(0, false) // publishes the bucket at 0
			w.buckets[0].counts.Store(tt.giveTotal<<32 | tt.giveBad)
			w.add(0, tt.addBad)
			total, bad := w.sum(0)
			assert.Equal(t, tt.wantTotal, total)
			assert.Equal(t, tt.wantBad, bad)
		})
	}
}

// Reaching a bucket of a new lap zeroes both counts in one store.
func TestBucketResetZeroesBoth(t *testing.T) {
	w := newLeapArray(time.Second, 2)
	w.add(0, true)
	w.add(int64(time.Second), false) // the same slot, one lap on
	total, bad := w.sum(int64(time.Second))
	assert.Equal(t, uint64(1), total)
	assert.Equal(t, uint64(0), bad)
}
