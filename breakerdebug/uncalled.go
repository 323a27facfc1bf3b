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

// uncalledStatus is a name configured by the Manager's operators, with rules, settings or an
// override of its own, that had no call in the Recorder's minute: most often a misspelt name,
// which protects nothing.
type uncalledStatus struct {
	Name string `json:"name"`
	// Configured is what it has of its own: "rules", "settings", "override", in that order.
	Configured []string `json:"configured"`
	// Nearest is the name called in the minute nearest to it by edit distance, "" when none is
	// near enough (nearestCalled).
	Nearest string `json:"nearest,omitempty"`
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
func (l *uncalledLog) since(list []uncalledStatus) []uncalledStatus {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := make(map[string]bool, len(list))
	var fresh []uncalledStatus
	for _, u := range list {
		now[u.Name] = true
		if !l.logged[u.Name] {
			fresh = append(fresh, u)
		}
	}
	l.logged = now
	return fresh
}

// uncalled lists the names of snap with rules, settings or an override of their own that had
// no call in calls, the Recorder's minute up to now, and that no template (templates: the
// prefixes of the template rules and settings keys) covers, those with a near name first, then
// in natural order. It returns nil, and the status omits the list, until the Recorder has
// recorded for a minute, or while Overflow counted calls in it: any of those could be the
// name's.
func (h *handler) uncalled(snap *breaker.Snapshot, calls map[string]callStats, templates []string,
	now time.Time) []uncalledStatus {
	if !h.rec.recordedAMinute(now) || calls[Overflow].Calls > 0 {
		return nil
	}
	ruled := map[string]bool{}
	for _, r := range snap.Rules {
		ruled[r.Resource] = true
	}
	out := []uncalledStatus{}
	for i := range snap.Resources {
		r := &snap.Resources[i]
		if calls[r.Name].Calls > 0 || matchesAny(r.Name, templates) {
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
			out = append(out, uncalledStatus{Name: r.Name, Configured: configured, Nearest: nearestCalled(r.Name, calls)})
		}
	}
	slices.SortFunc(out, func(a, b uncalledStatus) int {
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

// logUncalled logs each name of list not in the list of the last status, with h.logger. The
// logger runs with no lock held.
func (h *handler) logUncalled(list []uncalledStatus) {
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
// first in natural order; "" when none is near enough. calls holds at most the names the
// Recorder keeps, and a name whose length alone puts it too far is not compared.
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
