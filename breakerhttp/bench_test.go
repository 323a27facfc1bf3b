package breakerhttp_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakerhttp"
)

// benchManager has an ErrorRatio rule for the route and for the host the benchmarks call.
func benchManager(b *testing.B) *breaker.Manager {
	m := breaker.NewManager()
	rule := func(resource string) breaker.Rule {
		return breaker.Rule{Resource: resource, Strategy: breaker.ErrorRatio, Threshold: 0.5, RetryTimeout: time.Second}
	}
	if err := m.LoadRules([]breaker.Rule{rule(breakerhttp.ServerPrefix + "GET /orders/{id}"), rule("GET partner.example")}); err != nil {
		b.Fatal(err)
	}
	return m
}

// benchMux is a ServeMux whose one route goes through Middleware on m.
func benchMux(m *breaker.Manager) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("GET /orders/{id}", breakerhttp.Middleware(m)(ok))
	return mux
}

// A request served through Middleware inside a ServeMux: naming it, the breakers, the handler.
func BenchmarkMiddleware(b *testing.B) {
	mux := benchMux(benchManager(b))
	r := httptest.NewRequest(http.MethodGet, "/orders/7", nil)
	w := &discardWriter{header: http.Header{}}
	b.ReportAllocs()
	for range b.N {
		mux.ServeHTTP(w, r)
	}
}

func BenchmarkMiddlewareParallel(b *testing.B) {
	mux := benchMux(benchManager(b))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		r := httptest.NewRequest(http.MethodGet, "/orders/7", nil)
		w := &discardWriter{header: http.Header{}}
		for pb.Next() {
			mux.ServeHTTP(w, r)
		}
	})
}

// answered is a RoundTripper that answers every request 200 at once, with an empty body: a
// response of its own each time (one allocation of the benchmark's, not the transport's).
type answered struct{}

func (answered) RoundTrip(*http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}, nil
}

// roundTrip sends r through tr and closes the body, as a client does, which ends the call.
func roundTrip(tr http.RoundTripper, r *http.Request) error {
	resp, err := tr.RoundTrip(r)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}

// A request sent through NewTransport to a RoundTripper that answers at once.
func BenchmarkTransport(b *testing.B) {
	tr := breakerhttp.NewTransport(answered{}, benchManager(b))
	r := httptest.NewRequest(http.MethodGet, "https://partner.example/v1/orders", nil)
	b.ReportAllocs()
	for range b.N {
		if err := roundTrip(tr, r); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTransportParallel(b *testing.B) {
	tr := breakerhttp.NewTransport(answered{}, benchManager(b))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		r := httptest.NewRequest(http.MethodGet, "https://partner.example/v1/orders", nil)
		for pb.Next() {
			if err := roundTrip(tr, r); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
