package breakerview_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker/breakerhttp"
	"github.com/halfopen/breaker/breakerview"
)

// A name is a server's when it begins with breakerhttp.ServerPrefix, as Middleware's do, and a
// client's otherwise, whatever else it holds.
func TestSideOf(t *testing.T) {
	tests := []struct {
		give string
		want breakerview.Side
	}{
		{give: breakerhttp.ServerPrefix + "GET /orders/{id}", want: breakerview.ServerSide},
		{give: breakerhttp.UnmatchedResource, want: breakerview.ServerSide},
		{give: breakerview.Label(breakerhttp.ServerPrefix + "GET /\xff"), want: breakerview.ServerSide},
		{give: "POST partner.example:443", want: breakerview.ClientSide},
		{give: "GET /orders/{id}", want: breakerview.ClientSide},
		{give: "@server", want: breakerview.ClientSide},
		{give: "payments", want: breakerview.ClientSide},
		{give: "/pkg.Orders/Create", want: breakerview.ClientSide},
		{give: "", want: breakerview.ClientSide},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, breakerview.SideOf(tt.give), "%q", tt.give)
	}
	assert.Equal(t, []string{"", "client", "server"},
		[]string{breakerview.NoSide.String(), breakerview.ClientSide.String(), breakerview.ServerSide.String()})
}

// Given a route a server serves and a host it calls, with rules, and calls of names past the
// Limits, then each row, each name called and each series says its side; the overflow's,
// whose names may be of either side, none. A name the Calls keeps without a call in the minute
// or a row still has a series, for its side.
func TestViewSides(t *testing.T) {
	route := breakerhttp.ServerPrefix + "POST /orders"
	w := newWatched(t, breakerview.Limits{Names: 3}, rule(route), rule("POST partner.example:443"))
	w.call(route, 0, nil)
	w.call("POST partner.example:443", 0, nil)
	w.call("quiet", 0, nil)
	w.clock.Advance(2 * time.Minute)
	w.call(route, 0, nil)
	w.call("POST partner.example:443", 0, nil)
	w.call(breakerhttp.ServerPrefix+"GET /past", 0, nil) // past the Limits
	v := w.view()

	assert.Equal(t, breakerview.ServerSide, resourceOf(t, v, route).Side)
	assert.Equal(t, breakerview.ClientSide, resourceOf(t, v, "POST partner.example:443").Side)
	called := map[string]breakerview.Side{}
	for _, c := range v.Called {
		called[c.Label] = c.Side
	}
	assert.Equal(t, map[string]breakerview.Side{route: breakerview.ServerSide,
		"POST partner.example:443": breakerview.ClientSide, breakerview.Overflow: breakerview.NoSide}, called)
	series := map[string]breakerview.Side{}
	for _, s := range v.Series {
		series[s.Label] = s.Side
	}
	assert.Equal(t, map[string]breakerview.Side{route: breakerview.ServerSide,
		"POST partner.example:443": breakerview.ClientSide, "quiet": breakerview.ClientSide,
		breakerview.Overflow: breakerview.NoSide}, series)
}

// Given a name configured and not called, its row in Uncalled says its side.
func TestUncalledSide(t *testing.T) {
	route := breakerhttp.ServerPrefix + "GET /old"
	w := newWatched(t, breakerview.Limits{}, rule(route))
	w.clock.Advance(time.Minute)
	v := w.view()
	require.Len(t, v.Uncalled, 1)
	assert.Equal(t, breakerview.ServerSide, v.Uncalled[0].Side)
}
