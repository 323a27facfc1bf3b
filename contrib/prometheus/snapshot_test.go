package breakerprom_test

import (
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakerview"
)

// snapshotFamilies are the families a scrape reads from the Manager's Snapshot.
var snapshotFamilies = append(append([]string{"breaker_state", "breaker_ramping_up", "breaker_pacing",
	"breaker_window_calls", "breaker_window_bad", "breaker_window_ratio"}, settingsFamilies...),
	append(overrideFamilies, templateFamilies...)...)

// resourceIn returns what snap holds of the resource name, failing t if it holds nothing.
func resourceIn(t *testing.T, snap *breaker.Snapshot, name string) *breaker.ResourceStatus {
	t.Helper()
	r := snap.Resource(name)
	require.NotNil(t, r, name)
	return r
}

// seriesKey names one series: its family and its labels (fmt sorts a map's keys).
func seriesKey(family string, labels map[string]string) string { return fmt.Sprint(family, labels) }

// Given a template rule and a template setting, a rule and settings of its own, overrides of a
// name that takes the template setting and of the resource with settings of its own, calls in
// flight under both, a tripped template breaker, a call in the window of a forced-closed one, a
// ConsecutiveErrors rule with a run of failures and a breaker that paces, then one scrape's
// gauges are what one Manager.Snapshot, taken at the same instant of the fake clock, says: each
// breaker's state and dry_run, whether it paces (rules with Pace), its window's calls and bad
// calls and their ratio (none for ConsecutiveErrors), the calls in flight of each resource with
// settings, the settings that apply to each resource as loaded with the key they come from, the
// overrides in force and the template counts, and nothing else: no series for a template key.
func TestScrapeIsOneSnapshot(t *testing.T) {
	api := breaker.Rule{ID: "api-errors", Resource: "api/*", Strategy: breaker.ErrorCount, Threshold: 1,
		MinRequestAmount: 1, RetryTimeout: time.Minute}
	pay := breaker.Rule{ID: "pay-errors", Resource: "pay", Strategy: breaker.ErrorCount, Threshold: 3,
		MinRequestAmount: 1, RetryTimeout: time.Minute}
	run := breaker.Rule{ID: "queue-run", Resource: "queue", Strategy: breaker.ConsecutiveErrors, Threshold: 5,
		RetryTimeout: time.Minute}
	pace := breaker.Rule{ID: "quota-errors", Resource: "quota", Strategy: breaker.ErrorRatio, Threshold: 0.5,
		MinRequestAmount: 4, RetryTimeout: time.Minute, Pace: true}
	f := newOverrideFixture(t, nil, api, pay, run, pace)
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
	require.NoError(t, f.call("api/held", 0, nil))          // 0 failed of 1 in its window
	assert.ErrorIs(t, f.call("queue", 0, errDown), errDown) // a run of 1
	assert.ErrorIs(t, f.call("queue", 0, errDown), errDown) // a run of 2
	for _, err := range []error{nil, nil, errDown, errDown} {
		assert.Equal(t, err, f.call("quota", 0, err)) // half failed, in one bucket: it paces
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
	require.True(t, resourceIn(t, &snap, "quota").Breakers[0].Pacing)
	require.Equal(t, breaker.ForceOpen, p.Settings.Force, "the override's force over the settings'")

	want := map[string]float64{}
	stateValue := map[breaker.State]float64{breaker.Closed: 0, breaker.Open: 1, breaker.HalfOpen: 2}
	for _, r := range snap.Resources {
		for _, b := range r.Breakers {
			want[seriesKey("breaker_state", map[string]string{"resource": r.Name, "rule": b.Rule.ID,
				"dry_run": strconv.FormatBool(b.DryRun)})] = stateValue[b.State]
			labels := map[string]string{"resource": r.Name, "rule": b.Rule.ID}
			want[seriesKey("breaker_window_calls", labels)] = float64(b.Total)
			want[seriesKey("breaker_window_bad", labels)] = float64(b.Bad)
			if b.Rule.Strategy != breaker.ConsecutiveErrors {
				want[seriesKey("breaker_window_ratio", labels)] = b.Ratio()
			}
			if b.Rule.Pace {
				want[seriesKey("breaker_pacing", labels)] = map[bool]float64{false: 0, true: 1}[b.Pacing]
			}
		}
		if r.SettingsFrom != "" {
			want[seriesKey("breaker_in_flight", map[string]string{"resource": r.Name})] = float64(r.InFlight)
		}
		if cfg := snap.Settings[r.SettingsFrom]; cfg != (breaker.ResourceConfig{}) { // as loaded: no override's force
			from := r.SettingsFrom
			if from == r.Name {
				from = breakerview.SettingsOwn
			}
			labels := map[string]string{"resource": r.Name, "settings_from": from}
			want[seriesKey("breaker_force", labels)] = float64(cfg.Force)
			want[seriesKey("breaker_max_concurrency", labels)] = float64(cfg.MaxConcurrency)
			want[seriesKey("breaker_timeout_seconds", labels)] = cfg.Timeout.Seconds()
		}
		if o := r.Override; o != nil {
			require.Zero(t, o.Until.Nanosecond())
			labels := map[string]string{"resource": r.Name, "force": o.Force.String()}
			want[seriesKey("breaker_override", labels)] = 1
			want[seriesKey("breaker_override_end_timestamp_seconds", labels)] = float64(o.Until.Unix())
		}
	}
	no := map[string]string{}
	want[seriesKey("breaker_template_breakers", no)] = float64(snap.Templates.Breakers)
	want[seriesKey("breaker_template_settings", no)] = float64(snap.Templates.Settings)
	want[seriesKey("breaker_template_limit", no)] = float64(snap.Templates.Limit)
	want[seriesKey("breaker_template_dropped_total", no)] = float64(snap.Templates.Dropped)

	got := scrape(t, f.c)
	assert.Equal(t, want, got)
	assert.Contains(t, got, seriesKey("breaker_state", map[string]string{"resource": "api/held",
		"rule": "api-errors", "dry_run": "true"}), "forced closed by its override")
	assert.Equal(t, 2., got[seriesKey("breaker_in_flight", map[string]string{"resource": "api/held"})])
	assert.Equal(t, 2., got[seriesKey("breaker_timeout_seconds", map[string]string{"resource": "api/held",
		"settings_from": "api/*"})], "the template setting's timeout, on the name that takes it")
	heldWindow := map[string]string{"resource": "api/held", "rule": "api-errors"}
	assert.Equal(t, 1., got[seriesKey("breaker_window_calls", heldWindow)])
	assert.Contains(t, got, seriesKey("breaker_window_ratio", heldWindow))
	queueWindow := map[string]string{"resource": "queue", "rule": "queue-run"}
	assert.Equal(t, 2., got[seriesKey("breaker_window_bad", queueWindow)], "the run")
	assert.NotContains(t, got, seriesKey("breaker_window_ratio", queueWindow), "a run has no ratio")
	payForce := seriesKey("breaker_force", map[string]string{"resource": "pay", "settings_from": breakerview.SettingsOwn})
	require.Contains(t, got, payForce)
	assert.Equal(t, 0., got[payForce], "the force as loaded, not the override's")
}

// scrape gathers c once and returns the value of each series of snapshotFamilies, by seriesKey.
func scrape(t *testing.T, c prometheus.Collector) map[string]float64 {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(c))
	families, err := reg.Gather()
	require.NoError(t, err)
	got := map[string]float64{}
	for _, f := range families {
		if !slices.Contains(snapshotFamilies, f.GetName()) {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			got[seriesKey(f.GetName(), labels)] = m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	return got
}
