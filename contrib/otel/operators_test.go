package breakerotel_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakerview"
	breakerotel "github.com/halfopen/breaker/contrib/otel"
)

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

// errorCount trips on n failed calls to resource.
func errorCount(resource string, n float64) breaker.Rule {
	return breaker.Rule{Resource: resource, Strategy: breaker.ErrorCount, Threshold: n,
		MinRequestAmount: 1, RetryTimeout: time.Second}
}

// settings loads cfg into the fixture's Manager.
func (f *fixture) settings(cfg map[string]breaker.ResourceConfig) {
	f.t.Helper()
	require.NoError(f.t, f.m.LoadResources(cfg))
}

// Given calls blocked in each of the four ways, then the blocked calls carry breaker.cause:
// open, forced_open, concurrency_limit or slot, each counted exactly.
func TestRejectionCauses(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { assert.NoError(t, provider.Shutdown(context.Background())) })
	ins, err := breakerotel.New(provider)
	require.NoError(t, err)
	clk := newClock()
	m := breaker.NewManager(breaker.WithClock(clk), breaker.WithSlots(quotaSlot{}), ins.Option())
	require.NoError(t, ins.Watch(m))
	t.Cleanup(func() { assert.NoError(t, ins.Close()) })
	f := &fixture{t: t, clock: clk, reader: reader, ins: ins, m: m}
	require.NoError(t, m.LoadRules([]breaker.Rule{errorCount("svc", 1)}))
	f.settings(map[string]breaker.ResourceConfig{"pool": {MaxConcurrency: 1}})

	require.ErrorIs(t, f.call("svc", 0, errDown), errDown) // trips
	for range 2 {
		require.ErrorIs(t, f.call("svc", 0, nil), breaker.ErrOpen)
	}
	f.settings(map[string]breaker.ResourceConfig{"svc": {Force: breaker.ForceOpen}, "pool": {MaxConcurrency: 1}})
	for range 3 {
		require.ErrorIs(t, f.call("svc", 0, nil), breaker.ErrForcedOpen)
	}
	held, err := m.Enter("pool")
	require.NoError(t, err)
	for range 2 {
		require.ErrorIs(t, f.call("pool", 0, nil), breaker.ErrConcurrencyLimit)
	}
	held.Exit()
	for range 4 {
		require.ErrorIs(t, f.call("quota", 0, nil), errNoQuota)
	}

	f.assertData(breakerotel.CallsName, counter(
		calls("svc", breakerotel.OutcomePassed, 1),
		calls("svc", breakerotel.OutcomeFailed, 1),
		blocked("svc", breaker.BlockedByBreaker.String(), 2),
		blocked("svc", breaker.BlockedByForce.String(), 3),
		calls("pool", breakerotel.OutcomePassed, 1),
		blocked("pool", breaker.BlockedByLimit.String(), 2),
		blocked("quota", breaker.BlockedBySlot.String(), 4),
	))
}

// Given a DryRun rule and a ForceClosed resource whose breakers trip, then the calls they
// would have rejected pass and count as would_reject by mode; their states and transitions
// carry breaker.dry_run true, beside an enforcing breaker's false.
func TestDryRunAndForceClosed(t *testing.T) {
	dry := errorCount("shadow", 2)
	dry.DryRun = true
	enforced := errorCount("shadow", 5)
	enforced.ID = "enforced"
	f := newFixture(t, []breaker.Rule{dry, enforced, errorCount("bypassed", 1)})
	f.settings(map[string]breaker.ResourceConfig{"bypassed": {Force: breaker.ForceClosed}})

	for range 2 {
		require.ErrorIs(t, f.call("shadow", 0, errDown), errDown) // trips the DryRun rule
	}
	for range 3 {
		require.NoError(t, f.call("shadow", 0, nil)) // it would reject these
	}
	require.ErrorIs(t, f.call("bypassed", 0, errDown), errDown) // trips
	for range 4 {
		require.ErrorIs(t, f.call("bypassed", 0, errDown), errDown) // would be rejected
	}

	f.assertData(breakerotel.CallsName, counter(
		calls("shadow", breakerotel.OutcomePassed, 5),
		calls("shadow", breakerotel.OutcomeFailed, 2),
		wouldReject("shadow", breakerview.DryByRule.String(), 3),
		calls("bypassed", breakerotel.OutcomePassed, 5),
		calls("bypassed", breakerotel.OutcomeFailed, 5),
		wouldReject("bypassed", breakerview.DryByForce.String(), 4),
	))
	f.assertData(breakerotel.StateName, gauge(
		stateDry("shadow", "ErrorCount#0", breaker.Open, true),
		state("shadow", "enforced", breaker.Closed),
		stateDry("bypassed", "ErrorCount#0", breaker.Open, true),
	))
	f.assertData(breakerotel.TransitionsName, counter(
		transitionsDry("shadow", breaker.Closed, breaker.Open, breaker.ThresholdExceeded, true, 1),
		transitionsDry("bypassed", breaker.Closed, breaker.Open, breaker.ThresholdExceeded, true, 1),
	))

	// Back to Auto: the bypassed breaker enforces, and its state says so.
	f.settings(nil)
	f.assertData(breakerotel.StateName, gauge(
		stateDry("shadow", "ErrorCount#0", breaker.Open, true),
		state("shadow", "enforced", breaker.Closed),
		state("bypassed", "ErrorCount#0", breaker.Open),
	))
}

// Given resources with settings, one of them all zero, and calls in flight, then each
// collection reports each resource's force, limit and timeout with breaker.settings.from
// "own", and its calls in flight; the zero settings report calls in flight only; none for a
// resource without settings; nothing once the settings are dropped.
func TestSettingsGauges(t *testing.T) {
	f := newFixture(t, []breaker.Rule{errorCount("payments", 1)})
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
	point := func(resource string, v int64) metricdata.DataPoint[int64] {
		return metricdata.DataPoint[int64]{Value: v, Attributes: set(breakerotel.ResourceKey.String(resource))}
	}
	own := breakerview.SettingsOwn
	f.assertData(breakerotel.ForceName, gauge(settingsPoint("legacy", own, 1), settingsPoint("payments", own, 0),
		settingsPoint("search", own, 2)))
	f.assertData(breakerotel.InFlightName, gauge(point("legacy", 0), point("payments", 2), point("search", 1),
		point("zero", 1)))
	f.assertData(breakerotel.ConcurrencyLimitName, gauge(settingsPoint("legacy", own, 0),
		settingsPoint("payments", own, 20), settingsPoint("search", own, 3)))
	f.assertData(breakerotel.TimeoutName, timeouts(timeoutPoint("legacy", own, 0),
		timeoutPoint("payments", own, 1.5), timeoutPoint("search", own, 0)))

	held[0].Exit()
	f.assertData(breakerotel.InFlightName, gauge(point("legacy", 0), point("payments", 1), point("search", 1),
		point("zero", 1)))
	for _, e := range held[1:] {
		e.Exit()
	}
	f.settings(nil)
	for _, name := range []string{breakerotel.ForceName, breakerotel.InFlightName,
		breakerotel.ConcurrencyLimitName, breakerotel.TimeoutName} {
		_, ok := f.metric(name)
		assert.False(t, ok, "%s reports without settings", name)
	}
}
