package breakerhttp_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakerhttp"
	"github.com/halfopen/breaker/breakertest"
)

// doneContext is a context that is done before the request is made.
type doneContext struct {
	name string
	ctx  context.Context
}

// doneContexts are a context canceled and one past its deadline.
func doneContexts(t *testing.T) []doneContext {
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancelExpired := context.WithDeadline(context.Background(), time.Unix(0, 0))
	t.Cleanup(cancelExpired)
	return []doneContext{{"canceled", canceled}, {"past its deadline", expired}}
}

// guarded is a Manager in which a request that counted would show: resource has a rule that
// opens at the first failure and a MaxConcurrency of 1, a slot records the calls that exit,
// and a call observer what it hears.
type guarded struct {
	m        *breaker.Manager
	resource string
	exited   *calls
	heard    *heard
}

func newGuarded(t *testing.T, resource string) *guarded {
	t.Helper()
	g := &guarded{resource: resource, exited: &calls{}, heard: &heard{}}
	g.m = breaker.NewManager(breaker.WithClock(breakertest.NewClock()), breaker.WithSlots(g.exited),
		breaker.WithCallObserver(g.heard.OnCall))
	require.NoError(t, g.m.LoadRules([]breaker.Rule{tripOnFirstFailure(resource)}))
	require.NoError(t, g.m.LoadResources(map[string]breaker.ResourceConfig{resource: {MaxConcurrency: 1}}))
	return g
}

// assertNotACall checks that the Manager counted nothing for the resource, and that its call
// observer heard one call, not made because its context was done with err.
func (g *guarded) assertNotACall(t *testing.T, err error) {
	t.Helper()
	assert.Empty(t, g.exited.all(), "no call entered the slots")
	st := g.m.Breakers(g.resource)[0].Stats()
	assert.Equal(t, breaker.Closed, st.State)
	assert.Zero(t, st.Total, "nothing in the window")
	assert.Zero(t, inFlight(g.m, g.resource), "no MaxConcurrency place taken")
	assert.Equal(t, []breaker.CallInfo{{Resource: g.resource, NotCalled: err}}, g.heard.all())
}

// heard is a call observer that records every call it hears.
type heard struct {
	mu    sync.Mutex
	calls []breaker.CallInfo
}

func (h *heard) OnCall(c breaker.CallInfo) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls = append(h.calls, c)
}

func (h *heard) all() []breaker.CallInfo {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]breaker.CallInfo(nil), h.calls...)
}

// Given a request whose context is canceled, or past its deadline, when an http.Client sends
// it through the transport, then next is not called, the body is closed, the error is the
// context's (in the *url.Error of http.Client), not a block, and nothing counts it: a failing
// upstream would have opened the breaker, and the one MaxConcurrency place stays free for the
// next request, which is sent.
func TestTransportDoesNotSendARequestWhoseContextIsDone(t *testing.T) {
	for _, done := range doneContexts(t) {
		t.Run(done.name, func(t *testing.T) {
			g := newGuarded(t, "POST api:8080")
			sent := 0
			next := roundTripperFunc(func(req *http.Request) (*http.Response, error) {
				sent++
				return &http.Response{StatusCode: http.StatusInternalServerError, Body: http.NoBody, Request: req}, nil
			})
			client := &http.Client{Transport: breakerhttp.NewTransport(next, g.m)}
			body := &closeTracker{Reader: strings.NewReader("order")}
			req, err := http.NewRequestWithContext(done.ctx, http.MethodPost, "http://api:8080/orders", body)
			require.NoError(t, err)

			resp, err := client.Do(req)
			assert.Nil(t, resp)
			assert.ErrorIs(t, err, done.ctx.Err())
			var urlErr *url.Error
			assert.ErrorAs(t, err, &urlErr, "http.Client wraps the error")
			assert.NotErrorIs(t, err, breaker.ErrBlocked)
			assert.Zero(t, sent, "next was not called")
			assert.True(t, body.closed.Load(), "the body is closed")
			g.assertNotACall(t, done.ctx.Err())

			resp, err = client.Post("http://api:8080/orders", "text/plain", strings.NewReader("order"))
			require.NoError(t, err, "the breaker is CLOSED and the place free")
			assert.Equal(t, http.StatusInternalServerError, resp.StatusCode)
			assert.Equal(t, 1, sent)
		})
	}
}

// Given a request whose context was canceled, or passed its deadline, with a cause, then the
// transport returns the cause, as http.Transport does for such a request, and neither sends
// nor counts it.
func TestTransportGivesTheCauseOfAContextDoneBeforeSending(t *testing.T) {
	cause := errors.New("the user left")
	canceled, cancel := context.WithCancelCause(context.Background())
	cancel(cause)
	expired, cancelExpired := context.WithDeadlineCause(context.Background(), time.Unix(0, 0), cause)
	defer cancelExpired()
	for _, done := range []doneContext{{"canceled", canceled}, {"past its deadline", expired}} {
		t.Run(done.name, func(t *testing.T) {
			g := newGuarded(t, "GET api:8080")
			sent := 0
			next := roundTripperFunc(func(*http.Request) (*http.Response, error) {
				sent++
				return nil, errors.New("sent")
			})
			client := &http.Client{Transport: breakerhttp.NewTransport(next, g.m)}

			_, _, err := get(done.ctx, client, "http://api:8080/")
			assert.ErrorIs(t, err, cause)
			assert.Zero(t, sent, "next was not called")
			g.assertNotACall(t, done.ctx.Err())

			_, _, plainErr := get(done.ctx, &http.Client{Transport: &http.Transport{}}, "http://api:8080/")
			assert.ErrorIs(t, plainErr, cause, "as http.Transport returns it")
		})
	}
}

// Given a request whose context is canceled, or past its deadline, when it reaches the
// middleware, then it gets 503 Service Unavailable without Retry-After, the handler is not
// called, and nothing counts it: a failing handler would have opened the breaker, and the one
// MaxConcurrency place stays free for the next request, which the handler serves.
func TestMiddlewareDoesNotServeARequestWhoseContextIsDone(t *testing.T) {
	for _, done := range doneContexts(t) {
		t.Run(done.name, func(t *testing.T) {
			g := newGuarded(t, bare)
			var handled int
			h := breakerhttp.Middleware(g.m)(counting(statusHandler(http.StatusInternalServerError), &handled))

			resp := httptest.NewRecorder()
			h.ServeHTTP(resp, httptest.NewRequestWithContext(done.ctx, http.MethodGet, "/", nil))
			assert.Equal(t, http.StatusServiceUnavailable, resp.Code)
			assert.NotContains(t, resp.Header(), "Retry-After")
			assert.Equal(t, "Service Unavailable\n", resp.Body.String())
			assert.Zero(t, handled, "the handler was not called")
			g.assertNotACall(t, done.ctx.Err())

			assert.Equal(t, http.StatusInternalServerError, serve(h, "/").Code, "the breaker is CLOSED and the place free")
			assert.Equal(t, 1, handled)
		})
	}
}

// Given WithBlockedHandler, when a request whose context is done arrives, then the blocked
// handler is not called, since no *breaker.BlockError blocked it: the middleware answers 503
// itself, without Retry-After.
func TestMiddlewareDoesNotGiveARequestWhoseContextIsDoneToTheBlockedHandler(t *testing.T) {
	for _, done := range doneContexts(t) {
		t.Run(done.name, func(t *testing.T) {
			g := newGuarded(t, bare)
			var asked int
			mw := breakerhttp.Middleware(g.m, breakerhttp.WithBlockedHandler(
				func(w http.ResponseWriter, _ *http.Request, err *breaker.BlockError) {
					asked++
					w.WriteHeader(http.StatusTooManyRequests)
				}))
			var handled int
			h := mw(counting(ok, &handled))

			resp := httptest.NewRecorder()
			h.ServeHTTP(resp, httptest.NewRequestWithContext(done.ctx, http.MethodGet, "/", nil))
			assert.Equal(t, http.StatusServiceUnavailable, resp.Code)
			assert.NotContains(t, resp.Header(), "Retry-After")
			assert.Zero(t, asked, "the blocked handler was not called")
			assert.Zero(t, handled, "the handler was not called")
			g.assertNotACall(t, done.ctx.Err())
		})
	}
}

// inFlight is resource's calls admitted and not yet exited, as a Snapshot reads them.
func inFlight(m *breaker.Manager, resource string) int64 {
	snap := m.Snapshot()
	if r := snap.Resource(resource); r != nil {
		return r.InFlight
	}
	return 0
}
