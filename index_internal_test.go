package breaker

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// indexNames are names of every length from 0 to 40, names that differ only in the bytes the
// hash of a short name reads twice or not at all, and names as an HTTP gateway makes them.
func indexNames(n int) []string {
	names := []string{"", "a", "b", "ab", "ba", "abc", "acb", "abcd", "abce", "abcde", "abxde",
		"abcdefgh", "abcdefgi", "abcdefghi", "bbcdefghi"}
	for l := 10; l <= 40; l++ {
		names = append(names, strings.Repeat("x", l), strings.Repeat("x", l-1)+"y")
	}
	for i := 0; len(names) < n; i++ {
		names = append(names, fmt.Sprintf("GET backend-%d.svc:%d", i%997, 8000+i/997))
	}
	return names
}

// Given rule sets of 0 to 50,000 resources, then the index finds every resource by its name,
// and a name it does not hold, however close to one it holds, finds nothing.
func TestResourceIndexFindsEveryName(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 100, 50_000} {
		names := indexNames(n)[:n]
		resources := make(map[string]*resource, n)
		for _, name := range names {
			resources[name] = &resource{}
		}
		x := newResourceIndex(resources)
		for _, name := range names {
			require.Same(t, resources[name], x.get(name), "%q among %d", name, n)
		}
		for _, missing := range []string{"zz", "abcf", "GET backend-0.svc:800", "GET backend-0.svc:80000", strings.Repeat("x", 41)} {
			assert.Nil(t, x.get(missing), "%q among %d", missing, n)
		}
	}
}

// Given 50,000 names as a gateway makes them, then no search for one of them passes more than
// a few slots: the hash spreads names that share all but a few bytes.
func TestResourceIndexSpreadsSimilarNames(t *testing.T) {
	names := indexNames(50_000)
	resources := make(map[string]*resource, len(names))
	for _, name := range names {
		resources[name] = &resource{}
	}
	x := newResourceIndex(resources)
	longest, total := 0, 0
	for _, name := range names {
		h := hashName(name)
		steps := 1
		for i := h & x.mask; x.slots[i].name != name; i = (i + 1) & x.mask {
			steps++
		}
		longest, total = max(longest, steps), total+steps
	}
	mean := float64(total) / float64(len(names))
	t.Logf("slots passed: mean %.2f, longest %d", mean, longest)
	assert.Less(t, mean, 2.0, "a table at most half full averages under 2 with a good hash")
	assert.Less(t, longest, 40)
}
