package breaker

import "math/bits"

// resourceIndex finds a resource of a rule set by its name, as find does on every call. A rule
// set never changes once published, so its index is built once, when it is, as a table with
// open addressing: a lookup hashes the name once and compares it with the few names that share
// its slot. A miss, a call to a resource without rules, costs about half what a Go map's
// small-map miss costs (which hashes and probes its whole group); a hit about what the map's
// does.
type resourceIndex struct {
	mask  uint64 // len(slots)-1; the table has a power-of-two size, at least twice its names
	slots []indexSlot
}

type indexSlot struct {
	hash uint64
	name string
	res  *resource // nil: an empty slot, which ends every search that reaches it
}

// indexSeed starts the hash. It is the same in every process, so that a lookup costs the same
// from one run to the next: only the names of rules and settings are in a table, chosen by the
// operator, and a caller's names cannot lengthen its searches.
const indexSeed = 0x6a09e667f3bcc909

// hashName hashes a name 8 bytes at a time: each word multiplied into the state, whose high
// half is folded into the low, which picks the slot. It costs a few instructions a word,
// where hash/maphash costs 60 on a short name.
func hashName(s string) uint64 {
	h := indexSeed ^ uint64(len(s))
	for ; len(s) > 8; s = s[8:] {
		h = mix(h, word(s[:8]))
	}
	var last uint64
	switch n := len(s); {
	case n == 8:
		last = word(s)
	case n >= 4: // two 4-byte reads that overlap
		last = uint64(half(s[:4])) | uint64(half(s[n-4:]))<<32
	case n > 0:
		last = uint64(s[0]) | uint64(s[n/2])<<8 | uint64(s[n-1])<<16
	}
	return mix(h, last)
}

const hashPrime = 0x9e3779b97f4a7c15

func mix(h, w uint64) uint64 {
	hi, lo := bits.Mul64(h^w, hashPrime)
	return hi ^ lo
}

func word(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

func half(s string) uint32 {
	_ = s[3]
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}

// newResourceIndex indexes resources.
func newResourceIndex(resources map[string]*resource) resourceIndex {
	if len(resources) == 0 {
		return resourceIndex{}
	}
	size := 2
	for size < 2*len(resources) {
		size *= 2
	}
	x := resourceIndex{mask: uint64(size - 1), slots: make([]indexSlot, size)}
	for name, res := range resources {
		h := hashName(name)
		i := h & x.mask
		for x.slots[i].res != nil {
			i = (i + 1) & x.mask
		}
		x.slots[i] = indexSlot{hash: h, name: name, res: res}
	}
	return x
}

// get returns the resource named name, or nil. At least half the slots are empty, so every
// search ends.
func (x *resourceIndex) get(name string) *resource {
	if x.slots == nil {
		return nil
	}
	h := hashName(name)
	for i := h & x.mask; ; i = (i + 1) & x.mask {
		s := &x.slots[i]
		if s.res == nil {
			return nil
		}
		if s.hash == h && s.name == name {
			return s.res
		}
	}
}
