package breakerview

import (
	"slices"
	"unicode/utf8"

	"github.com/halfopen/breaker"
)

// Uncalled is a name configured by a Manager's operators, with rules, settings or an override
// of its own, that had no call in the minute: most often a misspelt name, which protects
// nothing. A template that also covers the name does not make it any less configured: a rule
// of its own is there for that name alone.
type Uncalled struct {
	// Name is the name, and Label its Resource's label.
	Name, Label string
	// Side is the side of the name.
	Side Side
	// Configured is what it has of its own: "rules", "settings", "override", in that order.
	Configured []string
	// Nearest is the name called in the minute nearest to it by edit distance, "" when none is
	// near enough: within 2 edits, or a quarter of Name's length in characters if that is more;
	// of those as near, the most called, then the first in natural order. NearestLabel is its
	// label.
	Nearest, NearestLabel string
}

// uncalledOf lists the names of v configured and not called in minutes, the last minute of the
// names its Calls keeps; snap is what v was read from.
func uncalledOf(v *View, snap *breaker.Snapshot, minutes map[string]Minute) []Uncalled {
	ruled := map[string]bool{}
	for _, r := range snap.Rules {
		ruled[r.Resource] = true
	}
	out := []Uncalled{}
	for i := range v.Resources {
		r := &v.Resources[i]
		if minutes[r.Name].Calls > 0 {
			continue
		}
		var configured []string
		if ruled[r.Name] {
			configured = append(configured, "rules")
		}
		if r.OwnSettings() {
			configured = append(configured, "settings")
		}
		if r.Override != nil {
			configured = append(configured, "override")
		}
		if configured == nil {
			continue // it has nothing of its own: a template made it, or gives it settings
		}
		u := Uncalled{Name: r.Name, Label: r.Label, Side: r.Side, Configured: configured,
			Nearest: nearestCalled(r.Name, minutes)}
		if u.Nearest != "" {
			u.NearestLabel = Label(u.Nearest)
		}
		out = append(out, u)
	}
	slices.SortFunc(out, func(a, b Uncalled) int {
		if (a.Nearest == "") != (b.Nearest == "") {
			if a.Nearest != "" {
				return -1
			}
			return 1
		}
		return CompareNames(a.Name, b.Name)
	})
	return out
}

// nearestCalled returns the name of minutes nearest to name by edit distance, if that distance
// is at most maxDistance(name); of those as near, the most called, then the first in natural
// order; "" when none is near enough. minutes holds at most the names a Calls keeps, and a name
// whose length alone puts it too far is not compared.
func nearestCalled(name string, minutes map[string]Minute) string {
	k := maxDistance(name)
	n := utf8.RuneCountInString(name)
	a := []rune(name)
	best, bestDist, bestCalls := "", k+1, uint64(0)
	for c, m := range minutes {
		if c == name || m.Calls == 0 {
			continue
		}
		if l := utf8.RuneCountInString(c); l-n > k || n-l > k {
			continue
		}
		d := distance(a, []rune(c), k)
		if d > k {
			continue
		}
		if d < bestDist || d == bestDist && (m.Calls > bestCalls || m.Calls == bestCalls && CompareNames(c, best) < 0) {
			best, bestDist, bestCalls = c, d, m.Calls
		}
	}
	return best
}

// maxDistance is the farthest a called name may be from name, in edits, to be offered in its
// place: 2, or a quarter of name's length in characters if that is more.
func maxDistance(name string) int {
	return max(2, utf8.RuneCountInString(name)/4)
}

// distance returns the Levenshtein distance between a and b (insertions, deletions and
// substitutions of one character each), or k+1 if it is more than k. It fills only the band of
// cells within k of the diagonal, so it takes time in proportion to k times the length of a.
func distance(a, b []rune, k int) int {
	if len(a)-len(b) > k || len(b)-len(a) > k {
		return k + 1
	}
	far := k + 1
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = min(j, far)
	}
	for i := 1; i <= len(a); i++ {
		lo, hi := max(1, i-k), min(len(b), i+k)
		cur[lo-1] = far
		if lo == 1 {
			cur[0] = min(i, far)
		}
		rowMin := cur[lo-1]
		for j := lo; j <= hi; j++ {
			sub := prev[j-1]
			if a[i-1] != b[j-1] {
				sub++
			}
			cur[j] = min(sub, prev[j]+1, cur[j-1]+1, far)
			rowMin = min(rowMin, cur[j])
		}
		if hi < len(b) {
			cur[hi+1] = far
		}
		if rowMin >= far {
			return far
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
