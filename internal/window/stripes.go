package window

import (
	"math/bits"
	_ "unsafe" // for go:linkname
)

// The counts a call writes are striped, as Java's LongAdder stripes a sum: each stripe is a
// block of words on cache lines of its own, a call writes the stripe of the processor (the
// scheduler's P) it runs on, and a judgement sums the stripes. Calls on different cores then
// write different lines, instead of bouncing one line between them on every call. As in
// LongAdder, the stripes are used only once calls contend for a counter (Sliding.Striped);
// until then every call writes one word, and chooses no stripe. Each word packs what is read
// together (a bucket's total and bad count, a slot's lap and calls), so what holds of one word
// holds of each stripe and of their sum.
//
// The stripes follow the processors the caller gives (GOMAXPROCS when the rules were loaded, so
// that a counter made later never has more stripes than the memory budget counted for it), up
// to a cap, and fewer where the counter has many buckets or slots, so that its stripes stay
// within stripedBytes: a counter is made for each rule, and its memory is counted against the
// Manager's budget.

const (
	// maxStripes caps the stripes of a counter: beyond 8 cores, cores share stripes in pairs or
	// more, each line written by a few cores rather than all.
	maxStripes = 8
	// lineWords is the words of a stripe's block at least: 128 bytes, two cache lines, since
	// some processors fetch lines in adjacent pairs.
	lineWords = 16
	// stripedBytes bounds the blocks of a striped counter; one that needs more for two stripes
	// has one.
	stripedBytes = 1024
)

// Stripes returns the stripes of a counter of n words for procs processors: a power of two.
func Stripes(n, procs int) int {
	s := min(1<<bits.Len(uint(max(procs, 1)-1)), maxStripes)
	for s > 1 && s*strideOf(n, s) > stripedBytes/8 {
		s /= 2
	}
	return s
}

// strideOf returns the words of each stripe's block of a counter of n words in s stripes: n
// rounded up to a power of two, and for more than one stripe to at least lineWords, so that
// the blocks, laid end to end in an allocation of a power-of-two size (which Go aligns to its
// size), share no cache line.
func strideOf(n, s int) int {
	st := 1 << bits.Len(uint(n-1))
	if s == 1 {
		return st
	}
	return max(lineWords, st)
}

// layout returns the layout of a counter of n words in s stripes (a power of two, at most
// maxStripes): stripe st's word i is at index at(st, stride, i, words), and words is what it
// takes; so a counter's stripes are words/stride.
func layout(n, s int) (stride, words int) {
	stride = strideOf(n, s)
	return stride, s * stride
}

// at returns the index of word i of stripe among words words: (stripe*stride | i) modulo
// words, a power of two, so that a stripe past the counter's stripes wraps round to one of them.
func at(stripe uint8, stride, i, words int) int { return (int(stripe)*stride | i) & (words - 1) }

// StripedBytes is what the words of a counter of n words take, striped as Stripes says for
// procs processors.
func StripedBytes(n, procs int) int64 {
	_, words := layout(n, Stripes(n, procs))
	return int64(words) * 8
}

// Stripe returns the stripe of the calling goroutine: the index of the processor it runs on.
// It is a hint: the goroutine may move before it writes, which costs only a shared line.
func Stripe() uint8 {
	p := procPin()
	procUnpin()
	return uint8(p)
}

// The runtime keeps these for packages that link to them, as sync.Pool does internally. Pinning
// costs a few instructions; Stripe unpins at once, so nothing runs pinned.
//
//go:linkname procPin runtime.procPin
func procPin() int

//go:linkname procUnpin runtime.procUnpin
func procUnpin()
