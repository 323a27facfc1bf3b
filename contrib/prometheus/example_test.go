package breakerprom_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/halfopen/breaker"
	breakerprom "github.com/halfopen/breaker/contrib/prometheus"
)

// A Collector counts the calls of the Manager that took its Option, and reports the states and
// transitions of the Manager it watches. Here one call fails, which trips the breaker, and the
// next is blocked; then the metrics are scraped as Prometheus would.
func Example() {
	c := breakerprom.New()
	m := breaker.NewManager(c.Option())
	c.Watch(m)
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	metrics := promhttp.HandlerFor(reg, promhttp.HandlerOpts{}) // serve it at /metrics

	err := m.LoadRules([]breaker.Rule{{
		ID:               "inventory-errors",
		Resource:         "inventory",
		Strategy:         breaker.ErrorCount,
		Threshold:        1,
		MinRequestAmount: 1,
		RetryTimeout:     time.Minute,
	}})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	_ = m.Do(ctx, "inventory", func(context.Context) error { return errors.New("connection refused") })
	err = m.Do(ctx, "inventory", func(context.Context) error { return nil })
	fmt.Println("blocked:", errors.Is(err, breaker.ErrOpen))

	scrape := httptest.NewRecorder()
	metrics.ServeHTTP(scrape, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	for line := range strings.Lines(scrape.Body.String()) {
		// Response times vary from run to run.
		if !strings.Contains(line, "breaker_rt_seconds") && !strings.Contains(line, "breaker_call_duration_max_seconds") {
			fmt.Print(line)
		}
	}
	// Output:
	// blocked: true
	// # HELP breaker_calls_total Calls by outcome: passed (every call that ran), failed, refused (by the dependency, apart from failed) and slow (of those), blocked (rejected).
	// # TYPE breaker_calls_total counter
	// breaker_calls_total{outcome="blocked",resource="inventory"} 1
	// breaker_calls_total{outcome="failed",resource="inventory"} 1
	// breaker_calls_total{outcome="passed",resource="inventory"} 1
	// breaker_calls_total{outcome="refused",resource="inventory"} 0
	// breaker_calls_total{outcome="slow",resource="inventory"} 0
	// # HELP breaker_rejected_total Blocked calls by cause: open (a breaker), forced_open, concurrency_limit, slot, name_too_long, ramping_up, pacing.
	// # TYPE breaker_rejected_total counter
	// breaker_rejected_total{cause="concurrency_limit",resource="inventory"} 0
	// breaker_rejected_total{cause="forced_open",resource="inventory"} 0
	// breaker_rejected_total{cause="name_too_long",resource="inventory"} 0
	// breaker_rejected_total{cause="open",resource="inventory"} 1
	// breaker_rejected_total{cause="pacing",resource="inventory"} 0
	// breaker_rejected_total{cause="ramping_up",resource="inventory"} 0
	// breaker_rejected_total{cause="slot",resource="inventory"} 0
	// # HELP breaker_resource_info 1 for each resource the Collector reports, with its side: server for a route breakerhttp.Middleware serves (a name beginning with breakerhttp.ServerPrefix), client for a call the program makes; no side for resource="_other", whose names may be of either. Join on resource for it.
	// # TYPE breaker_resource_info gauge
	// breaker_resource_info{resource="inventory",side="client"} 1
	// # HELP breaker_state State of the breaker of each loaded rule: 0 CLOSED, 1 OPEN, 2 HALF_OPEN; dry_run="true" when it rejects no call (DryRun rule or ForceClosed resource).
	// # TYPE breaker_state gauge
	// breaker_state{dry_run="false",resource="inventory",rule="inventory-errors"} 1
	// # HELP breaker_transitions_total State changes of the breakers; dry_run="true" for a breaker that rejects no call.
	// # TYPE breaker_transitions_total counter
	// breaker_transitions_total{dry_run="false",from="CLOSED",reason="ThresholdExceeded",resource="inventory",to="OPEN"} 1
	// # HELP breaker_window_bad Of the calls in the window of the breaker of each loaded rule, the slow ones (SlowRequestRatio) or the failed ones (ErrorRatio, ErrorCount); for ConsecutiveErrors, its current run of failures. 0 unless CLOSED.
	// # TYPE breaker_window_bad gauge
	// breaker_window_bad{resource="inventory",rule="inventory-errors"} 0
	// # HELP breaker_window_calls Calls in the window of the breaker of each loaded rule; for ConsecutiveErrors, its current run of failures. 0 unless CLOSED.
	// # TYPE breaker_window_calls gauge
	// breaker_window_calls{resource="inventory",rule="inventory-errors"} 0
	// # HELP breaker_window_ratio breaker_window_bad over breaker_window_calls, from 0 to 1: the slow-call rate (SlowRequestRatio) or the failure rate (ErrorRatio, ErrorCount) of the window of each breaker; 0 while the window is empty, as it is unless CLOSED. None for ConsecutiveErrors.
	// # TYPE breaker_window_ratio gauge
	// breaker_window_ratio{resource="inventory",rule="inventory-errors"} 0
	// # HELP breaker_window_refused Of breaker_window_bad, the calls the dependency refused (Outcome Refused) rather than failed: ErrorRatio and ErrorCount count them apart; 0 for SlowRequestRatio and ConsecutiveErrors, and unless CLOSED.
	// # TYPE breaker_window_refused gauge
	// breaker_window_refused{resource="inventory",rule="inventory-errors"} 0
	// # HELP breaker_would_reject_total Calls that ran although a breaker would have rejected them, by mode: dry_run (DryRun rule) or force_closed.
	// # TYPE breaker_would_reject_total counter
	// breaker_would_reject_total{mode="dry_run",resource="inventory"} 0
	// breaker_would_reject_total{mode="force_closed",resource="inventory"} 0
}
