package breakerprom_test

import (
	"context"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakerview"
	breakerprom "github.com/halfopen/breaker/contrib/prometheus"
)

// slowInventory finds a call to inventory slow above 50ms, and never trips.
var slowInventory = breaker.Rule{Resource: "inventory", Strategy: breaker.SlowRequestRatio,
	Threshold: 1, MaxAllowedRT: 50 * time.Millisecond, MinRequestAmount: 100, RetryTimeout: time.Second}

// errorCount trips on n failed calls to resource.
func errorCount(resource string, n float64) breaker.Rule {
	return breaker.Rule{Resource: resource, Strategy: breaker.ErrorCount, Threshold: n,
		MinRequestAmount: 1, RetryTimeout: time.Second}
}

// Given a resource's rules, when calls end in each way, then each counts as passed and, of
// those, as failed, refused (apart from failed) or slow; a rejected call as blocked only; and
// the RT of each call that ran lands in its bucket.
func TestCalls(t *testing.T) {
	tests := []struct {
		name  string
		rules []breaker.Rule
		give  func(f *fixture)
		want  string
	}{
		{
			name:  "a call that succeeded",
			rules: []breaker.Rule{slowInventory},
			give: func(f *fixture) {
				require.NoError(t, f.call("inventory", 5*time.Millisecond, nil))
			},
			want: `
				breaker_calls_total{outcome="blocked",resource="inventory"} 0
				breaker_calls_total{outcome="failed",resource="inventory"} 0
				breaker_calls_total{outcome="passed",resource="inventory"} 1
				breaker_calls_total{outcome="refused",resource="inventory"} 0
				breaker_calls_total{outcome="slow",resource="inventory"} 0
				breaker_rt_seconds_bucket{resource="inventory",le="0.01"} 1
				breaker_rt_seconds_bucket{resource="inventory",le="0.05"} 1
				breaker_rt_seconds_bucket{resource="inventory",le="0.1"} 1
				breaker_rt_seconds_bucket{resource="inventory",le="+Inf"} 1
				breaker_rt_seconds_sum{resource="inventory"} 0.005
				breaker_rt_seconds_count{resource="inventory"} 1
			`,
		},
		{
			name:  "a call that failed",
			rules: []breaker.Rule{slowInventory},
			give: func(f *fixture) {
				assert.ErrorIs(t, f.call("inventory", 20*time.Millisecond, errDown), errDown)
			},
			want: `
				breaker_calls_total{outcome="blocked",resource="inventory"} 0
				breaker_calls_total{outcome="failed",resource="inventory"} 1
				breaker_calls_total{outcome="passed",resource="inventory"} 1
				breaker_calls_total{outcome="refused",resource="inventory"} 0
				breaker_calls_total{outcome="slow",resource="inventory"} 0
				breaker_rt_seconds_bucket{resource="inventory",le="0.01"} 0
				breaker_rt_seconds_bucket{resource="inventory",le="0.05"} 1
				breaker_rt_seconds_bucket{resource="inventory",le="0.1"} 1
				breaker_rt_seconds_bucket{resource="inventory",le="+Inf"} 1
				breaker_rt_seconds_sum{resource="inventory"} 0.02
				breaker_rt_seconds_count{resource="inventory"} 1
			`,
		},
		{
			name:  "a call the dependency refused, and slow",
			rules: []breaker.Rule{slowInventory},
			give: func(f *fixture) {
				refused := breaker.CountAs(errDown, breaker.Refused)
				assert.ErrorIs(t, f.call("inventory", 70*time.Millisecond, refused), errDown)
			},
			want: `
				breaker_calls_total{outcome="blocked",resource="inventory"} 0
				breaker_calls_total{outcome="failed",resource="inventory"} 0
				breaker_calls_total{outcome="passed",resource="inventory"} 1
				breaker_calls_total{outcome="refused",resource="inventory"} 1
				breaker_calls_total{outcome="slow",resource="inventory"} 1
				breaker_rt_seconds_bucket{resource="inventory",le="0.01"} 0
				breaker_rt_seconds_bucket{resource="inventory",le="0.05"} 0
				breaker_rt_seconds_bucket{resource="inventory",le="0.1"} 1
				breaker_rt_seconds_bucket{resource="inventory",le="+Inf"} 1
				breaker_rt_seconds_sum{resource="inventory"} 0.07
				breaker_rt_seconds_count{resource="inventory"} 1
			`,
		},
		{
			name:  "a slow call",
			rules: []breaker.Rule{slowInventory},
			give: func(f *fixture) {
				require.NoError(t, f.call("inventory", 70*time.Millisecond, nil))
			},
			want: `
				breaker_calls_total{outcome="blocked",resource="inventory"} 0
				breaker_calls_total{outcome="failed",resource="inventory"} 0
				breaker_calls_total{outcome="passed",resource="inventory"} 1
				breaker_calls_total{outcome="refused",resource="inventory"} 0
				breaker_calls_total{outcome="slow",resource="inventory"} 1
				breaker_rt_seconds_bucket{resource="inventory",le="0.01"} 0
				breaker_rt_seconds_bucket{resource="inventory",le="0.05"} 0
				breaker_rt_seconds_bucket{resource="inventory",le="0.1"} 1
				breaker_rt_seconds_bucket{resource="inventory",le="+Inf"} 1
				breaker_rt_seconds_sum{resource="inventory"} 0.07
				breaker_rt_seconds_count{resource="inventory"} 1
			`,
		},
		{
			name:  "a call that took exactly MaxAllowedRT is not slow",
			rules: []breaker.Rule{slowInventory},
			give: func(f *fixture) {
				require.NoError(t, f.call("inventory", 50*time.Millisecond, nil))
			},
			want: `
				breaker_calls_total{outcome="blocked",resource="inventory"} 0
				breaker_calls_total{outcome="failed",resource="inventory"} 0
				breaker_calls_total{outcome="passed",resource="inventory"} 1
				breaker_calls_total{outcome="refused",resource="inventory"} 0
				breaker_calls_total{outcome="slow",resource="inventory"} 0
				breaker_rt_seconds_bucket{resource="inventory",le="0.01"} 0
				breaker_rt_seconds_bucket{resource="inventory",le="0.05"} 1
				breaker_rt_seconds_bucket{resource="inventory",le="0.1"} 1
				breaker_rt_seconds_bucket{resource="inventory",le="+Inf"} 1
				breaker_rt_seconds_sum{resource="inventory"} 0.05
				breaker_rt_seconds_count{resource="inventory"} 1
			`,
		},
		{
			name:  "slow calls that failed count as both, over +Inf too",
			rules: []breaker.Rule{slowInventory},
			give: func(f *fixture) {
				assert.ErrorIs(t, f.call("inventory", 80*time.Millisecond, errDown), errDown)
				assert.ErrorIs(t, f.call("inventory", 2*time.Second, errDown), errDown)
			},
			want: `
				breaker_calls_total{outcome="blocked",resource="inventory"} 0
				breaker_calls_total{outcome="failed",resource="inventory"} 2
				breaker_calls_total{outcome="passed",resource="inventory"} 2
				breaker_calls_total{outcome="refused",resource="inventory"} 0
				breaker_calls_total{outcome="slow",resource="inventory"} 2
				breaker_rt_seconds_bucket{resource="inventory",le="0.01"} 0
				breaker_rt_seconds_bucket{resource="inventory",le="0.05"} 0
				breaker_rt_seconds_bucket{resource="inventory",le="0.1"} 1
				breaker_rt_seconds_bucket{resource="inventory",le="+Inf"} 2
				breaker_rt_seconds_sum{resource="inventory"} 2.08
				breaker_rt_seconds_count{resource="inventory"} 2
			`,
		},
		{
			name:  "a canceled call passed, and neither failed nor was slow",
			rules: []breaker.Rule{slowInventory},
			give: func(f *fixture) {
				assert.ErrorIs(t, f.call("inventory", time.Millisecond, context.Canceled), context.Canceled)
			},
			want: `
				breaker_calls_total{outcome="blocked",resource="inventory"} 0
				breaker_calls_total{outcome="failed",resource="inventory"} 0
				breaker_calls_total{outcome="passed",resource="inventory"} 1
				breaker_calls_total{outcome="refused",resource="inventory"} 0
				breaker_calls_total{outcome="slow",resource="inventory"} 0
				breaker_rt_seconds_bucket{resource="inventory",le="0.01"} 1
				breaker_rt_seconds_bucket{resource="inventory",le="0.05"} 1
				breaker_rt_seconds_bucket{resource="inventory",le="0.1"} 1
				breaker_rt_seconds_bucket{resource="inventory",le="+Inf"} 1
				breaker_rt_seconds_sum{resource="inventory"} 0.001
				breaker_rt_seconds_count{resource="inventory"} 1
			`,
		},
		{
			name:  "a call that panicked failed",
			rules: []breaker.Rule{slowInventory},
			give: func(f *fixture) {
				assert.Panics(t, func() {
					_ = f.m.Do(t.Context(), "inventory", func(context.Context) error {
						f.clock.Advance(30 * time.Millisecond)
						panic("boom")
					})
				})
			},
			want: `
				breaker_calls_total{outcome="blocked",resource="inventory"} 0
				breaker_calls_total{outcome="failed",resource="inventory"} 1
				breaker_calls_total{outcome="passed",resource="inventory"} 1
				breaker_calls_total{outcome="refused",resource="inventory"} 0
				breaker_calls_total{outcome="slow",resource="inventory"} 0
				breaker_rt_seconds_bucket{resource="inventory",le="0.01"} 0
				breaker_rt_seconds_bucket{resource="inventory",le="0.05"} 1
				breaker_rt_seconds_bucket{resource="inventory",le="0.1"} 1
				breaker_rt_seconds_bucket{resource="inventory",le="+Inf"} 1
				breaker_rt_seconds_sum{resource="inventory"} 0.03
				breaker_rt_seconds_count{resource="inventory"} 1
			`,
		},
		{
			name:  "calls rejected by an open breaker are blocked, with no RT",
			rules: []breaker.Rule{errorCount("payments", 1)},
			give: func(f *fixture) {
				assert.ErrorIs(t, f.call("payments", 5*time.Millisecond, errDown), errDown)
				assert.ErrorIs(t, f.call("payments", 5*time.Millisecond, nil), breaker.ErrOpen)
				assert.ErrorIs(t, f.call("payments", 5*time.Millisecond, nil), breaker.ErrOpen)
			},
			want: `
				breaker_calls_total{outcome="blocked",resource="payments"} 2
				breaker_calls_total{outcome="failed",resource="payments"} 1
				breaker_calls_total{outcome="passed",resource="payments"} 1
				breaker_calls_total{outcome="refused",resource="payments"} 0
				breaker_calls_total{outcome="slow",resource="payments"} 0
				breaker_rt_seconds_bucket{resource="payments",le="0.01"} 1
				breaker_rt_seconds_bucket{resource="payments",le="0.05"} 1
				breaker_rt_seconds_bucket{resource="payments",le="0.1"} 1
				breaker_rt_seconds_bucket{resource="payments",le="+Inf"} 1
				breaker_rt_seconds_sum{resource="payments"} 0.005
				breaker_rt_seconds_count{resource="payments"} 1
			`,
		},
		{
			name: "a resource without rules is counted from its first call",
			give: func(f *fixture) {
				require.NoError(t, f.call("unruled", 60*time.Millisecond, nil))
			},
			want: `
				breaker_calls_total{outcome="blocked",resource="unruled"} 0
				breaker_calls_total{outcome="failed",resource="unruled"} 0
				breaker_calls_total{outcome="passed",resource="unruled"} 1
				breaker_calls_total{outcome="refused",resource="unruled"} 0
				breaker_calls_total{outcome="slow",resource="unruled"} 0
				breaker_rt_seconds_bucket{resource="unruled",le="0.01"} 0
				breaker_rt_seconds_bucket{resource="unruled",le="0.05"} 0
				breaker_rt_seconds_bucket{resource="unruled",le="0.1"} 1
				breaker_rt_seconds_bucket{resource="unruled",le="+Inf"} 1
				breaker_rt_seconds_sum{resource="unruled"} 0.06
				breaker_rt_seconds_count{resource="unruled"} 1
			`,
		},
		{
			name: "a resource name that is not UTF-8 is reported with U+FFFD",
			give: func(f *fixture) {
				require.NoError(t, f.call("bad\xffname", 0, nil))
			},
			want: `
				breaker_calls_total{outcome="blocked",resource="bad�name"} 0
				breaker_calls_total{outcome="failed",resource="bad�name"} 0
				breaker_calls_total{outcome="passed",resource="bad�name"} 1
				breaker_calls_total{outcome="refused",resource="bad�name"} 0
				breaker_calls_total{outcome="slow",resource="bad�name"} 0
				breaker_rt_seconds_bucket{resource="bad�name",le="0.01"} 1
				breaker_rt_seconds_bucket{resource="bad�name",le="0.05"} 1
				breaker_rt_seconds_bucket{resource="bad�name",le="0.1"} 1
				breaker_rt_seconds_bucket{resource="bad�name",le="+Inf"} 1
				breaker_rt_seconds_sum{resource="bad�name"} 0
				breaker_rt_seconds_count{resource="bad�name"} 1
			`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, tt.rules...)
			tt.give(f)
			assertMetrics(t, f.c, tt.want, "breaker_calls_total", "breaker_rt_seconds")
		})
	}
}

// Given a breaker that trips on two failures, when it trips, fails a probe, and recovers with
// the next, then each scrape reads its state at that moment and every transition is counted
// by its states and reason.
func TestTripAndRecovery(t *testing.T) {
	rule := errorCount("flaky", 2)
	rule.ID = "flaky-errors"
	f := newFixture(t, rule)
	var probe *breaker.Entry

	steps := []struct {
		name       string
		give       func()
		wantStates string
	}{
		{
			name:       "loaded",
			give:       func() {},
			wantStates: `breaker_state{dry_run="false",resource="flaky",rule="flaky-errors"} 0`,
		},
		{
			name: "two failures trip it",
			give: func() {
				assert.ErrorIs(t, f.call("flaky", time.Millisecond, errDown), errDown)
				assert.ErrorIs(t, f.call("flaky", time.Millisecond, errDown), errDown)
				assert.ErrorIs(t, f.call("flaky", time.Millisecond, nil), breaker.ErrOpen)
			},
			wantStates: `breaker_state{dry_run="false",resource="flaky",rule="flaky-errors"} 1`,
		},
		{
			name: "the first probe fails",
			give: func() {
				f.clock.Advance(time.Second)
				assert.ErrorIs(t, f.call("flaky", time.Millisecond, errDown), errDown)
			},
			wantStates: `breaker_state{dry_run="false",resource="flaky",rule="flaky-errors"} 1`,
		},
		{
			name: "the second probe is in flight",
			give: func() {
				f.clock.Advance(time.Second)
				var err error
				probe, err = f.m.Enter("flaky")
				require.NoError(t, err)
			},
			wantStates: `breaker_state{dry_run="false",resource="flaky",rule="flaky-errors"} 2`,
		},
		{
			name:       "it succeeds",
			give:       func() { probe.Exit() },
			wantStates: `breaker_state{dry_run="false",resource="flaky",rule="flaky-errors"} 0`,
		},
	}
	for _, step := range steps {
		step.give()
		t.Run(step.name, func(t *testing.T) {
			assertMetrics(t, f.c, step.wantStates, "breaker_state")
		})
	}

	assertMetrics(t, f.c, `
		breaker_transitions_total{dry_run="false",from="CLOSED",reason="ThresholdExceeded",resource="flaky",to="OPEN"} 1
		breaker_transitions_total{dry_run="false",from="HALF_OPEN",reason="ProbeFailed",resource="flaky",to="OPEN"} 1
		breaker_transitions_total{dry_run="false",from="HALF_OPEN",reason="ProbeSucceeded",resource="flaky",to="CLOSED"} 1
		breaker_transitions_total{dry_run="false",from="OPEN",reason="RetryTimeoutElapsed",resource="flaky",to="HALF_OPEN"} 2
	`, "breaker_transitions_total")
	// The call of the in-flight probe was made with Enter and Exit: it counts as passed too.
	assertMetrics(t, f.c, `
		breaker_calls_total{outcome="blocked",resource="flaky"} 1
		breaker_calls_total{outcome="failed",resource="flaky"} 3
		breaker_calls_total{outcome="passed",resource="flaky"} 4
		breaker_calls_total{outcome="refused",resource="flaky"} 0
		breaker_calls_total{outcome="slow",resource="flaky"} 0
	`, "breaker_calls_total")
}

// Given two tripped breakers of one resource and a breaker of another, when the rules are
// reloaded with one breaker kept, one changed, one removed and one added, then the scrape shows
// the kept breaker still OPEN, the changed one CLOSED after a RuleChanged transition, no
// removed breaker, and the added one CLOSED; the calls counted stay counted.
func TestStatesAfterReload(t *testing.T) {
	orderErrors := errorCount("orders", 1)
	orderErrors.ID = "orders-errors"
	orderSlow := breaker.Rule{Resource: "orders", Strategy: breaker.SlowRequestRatio, Threshold: 1,
		MaxAllowedRT: 100 * time.Millisecond, MinRequestAmount: 1, RetryTimeout: time.Second}
	search := breaker.Rule{Resource: "search", Strategy: breaker.ErrorRatio, Threshold: 0.5,
		RetryTimeout: time.Second}
	f := newFixture(t, orderErrors, orderSlow, search)

	assert.ErrorIs(t, f.call("orders", 200*time.Millisecond, errDown), errDown) // trips both
	assertMetrics(t, f.c, `
		breaker_state{dry_run="false",resource="orders",rule="SlowRequestRatio#1"} 1
		breaker_state{dry_run="false",resource="orders",rule="orders-errors"} 1
		breaker_state{dry_run="false",resource="search",rule="ErrorRatio#0"} 0
	`, "breaker_state")

	changedSlow := orderSlow
	changedSlow.StatInterval = 2 * time.Second // a new window: a new breaker
	require.NoError(t, f.m.LoadRules([]breaker.Rule{changedSlow, orderErrors, errorCount("mail", 3)}))

	assertMetrics(t, f.c, `
		breaker_state{dry_run="false",resource="mail",rule="ErrorCount#0"} 0
		breaker_state{dry_run="false",resource="orders",rule="SlowRequestRatio#0"} 0
		breaker_state{dry_run="false",resource="orders",rule="orders-errors"} 1
	`, "breaker_state")
	assertMetrics(t, f.c, `
		breaker_transitions_total{dry_run="false",from="CLOSED",reason="ThresholdExceeded",resource="orders",to="OPEN"} 2
		breaker_transitions_total{dry_run="false",from="OPEN",reason="RuleChanged",resource="orders",to="CLOSED"} 1
	`, "breaker_transitions_total")
	assertMetrics(t, f.c, `
		breaker_calls_total{outcome="blocked",resource="orders"} 0
		breaker_calls_total{outcome="failed",resource="orders"} 1
		breaker_calls_total{outcome="passed",resource="orders"} 1
		breaker_calls_total{outcome="refused",resource="orders"} 0
		breaker_calls_total{outcome="slow",resource="orders"} 1
	`, "breaker_calls_total")
}

// Given the rules of one resource, then each breaker's rule label is its rule's ID, or its
// strategy and index when the ID is empty or taken; a breaker whose label is still taken is
// left out rather than failing the scrape.
func TestRuleLabels(t *testing.T) {
	withID := func(r breaker.Rule, id string) breaker.Rule {
		r.ID = id
		return r
	}
	ratio := breaker.Rule{Resource: "svc", Strategy: breaker.ErrorRatio, Threshold: 0.5, RetryTimeout: time.Second}

	tests := []struct {
		name string
		give []breaker.Rule
		want string
	}{
		{
			name: "IDs",
			give: []breaker.Rule{withID(errorCount("svc", 1), "a"), withID(ratio, "b")},
			want: `
				breaker_state{dry_run="false",resource="svc",rule="a"} 0
				breaker_state{dry_run="false",resource="svc",rule="b"} 0
			`,
		},
		{
			name: "no IDs",
			give: []breaker.Rule{errorCount("svc", 1), ratio, errorCount("svc", 2)},
			want: `
				breaker_state{dry_run="false",resource="svc",rule="ErrorCount#0"} 0
				breaker_state{dry_run="false",resource="svc",rule="ErrorCount#2"} 0
				breaker_state{dry_run="false",resource="svc",rule="ErrorRatio#1"} 0
			`,
		},
		{
			name: "an ID repeated",
			give: []breaker.Rule{withID(errorCount("svc", 1), "a"), withID(ratio, "a")},
			want: `
				breaker_state{dry_run="false",resource="svc",rule="ErrorRatio#1"} 0
				breaker_state{dry_run="false",resource="svc",rule="a"} 0
			`,
		},
		{
			name: "the same ID on two resources",
			give: []breaker.Rule{withID(errorCount("svc", 1), "a"), withID(errorCount("db", 1), "a")},
			want: `
				breaker_state{dry_run="false",resource="db",rule="a"} 0
				breaker_state{dry_run="false",resource="svc",rule="a"} 0
			`,
		},
		{
			name: "an ID spelled as the next rule's label",
			give: []breaker.Rule{withID(errorCount("svc", 1), "ErrorRatio#1"), ratio},
			want: `
				breaker_state{dry_run="false",resource="svc",rule="ErrorRatio#1"} 0
			`,
		},
		{
			name: "an ID that is not UTF-8",
			give: []breaker.Rule{withID(errorCount("svc", 1), "id\xff")},
			want: `
				breaker_state{dry_run="false",resource="svc",rule="id�"} 0
			`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, tt.give...)
			assertMetrics(t, f.c, tt.want, "breaker_state")
		})
	}
}

// Given a Collector whose Option a Manager took but that watches nothing, then it counts the
// calls and reports no state and no transition; when it then watches the Manager, it does.
func TestUnwatched(t *testing.T) {
	clk := newClock()
	c := breakerprom.New(testBuckets)
	m := breaker.NewManager(breaker.WithClock(clk), c.Option())
	require.NoError(t, m.LoadRules([]breaker.Rule{errorCount("svc", 1)}))

	assert.ErrorIs(t, m.Do(t.Context(), "svc", func(context.Context) error { return errDown }), errDown)
	assertMetrics(t, c, `
		breaker_calls_total{outcome="blocked",resource="svc"} 0
		breaker_calls_total{outcome="failed",resource="svc"} 1
		breaker_calls_total{outcome="passed",resource="svc"} 1
		breaker_calls_total{outcome="refused",resource="svc"} 0
		breaker_calls_total{outcome="slow",resource="svc"} 0
	`, "breaker_calls_total", "breaker_state", "breaker_transitions_total")

	c.Watch(m)
	clk.Advance(time.Second)
	require.NoError(t, m.Do(t.Context(), "svc", func(context.Context) error { return nil }))
	assertMetrics(t, c, `
		breaker_state{dry_run="false",resource="svc",rule="ErrorCount#0"} 0
		breaker_transitions_total{dry_run="false",from="HALF_OPEN",reason="ProbeSucceeded",resource="svc",to="CLOSED"} 1
		breaker_transitions_total{dry_run="false",from="OPEN",reason="RetryTimeoutElapsed",resource="svc",to="HALF_OPEN"} 1
	`, "breaker_state", "breaker_transitions_total")
}

// Given a Collector watching one Manager, when it watches another, then it reports the states
// of the other only, counts no more transitions of the first and keeps those it counted; when
// it watches nil, it reports no state. A Manager made without its Option has no calls counted.
func TestWatchAnother(t *testing.T) {
	f := newFixture(t, errorCount("first", 1))
	assert.ErrorIs(t, f.call("first", 0, errDown), errDown)

	second := breaker.NewManager() // without f.c.Option(), as breaker.Default() is
	require.NoError(t, second.LoadRules([]breaker.Rule{errorCount("second", 1)}))
	f.c.Watch(second)
	f.clock.Advance(time.Second)
	require.NoError(t, f.call("first", 0, nil)) // a probe: two transitions not counted
	assert.ErrorIs(t, second.Do(t.Context(), "second", func(context.Context) error { return errDown }), errDown)

	assertMetrics(t, f.c, `
		breaker_calls_total{outcome="blocked",resource="first"} 0
		breaker_calls_total{outcome="failed",resource="first"} 1
		breaker_calls_total{outcome="passed",resource="first"} 2
		breaker_calls_total{outcome="refused",resource="first"} 0
		breaker_calls_total{outcome="slow",resource="first"} 0
		breaker_state{dry_run="false",resource="second",rule="ErrorCount#0"} 1
		breaker_transitions_total{dry_run="false",from="CLOSED",reason="ThresholdExceeded",resource="first",to="OPEN"} 1
		breaker_transitions_total{dry_run="false",from="CLOSED",reason="ThresholdExceeded",resource="second",to="OPEN"} 1
	`, "breaker_calls_total", "breaker_state", "breaker_transitions_total")

	f.c.Watch(nil)
	assertMetrics(t, f.c, ``, "breaker_state")
}

// Given calls from many goroutines while scrapes run, a quarter failing and a quarter refused,
// then the counts are exact, the refused apart from the failed.
func TestConcurrentCalls(t *testing.T) {
	const goroutines, calls = 8, 500
	f := newFixture(t, slowInventory)
	// The call series appear at a resource's first call: make it before the scrapes start.
	require.NoError(t, f.m.Do(t.Context(), "inventory", func(context.Context) error { return nil }))
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range calls {
				err := error(nil)
				switch (g + i) % 4 {
				case 0:
					err = errDown
				case 1:
					err = breaker.CountAs(errDown, breaker.Refused)
				}
				_ = f.m.Do(t.Context(), "inventory", func(context.Context) error { return err })
			}
		})
	}
	wg.Go(func() {
		for range 20 {
			assert.Equal(t, 6, testutil.CollectAndCount(f.c, "breaker_calls_total", "breaker_state"))
		}
	})
	wg.Wait()

	assertMetrics(t, f.c, `
		breaker_calls_total{outcome="blocked",resource="inventory"} 0
		breaker_calls_total{outcome="failed",resource="inventory"} 1000
		breaker_calls_total{outcome="passed",resource="inventory"} 4001
		breaker_calls_total{outcome="refused",resource="inventory"} 1000
		breaker_calls_total{outcome="slow",resource="inventory"} 0
		breaker_rt_seconds_bucket{resource="inventory",le="0.01"} 4001
		breaker_rt_seconds_bucket{resource="inventory",le="0.05"} 4001
		breaker_rt_seconds_bucket{resource="inventory",le="0.1"} 4001
		breaker_rt_seconds_bucket{resource="inventory",le="+Inf"} 4001
		breaker_rt_seconds_sum{resource="inventory"} 0
		breaker_rt_seconds_count{resource="inventory"} 4001
	`, "breaker_calls_total", "breaker_rt_seconds")
}

// Given WithBuckets or not, then breaker_rt_seconds has the bounds asked for, sorted, without
// repeats or non-finite values, or the default ones.
func TestBuckets(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	tests := []struct {
		name string
		give []breakerprom.Option
		want []float64
	}{
		{name: "default", want: breakerprom.DefaultBuckets},
		{name: "given", give: []breakerprom.Option{breakerprom.WithBuckets(.2, .4)}, want: []float64{.2, .4}},
		{name: "unsorted, repeated, not finite", give: []breakerprom.Option{breakerprom.WithBuckets(.4, nan, .2, .4, inf)},
			want: []float64{.2, .4}},
		{name: "none", give: []breakerprom.Option{breakerprom.WithBuckets()}, want: breakerprom.DefaultBuckets},
		{name: "none finite", give: []breakerprom.Option{breakerprom.WithBuckets(nan, inf)}, want: breakerprom.DefaultBuckets},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := breakerprom.New(tt.give...)
			m := breaker.NewManager(c.Option())
			require.NoError(t, m.Do(t.Context(), "svc", func(context.Context) error { return nil }))

			reg := prometheus.NewPedanticRegistry()
			require.NoError(t, reg.Register(c))
			families, err := reg.Gather()
			require.NoError(t, err)
			var bounds []float64
			for _, family := range families {
				if family.GetName() == "breaker_rt_seconds" {
					require.Len(t, family.GetMetric(), 1)
					for _, b := range family.GetMetric()[0].GetHistogram().GetBucket() {
						bounds = append(bounds, b.GetUpperBound())
					}
				}
			}
			assert.Equal(t, tt.want, bounds)
		})
	}
}

// Given every metric with series, then promlint finds nothing to fault in their names, types
// and help, and a pedantic registry finds Describe and Collect consistent.
func TestLint(t *testing.T) {
	f := newOverrideFixture(t, nil, errorCount("svc", 1))
	assert.ErrorIs(t, f.call("svc", time.Millisecond, errDown), errDown)
	assert.ErrorIs(t, f.call("svc", time.Millisecond, nil), breaker.ErrOpen)
	f.override("svc", breaker.ForceClosed, time.Hour)

	problems, err := testutil.CollectAndLint(f.c)
	require.NoError(t, err)
	assert.Empty(t, problems)

	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(f.c))
	_, err = reg.Gather()
	assert.NoError(t, err)
}

// Given a template rule, then each name it made breakers for has breaker_state and the window
// gauges while it has series of its own, a name counted under "_other" has none, and the
// breaker_template metrics count the breakers, the limit and the drops.
func TestTemplateBreakers(t *testing.T) {
	c := breakerprom.New(testBuckets, breakerprom.WithLimits(breakerview.Limits{Names: 2}))
	clock := newClock()
	m := breaker.NewManager(breaker.WithClock(clock), c.Option(), breaker.WithMaxTemplateBreakers(2))
	c.Watch(m)
	assert.Zero(t, testutil.CollectAndCount(c, "breaker_template_breakers"), "no template, no metric")
	tmpl := errorCount("api/*", 1)
	tmpl.ID = "per-host"
	require.NoError(t, m.LoadRules([]breaker.Rule{tmpl}))
	assertMetrics(t, c, `
		breaker_template_breakers 0
		breaker_template_limit 2
		breaker_template_dropped_total 0
	`, "breaker_template_breakers", "breaker_template_limit", "breaker_template_dropped_total")

	f := &fixture{t: t, clock: clock, m: m, c: c}
	assert.ErrorIs(t, f.call("api/a", 0, errDown), errDown) // trips api/a
	require.NoError(t, f.call("api/b", 0, nil))
	clock.Advance(time.Second)
	require.NoError(t, f.call("api/c", 0, nil)) // _other; drops api/b, the idle CLOSED one
	assertMetrics(t, c, `
		breaker_state{dry_run="false",resource="api/a",rule="per-host"} 1
		breaker_window_calls{resource="api/a",rule="per-host"} 0
		breaker_window_bad{resource="api/a",rule="per-host"} 0
		breaker_window_ratio{resource="api/a",rule="per-host"} 0
	`, "breaker_state", "breaker_window_calls", "breaker_window_bad", "breaker_window_ratio")
	assertMetrics(t, c, `
		breaker_template_breakers 2
		breaker_template_limit 2
		breaker_template_dropped_total 1
	`, "breaker_template_breakers", "breaker_template_limit", "breaker_template_dropped_total")
}

// Given a rule with RampUp, then breaker_ramping_up is 0 until a probe closes its breaker, 1
// while the ramp paces its calls, and 0 once a bucket took the whole flow; a rule without
// RampUp has no series.
func TestRampingUp(t *testing.T) {
	rule := errorCount("warming", 2)
	rule.ID, rule.RampUp = "warming-errors", time.Minute
	f := newFixture(t, rule, errorCount("plain", 2))
	assertMetrics(t, f.c, `breaker_ramping_up{resource="warming",rule="warming-errors"} 0`, "breaker_ramping_up")
	for range 2 {
		assert.ErrorIs(t, f.call("warming", 0, errDown), errDown)
	}
	f.clock.Advance(time.Second)
	require.NoError(t, f.call("warming", 0, nil), "the probe")
	assertMetrics(t, f.c, `breaker_ramping_up{resource="warming",rule="warming-errors"} 1`, "breaker_ramping_up")
	require.NoError(t, f.call("warming", 0, nil), "a call of the first bucket, let through")
	f.clock.Advance(100 * time.Millisecond) // the next bucket: the first one held nothing back
	require.NoError(t, f.call("warming", 0, nil))
	assertMetrics(t, f.c, `breaker_ramping_up{resource="warming",rule="warming-errors"} 0`, "breaker_ramping_up")
}

// Given a rule with Pace, then breaker_pacing is 0 until its window meets the threshold with
// successes in it, 1 while its breaker paces, which counts the calls it holds back under
// breaker_rejected_total{cause="pacing"}, and 0 once a bucket held nothing back; a rule without
// Pace has no series.
func TestPacing(t *testing.T) {
	rule := breaker.Rule{ID: "quota-errors", Resource: "quota", Strategy: breaker.ErrorRatio, Threshold: 0.5,
		MinRequestAmount: 4, RetryTimeout: time.Second, Pace: true}
	f := newFixture(t, rule, errorCount("plain", 2))
	assertMetrics(t, f.c, `breaker_pacing{resource="quota",rule="quota-errors"} 0`, "breaker_pacing")
	for _, err := range []error{nil, nil, errDown, errDown} {
		assert.Equal(t, err, f.call("quota", 0, err)) // the fourth meets 0.5 with two successes
	}
	assertMetrics(t, f.c, `breaker_pacing{resource="quota",rule="quota-errors"} 1`, "breaker_pacing")
	assert.ErrorIs(t, f.call("quota", 0, nil), breaker.ErrPacing, "held back in the same bucket")
	assert.Equal(t, 1., valueOf(t, f.c, "breaker_rejected_total",
		map[string]string{"resource": "quota", "cause": breaker.BlockedByPacing.String()}))
	assert.Zero(t, valueOf(t, f.c, "breaker_rejected_total",
		map[string]string{"resource": "quota", "cause": breaker.BlockedByBreaker.String()}), "not rejected by an OPEN breaker")
	f.clock.Advance(100 * time.Millisecond)
	require.NoError(t, f.call("quota", 0, nil), "the next bucket: let through, it holds nothing back")
	f.clock.Advance(100 * time.Millisecond)
	require.NoError(t, f.call("quota", 0, nil))
	assertMetrics(t, f.c, `breaker_pacing{resource="quota",rule="quota-errors"} 0`, "breaker_pacing")
	assertMetrics(t, f.c, `breaker_transitions_total{dry_run="false",from="CLOSED",reason="PacingEnded",resource="quota",to="CLOSED"} 1
		breaker_transitions_total{dry_run="false",from="CLOSED",reason="PacingStarted",resource="quota",to="CLOSED"} 1`,
		"breaker_transitions_total")
}

// Given the three strategies that keep a window and a ConsecutiveErrors rule on one resource,
// with calls of known RTs and outcomes on the fake clock, then the window gauges are each
// breaker's window: its calls, its slow (SlowRequestRatio) or failed (ErrorRatio, ErrorCount)
// calls and their share; the ConsecutiveErrors breaker its run of failures and no ratio. Once
// the window's time has passed, the window is empty: 0 calls, ratio 0. A tripped breaker's are 0.
func TestWindow(t *testing.T) {
	const minute = time.Minute
	f := newFixture(t,
		breaker.Rule{ID: "db-errors", Resource: "db", Strategy: breaker.ErrorRatio, Threshold: 0.9,
			MinRequestAmount: 100, StatInterval: minute, RetryTimeout: minute},
		breaker.Rule{ID: "db-slow", Resource: "db", Strategy: breaker.SlowRequestRatio, Threshold: 0.9,
			MaxAllowedRT: 100 * time.Millisecond, MinRequestAmount: 100, StatInterval: minute, RetryTimeout: minute},
		breaker.Rule{ID: "db-count", Resource: "db", Strategy: breaker.ErrorCount, Threshold: 100,
			MinRequestAmount: 1, StatInterval: minute, RetryTimeout: minute},
		breaker.Rule{ID: "db-run", Resource: "db", Strategy: breaker.ConsecutiveErrors, Threshold: 5,
			RetryTimeout: minute},
		errorCount("mail", 1),
	)
	require.NoError(t, f.call("db", 200*time.Millisecond, nil)) // slow
	require.NoError(t, f.call("db", 10*time.Millisecond, nil))
	assert.ErrorIs(t, f.call("db", 10*time.Millisecond, errDown), errDown)
	assert.ErrorIs(t, f.call("db", 10*time.Millisecond, errDown), errDown) // a run of 2
	assert.ErrorIs(t, f.call("mail", 0, errDown), errDown)                 // trips

	families := []string{"breaker_window_calls", "breaker_window_bad", "breaker_window_ratio"}
	assertMetrics(t, f.c, `
		breaker_window_calls{resource="db",rule="db-count"} 4
		breaker_window_calls{resource="db",rule="db-errors"} 4
		breaker_window_calls{resource="db",rule="db-run"} 2
		breaker_window_calls{resource="db",rule="db-slow"} 4
		breaker_window_calls{resource="mail",rule="ErrorCount#0"} 0
		breaker_window_bad{resource="db",rule="db-count"} 2
		breaker_window_bad{resource="db",rule="db-errors"} 2
		breaker_window_bad{resource="db",rule="db-run"} 2
		breaker_window_bad{resource="db",rule="db-slow"} 1
		breaker_window_bad{resource="mail",rule="ErrorCount#0"} 0
		breaker_window_ratio{resource="db",rule="db-count"} 0.5
		breaker_window_ratio{resource="db",rule="db-errors"} 0.5
		breaker_window_ratio{resource="db",rule="db-slow"} 0.25
		breaker_window_ratio{resource="mail",rule="ErrorCount#0"} 0
	`, families...)

	f.clock.Advance(2 * minute) // the windows have moved past every call; the run goes on
	assertMetrics(t, f.c, `
		breaker_window_calls{resource="db",rule="db-count"} 0
		breaker_window_calls{resource="db",rule="db-errors"} 0
		breaker_window_calls{resource="db",rule="db-run"} 2
		breaker_window_calls{resource="db",rule="db-slow"} 0
		breaker_window_calls{resource="mail",rule="ErrorCount#0"} 0
		breaker_window_bad{resource="db",rule="db-count"} 0
		breaker_window_bad{resource="db",rule="db-errors"} 0
		breaker_window_bad{resource="db",rule="db-run"} 2
		breaker_window_bad{resource="db",rule="db-slow"} 0
		breaker_window_bad{resource="mail",rule="ErrorCount#0"} 0
		breaker_window_ratio{resource="db",rule="db-count"} 0
		breaker_window_ratio{resource="db",rule="db-errors"} 0
		breaker_window_ratio{resource="db",rule="db-slow"} 0
		breaker_window_ratio{resource="mail",rule="ErrorCount#0"} 0
	`, families...)
}
