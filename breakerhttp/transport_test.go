package breakerhttp_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakerhttp"
	"github.com/halfopen/breaker/breakerretry"
)

// upstream is a loopback server that answers every request with its current status and
// counts the requests it saw.
type upstream struct {
	*httptest.Server
	status     atomic.Int64
	hits       atomic.Int64
	retryAfter string // the Retry-After header of every answer; "": none. Set before the first request.
}

func newUpstream(t *testing.T, status int) *upstream {
	t.Helper()
	u := &upstream{}
	u.status.Store(int64(status))
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.hits.Add(1)
		status := int(u.status.Load())
		if u.retryAfter != "" {
			w.Header().Set("Retry-After", u.retryAfter)
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, "status "+strconv.Itoa(status))
	}))
	t.Cleanup(u.Close)
	return u
}

// resource is the default client resource of a GET to the server.
func (u *upstream) resource() string { return "GET " + u.Listener.Addr().String() }

// client returns an http.Client whose transport goes through m.
func (u *upstream) client(m *breaker.Manager, opts ...breakerhttp.Option) *http.Client {
	return &http.Client{Transport: breakerhttp.NewTransport(u.Client().Transport, m, opts...)}
}

// get sends a GET to the server and reads the whole body.
func get(ctx context.Context, c *http.Client, url string) (*http.Response, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, "", err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp, string(body), err
}

// Given a server answering a status, when a request goes through the transport, then the
// response reaches the caller unchanged and a 5xx, only, counts as a failure.
func TestTransportCountsStatus(t *testing.T) {
	tests := []struct {
		name        string
		give        int
		retryAfter  string
		wantErr     error // what the call recorded
		wantOutcome breaker.Outcome
		wantState   breaker.State
	}{
		{name: "200", give: http.StatusOK, wantState: breaker.Closed},
		{name: "404", give: http.StatusNotFound, wantState: breaker.Closed},
		{name: "429", give: http.StatusTooManyRequests, wantErr: breakerhttp.ErrRefusedStatus, wantOutcome: breaker.Refused,
			wantState: breaker.Open},
		{name: "429 with Retry-After", give: http.StatusTooManyRequests, retryAfter: "1",
			wantErr: breakerhttp.ErrRefusedStatus, wantOutcome: breaker.Refused, wantState: breaker.Open},
		{name: "500", give: http.StatusInternalServerError, wantErr: breakerhttp.ErrFailureStatus, wantOutcome: breaker.Failure,
			wantState: breaker.Open},
		{name: "503", give: http.StatusServiceUnavailable, wantErr: breakerhttp.ErrFailureStatus, wantOutcome: breaker.Failure,
			wantState: breaker.Open},
		{name: "503 with Retry-After", give: http.StatusServiceUnavailable, retryAfter: "2",
			wantErr: breakerhttp.ErrRefusedStatus, wantOutcome: breaker.Refused, wantState: breaker.Open},
		{name: "503 with a Retry-After that says nothing", give: http.StatusServiceUnavailable, retryAfter: "soon",
			wantErr: breakerhttp.ErrFailureStatus, wantOutcome: breaker.Failure, wantState: breaker.Open},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newUpstream(t, tt.give)
			srv.retryAfter = tt.retryAfter
			m, _, rec := newManager(t, tripOnFirstFailure(srv.resource()))

			resp, body, err := get(context.Background(), srv.client(m), srv.URL+"/orders/7")
			require.NoError(t, err)
			assert.Equal(t, tt.give, resp.StatusCode)
			assert.Equal(t, "status "+strconv.Itoa(tt.give), body)

			got := rec.only(t)
			assert.Equal(t, srv.resource(), got.resource)
			if tt.wantErr == nil {
				assert.NoError(t, got.err)
			} else {
				assert.ErrorIs(t, got.err, tt.wantErr)
				outcome, marked := breaker.CountedAs(got.err)
				assert.Equal(t, tt.wantOutcome == breaker.Refused, marked, "a refusal, and only a refusal, is marked")
				if marked {
					assert.Equal(t, tt.wantOutcome, outcome)
				}
			}
			assert.Equal(t, tt.wantState, state(t, m, srv.resource()))
		})
	}
}

// Given WithClientRefusal, then the transport refuses what it says, and leaves the rest to
// the failure decision: a 429 can be a failure again, and a 502 a refusal.
func TestTransportClientRefusal(t *testing.T) {
	never := breakerhttp.WithClientRefusal(func(*http.Response) bool { return false })
	badGateway := breakerhttp.WithClientRefusal(func(r *http.Response) bool { return r.StatusCode == http.StatusBadGateway })
	failOn429 := breakerhttp.WithClientFailure(func(r *http.Response, err error) bool {
		return err != nil || r.StatusCode == http.StatusTooManyRequests || r.StatusCode >= 500
	})
	tests := []struct {
		name string
		give int
		opts []breakerhttp.Option
		want breaker.Outcome
	}{
		{"429 a failure", http.StatusTooManyRequests, []breakerhttp.Option{never, failOn429}, breaker.Failure},
		{"429 a success", http.StatusTooManyRequests, []breakerhttp.Option{never}, breaker.Success},
		{"502 refused", http.StatusBadGateway, []breakerhttp.Option{badGateway}, breaker.Refused},
		{"429 then not refused", http.StatusTooManyRequests, []breakerhttp.Option{badGateway}, breaker.Success},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newUpstream(t, tt.give)
			m, _, rec := newManager(t)
			c := &http.Client{Transport: breakerhttp.NewTransport(srv.Client().Transport, m, tt.opts...)}
			_, _, err := get(context.Background(), c, srv.URL)
			require.NoError(t, err)
			got := rec.only(t).err
			outcome, marked := breaker.CountedAs(got)
			switch tt.want {
			case breaker.Success:
				assert.NoError(t, got)
			case breaker.Failure:
				assert.ErrorIs(t, got, breakerhttp.ErrFailureStatus)
				assert.False(t, marked)
			case breaker.Refused:
				assert.ErrorIs(t, got, breakerhttp.ErrRefusedStatus)
				assert.Equal(t, breaker.Refused, outcome)
			}
		})
	}
}

// The default resource is the method and the host with its port; an empty method is GET.
func TestTransportDefaultResource(t *testing.T) {
	srv := newUpstream(t, http.StatusOK)
	m, _, rec := newManager(t)
	rt := breakerhttp.NewTransport(srv.Client().Transport, m)
	u, err := url.Parse(srv.URL + "/orders?id=7")
	require.NoError(t, err)

	for _, method := range []string{http.MethodPost, http.MethodDelete, ""} {
		resp, err := rt.RoundTrip(&http.Request{Method: method, URL: u, Header: http.Header{}})
		require.NoError(t, err, "method %q", method)
		require.NoError(t, resp.Body.Close())
	}
	host := u.Host
	assert.Equal(t, []call{{"POST " + host, nil}, {"DELETE " + host, nil}, {"GET " + host, nil}}, rec.all())
}

// Given requests with methods the caller passes on from elsewhere (a reverse proxy forwards
// its clients'), then every method outside net/http's nine is the one name
// breakerhttp.OtherMethod: a remote client cannot make resources by inventing methods.
func TestTransportOtherMethodsAreOneResource(t *testing.T) {
	m, _, rec := newManager(t)
	rt := breakerhttp.NewTransport(roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: req}, nil
	}), m)
	u, err := url.Parse("http://api:8080/")
	require.NoError(t, err)

	const n = 20
	for i := range n {
		_, err := rt.RoundTrip(&http.Request{Method: fmt.Sprintf("M%d", i), URL: u, Header: http.Header{}})
		require.NoError(t, err)
	}
	standard := []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace}
	for _, method := range append(standard, "get", "PROPFIND") {
		_, err := rt.RoundTrip(&http.Request{Method: method, URL: u, Header: http.Header{}})
		require.NoError(t, err)
	}

	names := map[string]int{}
	for _, c := range rec.all() {
		names[c.resource]++
	}
	want := map[string]int{breakerhttp.OtherMethod + " api:8080": n + 2}
	for _, method := range standard {
		want[method+" api:8080"] = 1
	}
	assert.Equal(t, want, names)
}

// Given an upstream that redirects each request to a host of its choosing, when an
// http.Client follows the redirects, then every hop is a call of the resource of the request
// the program made: the upstream cannot make resources by naming hosts.
func TestTransportRedirectKeepsTheFirstResource(t *testing.T) {
	t.Run("hosts the upstream names", func(t *testing.T) {
		m, _, rec := newManager(t)
		var hop int
		next := roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			if req.URL.Host != "api:8080" {
				return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}, nil
			}
			hop++
			header := http.Header{"Location": {fmt.Sprintf("http://victim%d.example/", hop)}}
			// No Request: a RoundTripper need not set it.
			return &http.Response{StatusCode: http.StatusSeeOther, Header: header, Body: http.NoBody}, nil
		})
		client := &http.Client{Transport: breakerhttp.NewTransport(next, m)}

		const n = 20
		for range n {
			resp, err := client.Post("http://api:8080/orders", "text/plain", strings.NewReader("order"))
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, resp.StatusCode)
			require.NoError(t, resp.Body.Close())
		}
		names := map[string]int{}
		for _, c := range rec.all() {
			names[c.resource]++
		}
		assert.Equal(t, map[string]int{"POST api:8080": 2 * n}, names, "the POST and the GET it was turned into")
	})
	t.Run("over loopback", func(t *testing.T) {
		target := newUpstream(t, http.StatusOK)
		srv := httptest.NewServer(http.RedirectHandler(target.URL, http.StatusFound))
		t.Cleanup(srv.Close)
		m, _, rec := newManager(t)
		client := &http.Client{Transport: breakerhttp.NewTransport(srv.Client().Transport, m)}

		resp, _, err := get(context.Background(), client, srv.URL)
		require.NoError(t, err)
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		assert.EqualValues(t, 1, target.hits.Load())
		first := "GET " + srv.Listener.Addr().String()
		assert.Equal(t, []call{{first, nil}, {first, nil}}, rec.all())
	})
}

// Given a server that is gone, then the transport error is the call's failure.
func TestTransportErrorIsFailure(t *testing.T) {
	srv := newUpstream(t, http.StatusOK)
	m, _, rec := newManager(t, tripOnFirstFailure(srv.resource()))
	client := srv.client(m)
	srv.Close() // nothing listens on its port any more

	_, _, err := get(context.Background(), client, srv.URL)
	require.Error(t, err)

	got := rec.only(t)
	assert.Error(t, got.err)
	assert.NotErrorIs(t, got.err, breakerhttp.ErrFailureStatus)
	assert.Equal(t, breaker.Open, state(t, m, srv.resource()))
}

// Given an OPEN breaker, when a request is made, then it fails with the *BlockError without
// reaching the server, and its body is closed; once the retry time has come, a healthy
// server closes the breaker again.
func TestTransportBlocked(t *testing.T) {
	srv := newUpstream(t, http.StatusInternalServerError)
	m, clk, _ := newManager(t, tripOnFirstFailure(srv.resource()))
	client := srv.client(m)
	_, _, err := get(context.Background(), client, srv.URL)
	require.NoError(t, err)
	require.Equal(t, breaker.Open, state(t, m, srv.resource()))
	require.EqualValues(t, 1, srv.hits.Load())

	body := &closeTracker{Reader: strings.NewReader("order")}
	req, err := http.NewRequest(http.MethodGet, srv.URL+"/orders", body)
	require.NoError(t, err)
	resp, err := client.Do(req)
	assert.Nil(t, resp)
	assert.ErrorIs(t, err, breaker.ErrOpen)
	assert.ErrorIs(t, err, breaker.ErrBlocked)
	var urlErr *url.Error
	assert.ErrorAs(t, err, &urlErr, "http.Client wraps the error")
	var blocked *breaker.BlockError
	require.ErrorAs(t, err, &blocked)
	assert.Equal(t, srv.resource(), blocked.Resource)
	assert.Equal(t, breaker.Open, blocked.State)
	assert.Equal(t, srv.resource(), blocked.Rule.Resource)
	assert.Equal(t, retryTimeout, blocked.RetryAt.Sub(m.Now()))

	assert.EqualValues(t, 1, srv.hits.Load(), "the server saw no blocked request")
	assert.True(t, body.closed.Load(), "the blocked request's body is closed")

	srv.status.Store(http.StatusOK)
	clk.Advance(retryTimeout)
	resp, _, err = get(context.Background(), client, srv.URL)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, breaker.Closed, state(t, m, srv.resource()), "the probe succeeded")
	assert.EqualValues(t, 2, srv.hits.Load())
}

type closeTracker struct {
	io.Reader
	closed atomic.Bool
}

func (c *closeTracker) Close() error {
	c.closed.Store(true)
	return nil
}

// WithResource replaces the resource name.
func TestTransportWithResource(t *testing.T) {
	srv := newUpstream(t, http.StatusInternalServerError)
	m, _, rec := newManager(t, tripOnFirstFailure("orders"))
	client := srv.client(m, breakerhttp.WithResource(func(req *http.Request) string {
		return strings.Split(req.URL.Path, "/")[1]
	}))

	_, _, err := get(context.Background(), client, srv.URL+"/orders/7")
	require.NoError(t, err)
	assert.Equal(t, call{"orders", breakerhttp.ErrFailureStatus}, rec.only(t))
	assert.Equal(t, breaker.Open, state(t, m, "orders"))
}

// WithClientFailure replaces the failure decision.
func TestTransportWithClientFailure(t *testing.T) {
	tooMany := func(resp *http.Response, err error) bool {
		return err != nil || resp.StatusCode == http.StatusTooManyRequests
	}
	tests := []struct {
		give      int
		wantState breaker.State
	}{
		{give: http.StatusTooManyRequests, wantState: breaker.Open},
		{give: http.StatusInternalServerError, wantState: breaker.Closed},
	}
	for _, tt := range tests {
		t.Run(strconv.Itoa(tt.give), func(t *testing.T) {
			srv := newUpstream(t, tt.give)
			m, _, _ := newManager(t, tripOnFirstFailure(srv.resource()))

			resp, _, err := get(context.Background(), srv.client(m, breakerhttp.WithClientFailure(tooMany)), srv.URL)
			require.NoError(t, err)
			assert.Equal(t, tt.give, resp.StatusCode)
			assert.Equal(t, tt.wantState, state(t, m, srv.resource()))
		})
	}
}

// A request its caller cancels while it waits for the response counts neither way, and the
// failure function is not asked; a request whose deadline passes while it waits is a failure.
// (A request whose context is done before it is sent is not a call: see context_test.go.)
func TestTransportCanceled(t *testing.T) {
	cause := errors.New("the user left")
	// waitForCancel is a server that makes the request's context done, by cancel, and waits
	// until the client closes the connection.
	waitForCancel := func(cancel func()) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			cancel()
			select {
			case <-r.Context().Done(): // the client closed the connection
			case <-time.After(10 * time.Second):
			}
		}
	}
	tests := []struct {
		name      string
		ctx       func() (context.Context, func()) // the request's context, and what makes it done
		wantErr   error                            // what the caller gets
		wantCall  error                            // what the call recorded: the core ignores context.Canceled
		wantState breaker.State
		wantAsked bool // the failure function was asked
	}{
		{
			name: "canceled while waiting for the response",
			ctx: func() (context.Context, func()) {
				return context.WithCancel(context.Background())
			},
			wantErr:   context.Canceled,
			wantCall:  context.Canceled,
			wantState: breaker.Closed,
		},
		{
			name: "canceled with a cause while waiting for the response",
			ctx: func() (context.Context, func()) {
				ctx, cancel := context.WithCancelCause(context.Background())
				return ctx, func() { cancel(cause) }
			},
			wantErr:   cause,
			wantCall:  context.Canceled,
			wantState: breaker.Closed,
		},
		{
			name: "past its deadline while waiting for the response",
			ctx: func() (context.Context, func()) {
				ctx := newExpiring()
				return ctx, ctx.expire
			},
			wantErr:   context.DeadlineExceeded,
			wantCall:  context.DeadlineExceeded,
			wantState: breaker.Open,
			wantAsked: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, done := tt.ctx()
			defer done()
			srv := httptest.NewServer(waitForCancel(done))
			defer srv.Close()
			resource := "GET " + srv.Listener.Addr().String()
			m, _, rec := newManager(t, tripOnFirstFailure(resource))
			asked := false
			failed := func(resp *http.Response, err error) bool {
				asked = true
				return err != nil || resp.StatusCode >= 500
			}
			client := &http.Client{Transport: breakerhttp.NewTransport(srv.Client().Transport, m,
				breakerhttp.WithClientFailure(failed))}

			_, _, err := get(ctx, client, srv.URL)
			assert.ErrorIs(t, err, tt.wantErr)
			assert.ErrorIs(t, rec.only(t).err, tt.wantCall)
			assert.Equal(t, tt.wantState, state(t, m, resource))
			assert.Equal(t, tt.wantAsked, asked, "the failure function was asked")
		})
	}
}

// roundTripFunc is a RoundTripper made of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// Given a request whose caller cancels it, when the next RoundTripper answers with an error of
// its own that does not wrap context.Canceled, then the call counts neither way, even under a
// Classifier that counts every error as a failure.
func TestTransportCanceledWithAnErrorOfItsOwn(t *testing.T) {
	errOwn := errors.New("connection torn down")
	m := breaker.NewManager(breaker.WithClassifier(func(error) breaker.Outcome { return breaker.Failure }))
	require.NoError(t, m.LoadRules([]breaker.Rule{tripOnFirstFailure("GET api:8080")}))
	ctx, cancel := context.WithCancel(context.Background())
	next := roundTripFunc(func(*http.Request) (*http.Response, error) { cancel(); return nil, errOwn })
	client := &http.Client{Transport: breakerhttp.NewTransport(next, m)}
	_, _, err := get(ctx, client, "http://api:8080/x")
	assert.ErrorIs(t, err, errOwn, "the caller gets the error as it was")
	assert.Equal(t, breaker.Closed, state(t, m, "GET api:8080"))
	assert.Zero(t, m.Breakers("GET api:8080")[0].Stats().Total)
}

// Given a breakerretry loop around a function whose HTTP client goes through NewTransport on the same
// Manager and resource, when the breaker has tripped, then the loop's first attempt after the
// retry time takes the probe, the transport's call made with that attempt's context passes as
// part of it and reaches the server, and the breaker recovers. (Calls nested so were rejected
// for their own probe, and the loop went round without the server ever called again.)
func TestRetryAroundTheTransportRecovers(t *testing.T) {
	var served atomic.Int64
	fails := atomic.Bool{}
	fails.Store(true)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		served.Add(1)
		if fails.Load() {
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	defer srv.Close()
	resource := "GET " + srv.Listener.Addr().String()
	m, clk, _ := newManager(t, tripOnFirstFailure(resource))
	client := &http.Client{Transport: breakerhttp.NewTransport(srv.Client().Transport, m)}
	push := func(ctx context.Context) error {
		resp, _, err := get(ctx, client, srv.URL)
		if err == nil && resp.StatusCode >= 500 {
			return breakerhttp.ErrFailureStatus
		}
		return err
	}
	_ = push(context.Background())
	require.Equal(t, breaker.Open, state(t, m, resource))
	fails.Store(false) // the server is back

	retry := breakerretry.Policy{Attempts: 5, Sleep: func(_ context.Context, d time.Duration) error {
		clk.Advance(d)
		return nil
	}}
	require.NoError(t, retry.Do(context.Background(), m, resource, push))
	assert.Equal(t, int64(2), served.Load(), "the failure, then the probe's nested request")
	assert.Equal(t, breaker.Closed, state(t, m, resource))
}

// expiring is a context whose deadline passes when expire is called, not by the clock: a
// deadline that passes while the request is in flight, without waiting for it.
type expiring struct {
	context.Context
	done chan struct{}
	once sync.Once
}

func newExpiring() *expiring {
	return &expiring{Context: context.Background(), done: make(chan struct{})}
}

func (c *expiring) expire() { c.once.Do(func() { close(c.done) }) }

func (c *expiring) Done() <-chan struct{} { return c.done }

func (c *expiring) Err() error {
	select {
	case <-c.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}

// Given a next RoundTripper that panics, then the call fails and the panic goes on up.
func TestTransportPanic(t *testing.T) {
	m, _, rec := newManager(t, tripOnFirstFailure("GET api:8080"))
	rt := breakerhttp.NewTransport(roundTripperFunc(func(*http.Request) (*http.Response, error) {
		panic("transport bug")
	}), m)
	req, err := http.NewRequest(http.MethodGet, "http://api:8080/", nil)
	require.NoError(t, err)

	assert.PanicsWithValue(t, "transport bug", func() { _, _ = rt.RoundTrip(req) })
	assert.Equal(t, call{"GET api:8080", breaker.ErrPanicked}, rec.only(t))
	assert.Equal(t, breaker.Open, state(t, m, "GET api:8080"))
}

// A nil next RoundTripper is http.DefaultTransport; a nil manager is breaker.Default().
func TestTransportDefaults(t *testing.T) {
	srv := newUpstream(t, http.StatusOK) // its Close closes the idle connections of DefaultTransport
	client := &http.Client{Transport: breakerhttp.NewTransport(nil, nil)}

	resp, body, err := get(context.Background(), client, srv.URL)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "status 200", body)
}

// http.Client.CloseIdleConnections reaches the next RoundTripper.
func TestTransportCloseIdleConnections(t *testing.T) {
	next := &idleCloser{}
	client := &http.Client{Transport: breakerhttp.NewTransport(next, breaker.NewManager())}
	client.CloseIdleConnections()
	assert.Equal(t, 1, next.closed)
}

type idleCloser struct {
	http.RoundTripper
	closed int
}

func (c *idleCloser) CloseIdleConnections() { c.closed++ }

// Given an upstream answering 503 with Retry-After 30, a refusal, then the request that trips
// the breaker holds it OPEN 30s, within MaxRetryTimeout; a failure does so only with
// WithRetryAfterHints, and a 500 never.
func TestTransportRetryAfterHints(t *testing.T) {
	tests := []struct {
		name   string
		status int
		header string
		opts   []breakerhttp.Option
		want   time.Duration
	}{
		{"hint taken", http.StatusServiceUnavailable, "30", []breakerhttp.Option{breakerhttp.WithRetryAfterHints()}, 30 * time.Second},
		{"429 too", http.StatusTooManyRequests, "30", []breakerhttp.Option{breakerhttp.WithRetryAfterHints(),
			breakerhttp.WithClientFailure(func(resp *http.Response, err error) bool { return err != nil || resp.StatusCode >= 429 })}, 30 * time.Second},
		{"capped", http.StatusServiceUnavailable, "86400", []breakerhttp.Option{breakerhttp.WithRetryAfterHints()}, time.Minute},
		{"a refusal's hint without the option", http.StatusServiceUnavailable, "30", nil, 30 * time.Second},
		{"a failure's hint is off by default", http.StatusServiceUnavailable, "30",
			[]breakerhttp.Option{breakerhttp.WithClientRefusal(func(*http.Response) bool { return false })}, time.Second},
		{"not for a 500", http.StatusInternalServerError, "30", []breakerhttp.Option{breakerhttp.WithRetryAfterHints()}, time.Second},
		{"not a number", http.StatusServiceUnavailable, "soon", []breakerhttp.Option{breakerhttp.WithRetryAfterHints()}, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Retry-After", tt.header)
				w.WriteHeader(tt.status)
			}))
			t.Cleanup(srv.Close)
			rule := breaker.Rule{Resource: "GET " + srv.Listener.Addr().String(), Strategy: breaker.ErrorCount,
				Threshold: 1, MinRequestAmount: 1, RetryTimeout: time.Second, MaxRetryTimeout: time.Minute}
			m, clk, _ := newManager(t, rule)
			c := &http.Client{Transport: breakerhttp.NewTransport(srv.Client().Transport, m, tt.opts...)}
			resp, _, err := get(context.Background(), c, srv.URL)
			require.NoError(t, err)
			require.Equal(t, tt.status, resp.StatusCode)
			st := m.Breakers(rule.Resource)[0].Stats()
			require.Equal(t, breaker.Open, st.State)
			assert.Equal(t, clk.Now().Add(tt.want), st.RetryAt)
		})
	}
}

// One template rule "*" gives every host a transport calls its own breaker: a failing host
// trips its own, and the healthy one goes on being called.
func TestTransportTemplateProtectsEveryHost(t *testing.T) {
	bad, good := newUpstream(t, http.StatusInternalServerError), newUpstream(t, http.StatusOK)
	m := breaker.NewManager()
	require.NoError(t, m.LoadRules([]breaker.Rule{{Resource: "*", Strategy: breaker.ErrorCount, Threshold: 3,
		RetryTimeout: time.Hour}}))
	upstreams := &http.Transport{}
	t.Cleanup(upstreams.CloseIdleConnections)
	client := &http.Client{Transport: breakerhttp.NewTransport(upstreams, m)}
	ctx := context.Background()

	for range 3 {
		resp, _, err := get(ctx, client, bad.URL)
		require.NoError(t, err)
		assert.Equal(t, http.StatusInternalServerError, resp.StatusCode)
	}
	_, _, err := get(ctx, client, bad.URL)
	var be *breaker.BlockError
	require.ErrorAs(t, err, &be)
	assert.Equal(t, bad.resource(), be.Resource)
	assert.Equal(t, "*", be.Rule.Resource)
	assert.Equal(t, int64(3), bad.hits.Load(), "the blocked request never reached the host")

	for range 5 {
		resp, _, err := get(ctx, client, good.URL)
		require.NoError(t, err)
		assert.Equal(t, http.StatusOK, resp.StatusCode)
	}
	assert.Equal(t, int64(5), good.hits.Load())
	assert.ElementsMatch(t, []string{bad.resource(), good.resource()}, templateNames(m))
	assert.Equal(t, breaker.Open, m.Breakers(bad.resource())[0].State())
	assert.Equal(t, breaker.Closed, m.Breakers(good.resource())[0].State())
}

// templateNames returns the names that template rules made breakers for, as a Snapshot lists
// them, in order.
func templateNames(m *breaker.Manager) []string {
	var names []string
	for _, r := range m.Snapshot().Resources {
		if r.Template != "" {
			names = append(names, r.Name)
		}
	}
	return names
}
