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
// them. So the two counts are read together, and a call takes no lock and allocates nothing. Under concurrency the word lags the
// ring by the calls between their two steps: the bad count is clamped to the calls, so a ratio
// is never above 1.
type Calls struct {
	n      uint64
	bits   []atomic.Uint32
	next   atomic.Uint64 // the place of the next call, counting from 0
	counts atomic.Uint64 // calls counted (up to n) in the high 32 bits, bad + callBias in the low
}

// callBias keeps the bad count in the middle of its 32 bits, so that a count that lags below 0
// for a moment does not borrow from the calls.
const callBias = 1 << 31

// NewCalls returns an empty window of the last n calls.
func NewCalls(n uint32) *Calls {
	w := &Calls{n: uint64(n), bits: make([]atomic.Uint32, (n+31)/32)}
	w.counts.Store(callBias)
	return w
}

// CallsBytes is what the ring of a window of n calls takes.
func CallsBytes(n uint32) int64 {
	return int64((n+31)/32)*int64(unsafe.Sizeof(atomic.Uint32{})) + int64(unsafe.Sizeof(Calls{}))
}

// AddOne counts one call, bad or not, and returns the window's counts after it. A place that
// already says what the call says is only read: in a healthy window most are, and a read
// costs no write to a line other calls share.
func (w *Calls) AddOne(bad bool) Counts {
	i := w.next.Add(1) - 1
	place := i % w.n
	word, bit := &w.bits[place/32], uint32(1)<<(place%32)
	var delta uint64
	switch {
	case bad == (word.Load()&bit != 0):
	case bad && word.Or(bit)&bit == 0:
		delta = 1
	case !bad && word.And(^bit)&bit != 0:
		delta = ^uint64(0) // -1
	}
	if i < w.n {
		delta += 1 << 32
	}
	if delta == 0 {
		return unpackCalls(w.counts.Load())
	}
	return unpackCalls(w.counts.Add(delta))
}

// Sum returns the calls in the window and the bad ones among them.
func (w *Calls) Sum() Counts { return unpackCalls(w.counts.Load()) }

func unpackCalls(c uint64) Counts {
	total := c >> 32
	b := int64(c&(1<<32-1)) - callBias
	return Counts{Total: total, Bad: uint64(min(max(b, 0), int64(total)))}
}
