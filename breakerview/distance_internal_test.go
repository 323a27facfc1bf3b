package breakerview

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The edit distance counts insertions, deletions and substitutions, and stops at k+1.
func TestDistance(t *testing.T) {
	tests := []struct {
		a, b string
		k    int
		want int
	}{
		{a: "payments", b: "payments", k: 2, want: 0},
		{a: "paymnets", b: "payments", k: 2, want: 2}, // a swap is two substitutions
		{a: "payment", b: "payments", k: 2, want: 1},
		{a: "", b: "ab", k: 2, want: 2},
		{a: "kitten", b: "sitting", k: 5, want: 3},
		{a: "kitten", b: "sitting", k: 2, want: 3},    // past k: k+1
		{a: "a", b: "abcdef", k: 2, want: 3},          // the lengths alone are too far apart
		{a: "abcdefgh", b: "hgfedcba", k: 3, want: 4}, // far from the diagonal
		{a: "café", b: "cafe", k: 2, want: 1},         // characters, not bytes
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, distance([]rune(tt.a), []rune(tt.b), tt.k), "%q %q k=%d", tt.a, tt.b, tt.k)
		assert.Equal(t, tt.want, distance([]rune(tt.b), []rune(tt.a), tt.k), "%q %q k=%d", tt.b, tt.a, tt.k)
	}
}

// A name may be 2 edits from the one offered for it, or a quarter of its length if more.
func TestMaxDistance(t *testing.T) {
	assert.Equal(t, 2, maxDistance("db"))
	assert.Equal(t, 2, maxDistance("paymnets"))
	assert.Equal(t, 3, maxDistance("inventory-api"))
	assert.Equal(t, 5, maxDistance("GET /api/v1/orders/x"))
}

// Given the calls of a minute, the nearest called name is the closest within the distance
// allowed, of those as close the most called, then the first by name; none when none is close.
func TestNearestCalled(t *testing.T) {
	minutes := func(counts map[string]uint64) map[string]Minute {
		out := map[string]Minute{}
		for name, n := range counts {
			out[name] = Minute{Counts: Counts{Calls: n}}
		}
		return out
	}
	tests := []struct {
		name string
		give map[string]uint64
		want string
	}{
		{name: "paymnets", give: map[string]uint64{"payments": 5, "inventory": 50}, want: "payments"},
		{name: "paymnets", give: map[string]uint64{"paymnet": 1, "payments": 5}, want: "paymnet"}, // 1 edit beats 2
		{name: "cart", give: map[string]uint64{"cars": 1, "part": 9, "card": 3}, want: "part"},    // a tie: the most called
		{name: "cart", give: map[string]uint64{"card": 3, "cars": 3}, want: "card"},               // then by name
		{name: "orders", give: map[string]uint64{"users": 40}, want: ""},                          // 3 edits: too far
		{name: "orders", give: map[string]uint64{"order": 0}, want: ""},                           // no calls
		{name: "inventory-api", give: map[string]uint64{"inventry-apis": 2}, want: "inventry-apis"},
		{name: "x", give: map[string]uint64{"x": 4}, want: ""}, // itself is no other name
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, nearestCalled(tt.name, minutes(tt.give)), "%s among %v", tt.name, tt.give)
	}
}
