package breakerotel_test

import (
	"context"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakerview"
	breakerotel "github.com/halfopen/breaker/contrib/otel"
)

// collectDistinct collects every instrument of f and checks that no instrument has two data
// points with one attribute set, and that every string attribute is UTF-8, as OTLP and
// Prometheus require of an export. It returns the value of each data point (a histogram's
// count) by instrument and attribute set.
func (f *fixture) collectDistinct() map[string]map[attribute.Distinct]float64 {
	f.t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(f.t, f.reader.Collect(context.Background(), &rm))
	out := make(map[string]map[attribute.Distinct]float64)
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			points := make(map[attribute.Distinct]float64)
			add := func(attrs attribute.Set, v float64) {
				_, seen := points[attrs.Equivalent()]
				assert.False(f.t, seen, "%s has two data points %v", m.Name, attrs.ToSlice())
				points[attrs.Equivalent()] = v
				for _, kv := range attrs.ToSlice() {
					if v := kv.Value.AsString(); kv.Value.Type() == attribute.STRING {
						assert.True(f.t, utf8.ValidString(v), "%s: %s is not UTF-8: %q", m.Name, kv.Key, v)
					}
				}
			}
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
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					add(p.Attributes, float64(p.Count))
				}
			default:
				f.t.Errorf("%s: unexpected data %T", m.Name, m.Data)
			}
			out[m.Name] = points
		}
	}
	return out
}

// only returns the value of the data point of instrument with the attributes kvs.
func only(t *testing.T, got map[string]map[attribute.Distinct]float64, instrument string,
	kvs ...attribute.KeyValue) float64 {
	t.Helper()
	want := set(kvs...)
	v, ok := got[instrument][want.Equivalent()]
	require.True(t, ok, "no data point of %s with %v", instrument, kvs)
	return v
}

// Given names that are one breaker.resource once made UTF-8: two that a template rule made
// breakers for, one of them tripped, with template settings and calls in flight; two with
// rules of their own, one tripped; and two with settings of their own, then every attribute
// is UTF-8 and each attribute set has one data point per instrument. Each gauge reports, of
// the names that share its breaker.resource, the first in byte order (pay\xfe, db\xfe,
// cfg\xfe), not the one seen first nor the one in the worse state; the calls and transitions
// of both names add up in one data point.
func TestNamesThatShareALabelGiveOneSeries(t *testing.T) {
	f := newOverrideFixture(t, []breaker.Rule{errorCount("pay*", 1), errorCount("db\xff", 1), errorCount("db\xfe", 1)})
	f.settings(map[string]breaker.ResourceConfig{
		"pay*":    {MaxConcurrency: 10},
		"cfg\xff": {MaxConcurrency: 3, Timeout: time.Second},
		"cfg\xfe": {MaxConcurrency: 5, Timeout: 2 * time.Second, Force: breaker.ForceClosed},
	})
	held := f.enter("pay\xff", "pay\xff", "pay\xfe", "cfg\xff", "cfg\xff", "cfg\xfe") // pay\xff seen first
	defer exit(held)
	require.ErrorIs(t, f.call("pay\xff", 0, errDown), errDown) // trips
	require.NoError(t, f.call("pay\xfe", 0, nil))
	require.ErrorIs(t, f.call("db\xff", 0, errDown), errDown) // trips

	got := f.collectDistinct()
	breakerOf := func(resource string) []attribute.KeyValue {
		return []attribute.KeyValue{breakerotel.ResourceKey.String(resource), breakerotel.RuleKey.String("ErrorCount#0"),
			breakerotel.DryRunKey.Bool(false)}
	}
	for _, resource := range []string{"pay\uFFFD", "db\uFFFD"} {
		kvs := breakerOf(resource)
		assert.Equal(t, 0.0, only(t, got, breakerotel.StateName, kvs...), "%s: the \\xfe name's breaker, closed", resource)
		assert.Equal(t, 1.0, only(t, got, breakerotel.StatusName, append(kvs, breakerotel.StateKey.String(breakerotel.StateClosed))...))
		assert.Equal(t, 0.0, only(t, got, breakerotel.StatusName, append(kvs, breakerotel.StateKey.String(breakerotel.StateOpen))...))
	}
	assert.Len(t, got[breakerotel.StateName], 2)
	pay := []attribute.KeyValue{breakerotel.ResourceKey.String("pay\uFFFD"), breakerotel.RuleKey.String("ErrorCount#0")}
	assert.Equal(t, 1.0, only(t, got, breakerotel.WindowCallsName, pay...), "pay\xfe's window, not pay\xff's, which tripped")
	for _, name := range []string{breakerotel.WindowCallsName, breakerotel.WindowBadName, breakerotel.WindowRatioName} {
		assert.Len(t, got[name], 2, name)
	}

	resource := func(name string) attribute.KeyValue { return breakerotel.ResourceKey.String(name) }
	own := breakerotel.SettingsFromKey.String(breakerview.SettingsOwn)
	assert.Equal(t, 1.0, only(t, got, breakerotel.InFlightName, resource("pay\uFFFD")), "pay\xfe's calls in flight")
	assert.Equal(t, 10.0, only(t, got, breakerotel.ConcurrencyLimitName, resource("pay\uFFFD"),
		breakerotel.SettingsFromKey.String("pay*")), "pay*'s limit")
	assert.Len(t, got[breakerotel.ConcurrencyLimitName], 2, "pay\uFFFD and cfg\uFFFD, once each")
	assert.Equal(t, 2.0, only(t, got, breakerotel.ForceName, resource("cfg\uFFFD"), own), "cfg\xfe's force")
	assert.Equal(t, 1.0, only(t, got, breakerotel.InFlightName, resource("cfg\uFFFD")), "cfg\xfe's calls in flight")
	assert.Equal(t, 5.0, only(t, got, breakerotel.ConcurrencyLimitName, resource("cfg\uFFFD"), own), "cfg\xfe's limit")
	assert.Equal(t, 2.0, only(t, got, breakerotel.TimeoutName, resource("cfg\uFFFD"), own), "cfg\xfe's timeout")

	assert.Equal(t, 2.0, only(t, got, breakerotel.CallsName, resource("pay\uFFFD"),
		breakerotel.OutcomeKey.String(breakerotel.OutcomePassed)), "the calls of both names")
	assert.Equal(t, 2.0, only(t, got, breakerotel.DurationName, resource("pay\uFFFD")), "the calls of both names")
	assert.Equal(t, 1.0, only(t, got, breakerotel.TransitionsName, resource("pay\uFFFD"),
		breakerotel.StateFromKey.String("CLOSED"), breakerotel.StateToKey.String("OPEN"),
		breakerotel.ReasonKey.String("ThresholdExceeded"), breakerotel.DryRunKey.Bool(false)))

	// Overrides count: those of the names that share a breaker.resource add up, with the
	// latest end.
	f.override("pay\xff", breaker.ForceOpen, time.Hour)
	f.override("pay\xfe", breaker.ForceOpen, 2*time.Hour)
	got = f.collectDistinct()
	assert.Equal(t, 2.0, only(t, got, breakerotel.OverrideName, resource("pay\uFFFD"),
		breakerotel.ForceKey.String("open")))
}

// Given rules of one resource whose IDs are one breaker.rule once made UTF-8, or are the same,
// then each breaker has a data point of its own: the later rule is named by its strategy and
// index, as a rule without an ID is.
func TestRuleIDsThatShareAValueGiveOneSeriesEach(t *testing.T) {
	rule := func(id string, threshold float64) breaker.Rule {
		return breaker.Rule{ID: id, Resource: "svc", Strategy: breaker.ErrorCount, Threshold: threshold,
			RetryTimeout: time.Second}
	}
	f := newFixture(t, []breaker.Rule{rule("r\xff", 1), rule("r\xfe", 2), rule("same", 3), rule("same", 4)})
	got := f.collectDistinct()
	for _, name := range []string{"r\uFFFD", "ErrorCount#1", "same", "ErrorCount#3"} {
		assert.Equal(t, float64(breaker.Closed), only(t, got, "breaker.state",
			breakerotel.ResourceKey.String("svc"), breakerotel.RuleKey.String(name), breakerotel.DryRunKey.Bool(false)))
	}
	assert.Len(t, got["breaker.state"], 4)
}

// Given two template keys and two names that are one breaker.resource once made UTF-8, each
// name taking the settings of one key, then the settings gauges have one data point for the
// breaker.resource and the key's value: the settings of the name first in byte order (k\xfea,
// from k\xfe*).
func TestTemplateKeysThatShareAValueGiveOneSeries(t *testing.T) {
	f := newFixture(t, nil)
	f.settings(map[string]breaker.ResourceConfig{
		"k\xff*": {MaxConcurrency: 1},
		"k\xfe*": {MaxConcurrency: 2},
	})
	held := f.enter("k\xffa", "k\xfea")
	defer exit(held)

	got := f.collectDistinct()
	assert.Equal(t, 2.0, only(t, got, breakerotel.ConcurrencyLimitName, breakerotel.ResourceKey.String("k\uFFFDa"),
		breakerotel.SettingsFromKey.String("k\uFFFD*")), "k\xfea's limit, from k\xfe*")
	assert.Len(t, got[breakerotel.ConcurrencyLimitName], 1)
}
