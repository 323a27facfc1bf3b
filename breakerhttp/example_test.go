package breakerhttp_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"time"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakerhttp"
	"github.com/halfopen/breaker/breakertest"
)

func ExampleNewTransport() {
	// A server on loopback that is down.
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()

	m := breaker.NewManager(breaker.WithClock(breakertest.NewClock()))
	err := m.LoadRules([]breaker.Rule{{
		Resource:         "GET " + srv.Listener.Addr().String(), // such as "GET 127.0.0.1:41635"
		Strategy:         breaker.ErrorCount,
		Threshold:        2, // the second 5xx trips it
		MinRequestAmount: 1,
		RetryTimeout:     10 * time.Second,
	}})
	if err != nil {
		panic(err)
	}
	client := &http.Client{Transport: breakerhttp.NewTransport(srv.Client().Transport, m)}

	for range 3 {
		resp, err := client.Get(srv.URL + "/orders/7")
		var blocked *breaker.BlockError
		switch {
		case errors.As(err, &blocked):
			fmt.Println("rejected:", blocked.State, errors.Is(err, breaker.ErrOpen))
		case err != nil:
			fmt.Println("error:", err)
		default:
			resp.Body.Close()
			fmt.Println(resp.Status) // a 5xx is returned as it is, and counted as a failure
		}
	}
	fmt.Println("the server saw", hits.Load(), "requests")
	// Output:
	// 503 Service Unavailable
	// 503 Service Unavailable
	// rejected: OPEN true
	// the server saw 2 requests
}

// One template rule and one template setting protect every host the client calls, each on
// its own: a breaker, a timeout and a concurrency limit per host.
func ExampleNewTransport_everyHost() {
	release, arrived := make(chan struct{}), make(chan struct{}, 1)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-release // a host that is slow to answer
	}))
	defer slow.Close()
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadGateway) // a host that is down
	}))
	defer down.Close()

	m := breaker.NewManager(breaker.WithClock(breakertest.NewClock()))
	if err := m.LoadRules([]breaker.Rule{{Resource: "GET *", Strategy: breaker.ErrorCount,
		Threshold: 2, MinRequestAmount: 1, RetryTimeout: 10 * time.Second}}); err != nil {
		panic(err)
	}
	if err := m.LoadResources(map[string]breaker.ResourceConfig{
		"GET *": {Timeout: 5 * time.Second, MaxConcurrency: 1},
	}); err != nil {
		panic(err)
	}
	client := &http.Client{Transport: breakerhttp.NewTransport(nil, m)}

	// One request holds the slow host's only place; a second one to it is rejected at once.
	done := make(chan struct{})
	go func() {
		defer close(done)
		if resp, err := client.Get(slow.URL); err == nil {
			resp.Body.Close()
		}
	}()
	<-arrived // the first request holds its place
	_, err := client.Get(slow.URL)
	fmt.Println("slow host, second request:", errors.Is(err, breaker.ErrConcurrencyLimit))
	close(release)
	<-done

	// The host that is down trips its own breaker; the slow host's is untouched.
	for range 3 {
		resp, err := client.Get(down.URL)
		if err != nil {
			fmt.Println("down host: rejected,", errors.Is(err, breaker.ErrOpen))
			continue
		}
		resp.Body.Close()
		fmt.Println("down host:", resp.Status)
	}
	fmt.Println(m.Snapshot().Templates.Resources, "hosts, each with its breaker and settings")
	// Output:
	// slow host, second request: true
	// down host: 502 Bad Gateway
	// down host: 502 Bad Gateway
	// down host: rejected, true
	// 2 hosts, each with its breaker and settings
}

func ExampleMiddleware() {
	clk := breakertest.NewClock()
	m := breaker.NewManager(breaker.WithClock(clk))
	err := m.LoadRules([]breaker.Rule{{
		Resource:         breakerhttp.ServerPrefix + "GET /orders/{id}", // "@server " and the ServeMux pattern
		Strategy:         breaker.ErrorCount,
		Threshold:        1,
		MinRequestAmount: 1,
		RetryTimeout:     30 * time.Second,
	}})
	if err != nil {
		panic(err)
	}

	orders := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "database unreachable", http.StatusInternalServerError)
	})
	mw := breakerhttp.Middleware(m)
	mux := http.NewServeMux()
	mux.Handle("GET /orders/{id}", mw(orders)) // inside the mux, so r.Pattern is set

	get := func(target string) {
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, httptest.NewRequest(http.MethodGet, target, nil))
		fmt.Printf("%s: %d %q, Retry-After %q\n", target, w.Code, w.Body.String(), w.Header().Get("Retry-After"))
	}
	get("/orders/7") // the 500 trips the breaker
	get("/orders/8") // rejected without calling the handler
	clk.Advance(12500 * time.Millisecond)
	get("/orders/9")
	// Output:
	// /orders/7: 500 "database unreachable\n", Retry-After ""
	// /orders/8: 503 "Service Unavailable\n", Retry-After "30"
	// /orders/9: 503 "Service Unavailable\n", Retry-After "18"
}
