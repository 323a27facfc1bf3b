package window

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A counter has as many stripes as the processors it is striped for, rounded up to a power of
// two, at most 8, and fewer where its words are many, so that its stripes stay within 1 KiB.
func TestStripesFollowProcessorsWithinTheirBytes(t *testing.T) {
	tests := []struct {
		procs, words int
		want         int
	}{
		{procs: 1, words: 10, want: 1},
		{procs: 2, words: 10, want: 2},
		{procs: 3, words: 10, want: 4},
		{procs: 64, words: 10, want: 8},
		{procs: 64, words: 16, want: 8},
		{procs: 64, words: 17, want: 4}, // a stride of 32 words
		{procs: 64, words: 100, want: 1},
		{procs: 64, words: 1000, want: 1},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, Stripes(tt.words, tt.procs), "%d procs, %d words", tt.procs, tt.words)
		bytes := StripedBytes(tt.words, tt.procs)
		if tt.want > 1 {
			assert.LessOrEqual(t, bytes, int64(stripedBytes), "%d procs, %d words", tt.procs, tt.words)
		}
		assert.GreaterOrEqual(t, bytes, int64(8*tt.words*tt.want))
	}
}

// Each stripe's words start on a 128-byte boundary of their own, so no two stripes share a
// cache line, or a pair of lines that a processor fetches together.
func TestStripesShareNoCacheLine(t *testing.T) {
	for _, s := range []int{2, 4, 8} {
		w := NewSliding(time.Second, 10, s)
		f := NewFlight(int64(100*time.Millisecond), int64(time.Second), s)
		for st := range s {
			assert.Zero(t, uintptr(unsafe.Pointer(&w.stripes[at(uint8(st), w.stride, 0, len(w.stripes))]))%128, "window, stripe %d of %d", st, s)
			assert.Zero(t, uintptr(unsafe.Pointer(f.word(0, uint8(st))))%128, "ring, stripe %d of %d", st, s)
		}
		assert.Equal(t, s, w.Stripes())
		assert.Equal(t, s, f.stripes())
	}
}

// A window counts in its base words until a call loses its compare-and-swap to another (it
// comes to Add inside the newest bucket); from then on each call counts in its stripe. A window
// of one stripe never stripes.
func TestContentionStripesTheWindow(t *testing.T) {
	ms := int64(time.Millisecond)
	for _, stripes := range []int{1, 4} {
		w := NewSliding(time.Second, 10, stripes)
		w.Add(0, 1, Good, 0) // the first call moves a new window
		_, ok := w.AddGood(0)
		require.True(t, ok)
		w.Add(50*ms, 1, Bad, 0)
		w.Add(100*ms, 1, Good, 0) // the next bucket: it moves the window
		assert.False(t, w.Striped(), "%d stripes: a bad call, or a call past the newest bucket, is no contention", stripes)
		w.Add(100*ms, 1, Good, 0) // a good call in the newest bucket: AddGood lost its compare-and-swap
		assert.Equal(t, stripes > 1, w.Striped(), "%d stripes", stripes)
		total, bad := w.Sum(w.HeadAt(100 * ms))
		assert.Equal(t, []uint64{5, 1}, []uint64{total, bad}, "%d stripes", stripes)
	}
}

// A striped window's counts are the sum of its base words and its stripes, a stripe past the
// last wrapping round to one of them, and a bucket reached in a new lap starts empty in its
// base word and every stripe.
func TestSlidingSumsEveryStripe(t *testing.T) {
	ms := int64(time.Millisecond)
	w := NewSliding(time.Second, 10, 4)
	w.Add(0, 1, Bad, 0) // in the base word
	w.striped.Store(true)
	for stripe := range uint8(9) { // stripes 4 to 8 wrap round
		mark := Good
		if stripe%2 == 0 {
			mark = Bad
		}
		w.Add(0, 1, mark, stripe)
		_, ok := w.AddGoodOn(50*ms, stripe)
		require.True(t, ok)
	}
	total, bad := w.Sum(w.HeadAt(50 * ms))
	assert.Equal(t, []uint64{19, 6}, []uint64{total, bad})

	w.Add(1000*ms, 1, Bad, 3) // the first bucket's next lap
	total, bad = w.Sum(w.HeadAt(1000 * ms))
	assert.Equal(t, []uint64{1, 1}, []uint64{total, bad}, "the old lap is gone from the base and every stripe")
}

// Goroutines, each on a stripe of its own, count good and bad calls, as the breaker does (AddGood
// until the window is striped, then AddGoodOn; Add when either reports false), while another
// sums the window: in every sum the bad calls are at most the calls, no sum is less than the
// one before, and the last holds every call, those counted before the window striped and after.
func TestPropertyStripedCountsAddUp(t *testing.T) {
	const stripes, perStripe = 4, 2000
	w := NewSliding(time.Second, 10, stripes)
	var wg sync.WaitGroup
	var done atomic.Bool
	var violations atomic.Int64
	wg.Go(func() {
		var last uint64
		for !done.Load() {
			total, bad := w.Sum(w.HeadAt(0))
			if bad > total || total < last {
				violations.Add(1)
			}
			last = total
		}
	})
	var counters sync.WaitGroup
	for st := range uint8(stripes) {
		counters.Go(func() {
			for i := range perStripe {
				switch {
				case i%3 == 0:
					w.Add(0, 1, Bad, st)
				case !w.Striped():
					if _, ok := w.AddGood(0); !ok {
						w.Add(0, 1, Good, st)
					}
				default:
					if _, ok := w.AddGoodOn(0, st); !ok {
						w.Add(0, 1, Good, st)
					}
				}
			}
		})
	}
	counters.Wait()
	done.Store(true)
	wg.Wait()
	assert.Zero(t, violations.Load())
	total, bad := w.Sum(w.HeadAt(0))
	assert.Equal(t, uint64(stripes*perStripe), total)
	assert.Equal(t, uint64(stripes*((perStripe+2)/3)), bad)
}

// A ring's judgement counts the calls in flight of every stripe, and a call that returns after
// it knows it was counted, whatever its stripe; a slot taken over by a new lap counts the calls
// of every stripe its last lap still held.
func TestFlightCountsEveryStripe(t *testing.T) {
	width, maxRT := int64(100*time.Millisecond), int64(300*time.Millisecond)
	f := NewFlight(width, maxRT, 4)
	var seats []uint64
	for stripe := range uint8(6) {
		seat, slow, again := f.Enter(0, stripe)
		require.False(t, again)
		require.Zero(t, slow)
		seats = append(seats, seat)
	}
	assert.False(t, f.Leave(seats[0]), "returned before its slot was due")
	due := 2*width + maxRT
	require.True(t, f.Due(due))
	assert.Equal(t, uint64(5), f.Judge(due))
	for _, seat := range seats[1:] {
		assert.True(t, f.Leave(seat), "counted while in flight")
	}

	g := NewFlight(width, maxRT, 4)
	for stripe := range uint8(4) {
		_, _, _ = g.Enter(0, stripe)
	}
	_, _, _ = g.Enter(width, 1)
	_, slow, again := g.Enter(int64(len(g.starts))*width, 2) // the first slot, one lap on, before any judgement
	require.False(t, again)
	assert.Equal(t, uint64(4), slow, "the calls of the first slot's last lap, from every stripe")
}

// Goroutines on stripes of their own enter and leave the ring while a judgement runs: every
// call is counted once, by the judgement (and its return says so) or by its return.
func TestPropertyFlightCountsEachCallOnce(t *testing.T) {
	const stripes, perStripe = 4, 500
	width, maxRT := int64(100*time.Millisecond), int64(300*time.Millisecond)
	for range 20 {
		f := NewFlight(width, maxRT, stripes)
		var calls sync.WaitGroup
		var countedOnReturn, judged atomic.Int64
		start := make(chan struct{})
		for st := range uint8(stripes) {
			calls.Go(func() {
				<-start
				for range perStripe {
					seat, _, _ := f.Enter(0, st)
					if f.Leave(seat) {
						countedOnReturn.Add(1)
					}
				}
			})
		}
		var judge sync.WaitGroup
		judge.Go(func() {
			<-start
			runtime.Gosched()
			judged.Add(int64(f.Judge(2*width + maxRT)))
		})
		close(start)
		calls.Wait()
		judge.Wait()
		assert.Equal(t, judged.Load(), countedOnReturn.Load(), "each call the judgement counted knew it on return")
	}
}
