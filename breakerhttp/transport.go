package breakerhttp

import (
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/halfopen/breaker"
)

// NewTransport returns a RoundTripper that makes each request a call of m: it enters the
// request's resource, sends the request through next if the breakers let it pass, and counts
// the outcome. A nil next means http.DefaultTransport; a nil m means breaker.Default().
//
// The resource is req.Method + " " + req.URL.Host, such as "GET api:8080" (an empty Method
// reads as GET, and one that net/http does not name as OtherMethod); WithResource replaces
// it. The default holds the host and port but not the path: the program chooses which hosts
// it calls, so the names stay few, whereas one resource per path would grow with every ID in
// a URL. For the same reason a request that an http.Client makes to follow a redirect is named
// after the request that started the chain, not after the host the upstream redirected it to:
// the hops of one request are all calls of its resource. A program that sends requests to
// hosts it is told about (a crawler, a webhook sender) should name them with WithResource,
// lest each host get its own breakers and metric series. A request the breakers block gets the
// *breaker.BlockError as its error, without reaching next: errors.Is(err, breaker.ErrOpen)
// holds when a breaker rejected it, and errors.As finds the *breaker.BlockError, also through
// the *url.Error that http.Client wraps it in. Its body, if any, is closed. A request whose
// context is already done is not sent and counts nowhere: its error is the context's cause
// (context.Cause, which is its Err unless a cause was given), as http.Transport returns it.
//
// By default a response with status 429, or 503 with a valid Retry-After header, is refused
// (breaker.Refused: the upstream is alive and says how much it takes, and its Retry-After goes
// with it), and WithClientRefusal replaces that decision; an error from next, or another
// response with a 5xx status, is a failure, and WithClientFailure replaces that decision. Either way the response and the error are
// returned to the caller unchanged. An error that is the caller's own cancellation
// (context.Canceled) counts neither way, as in breaker.Manager.Do. If next panics, the call
// counts as failed and the panic goes on up.
//
// The call ends when next returns, that is when the response headers have arrived: its
// response time, which SlowRequestRatio rules judge, does not include reading the body, and an
// error while reading the body is not counted. An http.Client following redirects makes one
// call per hop, all under the first request's resource (see above). When next returns a
// response without its Request, the RoundTripper sets it, as http.Transport does, so that the
// next hop can be traced back.
//
// When the resource has a Timeout (breaker.ResourceConfig), the request is sent with a context
// that has that deadline, never later than its own. The deadline bounds the whole exchange,
// reading the body included, as http.Client.Timeout does: the context is canceled when the
// caller closes the body or reads it to its end (or an error), not when RoundTrip returns,
// which would cut the body off. A request cut off by it before the headers arrive fails with
// an error matching context.DeadlineExceeded. A caller that neither closes nor reads the body
// holds the context, and its timer, until the deadline.
//
// The RoundTripper passes CloseIdleConnections on to next, so http.Client.CloseIdleConnections
// still works.
func NewTransport(next http.RoundTripper, m *breaker.Manager, opts ...Option) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	if m == nil {
		m = breaker.Default()
	}
	o := newOptions(opts)
	t := &transport{next: next, m: m, resource: o.resource, failed: o.clientFailure, refused: o.clientRefusal,
		hints: o.retryHints}
	if t.resource == nil {
		t.resource = clientResource
	}
	if t.failed == nil {
		t.failed = clientFailure
	}
	if t.refused == nil {
		t.refused = clientRefusal
	}
	return t
}

type transport struct {
	next     http.RoundTripper
	m        *breaker.Manager
	resource func(*http.Request) string
	failed   func(*http.Response, error) bool
	refused  func(*http.Response) bool
	hints    bool // record the upstream's Retry-After on a failure (WithRetryAfterHints)
}

var _ http.RoundTripper = (*transport)(nil)

// OtherMethod is the method in the default resource name of a client request whose method is
// none of the nine that net/http names (GET, HEAD, POST, PUT, PATCH, DELETE, CONNECT, OPTIONS,
// TRACE): "OTHER api:8080". A program may send methods it did not choose (a reverse proxy
// passes on its clients'), and each would otherwise be a resource of its own.
const OtherMethod = "OTHER"

// clientResource is the default name of a client request: "GET api:8080", after the request
// that started its redirect chain.
func clientResource(req *http.Request) string {
	req = firstRequest(req)
	host := ""
	if req.URL != nil {
		host = req.URL.Host
	}
	return knownMethod(req.Method) + " " + host
}

// firstRequest is the request the program made that led to req: an http.Client that follows
// a redirect makes a new request, holding the redirect response, to a URL the upstream chose.
func firstRequest(req *http.Request) *http.Request {
	for req.Response != nil && req.Response.Request != nil {
		req = req.Response.Request
	}
	return req
}

// knownMethod is method when net/http names it, GET for "", and else OtherMethod.
func knownMethod(method string) string {
	switch method {
	case "":
		return http.MethodGet
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace:
		return method
	}
	return OtherMethod
}

// clientRefusal is the default refusal decision of a client request: a 429, or a 503 with a
// valid Retry-After.
func clientRefusal(resp *http.Response) bool {
	if resp.StatusCode == http.StatusTooManyRequests {
		return true
	}
	_, hinted := retryAfterHint(resp)
	return resp.StatusCode == http.StatusServiceUnavailable && hinted
}

// clientFailure is the default failure decision of a client request: an error or a 5xx.
func clientFailure(resp *http.Response, err error) bool {
	return err != nil || resp == nil || resp.StatusCode >= 500
}

// RoundTrip sends req through next if the breakers of its resource let it pass.
func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	e, err := t.m.EnterContext(req.Context(), t.resource(req))
	if err != nil {
		if req.Body != nil {
			req.Body.Close() // a RoundTripper closes the body, also on errors
		}
		if _, blocked := err.(*breaker.BlockError); !blocked {
			// The context was done before admission: its cause, as http.Transport returns it.
			err = context.Cause(req.Context())
		}
		return nil, err
	}
	// The call ends when next returns, but not through Entry.Run, which would cancel ctx
	// then: the caller reads the body afterwards, and ctx must live until it is closed.
	ctx, cancel := e.WithTimeout(req.Context())
	sent := req
	if ctx != req.Context() {
		sent = req.WithContext(ctx)
	}
	completed := false
	defer func() {
		if !completed {
			cancel()
			e.SetError(breaker.ErrPanicked)
		}
		e.Exit()
	}()
	resp, err := t.next.RoundTrip(sent)
	e.SetError(t.outcome(req, resp, err))
	completed = true
	if resp != nil && resp.Request == nil {
		resp.Request = req // as http.Transport sets it: a redirect's next hop finds its chain
	}
	if resp == nil || resp.Body == nil || sent == req {
		cancel()
		return resp, err
	}
	resp.Body = cancelOnClose(resp.Body, cancel)
	return resp, err
}

// outcome is the error to record for what next returned: nil for a success, the error marked
// breaker.Ignore for a request its caller canceled (whatever error the transport made of it,
// and whatever the Manager's Classifier would say), ErrRefusedStatus marked breaker.Refused
// with the upstream's Retry-After for a refusal, else the failure.
func (t *transport) outcome(req *http.Request, resp *http.Response, err error) error {
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return breaker.CountAs(err, breaker.Ignore)
		}
		// The caller canceled, perhaps with a cause (context.WithCancelCause), which the
		// transport may return instead of context.Canceled.
		if ctxErr := req.Context().Err(); errors.Is(ctxErr, context.Canceled) {
			return breaker.CountAs(ctxErr, breaker.Ignore)
		}
	}
	switch {
	case err == nil && resp != nil && t.refused(resp):
		refusal := ErrRefusedStatus
		if d, ok := retryAfterHint(resp); ok {
			refusal = breaker.RetryAfter(refusal, d)
		}
		return breaker.CountAs(refusal, breaker.Refused)
	case !t.failed(resp, err):
		return nil
	case err != nil:
		return err
	case t.hints:
		if d, ok := retryAfterHint(resp); ok {
			return breaker.RetryAfter(ErrFailureStatus, d)
		}
	}
	return ErrFailureStatus
}

// retryAfterHint reads the Retry-After header of a 503 or 429 response: whole seconds, or an
// HTTP date.
func retryAfterHint(resp *http.Response) (time.Duration, bool) {
	if resp == nil || resp.StatusCode != http.StatusServiceUnavailable && resp.StatusCode != http.StatusTooManyRequests {
		return 0, false
	}
	v := strings.TrimSpace(resp.Header.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 || secs > int64(math.MaxInt64/time.Second) {
			return 0, false
		}
		return time.Duration(secs) * time.Second, true
	}
	if at, err := http.ParseTime(v); err == nil && time.Until(at) > 0 {
		return time.Until(at), true
	}
	return 0, false
}

// CloseIdleConnections closes the idle connections of next, if it has any.
func (t *transport) CloseIdleConnections() {
	if c, ok := t.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// cancelOnClose returns body, made to call cancel once it is closed or read to its end (or to
// an error): the request's context must live until then, lest the body be cut off. A body
// that can be written to (the response to a protocol switch) stays one.
func cancelOnClose(body io.ReadCloser, cancel context.CancelFunc) io.ReadCloser {
	b := &cancelBody{ReadCloser: body, cancel: cancel}
	if w, ok := body.(io.Writer); ok {
		return &cancelReadWriteBody{cancelBody: b, w: w}
	}
	return b
}

// cancelBody calls cancel when the body is closed or read to an error, io.EOF included.
type cancelBody struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil {
		b.cancel()
	}
	return n, err
}

func (b *cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

// cancelReadWriteBody is a cancelBody that keeps the body's Write.
type cancelReadWriteBody struct {
	*cancelBody
	w io.Writer
}

func (b *cancelReadWriteBody) Write(p []byte) (int, error) { return b.w.Write(p) }
