package window

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A bucket's two counts are one word: bad calls add to both, good calls to the total only.
func TestBucketCountsArePacked(t *testing.T) {
	w := NewSliding(time.Second, 10, 1)
	w.Add(0, 1, Bad, 0)
	w.Add(0, 1, Good, 0)
	w.Add(50*int64(time.Millisecond), 1, Bad, 0)
	total, bad := w.Sum(w.HeadAt(0))
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
		add       Mark
		wantTotal uint64
		wantBad   uint64
	}{
		{name: "one below the bound stays", giveTotal: halveAt - 2, giveBad: 10, wantTotal: halveAt - 1, wantBad: 10},
		{name: "reaching the bound halves", giveTotal: halveAt - 1, giveBad: halveAt / 4, add: Bad,
			wantTotal: halveAt / 2, wantBad: (halveAt/4 + 1) / 2},
		{name: "all bad stays all bad", giveTotal: halveAt - 1, giveBad: halveAt - 1, add: Bad,
			wantTotal: halveAt / 2, wantBad: halveAt / 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := NewSliding(time.Second, 1, 1)
			w.Add(0, 1, Good, 0) // publishes the bucket at 0
			w.buckets[0].counts.Store(tt.giveTotal<<32 | tt.giveBad)
			w.Add(0, 1, tt.add, 0)
			total, bad := w.Sum(0)
			assert.Equal(t, tt.wantTotal, total)
			assert.Equal(t, tt.wantBad, bad)
		})
	}
}

// addGood counts a good call inside the newest bucket as add does, and leaves to add, counting
// nothing, a call past the newest bucket and one that would take the total to halveAt.
func TestAddGoodLeavesTheRareCasesToAdd(t *testing.T) {
	ms := int64(time.Millisecond)
	w := NewSliding(time.Second, 10, 1)
	w.Add(0, 1, Bad, 0)
	start, ok := w.AddGood(50 * ms)
	require.True(t, ok)
	assert.Equal(t, int64(0), start)
	total, bad := w.Sum(0)
	assert.Equal(t, []uint64{2, 1}, []uint64{total, bad})

	_, ok = w.AddGood(100 * ms) // the next bucket
	assert.False(t, ok)
	total, _ = w.Sum(0)
	assert.Equal(t, uint64(2), total, "nothing counted")

	newest := &w.newest.Load().counts
	newest.Store((halveAt - 1) << 32)
	_, ok = w.AddGood(50 * ms)
	assert.False(t, ok, "the call that reaches halveAt goes through add, which halves")
	assert.Equal(t, (halveAt-1)<<32, newest.Load())
}

// Reaching a bucket of a new lap zeroes both counts in one store.
func TestBucketResetZeroesBoth(t *testing.T) {
	w := NewSliding(time.Second, 2, 1)
	w.Add(0, 1, Bad, 0)
	w.Add(int64(time.Second), 1, Good, 0) // the same slot, one lap on
	total, bad := w.Sum(int64(time.Second))
	assert.Equal(t, uint64(1), total)
	assert.Equal(t, uint64(0), bad)
}

// Ticks wrap: a window that spans the wrap of int64 counts the calls on both sides of it, and
// lets them go a window later.
func TestWindowSpansTheWrapOfTicks(t *testing.T) {
	ms := int64(time.Millisecond)
	w := NewSliding(time.Second, 10, 1)
	first := int64(math.MaxInt64) - 250*ms
	w.Add(first, 1, Bad, 0)
	w.Add(first+300*ms, 1, Bad, 0) // wrapped to a negative tick
	total, bad := w.Sum(w.HeadAt(first + 300*ms))
	assert.Equal(t, uint64(2), total)
	assert.Equal(t, uint64(2), bad)
	assert.True(t, w.MayHoldBad(w.HeadAt(first+300*ms)))

	total, _ = w.Sum(w.HeadAt(first + 1200*ms))
	assert.Equal(t, uint64(1), total, "the first call left the window")
	total, _ = w.Sum(w.HeadAt(first + 1500*ms))
	assert.Equal(t, uint64(0), total)
}

// A small step back counts in the newest bucket; a step back of a whole window or more starts
// the window again at the new time, without the calls before the step.
func TestWindowStepBack(t *testing.T) {
	ms := int64(time.Millisecond)
	tests := []struct {
		name      string
		give      int64 // the step back from a call 10s after the epoch
		wantTotal uint64
	}{
		{name: "a little back counts in the newest bucket", give: 400 * ms, wantTotal: 2},
		{name: "just under a window back counts in the newest bucket", give: 1000*ms - 1, wantTotal: 2},
		{name: "a window back starts the window again", give: 1000 * ms, wantTotal: 1},
		{name: "an hour back starts the window again", give: 3600 * 1000 * ms, wantTotal: 1},
		{name: "a century back starts the window again", give: 100 * 365 * 24 * 3600 * 1000 * ms, wantTotal: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := NewSliding(time.Second, 10, 1)
			w.Add(10_000*ms, 1, Bad, 0)
			now := 10_000*ms - tt.give
			head := w.Add(now, 1, Good, 0)
			assert.Equal(t, head, w.HeadAt(now))
			total, _ := w.Sum(head)
			assert.Equal(t, tt.wantTotal, total)

			total, _ = w.Sum(w.HeadAt(now + 500*ms))
			assert.Equal(t, tt.wantTotal, total, "half a window later")
		})
	}
}

// A window the clock left far behind counts nothing of its old laps, also when the distance
// between ticks wraps.
func TestWindowFarAheadForgetsOldLaps(t *testing.T) {
	year := 365 * 24 * int64(time.Hour)
	w := NewSliding(time.Second, 10, 1)
	var now int64
	for i, step := range []int64{0, 200 * year, 200 * year, 1000 * year} {
		now += step // wraps past 292 years
		total, _ := w.Sum(w.HeadAt(now))
		assert.Equal(t, uint64(0), total, "nothing in the window before the calls of step %d", i)
		w.Add(now, 1, Bad, 0)
		w.Add(now+int64(time.Millisecond), 1, Good, 0)
		total, bad := w.Sum(w.HeadAt(now + int64(time.Millisecond)))
		assert.Equal(t, uint64(2), total)
		assert.Equal(t, uint64(1), bad)
	}
}
