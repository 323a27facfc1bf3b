package breakerhttp_test

import (
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

// Given one Manager with a template rule "POST *" written for the partner hosts it calls, when
// its own route POST /orders fails (a database lock) as the partner fails, then the template
// takes the partner's host and opens on it, and never takes the route: the service keeps
// taking orders, and the route has no breaker at all.
func TestServerNamesAreNotTakenByClientTemplates(t *testing.T) {
	clk := breakertest.NewClock()
	m := breaker.NewManager(breaker.WithClock(clk))
	require.NoError(t, m.LoadRules([]breaker.Rule{{Resource: "POST *", Strategy: breaker.ErrorCount,
		Threshold: 1, MinRequestAmount: 1, RetryTimeout: time.Minute}}))
	partner := breakerhttp.NewTransport(roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusBadGateway, Body: http.NoBody, Request: req}, nil
	}), m)
	mux := http.NewServeMux()
	mux.Handle("POST /orders", breakerhttp.Middleware(m)(statusHandler(http.StatusInternalServerError)))

	var answers []int
	for range 5 {
		req := httptest.NewRequest(http.MethodPost, "https://partner.example/orders", nil)
		resp, err := partner.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
		}
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/orders", nil))
		answers = append(answers, w.Code)
	}

	snap := m.Snapshot()
	host := snap.Resource("POST partner.example")
	require.NotNil(t, host, "the template took the partner's host")
	assert.Equal(t, "POST *", host.Template)
	assert.Equal(t, breaker.Open, host.Breakers[0].State)
	assert.Nil(t, snap.Resource(breakerhttp.ServerPrefix+"POST /orders"), "no breaker for the route")
	assert.Equal(t, []int{500, 500, 500, 500, 500}, answers, "every order reached its handler")
}

// Given a template rule for the routes a program serves ("@server POST *"), then it takes the
// route, and never the hosts the program calls with the same method.
func TestServerTemplatesDoNotTakeClientNames(t *testing.T) {
	m := breaker.NewManager(breaker.WithClock(breakertest.NewClock()))
	require.NoError(t, m.LoadRules([]breaker.Rule{{Resource: breakerhttp.ServerPrefix + "POST *",
		Strategy: breaker.ErrorCount, Threshold: 1, MinRequestAmount: 1, RetryTimeout: time.Minute}}))
	partner := breakerhttp.NewTransport(roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: req}, nil
	}), m)
	mux := http.NewServeMux()
	mux.Handle("POST /orders", breakerhttp.Middleware(m)(ok))

	resp, err := partner.RoundTrip(httptest.NewRequest(http.MethodPost, "https://partner.example/orders", nil))
	require.NoError(t, err)
	resp.Body.Close()
	mux.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/orders", nil))

	snap := m.Snapshot()
	assert.Nil(t, snap.Resource("POST partner.example"), "no breaker for the host")
	route := snap.Resource("@server POST /orders")
	require.NotNil(t, route)
	assert.Equal(t, "@server POST *", route.Template)
}

// Given requests of every method, a custom one and none included, through NewTransport and
// through Middleware (inside the mux, around it, outside any), then each name the server side
// makes begins with ServerPrefix, and differs from each name the client side makes from its
// first character: no template key but "*" takes names of both sides.
func TestServerAndClientNamesDifferFromTheFirstCharacter(t *testing.T) {
	names := map[string]bool{}
	m := breaker.NewManager(breaker.WithClock(breakertest.NewClock()),
		breaker.WithCallObserver(func(c breaker.CallInfo) { names[c.Resource] = true }))
	client := breakerhttp.NewTransport(roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: req}, nil
	}), m)
	mw := breakerhttp.Middleware(m)
	inside := http.NewServeMux()
	around := http.NewServeMux()
	methods := []string{"", http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace, "PURGE", "m"}
	for _, method := range methods[1:] {
		inside.Handle(method+" /orders/", mw(ok))
		around.Handle(method+" /orders/", ok)
	}
	for _, method := range methods {
		req := httptest.NewRequest(http.MethodGet, "http://api.example:8080/orders/7", nil)
		req.Method = method
		if resp, err := client.RoundTrip(req); err == nil {
			resp.Body.Close()
		}
		for _, h := range []http.Handler{inside, mw(around), mw(ok)} {
			req := httptest.NewRequest(http.MethodGet, "/orders/7", nil)
			req.Method = method
			h.ServeHTTP(httptest.NewRecorder(), req)
		}
	}

	var server, clients []string
	for name := range names {
		if strings.HasPrefix(name, breakerhttp.ServerPrefix) {
			server = append(server, name)
		} else {
			clients = append(clients, name)
		}
	}
	require.Len(t, clients, 10, "the nine methods net/http names, and OTHER: %v", clients)
	require.Len(t, server, len(methods), "a route of each method but none, and unmatched: %v", server)
	assert.Contains(t, server, breakerhttp.UnmatchedResource)
	for _, s := range server {
		for _, c := range clients {
			assert.NotEqual(t, s[0], c[0], "%q and %q", s, c)
		}
	}
}

// WithResource replaces the resource name, and its names are used as they are, with no
// ServerPrefix, inside a mux (where it sees the pattern) or outside one.
func TestMiddlewareWithResourceKeepsItsNames(t *testing.T) {
	names := map[string]int{}
	m := breaker.NewManager(breaker.WithClock(breakertest.NewClock()),
		breaker.WithCallObserver(func(c breaker.CallInfo) { names[c.Resource]++ }))
	mw := breakerhttp.Middleware(m, breakerhttp.WithResource(func(r *http.Request) string {
		return "orders " + r.Pattern
	}))
	mux := http.NewServeMux()
	mux.Handle("GET /orders/{id}", mw(ok))

	serve(mux, "/orders/7")
	serve(mw(ok), "/orders/7")
	assert.Equal(t, map[string]int{"orders GET /orders/{id}": 1, "orders ": 1}, names)
}

// Given one Middleware around a mux and the same one inside it on two routes, when requests
// alternate between the routes, then each is named by its own pattern: the name a handler
// found first is not taken for another's.
func TestMiddlewareNamesEachPatternItServes(t *testing.T) {
	var names []string
	m := breaker.NewManager(breaker.WithClock(breakertest.NewClock()),
		breaker.WithCallObserver(func(c breaker.CallInfo) { names = append(names, c.Resource) }))
	mw := breakerhttp.Middleware(m)
	inner := http.NewServeMux()
	inner.Handle("GET /orders/{id}", mw(ok))
	inner.Handle("GET /users/{id}", mw(ok))
	outer := mw(inner)
	for range 2 {
		serve(outer, "/orders/7")
		serve(outer, "/users/7")
	}
	orders, users := breakerhttp.ServerPrefix+"GET /orders/{id}", breakerhttp.ServerPrefix+"GET /users/{id}"
	// Each request is a call of the outer handler, then one of the inner, which ends first.
	assert.Equal(t, []string{orders, orders, users, users, orders, orders, users, users}, names)
}

// Given routes named by their pattern, inside a mux and around it, then a request allocates
// no more for its name than one named by WithResource with a constant (around the mux, one that
// asks the mux for the route, as the default does): each name is made once.
func TestMiddlewareNamesWithoutAllocating(t *testing.T) {
	m := breaker.NewManager(breaker.WithClock(breakertest.NewClock()))
	const name = "@server GET /orders/{id}"
	inside := func(opts ...breakerhttp.Option) http.Handler {
		mux := http.NewServeMux()
		mux.Handle("GET /orders/{id}", breakerhttp.Middleware(m, opts...)(ok))
		return mux
	}
	around := func(constant bool) http.Handler {
		mux := http.NewServeMux()
		mux.Handle("GET /orders/{id}", ok)
		var opts []breakerhttp.Option
		if constant {
			opts = append(opts, breakerhttp.WithResource(func(r *http.Request) string {
				if _, pattern := mux.Handler(r); pattern == "" {
					return breakerhttp.UnmatchedResource
				}
				return name
			}))
		}
		return breakerhttp.Middleware(m, opts...)(mux)
	}
	w := &discardWriter{header: http.Header{}}
	allocs := func(h http.Handler) float64 {
		req := httptest.NewRequest(http.MethodGet, "/orders/7", nil)
		return testing.AllocsPerRun(100, func() { h.ServeHTTP(w, req) })
	}
	constant := breakerhttp.WithResource(func(*http.Request) string { return name })
	assert.Equal(t, allocs(inside(constant)), allocs(inside()), "inside the mux")
	assert.Equal(t, allocs(around(true)), allocs(around(false)), "around the mux")
}

// discardWriter is a ResponseWriter that keeps nothing and allocates nothing.
type discardWriter struct{ header http.Header }

func (w *discardWriter) Header() http.Header         { return w.header }
func (w *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *discardWriter) WriteHeader(int)             {}
