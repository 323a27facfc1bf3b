package breakerprom_test

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakerview"
	breakerprom "github.com/halfopen/breaker/contrib/prometheus"
)

// gatherDistinct scrapes c through a fresh Registry, which must not fail, checks that no
// family has two series with one label set, and returns the series of each family.
func gatherDistinct(t *testing.T, c *breakerprom.Collector) map[string][]sample {
	t.Helper()
	reg := prometheus.NewRegistry()
	require.NoError(t, reg.Register(c))
	families, err := reg.Gather()
	require.NoError(t, err)
	out := make(map[string][]sample)
	for _, f := range families {
		seen := make(map[string]bool)
		for _, m := range f.GetMetric() {
			s := sample{labels: make(map[string]string), value: m.GetCounter().GetValue() + m.GetGauge().GetValue()}
			var key strings.Builder
			for _, l := range m.GetLabel() {
				s.labels[l.GetName()] = l.GetValue()
				key.WriteString(l.GetName() + "=" + l.GetValue() + "\x00")
			}
			assert.False(t, seen[key.String()], "%s has two series %v", f.GetName(), s.labels)
			seen[key.String()] = true
			out[f.GetName()] = append(out[f.GetName()], s)
		}
	}
	return out
}

// only returns the value of the one series of family with labels.
func only(t *testing.T, scraped map[string][]sample, family string, labels map[string]string) float64 {
	t.Helper()
	i := slices.IndexFunc(scraped[family], func(s sample) bool { return maps.Equal(s.labels, labels) })
	require.GreaterOrEqual(t, i, 0, "no series %s%v", family, labels)
	return scraped[family][i].value
}

// Given names that are one label once made UTF-8: two that a template rule made breakers for,
// one of them tripped, with template settings and calls in flight; two with rules of their
// own, one tripped; and two with settings of their own, then the scrape does not fail and
// each label set has one series. Each gauge reports, of the names that share its label, the
// first in byte order (pay\xfe, db\xfe, cfg\xfe), not the one seen first nor the one in the
// worse state; the calls and transitions of both names add up in one series.
func TestNamesThatShareALabelGiveOneSeries(t *testing.T) {
	f := newOverrideFixture(t, nil, errorCount("pay*", 1), errorCount("db\xff", 1), errorCount("db\xfe", 1))
	f.settings(map[string]breaker.ResourceConfig{
		"pay*":    {MaxConcurrency: 10},
		"cfg\xff": {MaxConcurrency: 3, Timeout: time.Second},
		"cfg\xfe": {MaxConcurrency: 5, Timeout: 2 * time.Second, Force: breaker.ForceClosed},
	})
	held := f.enter("pay\xff", "pay\xff", "pay\xfe", "cfg\xff", "cfg\xff", "cfg\xfe") // pay\xff seen first
	defer exit(held)
	assert.ErrorIs(t, f.call("pay\xff", 0, errDown), errDown) // trips
	require.NoError(t, f.call("pay\xfe", 0, nil))
	assert.ErrorIs(t, f.call("db\xff", 0, errDown), errDown) // trips

	got := gatherDistinct(t, f.c)
	state := func(resource string) float64 {
		return only(t, got, "breaker_state", map[string]string{"resource": resource, "rule": "ErrorCount#0", "dry_run": "false"})
	}
	assert.Equal(t, 0.0, state("pay\uFFFD"), "pay\xfe's breaker, closed")
	assert.Equal(t, 0.0, state("db\uFFFD"), "db\xfe's breaker, closed")
	assert.Len(t, got["breaker_state"], 2)
	window := func(resource string) float64 {
		return only(t, got, "breaker_window_calls", map[string]string{"resource": resource, "rule": "ErrorCount#0"})
	}
	assert.Equal(t, 1.0, window("pay\uFFFD"), "pay\xfe's window, not pay\xff's, which tripped")
	for _, family := range []string{"breaker_window_calls", "breaker_window_bad", "breaker_window_ratio"} {
		assert.Len(t, got[family], 2, family)
	}

	resource := func(name string) map[string]string { return map[string]string{"resource": name} }
	settings := func(name, from string) map[string]string {
		return map[string]string{"resource": name, "settings_from": from}
	}
	assert.Equal(t, 1.0, only(t, got, "breaker_in_flight", resource("pay\uFFFD")), "pay\xfe's calls in flight")
	assert.Equal(t, 10.0, only(t, got, "breaker_max_concurrency", settings("pay\uFFFD", "pay*")), "pay*'s limit")
	assert.Len(t, got["breaker_max_concurrency"], 2, "pay\uFFFD and cfg\uFFFD, once each")
	assert.Equal(t, 2.0, only(t, got, "breaker_force", settings("cfg\uFFFD", breakerview.SettingsOwn)), "cfg\xfe's force")
	assert.Equal(t, 1.0, only(t, got, "breaker_in_flight", resource("cfg\uFFFD")), "cfg\xfe's calls in flight")
	assert.Equal(t, 5.0, only(t, got, "breaker_max_concurrency", settings("cfg\uFFFD", breakerview.SettingsOwn)), "cfg\xfe's limit")
	assert.Equal(t, 2.0, only(t, got, "breaker_timeout_seconds", settings("cfg\uFFFD", breakerview.SettingsOwn)), "cfg\xfe's timeout")

	calls := map[string]string{"resource": "pay\uFFFD", "outcome": breakerprom.OutcomePassed}
	assert.Equal(t, 2.0, only(t, got, "breaker_calls_total", calls), "the calls of both names")
	assert.Equal(t, 1.0, only(t, got, "breaker_transitions_total", map[string]string{"resource": "pay\uFFFD",
		"from": "CLOSED", "to": "OPEN", "reason": "ThresholdExceeded", "dry_run": "false"}))

	// Overrides count: those of the names that share a label add up, with the latest end.
	f.override("pay\xff", breaker.ForceOpen, time.Hour)
	f.override("pay\xfe", breaker.ForceOpen, 2*time.Hour)
	got = gatherDistinct(t, f.c)
	assert.Equal(t, 2.0, only(t, got, "breaker_override", map[string]string{"resource": "pay\uFFFD", "force": "open"}))
}

// Given two template keys and two names that are one label once made UTF-8, each name taking
// the settings of one key, then the scrape does not fail, and the settings gauges have one
// series for the label and the key's label: the settings of the name first in byte order
// (k\xfea, from k\xfe*).
func TestTemplateKeysThatShareALabelGiveOneSeries(t *testing.T) {
	f := newFixture(t)
	f.settings(map[string]breaker.ResourceConfig{
		"k\xff*": {MaxConcurrency: 1},
		"k\xfe*": {MaxConcurrency: 2},
	})
	held := f.enter("k\xffa", "k\xfea")
	defer exit(held)

	got := gatherDistinct(t, f.c)
	labels := map[string]string{"resource": "k\uFFFDa", "settings_from": "k\uFFFD*"}
	assert.Equal(t, 2.0, only(t, got, "breaker_max_concurrency", labels), "k\xfea's limit, from k\xfe*")
	assert.Len(t, got["breaker_max_concurrency"], 1)
}
