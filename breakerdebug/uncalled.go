package breakerdebug

import (
	"log/slog"
	"strings"
	"sync"

	"github.com/halfopen/breaker/breakerview"
)

// uncalledLog remembers which names the handler has logged as uncalled, so that each is logged
// once when it first shows, and again only after it was called and went uncalled again. It
// holds only names the operators configured. It is safe for concurrent use.
type uncalledLog struct {
	mu     sync.Mutex
	logged map[string]bool // under mu
}

// since returns the names of list that were not in the list the last call was given, and keeps
// list's names in their place.
func (l *uncalledLog) since(list []breakerview.Uncalled) []breakerview.Uncalled {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := make(map[string]bool, len(list))
	var fresh []breakerview.Uncalled
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
func (h *handler) logUncalled(list []breakerview.Uncalled) {
	for _, u := range h.uncalledLog.since(list) {
		msg := "breakerdebug: configured name has no calls"
		if u.Nearest != "" {
			msg += "; did you mean another?"
		}
		h.logger.Warn(msg, slog.String("name", u.Name), slog.String("nearest", u.Nearest),
			slog.String("configured", strings.Join(u.Configured, ",")))
	}
}
