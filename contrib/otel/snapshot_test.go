package breakerotel_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakerview"
	breakerotel "github.com/halfopen/breaker/contrib/otel"
)

// snapshotInstruments are the instruments a collection reads from the Manager's Snapshot.
var snapshotInstruments = []string{breakerotel.StateName, breakerotel.StatusName, breakerotel.RampingUpName,
	breakerotel.PacingName, breakerotel.WindowCallsName, breakerotel.WindowBadName, breakerotel.WindowRatioName,
	breakerotel.ForceName, breakerotel.InFlightName, breakerotel.ConcurrencyLimitName, breakerotel.TimeoutName,
	breakerotel.OverrideName, breakerotel.OverrideEndName, breakerotel.TemplateBreakersName,
	breakerotel.TemplateSettingsName, breakerotel.TemplateLimitName, breakerotel.TemplateDroppedName}

// resourceIn returns what snap holds of the resource name, failing t if it holds nothing.
func resourceIn(t *testing.T, snap *breaker.Snapshot, name string) *breaker.ResourceStatus {
	t.Helper()
	r := snap.Resource(name)
	require.NotNil(t, r, name)
	return r
}

// point names one data point: its instrument and its attributes.
func point(instrument string, kvs ...attribute.KeyValue) string {
	s := attribute.NewSet(kvs...)
	return instrument + "{" + s.Encoded(attribute.DefaultEncoder()) + "}"
}

// observed collects f once and returns the value of each data point of snapshotInstruments, by
// point.
func (f *fixture) observed() map[string]float64 {
	f.t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(f.t, f.reader.Collect(context.Background(), &rm))
	got := map[string]float64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if !slices.Contains(snapshotInstruments, m.Name) {
				continue
			}
			add := func(attrs attribute.Set, v float64) { got[point(m.Name, attrs.ToSlice()...)] = v }
			switch d := m.Data.(type) {
			case metricdata.Gauge[int64]:
				for _, p := range d.DataPoints {
					add(p.Attributes, float64(p.Value))
				}
			case metricdata.Gauge[float64]:
				for _, p := range d.DataPoints {
					add(p.Attributes, p.Value)
				}
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					add(p.Attributes, float64(p.Value))
				}
			default:
				f.t.Errorf("%s: unexpected data %T", m.Name, m.Data)
			}
		}
	}
	return got
}

// Given a template rule and a template setting, a rule and settings of its own, overrides of a
// name that takes the template setting and of the resource with settings of its own, calls in
// flight under both, a tripped template breaker, a call in the window of a forced-closed one, a
// ConsecutiveErrors rule with a run of failures and a breaker that paces, then one collection's
// observations are what one Manager.Snapshot, taken at the same instant of the fake clock, says:
// each breaker's state, status and dry run, whether it paces (rules with Pace), its window's
// calls and bad calls and their ratio (none for ConsecutiveErrors), the calls in flight of each
// resource with settings, the settings that apply to each resource as loaded with the key they
// come from, the overrides in force and the template counts, and nothing else: no data point
// for a template key.
func TestCollectionIsOneSnapshot(t *testing.T) {
	api := breaker.Rule{ID: "api-errors", Resource: "api/*", Strategy: breaker.ErrorCount, Threshold: 1,
		MinRequestAmount: 1, RetryTimeout: time.Minute}
	pay := breaker.Rule{ID: "pay-errors", Resource: "pay", Strategy: breaker.ErrorCount, Threshold: 3,
		MinRequestAmount: 1, RetryTimeout: time.Minute}
	run := breaker.Rule{ID: "queue-run", Resource: "queue", Strategy: breaker.ConsecutiveErrors, Threshold: 5,
		RetryTimeout: time.Minute}
	pace := breaker.Rule{ID: "quota-errors", Resource: "quota", Strategy: breaker.ErrorRatio, Threshold: 0.5,
		MinRequestAmount: 4, RetryTimeout: time.Minute, Pace: true}
	f := newOverrideFixture(t, []breaker.Rule{api, pay, run, pace})
	f.settings(map[string]breaker.ResourceConfig{
		"api/*": {MaxConcurrency: 5, Timeout: 2 * time.Second},
		"pay":   {MaxConcurrency: 3, Timeout: 1500 * time.Millisecond},
	})
	held := f.enter("api/held", "api/held", "pay")
	defer exit(held)
	assert.ErrorIs(t, f.call("api/down", 0, errDown), errDown) // trips api/down's breaker
	f.override("api/held", breaker.ForceClosed, time.Hour)
	f.override("pay", breaker.ForceOpen, 30*time.Minute)
	f.clock.Advance(time.Second)
	require.NoError(t, f.call("api/held", 0, nil))           // 0 failed of 1 in its window
	require.ErrorIs(t, f.call("queue", 0, errDown), errDown) // a run of 1
	require.ErrorIs(t, f.call("queue", 0, errDown), errDown) // a run of 2
	for _, err := range []error{nil, nil, errDown, errDown} {
		require.Equal(t, err, f.call("quota", 0, err)) // half failed, in one bucket: it paces
	}

	snap := f.m.Snapshot()
	h := resourceIn(t, &snap, "api/held")
	require.Equal(t, "api/*", h.SettingsFrom, "api/held takes the template setting")
	require.Equal(t, int64(2), h.InFlight)
	require.NotNil(t, h.Override)
	require.Equal(t, breaker.ForceClosed, h.Override.Force)
	require.Len(t, h.Breakers, 1)
	require.Equal(t, uint64(1), h.Breakers[0].Total)
	require.Equal(t, uint64(2), resourceIn(t, &snap, "queue").Breakers[0].Bad)
	d := resourceIn(t, &snap, "api/down")
	require.Len(t, d.Breakers, 1)
	require.Equal(t, breaker.Open, d.Breakers[0].State)
	p := resourceIn(t, &snap, "pay")
	require.Equal(t, int64(1), p.InFlight)
	require.Equal(t, breaker.ForceOpen, p.Settings.Force, "the override's force over the settings'")
	require.True(t, resourceIn(t, &snap, "quota").Breakers[0].Pacing)

	want := map[string]float64{}
	states := map[breaker.State]string{breaker.Closed: breakerotel.StateClosed, breaker.Open: breakerotel.StateOpen,
		breaker.HalfOpen: breakerotel.StateHalfOpen}
	for _, r := range snap.Resources {
		resource := breakerotel.ResourceKey.String(r.Name)
		for _, b := range r.Breakers {
			kvs := []attribute.KeyValue{resource, breakerotel.RuleKey.String(b.Rule.ID),
				breakerotel.DryRunKey.Bool(b.DryRun)}
			want[point(breakerotel.StateName, kvs...)] = float64(b.State)
			if b.Rule.Pace {
				want[point(breakerotel.PacingName, kvs...)] = map[bool]float64{false: 0, true: 1}[b.Pacing]
			}
			for s, name := range states {
				in := 0.
				if s == b.State {
					in = 1
				}
				want[point(breakerotel.StatusName, append(kvs, breakerotel.StateKey.String(name))...)] = in
			}
			window := []attribute.KeyValue{resource, breakerotel.RuleKey.String(b.Rule.ID)}
			want[point(breakerotel.WindowCallsName, window...)] = float64(b.Total)
			want[point(breakerotel.WindowBadName, window...)] = float64(b.Bad)
			if b.Rule.Strategy != breaker.ConsecutiveErrors {
				want[point(breakerotel.WindowRatioName, window...)] = b.Ratio()
			}
		}
		if r.SettingsFrom != "" {
			want[point(breakerotel.InFlightName, resource)] = float64(r.InFlight)
		}
		if cfg := snap.Settings[r.SettingsFrom]; cfg != (breaker.ResourceConfig{}) { // as loaded: no override's force
			from := r.SettingsFrom
			if from == r.Name {
				from = breakerview.SettingsOwn
			}
			kvs := []attribute.KeyValue{resource, breakerotel.SettingsFromKey.String(from)}
			want[point(breakerotel.ForceName, kvs...)] = float64(cfg.Force)
			want[point(breakerotel.ConcurrencyLimitName, kvs...)] = float64(cfg.MaxConcurrency)
			want[point(breakerotel.TimeoutName, kvs...)] = cfg.Timeout.Seconds()
		}
		if o := r.Override; o != nil {
			require.Zero(t, o.Until.Nanosecond())
			force := breakerotel.ForceKey.String(o.Force.String())
			want[point(breakerotel.OverrideName, resource, force)] = 1
			want[point(breakerotel.OverrideEndName, resource, force)] = float64(o.Until.Unix())
		}
	}
	want[point(breakerotel.TemplateBreakersName)] = float64(snap.Templates.Breakers)
	want[point(breakerotel.TemplateSettingsName)] = float64(snap.Templates.Settings)
	want[point(breakerotel.TemplateLimitName)] = float64(snap.Templates.Limit)
	want[point(breakerotel.TemplateDroppedName)] = float64(snap.Templates.Dropped)

	got := f.observed()
	assert.Equal(t, want, got)
	assert.Contains(t, got, point(breakerotel.StateName, breakerotel.ResourceKey.String("api/held"),
		breakerotel.RuleKey.String("api-errors"), breakerotel.DryRunKey.Bool(true)), "forced closed by its override")
	assert.Equal(t, 2., got[point(breakerotel.InFlightName, breakerotel.ResourceKey.String("api/held"))])
	assert.Equal(t, 2., got[point(breakerotel.TimeoutName, breakerotel.ResourceKey.String("api/held"),
		breakerotel.SettingsFromKey.String("api/*"))], "the template setting's timeout, on the name that takes it")
	heldWindow := []attribute.KeyValue{breakerotel.ResourceKey.String("api/held"), breakerotel.RuleKey.String("api-errors")}
	assert.Equal(t, 1., got[point(breakerotel.WindowCallsName, heldWindow...)])
	assert.Contains(t, got, point(breakerotel.WindowRatioName, heldWindow...))
	queue := []attribute.KeyValue{breakerotel.ResourceKey.String("queue"), breakerotel.RuleKey.String("queue-run")}
	assert.Equal(t, 2., got[point(breakerotel.WindowBadName, queue...)], "the run")
	assert.NotContains(t, got, point(breakerotel.WindowRatioName, queue...), "a run has no ratio")
	payForce := point(breakerotel.ForceName, breakerotel.ResourceKey.String("pay"),
		breakerotel.SettingsFromKey.String(breakerview.SettingsOwn))
	require.Contains(t, got, payForce)
	assert.Equal(t, 0., got[payForce], "the force as loaded, not the override's")
}
