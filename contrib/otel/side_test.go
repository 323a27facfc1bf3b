package breakerotel_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/halfopen/breaker/breakerhttp"
	"github.com/halfopen/breaker/breakerview"
	breakerotel "github.com/halfopen/breaker/contrib/otel"
)

// Given a route breakerhttp.Middleware serves, a host the program calls through NewTransport,
// and a name past the bound, then breaker.resource.info says each resource's side: server for
// the route, client for the host, and none for _other, whose names may be of either side.
func TestResourceInfoSaysEachSide(t *testing.T) {
	f := newFixture(t, nil, breakerotel.WithLimits(breakerview.Limits{Names: 2}))
	mux := http.NewServeMux()
	mux.Handle("POST /orders", breakerhttp.Middleware(f.m)(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})))
	mux.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/orders", nil))
	client := breakerhttp.NewTransport(roundTrip(func(req *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: req}, nil
	}), f.m)
	resp, err := client.RoundTrip(httptest.NewRequest(http.MethodPost, "https://partner.example/orders", nil))
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	require.NoError(t, f.call("past the bound", 0, nil))

	side := func(resource, side string) metricdata.DataPoint[int64] {
		return metricdata.DataPoint[int64]{Value: 1, Attributes: set(breakerotel.ResourceKey.String(resource),
			breakerotel.SideKey.String(side))}
	}
	f.assertData(breakerotel.ResourceInfoName, gauge(
		side("@server POST /orders", "server"),
		side("POST partner.example", "client"),
		resourcePoint(breakerview.Overflow, 1),
	))
}

// roundTrip adapts a function to an http.RoundTripper.
type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
