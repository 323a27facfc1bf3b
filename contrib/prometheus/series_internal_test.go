package breakerprom

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakerview"
)

// viewCollector collects one View as a Collector's scrape sends it.
type viewCollector struct {
	c *Collector
	v *breakerview.View
}

func (vc viewCollector) Describe(ch chan<- *prometheus.Desc) { vc.c.Describe(ch) }
func (vc viewCollector) Collect(ch chan<- prometheus.Metric) { vc.c.collectView(vc.v, ch) }

// Given a view whose route's breaker holds refused calls among its bad ones in its window
// (Stats.Refused, which the core counts) and a series of the names past the bound, then
// breaker_window_refused says them beside breaker_window_bad, and breaker_resource_info each
// label's side: server for the route, none for the overflow.
func TestCollectViewRefusedAndSides(t *testing.T) {
	rule := breaker.Rule{ID: "errors", Resource: "@server POST /orders", Strategy: breaker.ErrorRatio, Threshold: 0.5}
	v := &breakerview.View{Series: []breakerview.Series{
		{Label: "@server POST /orders", Side: breakerview.ServerSide, Breakers: []breakerview.Breaker{{
			Stats: breaker.Stats{Rule: rule, State: breaker.Closed, Total: 10, Bad: 3, Refused: 2}, Label: "errors",
			Windowed: true}}},
		{Label: "payments", Side: breakerview.ClientSide},
		{Label: breakerview.Overflow, Side: breakerview.NoSide},
	}}
	want := `
# HELP breaker_window_bad Of the calls in the window of the breaker of each loaded rule, the slow ones (SlowRequestRatio) or the failed ones (ErrorRatio, ErrorCount); for ConsecutiveErrors, its current run of failures. 0 unless CLOSED.
# TYPE breaker_window_bad gauge
breaker_window_bad{resource="@server POST /orders",rule="errors"} 3
# HELP breaker_window_refused Of breaker_window_bad, the calls the dependency refused (Outcome Refused) rather than failed: ErrorRatio and ErrorCount count them apart; 0 for SlowRequestRatio and ConsecutiveErrors, and unless CLOSED.
# TYPE breaker_window_refused gauge
breaker_window_refused{resource="@server POST /orders",rule="errors"} 2
# HELP breaker_resource_info 1 for each resource the Collector reports, with its side: server for a route breakerhttp.Middleware serves (a name beginning with breakerhttp.ServerPrefix), client for a call the program makes; no side for resource="_other", whose names may be of either. Join on resource for it.
# TYPE breaker_resource_info gauge
breaker_resource_info{resource="@server POST /orders",side="server"} 1
breaker_resource_info{resource="_other",side=""} 1
breaker_resource_info{resource="payments",side="client"} 1
`
	assert.NoError(t, testutil.CollectAndCompare(viewCollector{New(), v}, strings.NewReader(want),
		"breaker_window_bad", "breaker_window_refused", "breaker_resource_info"))
}
