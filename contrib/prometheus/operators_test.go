package breakerprom_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
	breakerprom "github.com/halfopen/breaker/contrib/prometheus"
)

// errNoQuota is what quotaSlot blocks calls with.
var errNoQuota = errors.New("no quota")

// quotaSlot blocks every call to the resource "quota".
type quotaSlot struct{}

func (quotaSlot) OnEntry(e *breaker.Entry) error {
	if e.Resource() == "quota" {
		return errNoQuota
	}
	return nil
}

func (quotaSlot) OnExit(*breaker.Entry) {}

// settings loads cfg into the fixture's Manager.
func (f *fixture) settings(cfg map[string]breaker.ResourceConfig) {
	f.t.Helper()
	require.NoError(f.t, f.m.LoadResources(cfg))
}

// Given calls blocked in each of the four ways, then breaker_rejected_total counts each under
// its cause, and their sum is breaker_calls_total's blocked.
func TestRejectionCauses(t *testing.T) {
	clk := newClock()
	c := breakerprom.New(testBuckets)
	m := breaker.NewManager(breaker.WithClock(clk), breaker.WithSlots(quotaSlot{}), c.Option())
	c.Watch(m)
	f := &fixture{t: t, clock: clk, m: m, c: c}
	require.NoError(t, m.LoadRules([]breaker.Rule{errorCount("svc", 1)}))
	f.settings(map[string]breaker.ResourceConfig{
		"svc":    {},
		"killed": {Force: breaker.ForceOpen},
		"pool":   {MaxConcurrency: 1},
	})

	// svc: one failure trips it; two calls are rejected by its OPEN breaker.
	assert.ErrorIs(t, f.call("svc", 0, errDown), errDown)
	for range 2 {
		assert.ErrorIs(t, f.call("svc", 0, nil), breaker.ErrOpen)
	}
	// svc forced open: three calls more, rejected before the breaker.
	f.settings(map[string]breaker.ResourceConfig{"svc": {Force: breaker.ForceOpen}, "pool": {MaxConcurrency: 1}})
	for range 3 {
		assert.ErrorIs(t, f.call("svc", 0, nil), breaker.ErrForcedOpen)
	}
	// pool: one call in flight; the next two are past the limit.
	held, err := m.Enter("pool")
	require.NoError(t, err)
	for range 2 {
		assert.ErrorIs(t, f.call("pool", 0, nil), breaker.ErrConcurrencyLimit)
	}
	held.Exit()
	// quota: a slot blocks every call.
	for range 4 {
		assert.ErrorIs(t, f.call("quota", 0, nil), errNoQuota)
	}

	assertMetrics(t, c, `
		breaker_calls_total{outcome="blocked",resource="pool"} 2
		breaker_calls_total{outcome="failed",resource="pool"} 0
		breaker_calls_total{outcome="passed",resource="pool"} 1
		breaker_calls_total{outcome="refused",resource="pool"} 0
		breaker_calls_total{outcome="slow",resource="pool"} 0
		breaker_calls_total{outcome="blocked",resource="quota"} 4
		breaker_calls_total{outcome="failed",resource="quota"} 0
		breaker_calls_total{outcome="passed",resource="quota"} 0
		breaker_calls_total{outcome="refused",resource="quota"} 0
		breaker_calls_total{outcome="slow",resource="quota"} 0
		breaker_calls_total{outcome="blocked",resource="svc"} 5
		breaker_calls_total{outcome="failed",resource="svc"} 1
		breaker_calls_total{outcome="passed",resource="svc"} 1
		breaker_calls_total{outcome="refused",resource="svc"} 0
		breaker_calls_total{outcome="slow",resource="svc"} 0
		breaker_rejected_total{cause="concurrency_limit",resource="pool"} 2
		breaker_rejected_total{cause="forced_open",resource="pool"} 0
		breaker_rejected_total{cause="name_too_long",resource="pool"} 0
		breaker_rejected_total{cause="open",resource="pool"} 0
		breaker_rejected_total{cause="pacing",resource="pool"} 0
		breaker_rejected_total{cause="ramping_up",resource="pool"} 0
		breaker_rejected_total{cause="slot",resource="pool"} 0
		breaker_rejected_total{cause="concurrency_limit",resource="quota"} 0
		breaker_rejected_total{cause="forced_open",resource="quota"} 0
		breaker_rejected_total{cause="name_too_long",resource="quota"} 0
		breaker_rejected_total{cause="open",resource="quota"} 0
		breaker_rejected_total{cause="pacing",resource="quota"} 0
		breaker_rejected_total{cause="ramping_up",resource="quota"} 0
		breaker_rejected_total{cause="slot",resource="quota"} 4
		breaker_rejected_total{cause="concurrency_limit",resource="svc"} 0
		breaker_rejected_total{cause="forced_open",resource="svc"} 3
		breaker_rejected_total{cause="name_too_long",resource="svc"} 0
		breaker_rejected_total{cause="open",resource="svc"} 2
		breaker_rejected_total{cause="pacing",resource="svc"} 0
		breaker_rejected_total{cause="ramping_up",resource="svc"} 0
		breaker_rejected_total{cause="slot",resource="svc"} 0
	`, "breaker_calls_total", "breaker_rejected_total")
	// The forced-open resource's breaker did not move: it is OPEN from the trip, not forced.
	assertMetrics(t, c, `
		breaker_state{dry_run="false",resource="svc",rule="ErrorCount#0"} 1
	`, "breaker_state")
}

// Given a DryRun rule and a ForceClosed resource whose breakers trip, then the calls they
// would have rejected run and count in breaker_would_reject_total by mode, not as blocked;
// their states and transitions say dry_run="true", beside an enforced breaker's "false".
func TestDryRunAndForceClosed(t *testing.T) {
	dry := errorCount("shadow", 2)
	dry.DryRun = true
	enforced := errorCount("shadow", 5)
	enforced.ID = "enforced"
	f := newFixture(t, dry, enforced, errorCount("bypassed", 1))
	f.settings(map[string]breaker.ResourceConfig{"bypassed": {Force: breaker.ForceClosed}})

	for range 2 {
		assert.ErrorIs(t, f.call("shadow", 0, errDown), errDown) // trips the DryRun rule
	}
	for range 3 {
		require.NoError(t, f.call("shadow", 0, nil)) // it would reject these
	}
	assert.ErrorIs(t, f.call("bypassed", 0, errDown), errDown) // trips
	for range 4 {
		assert.ErrorIs(t, f.call("bypassed", 0, errDown), errDown) // would be rejected
	}

	assertMetrics(t, f.c, `
		breaker_calls_total{outcome="blocked",resource="bypassed"} 0
		breaker_calls_total{outcome="failed",resource="bypassed"} 5
		breaker_calls_total{outcome="passed",resource="bypassed"} 5
		breaker_calls_total{outcome="refused",resource="bypassed"} 0
		breaker_calls_total{outcome="slow",resource="bypassed"} 0
		breaker_calls_total{outcome="blocked",resource="shadow"} 0
		breaker_calls_total{outcome="failed",resource="shadow"} 2
		breaker_calls_total{outcome="passed",resource="shadow"} 5
		breaker_calls_total{outcome="refused",resource="shadow"} 0
		breaker_calls_total{outcome="slow",resource="shadow"} 0
		breaker_would_reject_total{mode="dry_run",resource="bypassed"} 0
		breaker_would_reject_total{mode="force_closed",resource="bypassed"} 4
		breaker_would_reject_total{mode="dry_run",resource="shadow"} 3
		breaker_would_reject_total{mode="force_closed",resource="shadow"} 0
		breaker_state{dry_run="true",resource="bypassed",rule="ErrorCount#0"} 1
		breaker_state{dry_run="true",resource="shadow",rule="ErrorCount#0"} 1
		breaker_state{dry_run="false",resource="shadow",rule="enforced"} 0
		breaker_transitions_total{dry_run="true",from="CLOSED",reason="ThresholdExceeded",resource="bypassed",to="OPEN"} 1
		breaker_transitions_total{dry_run="true",from="CLOSED",reason="ThresholdExceeded",resource="shadow",to="OPEN"} 1
	`, "breaker_calls_total", "breaker_would_reject_total", "breaker_state", "breaker_transitions_total")

	// Back to Auto: the bypassed breaker enforces, and its state says so.
	f.settings(nil)
	assertMetrics(t, f.c, `
		breaker_state{dry_run="false",resource="bypassed",rule="ErrorCount#0"} 1
		breaker_state{dry_run="true",resource="shadow",rule="ErrorCount#0"} 1
		breaker_state{dry_run="false",resource="shadow",rule="enforced"} 0
	`, "breaker_state")
}

// Given resources with settings, one of them all zero, some calls in flight, then each scrape
// reports each resource's force, limit and timeout with settings_from="own", and its calls in
// flight; the zero settings report calls in flight only; a resource without settings reports
// none; and after the settings are dropped, nothing.
func TestSettingsGauges(t *testing.T) {
	f := newFixture(t, errorCount("payments", 1))
	f.settings(map[string]breaker.ResourceConfig{
		"payments": {Timeout: 1500 * time.Millisecond, MaxConcurrency: 20},
		"legacy":   {Force: breaker.ForceOpen},
		"search":   {Force: breaker.ForceClosed, MaxConcurrency: 3},
		"zero":     {},
	})
	var held []*breaker.Entry
	for _, name := range []string{"payments", "payments", "search", "unsettled", "zero"} {
		e, err := f.m.Enter(name)
		require.NoError(t, err)
		held = append(held, e)
	}
	names := []string{"breaker_force", "breaker_in_flight", "breaker_max_concurrency", "breaker_timeout_seconds"}
	assertMetrics(t, f.c, `
		breaker_force{resource="legacy",settings_from="own"} 1
		breaker_force{resource="payments",settings_from="own"} 0
		breaker_force{resource="search",settings_from="own"} 2
		breaker_in_flight{resource="legacy"} 0
		breaker_in_flight{resource="payments"} 2
		breaker_in_flight{resource="search"} 1
		breaker_in_flight{resource="zero"} 1
		breaker_max_concurrency{resource="legacy",settings_from="own"} 0
		breaker_max_concurrency{resource="payments",settings_from="own"} 20
		breaker_max_concurrency{resource="search",settings_from="own"} 3
		breaker_timeout_seconds{resource="legacy",settings_from="own"} 0
		breaker_timeout_seconds{resource="payments",settings_from="own"} 1.5
		breaker_timeout_seconds{resource="search",settings_from="own"} 0
	`, names...)

	held[0].Exit()
	assertMetrics(t, f.c, `
		breaker_in_flight{resource="legacy"} 0
		breaker_in_flight{resource="payments"} 1
		breaker_in_flight{resource="search"} 1
		breaker_in_flight{resource="zero"} 1
	`, "breaker_in_flight")
	for _, e := range held[1:] {
		e.Exit()
	}
	f.settings(nil)
	assertMetrics(t, f.c, ``, names...)
}
