package breakerprom_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker/breakerhttp"
	"github.com/halfopen/breaker/breakerview"
	breakerprom "github.com/halfopen/breaker/contrib/prometheus"
)

// Given a route breakerhttp.Middleware serves, a host the program calls through NewTransport,
// and a name past the bound, then breaker_resource_info says each resource's side: server for
// the route, client for the host, and none for _other, whose names may be of either side.
func TestResourceInfoSaysEachSide(t *testing.T) {
	f := newFixtureWith(t, []breakerprom.Option{breakerprom.WithLimits(breakerview.Limits{Names: 2})}, nil)
	mux := http.NewServeMux()
	mux.Handle("POST /orders", breakerhttp.Middleware(f.m)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})))
	mux.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/orders", nil))
	client := breakerhttp.NewTransport(roundTrip(func(req *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: req}, nil
	}), f.m)
	resp, err := client.RoundTrip(httptest.NewRequest(http.MethodPost, "https://partner.example/orders", nil))
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	require.NoError(t, f.call("past the bound", 0, nil))

	assertMetrics(t, f.c, `
		breaker_resource_info{resource="@server POST /orders",side="server"} 1
		breaker_resource_info{resource="POST partner.example",side="client"} 1
		breaker_resource_info{resource="_other",side=""} 1
	`, "breaker_resource_info")
}

// roundTrip adapts a function to an http.RoundTripper.
type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
