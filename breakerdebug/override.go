package breakerdebug

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/halfopen/breaker"
)

// maxOverrideBody bounds the body of a write: the four fields at their longest (a name of
// 1 KiB by default, a note of 256 bytes) fit many times over.
const maxOverrideBody = 4 << 10

// WithOverrides lets operators change the Manager through the handler: a POST to the handler's
// path followed by "/override", with a JSON body, forces a resource open or closed or back to
// auto for a while ([breaker.Manager.Override]), ends an override
// ([breaker.Manager.EndOverride]) or resets a resource's breakers ([breaker.Manager.Reset]):
//
//	{"resource": "payments", "action": "open", "duration": "10m", "note": "INC-42"}
//
// "action" is "open", "closed" or "auto", each with a "duration" (a Go duration, more than 0
// and at most a day) and an optional "note" of at most 256 bytes that observers hear; or
// "end" or "reset", which take neither. The answer is the override as installed,
// {"resource", "force", "at", "until", "note"} (times in RFC 3339 on the Manager's clock), or
// {"ended": bool} (false: none was in force), or {"reset": bool} (false: the resource has no
// breakers to reset).
//
// authorize is called for each write before its body is read. It returns the operator's name,
// which the handler logs with the change (WithLogger) but does not store: put it in the note
// for observers to hear it. An error, or an empty name, refuses the write with 403 Forbidden
// and the error's text, so it must say nothing secret. Without this option, or with a nil
// authorize, the handler is read-only: every write gets 403 Forbidden.
//
// A write is refused, and nothing changes, with 405 Method Not Allowed unless it is a POST;
// 403 Forbidden when a browser sent it from another origin; 415 Unsupported Media Type unless
// its Content-Type is application/json, so that an HTML form of another site cannot make one;
// 413 Request Entity Too Large past 4 KiB; and 400 Bad Request for a body that is not one JSON
// object of those four string fields, each at most once, or whose values the Manager refuses
// (the text of its *breaker.RuleError). Every error answer is {"error": "..."}.
func WithOverrides(authorize func(r *http.Request) (operator string, err error)) Option {
	return optionFunc(func(h *handler) { h.authorize = authorize })
}

// WithLogger sets where the handler logs each change an operator makes through it, with the
// operator's name (slog.Default() by default; a nil l keeps it). The Manager logs the
// overrides too, with its own logger (breaker.WithLogger), but knows no operator. With
// WithRecorder, the handler also logs there each configured name that goes a minute without
// calls, with the called name nearest to it (see the package documentation).
func WithLogger(l *slog.Logger) Option {
	return optionFunc(func(h *handler) {
		if l != nil {
			h.logger = l
		}
	})
}

// isOverridePath reports whether path, as the handler sees it (whole, or what http.StripPrefix
// left of it), is the one that takes writes.
func isOverridePath(path string) bool {
	return path == "override" || strings.HasSuffix(path, "/override")
}

// crossOrigin refuses writes that a browser sent from a page of another origin: the JSON
// Content-Type already makes a browser ask first, which nothing here answers, so this only
// says so sooner.
var crossOrigin = http.NewCrossOriginProtection()

// overrideRequest is the body of a write. duration and note are kept apart from whether they
// were given, so that one given where it does not belong is refused, not ignored.
type overrideRequest struct {
	Resource, Action, Duration, Note string
	hasDuration, hasNote             bool
}

// overrideStatus is an override as the status and the answer to a write show it.
type overrideStatus struct {
	Resource string    `json:"resource"`
	Force    string    `json:"force"`
	At       time.Time `json:"at"`
	Until    time.Time `json:"until"`
	Note     string    `json:"note"`
}

func overrideStatusOf(o breaker.OverrideInfo) overrideStatus {
	return overrideStatus{Resource: o.Resource, Force: o.Force.String(), At: o.At, Until: o.Until, Note: o.Note}
}

// forces are the actions that install an override.
var forces = map[string]breaker.Force{"open": breaker.ForceOpen, "closed": breaker.ForceClosed, "auto": breaker.Auto}

// requestError is a write refused, with the status to answer.
type requestError struct {
	status int
	msg    string
}

func (e *requestError) Error() string { return e.msg }

func refuse(status int, format string, args ...any) *requestError {
	return &requestError{status: status, msg: "breakerdebug: " + fmt.Sprintf(format, args...)}
}

// serveOverride answers a write: it checks who asks and how, reads the body, and applies it.
func (h *handler) serveOverride(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	operator, err := h.admitWrite(r)
	if err != nil {
		if err.status == http.StatusMethodNotAllowed {
			w.Header().Set("Allow", http.MethodPost)
		}
		answer(w, err.status, map[string]string{"error": err.msg})
		return
	}
	req, err := readOverride(w, r)
	if err != nil {
		answer(w, err.status, map[string]string{"error": err.msg})
		return
	}
	out, applyErr := h.apply(req, operator, r)
	if applyErr != nil {
		status := http.StatusInternalServerError
		var re *breaker.RuleError
		var rq *requestError
		switch {
		case errors.As(applyErr, &rq):
			status = rq.status
		case errors.As(applyErr, &re):
			status = http.StatusBadRequest
		}
		answer(w, status, map[string]string{"error": applyErr.Error()})
		return
	}
	answer(w, http.StatusOK, out)
}

// admitWrite checks everything about a write but its body, cheapest first, and returns the
// operator's name.
func (h *handler) admitWrite(r *http.Request) (string, *requestError) {
	if r.Method != http.MethodPost {
		return "", refuse(http.StatusMethodNotAllowed, "method %s not allowed: overrides take POST", r.Method)
	}
	if h.authorize == nil {
		return "", refuse(http.StatusForbidden, "read-only: the program allows no overrides (breakerdebug.WithOverrides)")
	}
	if err := crossOrigin.Check(r); err != nil {
		return "", refuse(http.StatusForbidden, "refused a request from another origin")
	}
	operator, err := h.authorize(r)
	switch {
	case err != nil:
		return "", refuse(http.StatusForbidden, "not authorized: %v", err)
	case operator == "":
		return "", refuse(http.StatusForbidden, "not authorized: no operator named")
	}
	typ, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || typ != "application/json" {
		return "", refuse(http.StatusUnsupportedMediaType, "the body must be application/json")
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		return "", refuse(http.StatusUnsupportedMediaType, "the body must be UTF-8, not %q", cs)
	}
	return operator, nil
}

// readOverride reads the body of r: one JSON object of strings, in UTF-8, no more than
// maxOverrideBody bytes, each of the four fields at most once and no other. Keys match
// exactly, not in any case as encoding/json would let them.
func readOverride(w http.ResponseWriter, r *http.Request) (overrideRequest, *requestError) {
	var req overrideRequest
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxOverrideBody))
	if _, tooLong := errors.AsType[*http.MaxBytesError](err); tooLong {
		return req, refuse(http.StatusRequestEntityTooLarge, "the body is longer than %d bytes", maxOverrideBody)
	}
	if err != nil {
		return req, refuse(http.StatusBadRequest, "reading the body: %v", err)
	}
	if !utf8.Valid(body) {
		return req, refuse(http.StatusBadRequest, "the body is not UTF-8")
	}
	notObject := refuse(http.StatusBadRequest,
		`the body must be one JSON object such as {"resource": "payments", "action": "open", "duration": "10m", "note": "INC-42"}`)
	dec := json.NewDecoder(bytes.NewReader(body))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return req, notObject
	}
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return req, refuse(http.StatusBadRequest, "the body is not JSON: %v", err)
		}
		key, _ := t.(string) // an object's keys are strings
		field := req.field(key)
		if field == nil {
			return req, refuse(http.StatusBadRequest, "unknown field %q: the fields are resource, action, duration and note", key)
		}
		if seen[key] {
			return req, refuse(http.StatusBadRequest, "field %q given twice", key)
		}
		seen[key] = true
		t, err = dec.Token()
		if err != nil {
			return req, refuse(http.StatusBadRequest, "the body is not JSON: %v", err)
		}
		s, ok := t.(string)
		if !ok {
			return req, refuse(http.StatusBadRequest, "field %q must be a string", key)
		}
		*field = s
	}
	if _, err := dec.Token(); err != nil {
		return req, refuse(http.StatusBadRequest, "the body is not JSON: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return req, notObject
	}
	req.hasDuration, req.hasNote = seen["duration"], seen["note"]
	return req, nil
}

// field returns where the value of the body's key goes, nil for a key that is not a field.
func (req *overrideRequest) field(key string) *string {
	switch key {
	case "resource":
		return &req.Resource
	case "action":
		return &req.Action
	case "duration":
		return &req.Duration
	case "note":
		return &req.Note
	}
	return nil
}

// apply makes the change req asks for, logs it with operator, and returns the answer.
func (h *handler) apply(req overrideRequest, operator string, r *http.Request) (any, error) {
	force, install := forces[req.Action]
	switch {
	case req.Action == "":
		return nil, refuse(http.StatusBadRequest, "action is required: open, closed, auto, end or reset")
	case !install && req.Action != "end" && req.Action != "reset":
		return nil, refuse(http.StatusBadRequest, "action %q is not one of open, closed, auto, end or reset", req.Action)
	case req.Resource == "":
		return nil, refuse(http.StatusBadRequest, "resource is required")
	case install && !req.hasDuration:
		return nil, refuse(http.StatusBadRequest,
			"duration is required for %s: an override ends by itself, after at most %v", req.Action, breaker.MaxOverrideDuration)
	case !install && req.hasDuration:
		return nil, refuse(http.StatusBadRequest, "duration is for open, closed and auto: %s takes none", req.Action)
	case !install && req.hasNote:
		return nil, refuse(http.StatusBadRequest, "note is for open, closed and auto: %s takes none", req.Action)
	}
	log := h.logger.With("operator", operator, "resource", req.Resource, "action", req.Action, "remote", r.RemoteAddr)
	switch req.Action {
	case "end":
		ended := h.m.EndOverride(req.Resource)
		if ended {
			log.Info("breakerdebug: override ended")
		}
		return map[string]bool{"ended": ended}, nil
	case "reset":
		// Reset leaves a resource without breakers as it is: say so rather than claim a reset.
		had := len(h.m.Breakers(req.Resource)) > 0
		h.m.Reset(req.Resource)
		if had {
			log.Info("breakerdebug: reset")
		}
		return map[string]bool{"reset": had}, nil
	}
	d, err := time.ParseDuration(req.Duration)
	if err != nil {
		return nil, refuse(http.StatusBadRequest, "duration %q is not a Go duration such as 10m or 1h30m", req.Duration)
	}
	o, err := h.m.Override(req.Resource, force, d, req.Note)
	if err != nil {
		return nil, err
	}
	log.Info("breakerdebug: override", "until", o.Until, "note", o.Note)
	return overrideStatusOf(o), nil
}

// answer writes v as the JSON body of a response with status.
func answer(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "breakerdebug: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n')) // an error means the client went away: nothing to do
}
