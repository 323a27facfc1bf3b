package breakerdebug_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakerdebug"
	"github.com/halfopen/breaker/breakerhttp"
	"github.com/halfopen/breaker/breakertest"
	"github.com/halfopen/breaker/breakerview"
)

// Given a route the program serves (its name begins with breakerhttp.ServerPrefix) and a host
// it calls, each with a rule that trips, a route called without rules, a route configured and
// not called, and calls past the Recorder's bound, then the JSON says each name's side: the
// resources, the names called without rules and the transitions, and a minute on the names not
// called; the overflow's row, whose names may be of either side, says none.
func TestJSONShowsSides(t *testing.T) {
	route := breakerhttp.ServerPrefix + "POST /orders"
	host := "POST partner.example:443"
	trip := func(name string) breaker.Rule {
		return breaker.Rule{Resource: name, Strategy: breaker.ErrorCount, Threshold: 1, MinRequestAmount: 1,
			RetryTimeout: time.Hour}
	}
	clk := breakertest.NewClock()
	rec := breakerdebug.NewRecorder(breakerdebug.RecorderLimits(breakerview.Limits{Names: 4}))
	m := breaker.NewManager(breaker.WithClock(clk), rec.Option())
	require.NoError(t, m.LoadRules([]breaker.Rule{trip(route), trip(host), trip(breakerhttp.ServerPrefix + "GET /old")}))
	h := breakerdebug.Handler(m, breakerdebug.WithRecorder(rec))
	clk.Advance(time.Minute)
	call(m, route, fail)
	call(m, host, fail)
	call(m, breakerhttp.ServerPrefix+"GET /new", succeed)
	call(m, "a", succeed) // the fourth name: the bound is reached
	call(m, "b", succeed) // past it

	var st struct {
		Resources []struct{ Resource, Side string }
		Unruled   []struct {
			Resource string
			Side     *string
		}
		Uncalled    []struct{ Name, Side string }
		Transitions []struct{ Resource, Side string }
	}
	read := func() {
		body := get(h, http.MethodGet, path+"?format=json", nil).Body.Bytes()
		require.NoError(t, json.Unmarshal(body, &st), string(body))
	}
	read()
	sides := map[string]string{}
	for _, r := range st.Resources {
		sides["resource "+r.Resource] = r.Side
	}
	for _, u := range st.Unruled {
		side := "(none)"
		if u.Side != nil {
			side = *u.Side
		}
		sides["unruled "+u.Resource] = side
	}
	for _, c := range st.Transitions {
		sides["transition "+c.Resource] = c.Side
	}
	assert.Equal(t, map[string]string{
		"resource " + route: "server", "resource " + host: "client", "resource @server GET /old": "server",
		"unruled @server GET /new": "server", "unruled a": "client", "unruled " + breakerview.Overflow: "(none)",
		"transition " + route: "server", "transition " + host: "client",
	}, sides)

	clk.Advance(61 * time.Second) // a minute without calls, the overflow's included
	read()
	sides = map[string]string{}
	for _, u := range st.Uncalled {
		sides[u.Name] = u.Side
	}
	assert.Equal(t, map[string]string{route: "server", host: "client", breakerhttp.ServerPrefix + "GET /old": "server"},
		sides)
}
