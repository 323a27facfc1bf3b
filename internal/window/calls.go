package window

import (
	"sync/atomic"
	"unsafe"
)

// Calls is a window of the last n calls, whenever they came, as resilience4j's COUNT_BASED
// window judges them. Traffic that differs by day and night is judged on as many calls either
// way.
//
// Each call takes the next place in a ring of one bit per call (1: bad), written (where the
// call changes it) with one atomic Or or And, which also says what the place held, then adds
// what it changed to one word that holds the calls counted (up to n) and the bad ones among
// them. So the two counts are read together, and a call takes no lock and allocates nothing.
// Under concurrency the word lags the ring by the calls between their two steps: the bad count
// is clamped to the calls, so a ratio is never above 1. A second ring and word count the
// refusals among the bad calls the same way, clamped to the bad ones.
type Calls struct {
	n       uint64
	bits    []atomic.Uint32
	refused []atomic.Uint32 // 1: the call at the place was refused
	next    atomic.Uint64   // the place of the next call, counting from 0
	counts  atomic.Uint64   // calls counted (up to n) in the high 32 bits, bad + callBias in the low
	refusal atomic.Uint64   // refused + callBias
}

// callBias keeps the bad count in the middle of its 32 bits, so that a count that lags below 0
// for a moment does not borrow from the calls.
const callBias = 1 << 31

// NewCalls returns an empty window of the last n calls.
func NewCalls(n uint32) *Calls {
	words := (n + 31) / 32
	w := &Calls{n: uint64(n), bits: make([]atomic.Uint32, words), refused: make([]atomic.Uint32, words)}
	w.counts.Store(callBias)
	w.refusal.Store(callBias)
	return w
}

// CallsBytes is what the rings of a window of n calls take.
func CallsBytes(n uint32) int64 {
	return 2*int64((n+31)/32)*int64(unsafe.Sizeof(atomic.Uint32{})) + int64(unsafe.Sizeof(Calls{}))
}

// AddOne counts one call, marked m, and returns the window's counts after it. A place that
// already says what the call says is only read: in a healthy window most are, and a read
// costs no write to a line other calls share.
func (w *Calls) AddOne(m Mark) Counts {
	i := w.next.Add(1) - 1
	place := i % w.n
	word, bit := place/32, uint32(1)<<(place%32)
	delta := flip(&w.bits[word], bit, m != Good)
	if i < w.n {
		delta += 1 << 32
	}
	if r := flip(&w.refused[word], bit, m == Refused); r != 0 {
		w.refusal.Add(r)
	}
	if delta == 0 {
		return w.Sum()
	}
	return w.with(w.counts.Add(delta))
}

// flip sets bit of word to on, and returns what that changes in a count of the bits set: 1,
// -1 (as a uint64 to add), or 0 when the bit already said so.
func flip(word *atomic.Uint32, bit uint32, on bool) uint64 {
	switch {
	case on == (word.Load()&bit != 0):
		return 0
	case on && word.Or(bit)&bit == 0:
		return 1
	case !on && word.And(^bit)&bit != 0:
		return ^uint64(0) // -1
	}
	return 0
}

// Sum returns the calls in the window, the bad ones among them and the refused ones among
// those.
func (w *Calls) Sum() Counts { return w.with(w.counts.Load()) }

// with returns the counts of the word counts, with the refusals among them.
func (w *Calls) with(counts uint64) Counts {
	c := unpackCalls(counts)
	r := int64(w.refusal.Load()) - callBias
	c.Refused = uint64(min(max(r, 0), int64(c.Bad)))
	return c
}

func unpackCalls(c uint64) Counts {
	total := c >> 32
	b := int64(c&(1<<32-1)) - callBias
	return Counts{Total: total, Bad: uint64(min(max(b, 0), int64(total)))}
}
