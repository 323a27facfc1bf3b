package breakerdebug

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/halfopen/breaker"
)

const (
	// statusEvery is how often the event stream sends the whole status, between the status it
	// sends after each burst of state changes: the windows and the last minute move with every
	// call, not only with a transition.
	statusEvery = 2 * time.Second
	// writeWait bounds each write to a subscriber, so that one whose client stopped reading
	// ends its stream rather than holding its goroutine.
	writeWait = 10 * time.Second
	// retryAfter is how long a browser waits before it reconnects to a stream that ended.
	retryAfter = 2 * time.Second
)

// wantsEvents reports whether r asks for the event stream: a path ending in "/events" (or
// "events", under http.StripPrefix), ?format=events, or an Accept header of text/event-stream,
// as a browser's EventSource sends.
func wantsEvents(r *http.Request) bool {
	return r.URL.Path == "events" || strings.HasSuffix(r.URL.Path, "/events") ||
		r.URL.Query().Get("format") == "events" || strings.Contains(r.Header.Get("Accept"), "text/event-stream")
}

// serveEvents serves the event stream (text/event-stream, server-sent events): the kept state
// changes a subscriber has not seen (by its Last-Event-ID), oldest first, then each change as it
// happens, each an event "transition" with the change's Seq as its id; and the status, as an
// event "status", after the kept changes, after each burst of changes and every statusEvery.
// It ends when the client goes, when a write does not complete within writeWait, or when the
// subscriber fell keep changes behind and was dropped (the browser then reconnects).
func (h *handler) serveEvents(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", "GET")
		http.Error(w, "breakerdebug: method not allowed", http.StatusMethodNotAllowed)
		return
	}
	since, _ := strconv.ParseUint(r.Header.Get("Last-Event-ID"), 10, 64)
	sub, replay, ok := h.changes.subscribe(since)
	if !ok {
		w.Header().Set("Retry-After", strconv.Itoa(int(retryAfter/time.Second)))
		http.Error(w, "breakerdebug: too many subscribers of the event stream", http.StatusServiceUnavailable)
		return
	}
	defer h.changes.unsubscribe(sub)
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	out := &eventWriter{w: w, rc: http.NewResponseController(w)}
	out.field("retry", strconv.Itoa(int(retryAfter/time.Millisecond)))
	out.end()
	for _, c := range replay {
		out.transition(c)
	}
	out.status(h)
	ticker := time.NewTicker(statusEvery)
	defer ticker.Stop()
	for out.flush() == nil {
		select {
		case <-r.Context().Done():
			return
		case <-ticker.C:
			out.status(h)
		case c, open := <-sub.ch:
			if !open {
				return // dropped: it fell behind
			}
			out.transition(c)
			for range len(sub.ch) { // the rest of the burst, then one status
				if c, open = <-sub.ch; !open {
					return
				}
				out.transition(c)
			}
			out.status(h)
		}
	}
}

// eventWriter writes server-sent events to a response, buffered until flush.
type eventWriter struct {
	w   http.ResponseWriter
	rc  *http.ResponseController
	buf bytes.Buffer
}

// field writes one field of an event; value holds no newline.
func (e *eventWriter) field(name, value string) {
	e.buf.WriteString(name)
	e.buf.WriteString(": ")
	e.buf.WriteString(value)
	e.buf.WriteByte('\n')
}

// end ends an event.
func (e *eventWriter) end() { e.buf.WriteByte('\n') }

// event writes an event named name with v as its data, in JSON (which has no newline), and
// id unless it is empty.
func (e *eventWriter) event(name, id string, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		return // the status and the changes are always JSON
	}
	e.field("event", name)
	if id != "" {
		e.field("id", id)
	}
	e.field("data", string(data))
	e.end()
}

// transition writes the state change c.
func (e *eventWriter) transition(c breaker.StateChange) {
	e.event("transition", strconv.FormatUint(c.Seq, 10), transitionOf(c))
}

// status writes the status now, without the transitions, which the stream sends one by one.
func (e *eventWriter) status(h *handler) {
	st := h.status()
	st.Transitions = nil
	e.event("status", "", st)
}

// flush sends what was written, within writeWait.
func (e *eventWriter) flush() error {
	if e.buf.Len() == 0 {
		return nil
	}
	_ = e.rc.SetWriteDeadline(time.Now().Add(writeWait)) // not every ResponseWriter has one
	_, err := e.w.Write(e.buf.Bytes())
	e.buf.Reset()
	if err != nil {
		return err
	}
	return e.rc.Flush()
}
