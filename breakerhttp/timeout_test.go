package breakerhttp_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakerhttp"
)

// timeout is the resource Timeout of the tests: short, since it is real time.
const timeout = 20 * time.Millisecond

// tripOnErrors is an ErrorRatio rule for resource that opens after three calls that all failed.
func tripOnErrors(resource string) breaker.Rule {
	return breaker.Rule{
		Resource:         resource,
		Strategy:         breaker.ErrorRatio,
		Threshold:        1,
		MinRequestAmount: 3,
		RetryTimeout:     retryTimeout,
	}
}

// withTimeout gives resource a Timeout of d in m.
func withTimeout(t *testing.T, m *breaker.Manager, resource string, d time.Duration) {
	t.Helper()
	require.NoError(t, m.LoadResources(map[string]breaker.ResourceConfig{resource: {Timeout: d}}))
}

// hang waits until the request's context is done.
var hang = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })

// Given a resource with a Timeout and a handler that hangs until its context is done, then each
// request returns at the deadline with 503 and fails, and the third trips the ErrorRatio rule.
func TestMiddlewareTimeout(t *testing.T) {
	m, _, rec := newManager(t, tripOnErrors(bare))
	withTimeout(t, m, bare, timeout)
	var handled int
	h := breakerhttp.Middleware(m)(counting(hang, &handled))

	// The request's own deadline is a backstop, for the test to end if the Timeout were lost.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for range 3 {
		start := time.Now()
		resp := httptest.NewRecorder()
		h.ServeHTTP(resp, httptest.NewRequestWithContext(ctx, http.MethodGet, "/", nil))
		assert.Equal(t, http.StatusServiceUnavailable, resp.Code)
		assert.GreaterOrEqual(t, time.Since(start), timeout)
	}
	for _, c := range rec.all() {
		assert.ErrorIs(t, c.err, context.DeadlineExceeded)
	}
	assert.Equal(t, breaker.Open, state(t, m, bare))

	resp := httptest.NewRecorder()
	h.ServeHTTP(resp, httptest.NewRequestWithContext(ctx, http.MethodGet, "/", nil))
	assert.Equal(t, http.StatusServiceUnavailable, resp.Code)
	assert.Equal(t, "10", resp.Header().Get("Retry-After"))
	assert.Equal(t, 3, handled, "the open breaker kept the fourth from the handler")
}

// Given a resource with a Timeout, the handler's context has a deadline no later than the
// request's own, and it is canceled once the handler returns; a handler that answers in time
// keeps its answer and succeeds. Without a Timeout the request is passed on as it is.
func TestMiddlewareTimeoutContext(t *testing.T) {
	m, _, rec := newManager(t)
	var got context.Context
	var gotReq *http.Request
	h := breakerhttp.Middleware(m)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, gotReq = r.Context(), r
		assert.NoError(t, r.Context().Err())
		_, _ = io.WriteString(w, "ok")
	}))

	t.Run("no timeout", func(t *testing.T) {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		h.ServeHTTP(httptest.NewRecorder(), req)
		assert.Same(t, req, gotReq)
	})
	t.Run("timeout", func(t *testing.T) {
		withTimeout(t, m, bare, time.Hour)
		resp := serve(h, "/")
		assert.Equal(t, "ok", resp.Body.String())
		deadline, ok := got.Deadline()
		require.True(t, ok)
		assert.WithinDuration(t, time.Now().Add(time.Hour), deadline, time.Minute)
		assert.ErrorIs(t, got.Err(), context.Canceled, "canceled when the handler returned")
	})
	t.Run("the request's own deadline is earlier", func(t *testing.T) {
		withTimeout(t, m, bare, time.Hour)
		want := time.Now().Add(time.Minute)
		ctx, cancel := context.WithDeadline(context.Background(), want)
		defer cancel()
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequestWithContext(ctx, http.MethodGet, "/", nil))
		deadline, _ := got.Deadline()
		assert.Equal(t, want, deadline)
	})
	for _, c := range rec.all() {
		assert.NoError(t, c.err)
	}
}

// Given a resource with a Timeout and a server that hangs until the client leaves, then each
// request fails at the deadline with context.DeadlineExceeded, and the third trips the rule:
// the fourth is rejected, not sent.
func TestTransportTimeout(t *testing.T) {
	u := newHanging(t)
	m, _, rec := newManager(t, tripOnErrors(u.resource()))
	withTimeout(t, m, u.resource(), timeout)
	client := u.client(m)
	// The request's own deadline is a backstop, for the test to end if the Timeout were lost.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	for range 3 {
		start := time.Now()
		_, _, err := get(ctx, client, u.URL)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.GreaterOrEqual(t, time.Since(start), timeout)
	}
	for _, c := range rec.all() {
		assert.ErrorIs(t, c.err, context.DeadlineExceeded)
	}
	assert.Equal(t, breaker.Open, state(t, m, u.resource()))

	_, _, err := get(context.Background(), client, u.URL)
	assert.ErrorIs(t, err, breaker.ErrOpen, "rejected, so not sent")
	// A request the client gave up on may not have reached the handler yet (on a loaded
	// machine, not at all): the server saw at most the three.
	assert.LessOrEqual(t, u.hits.Load(), int64(3))
}

// newHanging returns an upstream whose handler hangs until the client leaves.
func newHanging(t *testing.T) *upstream {
	t.Helper()
	u := &upstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.hits.Add(1)
		<-r.Context().Done()
	}))
	t.Cleanup(u.Close)
	return u
}

// Given a resource with a Timeout, when the response has arrived, then its body can still be
// read after RoundTrip returned: the request's context is canceled only once the body is read
// to its end or closed.
func TestTransportTimeoutKeepsBody(t *testing.T) {
	var more chan struct{} // closed to let the handler finish; a new one for each request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "head ")
		_ = http.NewResponseController(w).Flush()
		select {
		case <-more:
			_, _ = io.WriteString(w, "tail")
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	resource := "GET " + srv.Listener.Addr().String()
	m, _, rec := newManager(t)
	withTimeout(t, m, resource, time.Hour)
	var sent context.Context
	next := roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		sent = req.Context()
		return srv.Client().Transport.RoundTrip(req)
	})
	client := &http.Client{Transport: breakerhttp.NewTransport(next, m)}

	for _, end := range []string{"read", "close"} {
		t.Run(end, func(t *testing.T) {
			more = make(chan struct{})
			resp, err := client.Get(srv.URL)
			require.NoError(t, err)
			defer resp.Body.Close()
			close(more)
			deadline, ok := sent.Deadline()
			require.True(t, ok, "the request was sent with the Timeout")
			assert.WithinDuration(t, time.Now().Add(time.Hour), deadline, time.Minute)
			assert.NoError(t, sent.Err(), "the context outlives RoundTrip")
			if end == "read" {
				body, err := io.ReadAll(resp.Body)
				require.NoError(t, err)
				assert.Equal(t, "head tail", string(body))
			}
			assert.NoError(t, resp.Body.Close())
			assert.ErrorIs(t, sent.Err(), context.Canceled, "canceled once the body is done")
		})
	}
	for _, c := range rec.all() {
		assert.NoError(t, c.err)
	}
}
