package breakerdebug

import (
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/halfopen/breaker"
)

// UncalledName is a name configured by a Manager's operators, with rules, settings or an
// override of its own, that had no call in the period watched: most often a misspelt name, which
// protects nothing. Uncalled lists them; the status page shows them, in its JSON as "uncalled".
type UncalledName struct {
	Name string `json:"name"`
	// Configured is what it has of its own: "rules", "settings", "override", in that order.
	Configured []string `json:"configured"`
	// Nearest is the name called in the period nearest to it by edit distance, "" when none is
	// near enough: within 2 edits, or a quarter of Name's length in characters if that is
	// more; of those as near, the most called, then the first in natural order.
	Nearest string `json:"nearest,omitempty"`
}

// Uncalled lists the names of snap with rules, settings or an override of their own that had
// no call in called, and that no template covers (a template rule's Resource or a template
// setting's key, less its "*", is a prefix of the name), as the status page's "uncalled" does:
// those with a Nearest name first, then in natural order, runs of digits as numbers. called
// holds the names called in the period the caller watched, with their calls (a name with 0
// had none). Watch for a minute at least before asking, as the page and the exporters do: a
// name called now and then may have had no call in a shorter period.
//
// It returns nil while called counts calls under Overflow ("_other", as the Recorder and the
// exporters count the names past their bounds), since any of those could be a configured
// name's; else a list, empty when every configured name was called. It reads only its
// arguments, which it does not modify.
func Uncalled(snap *breaker.Snapshot, called map[string]uint64) []UncalledName {
	calls := make(map[string]callStats, len(called)) // only the counts: all uncalledIn reads
	for name, n := range called {
		calls[name] = callStats{Calls: n}
	}
	return uncalledIn(snap, calls)
}

// uncalled is Uncalled of calls, the Recorder's minute up to now. It returns nil, and the
// status omits the list, until the Recorder has recorded for a minute.
func (h *handler) uncalled(snap *breaker.Snapshot, calls map[string]callStats,
	now time.Time) []UncalledName {
	if !h.rec.recordedAMinute(now) {
		return nil
	}
	return uncalledIn(snap, calls)
}

// uncalledIn is Uncalled, with each name's calls read from the Calls of its callStats.
func uncalledIn(snap *breaker.Snapshot, calls map[string]callStats) []UncalledName {
	if calls[Overflow].Calls > 0 {
		return nil
	}
	ruled := map[string]bool{}
	var covered []string // the prefixes of the template rules and template settings
	for _, r := range snap.Rules {
		ruled[r.Resource] = true
		if p, ok := strings.CutSuffix(r.Resource, "*"); ok {
			covered = append(covered, p)
		}
	}
	for key := range snap.Settings {
		if p, ok := strings.CutSuffix(key, "*"); ok {
			covered = append(covered, p)
		}
	}
	out := []UncalledName{}
	for i := range snap.Resources {
		r := &snap.Resources[i]
		if calls[r.Name].Calls > 0 || matchesAny(r.Name, covered) {
			continue
		}
		var configured []string
		if ruled[r.Name] {
			configured = append(configured, "rules")
		}
		if _, own := snap.Settings[r.Name]; own {
			configured = append(configured, "settings")
		}
		if r.Override != nil {
			configured = append(configured, "override")
		}
		if configured != nil {
			out = append(out, UncalledName{Name: r.Name, Configured: configured, Nearest: nearestCalled(r.Name, calls)})
		}
	}
	slices.SortFunc(out, func(a, b UncalledName) int {
		if (a.Nearest == "") != (b.Nearest == "") {
			if a.Nearest != "" {
				return -1
			}
			return 1
		}
		return compareNames(a.Name, b.Name)
	})
	return out
}

// uncalledLog remembers which names the handler has logged as uncalled, so that each is logged
// once when it first shows, and again only after it was called and went uncalled again. It
// holds only names the operators configured. It is safe for concurrent use.
type uncalledLog struct {
	mu     sync.Mutex
	logged map[string]bool // under mu
}

// since returns the names of list that were not in the list the last call was given, and keeps
// list's names in their place.
func (l *uncalledLog) since(list []UncalledName) []UncalledName {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := make(map[string]bool, len(list))
	var fresh []UncalledName
	for _, u := range list {
		now[u.Name] = true
		if !l.logged[u.Name] {
			fresh = append(fresh, u)
		}
	}
	l.logged = now
	return fresh
}

// logUncalled logs each name of list not in the list of the last status, with h.logger. The
// logger runs with no lock held.
func (h *handler) logUncalled(list []UncalledName) {
	for _, u := range h.uncalledLog.since(list) {
		msg := "breakerdebug: configured name has no calls"
		if u.Nearest != "" {
			msg += "; did you mean another?"
		}
		h.logger.Warn(msg, slog.String("name", u.Name), slog.String("nearest", u.Nearest),
			slog.String("configured", strings.Join(u.Configured, ",")))
	}
}

// nearestCalled returns the name of calls (Overflow aside) nearest to name by edit distance,
// if that distance is at most maxDistance(name); of those as near, the most called, then the
// first in natural order; "" when none is near enough. calls holds at most the names its
// caller keeps (RecorderLimit, an exporter's bound on names), and a name whose length alone puts
// it too far is not compared.
func nearestCalled(name string, calls map[string]callStats) string {
	k := maxDistance(name)
	n := utf8.RuneCountInString(name)
	a := []rune(name)
	best, bestDist, bestCalls := "", k+1, uint64(0)
	for c, st := range calls {
		if c == Overflow || c == name || st.Calls == 0 {
			continue
		}
		if m := utf8.RuneCountInString(c); m-n > k || n-m > k {
			continue
		}
		d := distance(a, []rune(c), k)
		if d > k {
			continue
		}
		if d < bestDist || d == bestDist && (st.Calls > bestCalls || st.Calls == bestCalls && compareNames(c, best) < 0) {
			best, bestDist, bestCalls = c, d, st.Calls
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
