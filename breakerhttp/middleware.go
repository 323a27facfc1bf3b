package breakerhttp

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"reflect"
	"strconv"
	"sync"
	"time"

	"go.uber.org/atomic"

	"github.com/halfopen/breaker"
)

// ServerPrefix begins every resource name Middleware makes: the ServeMux pattern follows it, as
// in "@server GET /orders/{id}", and so does UnmatchedResource. It gives a server's names a
// side of their own, apart from a client's from their first character: the names NewTransport
// makes begin with a method ("POST partner.example:443"), and no HTTP method begins with "@",
// which is not a token character. So a template key written for the hosts a program calls,
// such as "POST *", never takes a route the program serves, and one written for its routes,
// such as "@server POST *", never takes a host; "*" takes both. The status page and the
// exporters show a name with this prefix as a server's (breakerview.SideOf).
const ServerPrefix = "@server "

// UnmatchedResource is the resource of a server request that matched no ServeMux pattern:
// Middleware names every such request "@server unmatched", whatever its method and path, so
// that clients cannot create resources (and with them breakers, metric series and status-page
// rows) by sending requests to paths that do not exist. No ServeMux pattern can make this
// name, since every pattern holds a "/". Load rules for it like for any other resource, or
// name such requests yourself with WithResource.
const UnmatchedResource = ServerPrefix + "unmatched"

// Middleware returns a middleware that makes each request to the handler it wraps a call of
// m: it enters the request's resource, calls the handler if the breakers let it pass, and
// counts the outcome. A nil m means breaker.Default(); a nil handler means
// http.DefaultServeMux.
//
// The resource is ServerPrefix and the ServeMux pattern that matched the request, such as
// "@server GET /orders/{id}", so that every order shares one resource, and no rule written for
// the hosts the program calls takes it; when there is none, it is UnmatchedResource, one name
// for all such requests, never their method or path, which the client chooses. WithResource
// replaces it, with names used as they are. A ServeMux sets r.Pattern only once it has routed
// the request, so either wrap each handler inside the mux:
//
//	mux.Handle("GET /orders/{id}", mw(orders))
//
// or wrap the mux itself, mw(mux): the middleware then asks the mux which pattern the request
// matches (ServeMux.Handler), at the cost of routing each request twice. A request the mux
// answers itself, with 404 Not Found, 405 Method Not Allowed or a redirect (to add a trailing
// slash or to clean the path), is UnmatchedResource: for a redirect the mux may report a
// path of the client's making as the pattern. So is a route whose handler is an
// http.RedirectHandler, which the middleware cannot tell from the mux's own; wrap it inside
// the mux to give it its pattern. A mux behind another wrapper is not found, so all of its
// requests are UnmatchedResource: wrap it directly, or use WithResource.
//
// A request the breakers block gets 503 Service Unavailable, and the handler is not called.
// When a breaker rejected it, a Retry-After header says the whole seconds until the latest
// retry time among the breakers that rejected it, by m.Now(), rounded up and at least 1 (1
// while a probe is in flight); when a slot blocked it, Retry-After is 1. A request to a
// resource that is ForceOpen (breaker.ErrForcedOpen), or past its MaxConcurrency
// (breaker.ErrConcurrencyLimit), gets 503 too but no Retry-After: no retry time is known, an
// operator lifts the force, and a server at its limit is not a client that sent too much
// (so not 429). WithBlockedHandler replaces the answer. A request whose context is already
// done when it arrives (the client has gone, or its deadline has passed) gets 503 without
// Retry-After: the handler is not called, and nothing counts it.
//
// When the resource has a Timeout (breaker.ResourceConfig), the handler gets a request whose
// context has that deadline, never later than the request's own, and which is canceled when
// the handler returns. A request still running at the deadline fails, whatever the handler
// answers, since it took longer than its resource allows; if the handler wrote nothing, the
// middleware answers 503 Service Unavailable. The handler must return when its context is
// done, since Go cannot stop it.
//
// By default a handler that answers 5xx fails; WithServerFailure replaces that decision. The
// status is the first final status the handler wrote (200 if it wrote none, or hijacked the
// connection without writing one). A handler that panics fails; the panic goes on up to
// net/http's recovery. A client that goes away is not treated apart: a slow handler whose
// clients give up is the very thing a SlowRequestRatio rule is for. The call's response time
// runs until the handler returns.
//
// The handler gets a ResponseWriter that records the status and implements http.Flusher and
// http.Hijacker (failing when the underlying writer cannot) and Unwrap, so
// http.ResponseController reaches the server's writer.
func Middleware(m *breaker.Manager, opts ...Option) func(http.Handler) http.Handler {
	if m == nil {
		m = breaker.Default()
	}
	o := newOptions(opts)
	names := &serverNames{} // shared by the handlers this middleware wraps
	if o.serverFailure == nil {
		o.serverFailure = serverFailure
	}
	if o.blocked == nil {
		o.blocked = serviceUnavailable
	}
	return func(next http.Handler) http.Handler {
		if next == nil {
			next = http.DefaultServeMux
		}
		h := &handler{next: next, m: m, o: o, names: names}
		h.mux, _ = next.(*http.ServeMux)
		return h
	}
}

// redirectType is the type of the handler ServeMux.Handler returns for a redirect it makes.
var redirectType = reflect.TypeOf(http.RedirectHandler("/", http.StatusTemporaryRedirect))

type handler struct {
	next  http.Handler
	mux   *http.ServeMux // next, when it is a ServeMux
	m     *breaker.Manager
	o     options
	names *serverNames
	first atomic.Pointer[serverName] // the first pattern this handler named (nameOf)
}

// serverFailure is the default failure decision of a server request: a 5xx.
func serverFailure(status int) bool { return status >= 500 }

// serviceUnavailable is the default answer to a blocked request.
func serviceUnavailable(w http.ResponseWriter, _ *http.Request, _ *breaker.BlockError) {
	http.Error(w, http.StatusText(http.StatusServiceUnavailable), http.StatusServiceUnavailable)
}

// ServeHTTP calls the next handler if the breakers of the request's resource let it pass.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	e, err := h.m.EnterContext(r.Context(), h.resource(r))
	if err != nil {
		h.reject(w, r, err)
		return
	}
	rw := &responseWriter{ResponseWriter: w}
	_ = e.Run(r.Context(), func(ctx context.Context) error { return h.serve(ctx, rw, r) })
}

// serve calls the next handler with ctx, r's context under the resource's Timeout, and returns
// the error to record for the request: context.DeadlineExceeded when that Timeout cut it off
// (answering 503 if the handler wrote nothing), ErrFailureStatus for a failure status, else nil.
func (h *handler) serve(ctx context.Context, rw *responseWriter, r *http.Request) error {
	parent := r.Context()
	if ctx != parent { // the resource has a Timeout
		r = r.WithContext(ctx)
	}
	h.next.ServeHTTP(rw, r)
	switch {
	case ctx.Err() == context.DeadlineExceeded && parent.Err() == nil:
		if rw.status == 0 && !rw.hijacked {
			http.Error(rw, http.StatusText(http.StatusServiceUnavailable), http.StatusServiceUnavailable)
		}
		return context.DeadlineExceeded
	case h.o.serverFailure(rw.statusCode()):
		return ErrFailureStatus
	}
	return nil
}

// resource names the request's resource.
func (h *handler) resource(r *http.Request) string {
	if h.o.resource != nil {
		return h.o.resource(r)
	}
	if h.mux != nil {
		// A redirect is the mux's own answer, not a route's, and the pattern the mux gives
		// for one can be a path of the client's making (a CONNECT request's, cleaned).
		next, pattern := h.mux.Handler(r)
		if pattern != "" && reflect.TypeOf(next) != redirectType {
			return h.nameOf(pattern)
		}
	}
	if r.Pattern != "" {
		return h.nameOf(r.Pattern)
	}
	return UnmatchedResource
}

// maxServerNames bounds the names a serverNames keeps. A ServeMux's patterns are the
// program's, so a program stays far below it; a pattern past it is named on each request.
const maxServerNames = 1000

// serverName is a ServeMux pattern and the resource name Middleware gives it: ServerPrefix and
// the pattern, made once.
type serverName struct{ pattern, name string }

// serverNames are the names of the patterns a Middleware has seen, each made once, so that
// naming a request allocates nothing. The zero value is empty and ready; it is safe for
// concurrent use.
type serverNames struct {
	names atomic.Pointer[map[string]*serverName] // by pattern; copied on write, under mu
	mu    sync.Mutex
}

// of returns the name of pattern.
func (s *serverNames) of(pattern string) *serverName {
	if names := s.names.Load(); names != nil {
		if n, ok := (*names)[pattern]; ok {
			return n
		}
	}
	return s.add(pattern)
}

// add is the slow path of of: it makes the name of pattern, and keeps it while there is room.
// The key is the name's own tail, never the caller's string.
func (s *serverNames) add(pattern string) *serverName {
	s.mu.Lock()
	defer s.mu.Unlock()
	var old map[string]*serverName
	if p := s.names.Load(); p != nil {
		old = *p
	}
	if n, ok := old[pattern]; ok {
		return n
	}
	name := ServerPrefix + pattern
	n := &serverName{pattern: name[len(ServerPrefix):], name: name}
	if len(old) >= maxServerNames {
		return n
	}
	names := make(map[string]*serverName, len(old)+1)
	maps.Copy(names, old)
	names[n.pattern] = n
	s.names.Store(&names)
	return n
}

// nameOf returns the resource name of a request that matched pattern. A handler wrapped inside
// a ServeMux sees one pattern, the first it met, and finds its name without a lookup: it keeps
// the mux's own string of it, which the next request carries again, so the comparison is of
// two pointers. Any other pattern (a handler around the whole mux) is looked up. The first is
// set once, so that handlers serving many patterns never write it again.
func (h *handler) nameOf(pattern string) string {
	if f := h.first.Load(); f != nil && f.pattern == pattern {
		return f.name
	}
	name := h.names.of(pattern).name
	if h.first.Load() == nil {
		h.first.CompareAndSwap(nil, &serverName{pattern: pattern, name: name})
	}
	return name
}

// reject answers a request that was not let through. err is what EnterContext returned: a
// *BlockError, or the error of a context already done.
func (h *handler) reject(w http.ResponseWriter, r *http.Request, err error) {
	blocked, _ := err.(*breaker.BlockError)
	switch {
	case blocked == nil:
		// The request's context was done before it was admitted: the client is gone, or its
		// deadline has passed. The handler is not called and nothing counts the request.
		http.Error(w, http.StatusText(http.StatusServiceUnavailable), http.StatusServiceUnavailable)
		return
	case blocked != nil && blocked.Rule != nil:
		w.Header().Set("Retry-After", strconv.FormatInt(retryAfter(blocked.RetryAt, h.m.Now()), 10))
	case blocked != nil && (errors.Is(blocked.Cause, breaker.ErrForcedOpen) || errors.Is(blocked.Cause, breaker.ErrConcurrencyLimit)):
		// No retry time is known.
	default:
		w.Header().Set("Retry-After", "1") // a slot blocked it
	}
	h.o.blocked(w, r, blocked)
}

// retryAfter is the whole seconds from now until retryAt, rounded up, and at least 1.
func retryAfter(retryAt, now time.Time) int64 {
	d := retryAt.Sub(now)
	seconds := int64(d / time.Second)
	if d%time.Second > 0 {
		seconds++
	}
	return max(seconds, 1)
}
