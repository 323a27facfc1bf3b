package breaker

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// longestByScan is what prefixes.longest must find: the longest of keys that begins name, by
// testing every one.
func longestByScan(keys []string, name string) (string, bool) {
	best, found := "", false
	for _, k := range keys {
		if strings.HasPrefix(name, k) && (!found || len(k) > len(best)) {
			best, found = k, true
		}
	}
	return best, found
}

// On random sets of prefixes over a three-letter alphabet, where prefixes nest deeply, share
// parts of their labels and split each other's, the tree finds what a scan of every prefix
// finds, for names that fall between them in every way.
func TestPrefixesFindTheLongest(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	word := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = "abc"[rng.IntN(3)]
		}
		return string(b)
	}
	for range 5000 {
		seen := map[string]bool{}
		var keys []string
		for range rng.IntN(16) {
			if k := word(rng.IntN(6)); !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
		slices.SortFunc(keys, func(a, b string) int { return len(b) - len(a) }) // as newPrefixes wants few keys
		p := newPrefixes(keys)
		for range 20 {
			name := word(rng.IntN(8))
			want, wantOK := longestByScan(keys, name)
			got, ok := "", false
			if i := p.longest(name); i >= 0 {
				got, ok = keys[i], true
			}
			if got != want || ok != wantOK {
				t.Fatalf("keys %q, name %q: got %q %v, want %q %v", keys, name, got, ok, want, wantOK)
			}
		}
	}
}

// No prefixes: nothing matches, and nothing is indexed.
func TestPrefixesEmpty(t *testing.T) {
	var p prefixes
	if i := p.longest("x"); i != -1 {
		t.Fatalf("got %d from no prefixes", i)
	}
	if q := newPrefixes(nil); len(q.nodes) != 0 || q.longest("") != -1 {
		t.Fatalf("%d nodes from no prefixes", len(q.nodes))
	}
}
