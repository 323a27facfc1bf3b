package breakerhttp

import (
	"net/http"

	"github.com/halfopen/breaker"
)

// Option configures NewTransport or Middleware. An option that concerns only one side is
// ignored by the other, as its doc says.
type Option interface {
	apply(*options)
}

type optionFunc func(*options)

func (f optionFunc) apply(o *options) { f(o) }

// options holds what the Options set; a nil function means the default.
type options struct {
	resource      func(*http.Request) string
	clientFailure func(*http.Response, error) bool
	clientRefusal func(*http.Response) bool
	serverFailure func(status int) bool
	blocked       func(http.ResponseWriter, *http.Request, *breaker.BlockError)
	retryHints    bool
}

func newOptions(opts []Option) options {
	var o options
	for _, opt := range opts {
		if opt != nil {
			opt.apply(&o)
		}
	}
	return o
}

// WithResource names the resource of each request with f instead of the default: for
// NewTransport, req.Method + " " + req.URL.Host of the request that started the redirect
// chain; for Middleware, ServerPrefix and the ServeMux pattern, or else UnmatchedResource. It
// applies to both sides, and f's names are used as they are: begin a server's with
// ServerPrefix to keep them apart from the names of the calls the program makes (the status
// page and the exporters then show them as a server's). For NewTransport, f sees each hop of
// a redirect chain; req.Response is the redirect response of a hop, nil on the first request.
// Name requests by what the program chooses (a route, a host it calls), never by what a
// remote client sends (a path, a method, a header), lest each client request create a
// resource. A nil f keeps the default.
//
// For Middleware, f sees r.Pattern only when the middleware runs inside the ServeMux, since the
// mux sets it when it routes the request.
func WithResource(f func(*http.Request) string) Option {
	return optionFunc(func(o *options) {
		if f != nil {
			o.resource = f
		}
	})
}

// WithClientFailure makes NewTransport count a request as failed when f returns true, given
// what the next RoundTripper returned: a response or an error (resp is nil when err is not).
// The default counts an error, or a response with a 5xx status, as a failure.
//
// f is not asked about a request whose caller canceled it (context.Canceled): such a request
// counts neither way. Middleware ignores this option. A nil f keeps the default.
func WithClientFailure(f func(resp *http.Response, err error) bool) Option {
	return optionFunc(func(o *options) {
		if f != nil {
			o.clientFailure = f
		}
	})
}

// WithClientRefusal makes NewTransport count a response as refused (breaker.Refused) when f
// returns true: the upstream is alive and says how much it takes, as a quota does. The
// default refuses a 429 Too Many Requests, and a 503 Service Unavailable with a valid
// Retry-After header. A refusal counts against ErrorRatio and ErrorCount rules, so they pace
// or trip on it, but never toward a fast trip, which is for hard outages; its Retry-After
// (seconds, or an HTTP date) always goes with it, so that pacing waits for the quota to come
// back. A refusal is decided before a failure: f false leaves the response to
// WithClientFailure, and func(*http.Response) bool { return false } refuses nothing.
// Middleware ignores this option. A nil f keeps the default.
func WithClientRefusal(f func(resp *http.Response) bool) Option {
	return optionFunc(func(o *options) {
		if f != nil {
			o.clientRefusal = f
		}
	})
}

// WithRetryAfterHints makes NewTransport pass on the upstream's own retry hint on a failure: a
// response that counts as failed (not refused, see WithClientRefusal), with status 503 or 429
// and a Retry-After header (seconds, or an HTTP date), is recorded with breaker.RetryAfter, so
// that when it trips the breaker or fails its probe the breaker stays OPEN at least that long,
// within the rule's MaxRetryTimeout (RetryTimeout when that is 0). Off by default: a header is
// the upstream's word, and some upstreams send long ones. Middleware ignores this option.
func WithRetryAfterHints() Option {
	return optionFunc(func(o *options) { o.retryHints = true })
}

// WithServerFailure makes Middleware count a request as failed when f returns true for the
// status the handler answered (200 if it wrote none). The default counts a 5xx status as a
// failure. A handler that panics fails whatever f says. NewTransport ignores this option. A nil
// f keeps the default.
func WithServerFailure(f func(status int) bool) Option {
	return optionFunc(func(o *options) {
		if f != nil {
			o.serverFailure = f
		}
	})
}

// WithBlockedHandler makes Middleware answer a request that the breakers block with f instead
// of the default 503 Service Unavailable. When f runs, the Retry-After header is already set,
// as the default sets it; f writes the status and the body, and may change or delete the
// header. err says which breaker (or slot) blocked the request; do not modify it.
// NewTransport ignores this option. A nil f keeps the default.
func WithBlockedHandler(f func(w http.ResponseWriter, r *http.Request, err *breaker.BlockError)) Option {
	return optionFunc(func(o *options) {
		if f != nil {
			o.blocked = f
		}
	})
}
