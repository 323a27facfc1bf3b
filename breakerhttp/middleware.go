package breakerhttp

import (
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/halfopen/breaker"
)

// UnmatchedResource is the resource Middleware gives, by default, every request that matched
// no ServeMux pattern: a 404 or 405 of the mux it wraps, or any request to a handler that is
// not a ServeMux and runs outside one. The request's path is not part of it, so requests to
// made-up paths all count as one resource, and a rule for UnmatchedResource can shed them.
// It contains no "/", so no pattern has the same name.
const UnmatchedResource = "(unmatched)"

// Middleware returns a middleware that makes each request to the handler it wraps a call of
// m: it enters the request's resource, calls the handler if the breakers let it pass, and
// counts the outcome. A nil m means breaker.Default(); a nil handler means
// http.DefaultServeMux.
//
// The resource is the ServeMux pattern that matched the request, such as
// "GET /orders/{id}", so that every order shares one resource; when there is none, it is
// UnmatchedResource, one name for every such request, so that a client cannot create
// resources (and the metrics series of each) by sending requests to made-up paths.
// WithResource replaces it. A ServeMux sets r.Pattern only once it has routed the request, so
// either wrap each handler inside the mux:
//
//	mux.Handle("GET /orders/{id}", mw(orders))
//
// or wrap the mux itself, mw(mux): the middleware then asks the mux which pattern the request
// matches (ServeMux.Handler), at the cost of routing each request twice; a request that
// matches no pattern, which the mux answers with 404 or 405, is UnmatchedResource. A mux
// behind another wrapper is not found, and a handler that is not a mux sets no pattern: their
// requests are all UnmatchedResource, unless WithResource names them.
//
// A request the breakers block gets 503 Service Unavailable with a Retry-After header: the
// whole seconds until the rejecting breaker's retry time, by m.Now(), rounded up and at least
// 1 (1 when a slot blocked it, or a probe is in flight). The handler is not called.
// WithBlockedHandler replaces the answer.
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
		h := &handler{next: next, m: m, o: o}
		h.mux, _ = next.(*http.ServeMux)
		return h
	}
}

type handler struct {
	next http.Handler
	mux  *http.ServeMux // next, when it is a ServeMux
	m    *breaker.Manager
	o    options
}

// serverFailure is the default failure decision of a server request: a 5xx.
func serverFailure(status int) bool { return status >= 500 }

// serviceUnavailable is the default answer to a blocked request.
func serviceUnavailable(w http.ResponseWriter, _ *http.Request, _ *breaker.BlockError) {
	http.Error(w, http.StatusText(http.StatusServiceUnavailable), http.StatusServiceUnavailable)
}

// ServeHTTP calls the next handler if the breakers of the request's resource let it pass.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	e, err := h.m.Enter(h.resource(r))
	if err != nil {
		h.reject(w, r, err)
		return
	}
	rw := &responseWriter{ResponseWriter: w}
	completed := false
	defer func() {
		if !completed {
			e.SetError(breaker.ErrPanicked)
		}
		e.Exit()
	}()
	h.next.ServeHTTP(rw, r)
	if h.o.serverFailure(rw.statusCode()) {
		e.SetError(ErrFailureStatus)
	}
	completed = true
}

// resource names the request's resource.
func (h *handler) resource(r *http.Request) string {
	if h.o.resource != nil {
		return h.o.resource(r)
	}
	if h.mux != nil {
		if _, pattern := h.mux.Handler(r); pattern != "" && !isRedirect(r, pattern) {
			return pattern
		}
	}
	if r.Pattern != "" {
		return r.Pattern
	}
	return UnmatchedResource
}

// isRedirect reports whether pattern, which ServeMux.Handler returned for r, is not a pattern
// but the path of the redirect from r's path to the same path with a slash appended. For a
// CONNECT request, ServeMux.Handler returns that path in place of a pattern, and since it
// comes from the request, a client could make up as many as it likes. A real pattern cannot
// be it: a pattern ending in a slash matches only paths that have it as a prefix.
func isRedirect(r *http.Request, pattern string) bool {
	p := r.URL.Path
	if p == "" || strings.HasSuffix(p, "/") || !strings.HasSuffix(pattern, "/") {
		return false
	}
	if p[0] != '/' {
		p = "/" + p
	}
	return pattern == path.Clean(p)+"/"
}

// reject answers a blocked request. err is what Enter returned.
func (h *handler) reject(w http.ResponseWriter, r *http.Request, err error) {
	blocked, _ := err.(*breaker.BlockError)
	seconds := int64(1)
	if blocked != nil && blocked.Rule != nil {
		seconds = retryAfter(blocked.RetryAt, h.m.Now())
	}
	w.Header().Set("Retry-After", strconv.FormatInt(seconds, 10))
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
