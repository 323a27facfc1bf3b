package breakerhttp_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakerhttp"
	"github.com/halfopen/breaker/breakertest"
)

// serve sends a GET for target to h, in process, and returns the recorded response.
func serve(h http.Handler, target string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
	return rec
}

// bare is the resource of a request to a handler outside any ServeMux.
const bare = breakerhttp.UnmatchedResource

// ok answers 200 "ok".
var ok = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	_, _ = io.WriteString(w, "ok")
})

// The resource is ServerPrefix and the ServeMux pattern when there is one, else
// UnmatchedResource.
func TestMiddlewareResource(t *testing.T) {
	tests := []struct {
		name string
		give func(mw func(http.Handler) http.Handler) http.Handler
		path string
		want string
	}{
		{
			name: "inside a ServeMux",
			give: func(mw func(http.Handler) http.Handler) http.Handler {
				mux := http.NewServeMux()
				mux.Handle("GET /orders/{id}", mw(ok))
				return mux
			},
			path: "/orders/7",
			want: "@server GET /orders/{id}",
		},
		{
			name: "inside a ServeMux, a pattern without a method",
			give: func(mw func(http.Handler) http.Handler) http.Handler {
				mux := http.NewServeMux()
				mux.Handle("/static/", mw(ok))
				return mux
			},
			path: "/static/app.css",
			want: "@server /static/",
		},
		{
			name: "around a ServeMux",
			give: func(mw func(http.Handler) http.Handler) http.Handler {
				mux := http.NewServeMux()
				mux.Handle("GET /orders/{id}", ok)
				return mw(mux)
			},
			path: "/orders/7",
			want: "@server GET /orders/{id}",
		},
		{
			name: "around a ServeMux, no route",
			give: func(mw func(http.Handler) http.Handler) http.Handler {
				mux := http.NewServeMux()
				mux.Handle("GET /orders/{id}", ok)
				return mw(mux)
			},
			path: "/customers/3",
			want: breakerhttp.UnmatchedResource,
		},
		{
			name: "around a ServeMux inside a ServeMux",
			give: func(mw func(http.Handler) http.Handler) http.Handler {
				inner := http.NewServeMux()
				inner.Handle("GET /api/orders/{id}", ok)
				outer := http.NewServeMux()
				outer.Handle("/api/", mw(inner))
				return outer
			},
			path: "/api/orders/7",
			want: "@server GET /api/orders/{id}",
		},
		{
			name: "no ServeMux",
			give: func(mw func(http.Handler) http.Handler) http.Handler { return mw(ok) },
			path: "/orders/7?full=1",
			want: breakerhttp.UnmatchedResource,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, _, rec := newManager(t)
			resp := serve(tt.give(breakerhttp.Middleware(m)), tt.path)
			assert.Equal(t, tt.want, rec.only(t).resource)
			assert.NotEqual(t, http.StatusServiceUnavailable, resp.Code)
		})
	}
}

// Given a handler that answers a status, or panics, then a 5xx or the panic, only, count as
// failures.
func TestMiddlewareCountsOutcome(t *testing.T) {
	tests := []struct {
		name      string
		give      http.HandlerFunc
		wantErr   error // what the call recorded
		wantState breaker.State
	}{
		{
			name:      "writes nothing",
			give:      func(http.ResponseWriter, *http.Request) {},
			wantState: breaker.Closed,
		},
		{
			name:      "writes a body",
			give:      ok,
			wantState: breaker.Closed,
		},
		{
			name:      "404",
			give:      http.NotFound,
			wantState: breaker.Closed,
		},
		{
			name:      "500",
			give:      func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusInternalServerError) },
			wantErr:   breakerhttp.ErrFailureStatus,
			wantState: breaker.Open,
		},
		{
			name: "503 with a body",
			give: func(w http.ResponseWriter, _ *http.Request) {
				http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
			},
			wantErr:   breakerhttp.ErrFailureStatus,
			wantState: breaker.Open,
		},
		{
			name: "103 Early Hints, then 500",
			give: func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(http.StatusEarlyHints)
				w.WriteHeader(http.StatusInternalServerError)
			},
			wantErr:   breakerhttp.ErrFailureStatus,
			wantState: breaker.Open,
		},
		{
			name: "a body, then a superfluous 500",
			give: func(w http.ResponseWriter, _ *http.Request) {
				_, _ = io.WriteString(w, "ok")
				w.WriteHeader(http.StatusInternalServerError)
			},
			wantState: breaker.Closed,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, _, rec := newManager(t, tripOnFirstFailure(bare))
			serve(breakerhttp.Middleware(m)(tt.give), "/")
			assert.Equal(t, call{bare, tt.wantErr}, rec.only(t))
			assert.Equal(t, tt.wantState, state(t, m, bare))
		})
	}
}

// Given a handler that panics, then the call fails and the panic goes on up, for net/http to
// recover.
func TestMiddlewarePanic(t *testing.T) {
	m, _, rec := newManager(t, tripOnFirstFailure(bare))
	h := breakerhttp.Middleware(m)(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "half an answer")
		panic(http.ErrAbortHandler)
	}))

	assert.PanicsWithValue(t, http.ErrAbortHandler, func() { serve(h, "/") })
	assert.Equal(t, call{bare, breaker.ErrPanicked}, rec.only(t))
	assert.Equal(t, breaker.Open, state(t, m, bare))
}

// WithServerFailure replaces the failure decision; a panic still fails.
func TestMiddlewareWithServerFailure(t *testing.T) {
	tests := []struct {
		give      int
		wantState breaker.State
	}{
		{give: http.StatusTooManyRequests, wantState: breaker.Open},
		{give: http.StatusInternalServerError, wantState: breaker.Closed},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.give), func(t *testing.T) {
			m, _, _ := newManager(t, tripOnFirstFailure(bare))
			mw := breakerhttp.Middleware(m, breakerhttp.WithServerFailure(func(status int) bool {
				return status == http.StatusTooManyRequests
			}))
			serve(mw(statusHandler(tt.give)), "/")
			assert.Equal(t, tt.wantState, state(t, m, bare))
		})
	}
}

func statusHandler(status int) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(status) }
}

// counting wraps h and counts its calls.
func counting(h http.Handler, n *int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		*n++
		h.ServeHTTP(w, r)
	})
}

// Given a breaker that tripped at 0s with a 10s retry timeout, then a request at each moment
// gets 503 with Retry-After the seconds left, rounded up, at least 1, and the handler is not
// called.
func TestMiddlewareBlocked(t *testing.T) {
	tests := []struct {
		give time.Duration // since the trip
		want string
	}{
		{give: 0, want: "10"},
		{give: 200 * time.Millisecond, want: "10"},
		{give: 2500 * time.Millisecond, want: "8"},
		{give: 7 * time.Second, want: "3"},
		{give: 9 * time.Second, want: "1"},
		{give: retryTimeout - 200*time.Millisecond, want: "1"},
		{give: retryTimeout - time.Nanosecond, want: "1"},
	}
	for _, tt := range tests {
		t.Run(tt.give.String(), func(t *testing.T) {
			m, clk, _ := newManager(t, tripOnFirstFailure(bare))
			var handled int
			h := breakerhttp.Middleware(m)(counting(statusHandler(http.StatusInternalServerError), &handled))
			serve(h, "/")
			require.Equal(t, breaker.Open, state(t, m, bare))

			clk.Advance(tt.give)
			resp := serve(h, "/")
			assert.Equal(t, http.StatusServiceUnavailable, resp.Code)
			assert.Equal(t, tt.want, resp.Header().Get("Retry-After"))
			assert.Equal(t, "Service Unavailable\n", resp.Body.String())
			assert.Equal(t, 1, handled, "the blocked request did not reach the handler")
		})
	}
}

// Given two OPEN rules retrying in 2s and 60s, in either order, then every 503 says when the
// resource can take a request again: the later retry time.
func TestMiddlewareRetryAfterIsTheLatest(t *testing.T) {
	short, long := tripOnFirstFailure(bare), tripOnFirstFailure(bare)
	short.RetryTimeout, long.RetryTimeout = 2*time.Second, time.Minute
	for _, rules := range [][]breaker.Rule{{short, long}, {long, short}} {
		m, clk, _ := newManager(t, rules...)
		h := breakerhttp.Middleware(m)(statusHandler(http.StatusInternalServerError))
		serve(h, "/")
		for _, want := range []string{"60", "58"} {
			resp := serve(h, "/")
			assert.Equal(t, http.StatusServiceUnavailable, resp.Code)
			assert.Equal(t, want, resp.Header().Get("Retry-After"))
			clk.Advance(2 * time.Second)
		}
	}
}

// Given a probe in flight, then another request gets 503 with Retry-After 1: the retry time
// has passed.
func TestMiddlewareBlockedWhileProbing(t *testing.T) {
	m, clk, _ := newManager(t, tripOnFirstFailure(bare))
	fail := true
	var during *httptest.ResponseRecorder
	var h http.Handler
	h = breakerhttp.Middleware(m)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if fail {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		during = serve(h, "/") // a second request while this one is the probe
	}))
	serve(h, "/")
	require.Equal(t, breaker.Open, state(t, m, bare))

	fail = false
	clk.Advance(retryTimeout + 30*time.Second) // long past the retry time
	serve(h, "/")
	require.NotNil(t, during)
	assert.Equal(t, http.StatusServiceUnavailable, during.Code)
	assert.Equal(t, "1", during.Header().Get("Retry-After"))
	assert.Equal(t, breaker.Closed, state(t, m, bare), "the probe succeeded")
}

// Given a slot that blocks the request, then it gets 503 with Retry-After 1.
func TestMiddlewareBlockedBySlot(t *testing.T) {
	m := breaker.NewManager(breaker.WithSlots(blockingSlot{errors.New("too many requests in flight")}))
	var handled int
	resp := serve(breakerhttp.Middleware(m)(counting(ok, &handled)), "/")
	assert.Equal(t, http.StatusServiceUnavailable, resp.Code)
	assert.Equal(t, "1", resp.Header().Get("Retry-After"))
	assert.Zero(t, handled)
}

// WithBlockedHandler replaces the answer to a blocked request; Retry-After is set already.
func TestMiddlewareWithBlockedHandler(t *testing.T) {
	m, clk, _ := newManager(t, tripOnFirstFailure("@server GET /orders/{id}"))
	var got *breaker.BlockError
	mw := breakerhttp.Middleware(m, breakerhttp.WithBlockedHandler(
		func(w http.ResponseWriter, r *http.Request, err *breaker.BlockError) {
			got = err
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = fmt.Fprintf(w, `{"error":"orders unavailable","retryAfter":%s}`, w.Header().Get("Retry-After"))
		}))
	mux := http.NewServeMux()
	mux.Handle("GET /orders/{id}", mw(statusHandler(http.StatusBadGateway)))
	serve(mux, "/orders/7")

	clk.Advance(4 * time.Second)
	resp := serve(mux, "/orders/8")
	assert.Equal(t, http.StatusTooManyRequests, resp.Code)
	assert.Equal(t, "6", resp.Header().Get("Retry-After"))
	assert.Equal(t, `{"error":"orders unavailable","retryAfter":6}`, resp.Body.String())
	require.NotNil(t, got)
	assert.Equal(t, "@server GET /orders/{id}", got.Resource)
	assert.Equal(t, breaker.Open, got.State)
}

// The handler's ResponseWriter still flushes, and http.ResponseController reaches the
// recorder underneath.
func TestMiddlewareResponseWriterFlushes(t *testing.T) {
	m, _, rec := newManager(t)
	h := breakerhttp.Middleware(m)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, isFlusher := w.(http.Flusher)
		require.True(t, isFlusher)
		_, _ = io.WriteString(w, "first")
		f.Flush()
		assert.NoError(t, http.NewResponseController(w).Flush())

		_, isRecorder := w.(interface{ Unwrap() http.ResponseWriter }).Unwrap().(*httptest.ResponseRecorder)
		assert.True(t, isRecorder)
		_, _, err := http.NewResponseController(w).Hijack()
		assert.ErrorIs(t, err, http.ErrNotSupported, "a recorder cannot be hijacked")
	}))

	resp := serve(h, "/")
	assert.True(t, resp.Flushed)
	assert.Equal(t, "first", resp.Body.String())
	assert.Equal(t, call{bare, nil}, rec.only(t))
}

// Through a real server: a flushed chunk reaches the client before the handler returns,
// deadlines set through http.ResponseController reach the connection, and a handler may hijack
// the connection.
func TestMiddlewareStreamsAndHijacks(t *testing.T) {
	m, _, rec := newManager(t)
	mw := breakerhttp.Middleware(m)
	gotFirst := make(chan struct{})
	mux := http.NewServeMux()
	mux.Handle("GET /stream", mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		assert.NoError(t, rc.SetWriteDeadline(time.Now().Add(time.Minute)))
		_, _ = io.WriteString(w, "first\n")
		assert.NoError(t, rc.Flush())
		select {
		case <-gotFirst: // only a flushed chunk can have reached the client
		case <-time.After(10 * time.Second):
			t.Error("the client did not get the flushed chunk")
		}
		_, _ = io.WriteString(w, "second\n")
	})))
	hijackDone := make(chan struct{}) // closed once the middleware has returned
	mux.Handle("GET /hijack", then(hijackDone, mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, buf, err := http.NewResponseController(w).Hijack()
		if !assert.NoError(t, err) {
			return
		}
		defer conn.Close()
		_, _ = buf.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 8\r\nConnection: close\r\n\r\nhijacked")
		_ = buf.Flush()
	}))))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	resp, err := srv.Client().Get(srv.URL + "/stream")
	require.NoError(t, err)
	body := bufio.NewReader(resp.Body)
	line, err := body.ReadString('\n')
	require.NoError(t, err)
	assert.Equal(t, "first\n", line)
	close(gotFirst)
	rest, err := io.ReadAll(body)
	require.NoError(t, err)
	assert.Equal(t, "second\n", string(rest))
	require.NoError(t, resp.Body.Close())

	_, hijacked, err := get(t.Context(), srv.Client(), srv.URL+"/hijack")
	require.NoError(t, err)
	assert.Equal(t, "hijacked", hijacked)
	select {
	case <-hijackDone: // the client got its answer before the handler returned
	case <-time.After(10 * time.Second):
		t.Fatal("the hijacking handler did not return")
	}

	calls := rec.all()
	require.Len(t, calls, 2)
	assert.Equal(t, call{"@server GET /stream", nil}, calls[0])
	assert.Equal(t, call{"@server GET /hijack", nil}, calls[1])
}

// then calls h and closes done when it returns.
func then(done chan<- struct{}, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(done)
		h.ServeHTTP(w, r)
	})
}

// A handler that copies a reader into its ResponseWriter reaches the server's io.ReaderFrom
// when there is one, and the status is recorded either way.
func TestMiddlewareResponseWriterReadFrom(t *testing.T) {
	tests := []struct {
		name         string
		give         http.ResponseWriter
		status       int // written before the copy; 0 for none
		wantErr      error
		wantReadFrom bool
	}{
		{name: "ReaderFrom", give: &readerFrom{ResponseRecorder: httptest.NewRecorder()}, wantReadFrom: true},
		{name: "ReaderFrom after a 500", give: &readerFrom{ResponseRecorder: httptest.NewRecorder()},
			status: http.StatusInternalServerError, wantErr: breakerhttp.ErrFailureStatus, wantReadFrom: true},
		{name: "no ReaderFrom", give: httptest.NewRecorder()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, _, rec := newManager(t)
			h := breakerhttp.Middleware(m)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tt.status != 0 {
					w.WriteHeader(tt.status)
				}
				n, err := io.Copy(w, io.LimitReader(strings.NewReader("copied"), 100)) // no WriterTo
				assert.NoError(t, err)
				assert.EqualValues(t, 6, n)
			}))
			h.ServeHTTP(tt.give, httptest.NewRequest(http.MethodGet, "/", nil))

			assert.Equal(t, call{bare, tt.wantErr}, rec.only(t))
			rf, isReaderFrom := tt.give.(*readerFrom)
			assert.Equal(t, tt.wantReadFrom, isReaderFrom && rf.used)
		})
	}
}

// readerFrom is a recorder with an io.ReaderFrom, as the server's ResponseWriter has.
type readerFrom struct {
	*httptest.ResponseRecorder
	used bool
}

func (w *readerFrom) ReadFrom(r io.Reader) (int64, error) {
	w.used = true
	return io.Copy(w.ResponseRecorder, r)
}

// A nil manager is breaker.Default(); a nil handler is http.DefaultServeMux.
func TestMiddlewareDefaults(t *testing.T) {
	resp := serve(breakerhttp.Middleware(nil)(nil), "/breakerhttp-test/nowhere")
	assert.Equal(t, http.StatusNotFound, resp.Code, "DefaultServeMux has no such route")
}

// Given a mux with one route, when clients send many requests to paths (and methods) that
// match no pattern, then they all go to UnmatchedResource: the client cannot make resources.
// A matched route keeps its pattern.
func TestMiddlewareUnmatchedIsOneResource(t *testing.T) {
	names := map[string]int{}
	m := breaker.NewManager(breaker.WithClock(breakertest.NewClock()),
		breaker.WithCallObserver(func(c breaker.CallInfo) { names[c.Resource]++ }))
	mux := http.NewServeMux()
	mux.Handle("GET /orders/{id}", ok)
	mux.Handle("CONNECT /tunnel/{name}/", ok)
	h := breakerhttp.Middleware(m)(mux)

	const n = 2000
	for i := range n {
		serve(h, fmt.Sprintf("/wp-admin/%d.php", i))
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(fmt.Sprintf("M%d", i), "/orders/7", nil))
		// The mux redirects CONNECT /tunnel/x to /tunnel/x/, and names the path as the pattern.
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodConnect, fmt.Sprintf("/tunnel/t%d", i), nil))
	}
	serve(h, "/orders/7")

	assert.Equal(t, map[string]int{breakerhttp.UnmatchedResource: 3 * n, "@server GET /orders/{id}": 1}, names)
}

// Given a mux wrapped whole with a wildcard pattern that takes any method, when clients send
// CONNECT requests whose escaped paths the mux redirects to cleaned paths of their choosing,
// then they all go to UnmatchedResource: a redirect the mux makes itself is no route, whatever
// path the mux reports for it.
func TestMiddlewareMuxRedirectIsUnmatched(t *testing.T) {
	names := map[string]int{}
	m := breaker.NewManager(breaker.WithClock(breakertest.NewClock()),
		breaker.WithCallObserver(func(c breaker.CallInfo) { names[c.Resource]++ }))
	mux := http.NewServeMux()
	mux.Handle("/users/{id}/", ok)
	h := breakerhttp.Middleware(m)(mux)

	const n = 20
	for i := range n {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodConnect, fmt.Sprintf("/users/a%%2F..%%2Fvictim%d", i), nil))
		require.Equal(t, http.StatusTemporaryRedirect, rec.Code, "the mux redirects it")
	}
	assert.Equal(t, http.StatusTemporaryRedirect, serve(h, "/users/7").Code, "the mux adds the slash")
	assert.Equal(t, http.StatusOK, serve(h, "/users/7/").Code)

	assert.Equal(t, map[string]int{breakerhttp.UnmatchedResource: n + 1, "@server /users/{id}/": 1}, names)
}

// Given a resource that is ForceOpen, or at its MaxConcurrency, then a request gets 503 without
// Retry-After, since no retry time is known, and the handler is not called.
func TestMiddlewareBlockedBySettings(t *testing.T) {
	t.Run("forced open", func(t *testing.T) {
		m, _, _ := newManager(t, tripOnFirstFailure(bare))
		require.NoError(t, m.LoadResources(map[string]breaker.ResourceConfig{bare: {Force: breaker.ForceOpen}}))
		var handled int
		resp := serve(breakerhttp.Middleware(m)(counting(ok, &handled)), "/")
		assert.Equal(t, http.StatusServiceUnavailable, resp.Code)
		assert.NotContains(t, resp.Header(), "Retry-After")
		assert.Zero(t, handled)
	})
	t.Run("concurrency limit", func(t *testing.T) {
		m, _, _ := newManager(t)
		require.NoError(t, m.LoadResources(map[string]breaker.ResourceConfig{bare: {MaxConcurrency: 1}}))
		var during *httptest.ResponseRecorder
		var handled int
		var h http.Handler
		h = breakerhttp.Middleware(m)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			handled++
			if during == nil {
				during = serve(h, "/") // a second request while this one is in flight
			}
		}))
		resp := serve(h, "/")
		assert.Equal(t, http.StatusOK, resp.Code)
		require.NotNil(t, during)
		assert.Equal(t, http.StatusServiceUnavailable, during.Code)
		assert.NotContains(t, during.Header(), "Retry-After")
		assert.Equal(t, 1, handled, "the second request did not reach the handler")
	})
}

// Given a breaker that ramps up after a probe closed it, when a request fails in the ramp's
// first bucket, then the next one is held back: 503 with Retry-After 1 (the next bucket, a few
// milliseconds away, rounded up), and the handler is not called.
func TestMiddlewareHeldBackByARamp(t *testing.T) {
	rule := tripOnFirstFailure(bare)
	rule.Threshold, rule.RampUp = 2, time.Minute
	m, clk, _ := newManager(t, rule)
	fail, calls := true, 0
	h := breakerhttp.Middleware(m)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		if fail {
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	serve(h, "/")
	serve(h, "/")
	require.Equal(t, breaker.Open, state(t, m, bare))
	clk.Advance(retryTimeout)
	fail = false
	require.Equal(t, http.StatusOK, serve(h, "/").Code, "the probe")
	fail = true
	require.Equal(t, http.StatusInternalServerError, serve(h, "/").Code, "the ramp's first call fails")
	held := serve(h, "/")
	assert.Equal(t, http.StatusServiceUnavailable, held.Code)
	assert.Equal(t, "1", held.Header().Get("Retry-After"))
	assert.Equal(t, 4, calls, "the held back request did not reach the handler")
	assert.Equal(t, breaker.Closed, state(t, m, bare))
}
