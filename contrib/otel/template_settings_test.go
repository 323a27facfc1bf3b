package breakerotel_test

import (
	"context"
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

// enter admits a call to each name and returns the calls, in flight until they exit.
func (f *fixture) enter(names ...string) []*breaker.Entry {
	f.t.Helper()
	var held []*breaker.Entry
	for _, name := range names {
		e, err := f.m.Enter(name)
		require.NoError(f.t, err, name)
		held = append(held, e)
	}
	return held
}

func exit(held []*breaker.Entry) {
	for _, e := range held {
		e.Exit()
	}
}

// resourcePoint is the data point of a settings gauge of resource.
func resourcePoint(resource string, v int64) metricdata.DataPoint[int64] {
	return metricdata.DataPoint[int64]{Value: v, Attributes: set(breakerotel.ResourceKey.String(resource))}
}

// settingsPoint is the data point of breaker.force or breaker.concurrency.limit of resource,
// whose settings come from the key from.
func settingsPoint(resource, from string, v int64) metricdata.DataPoint[int64] {
	return metricdata.DataPoint[int64]{Value: v, Attributes: set(breakerotel.ResourceKey.String(resource),
		breakerotel.SettingsFromKey.String(from))}
}

// timeoutPoint is the data point of breaker.timeout of resource, whose settings come from the
// key from.
func timeoutPoint(resource, from string, v float64) metricdata.DataPoint[float64] {
	return metricdata.DataPoint[float64]{Value: v, Attributes: set(breakerotel.ResourceKey.String(resource),
		breakerotel.SettingsFromKey.String(from))}
}

// timeouts is the breaker.timeout gauge of points.
func timeouts(points ...metricdata.DataPoint[float64]) metricdata.Gauge[float64] {
	return metricdata.Gauge[float64]{DataPoints: points}
}

// templatePoint is the data point of a template instrument.
func templatePoint(v int64) metricdata.DataPoint[int64] { return metricdata.DataPoint[int64]{Value: v} }

// Given template settings, a name with settings of its own and one with rules of its own,
// with calls in flight, then each name that holds a template's settings reports them, with
// breaker.settings.from its key, and its own calls in flight; no template key is reported as a
// resource; breaker.template.settings counts the names templates made entries for. Without the
// settings, nothing is reported.
func TestTemplateSettingsGauges(t *testing.T) {
	f := newFixture(t, []breaker.Rule{errorCount("api/ruled", 1)})
	f.settings(map[string]breaker.ResourceConfig{
		"api/*":      {Timeout: 2 * time.Second, MaxConcurrency: 5, Force: breaker.ForceClosed},
		"api/slow/*": {MaxConcurrency: 1},
		"api/own":    {MaxConcurrency: 3},
	})
	held := f.enter("api/a", "api/a", "api/slow/x", "api/own", "api/ruled", "unsettled")
	require.ErrorIs(t, f.call("api/slow/x", 0, nil), breaker.ErrConcurrencyLimit, "api/slow/x counts its own calls")

	own := breakerview.SettingsOwn
	f.assertData(breakerotel.ForceName, gauge(settingsPoint("api/own", own, 0), settingsPoint("api/a", "api/*", 2),
		settingsPoint("api/ruled", "api/*", 2), settingsPoint("api/slow/x", "api/slow/*", 0)))
	f.assertData(breakerotel.InFlightName, gauge(resourcePoint("api/own", 1), resourcePoint("api/a", 2),
		resourcePoint("api/ruled", 1), resourcePoint("api/slow/x", 1)))
	f.assertData(breakerotel.ConcurrencyLimitName, gauge(settingsPoint("api/own", own, 3),
		settingsPoint("api/a", "api/*", 5), settingsPoint("api/ruled", "api/*", 5),
		settingsPoint("api/slow/x", "api/slow/*", 1)))
	f.assertData(breakerotel.TimeoutName, timeouts(timeoutPoint("api/own", own, 0), timeoutPoint("api/a", "api/*", 2),
		timeoutPoint("api/ruled", "api/*", 2), timeoutPoint("api/slow/x", "api/slow/*", 0)))
	f.assertData(breakerotel.TemplateBreakersName, gauge(templatePoint(0)))
	f.assertData(breakerotel.TemplateSettingsName, gauge(templatePoint(2)))
	f.assertData(breakerotel.TemplateLimitName, gauge(templatePoint(10_000)))
	// The template setting forces api/ruled closed: its breaker rejects nothing.
	f.assertData(breakerotel.StateName, gauge(stateDry("api/ruled", "ErrorCount#0", breaker.Closed, true)))

	exit(held[:2])
	f.assertData(breakerotel.InFlightName, gauge(resourcePoint("api/own", 1), resourcePoint("api/a", 0),
		resourcePoint("api/ruled", 1), resourcePoint("api/slow/x", 1)))

	exit(held[2:])
	f.settings(nil)
	for _, name := range []string{breakerotel.ForceName, breakerotel.InFlightName, breakerotel.ConcurrencyLimitName,
		breakerotel.TimeoutName, breakerotel.TemplateBreakersName, breakerotel.TemplateSettingsName} {
		_, ok := f.metric(name)
		assert.False(t, ok, "%s reports without settings", name)
	}
}

// Given template settings and an override of a name they match, which has neither rules nor
// a call, then the override's entry holds the template's settings and reports its calls in
// flight.
func TestTemplateSettingsOverridden(t *testing.T) {
	f := newOverrideFixture(t, nil)
	f.settings(map[string]breaker.ResourceConfig{"api/*": {MaxConcurrency: 1}})
	f.override("api/held", breaker.ForceClosed, time.Hour)
	held := f.enter("api/held")
	defer exit(held)
	require.ErrorIs(t, f.call("api/held", 0, nil), breaker.ErrConcurrencyLimit, "the template's limit still applies")
	f.assertData(breakerotel.InFlightName, gauge(resourcePoint("api/held", 1)))
}

// Given rules of their own for payments and for a gRPC method, and settings only from a "*"
// template setting written for other hosts, when the Instruments are collected, then payments'
// and the method's timeout, limit and force show as their own breaker.resource with
// breaker.settings.from "*" (so that "why do payments calls die at 500 ms?" has an answer), and
// "*" is no resource: no data point of any instrument has breaker.resource "*". A "GET *"
// template with zero settings reports no settings, only its names' calls in flight.
func TestTemplateSettingOfARuledResource(t *testing.T) {
	const method = "/shop.Payments/Charge"
	f := newFixture(t, []breaker.Rule{errorCount("payments", 1), errorCount(method, 1)})
	f.settings(map[string]breaker.ResourceConfig{
		"*":     {Timeout: 500 * time.Millisecond, MaxConcurrency: 20},
		"GET *": {},
	})
	held := f.enter("payments", "GET /catalog")
	defer exit(held)

	f.assertData(breakerotel.ForceName, gauge(settingsPoint("payments", "*", 0), settingsPoint(method, "*", 0)))
	f.assertData(breakerotel.ConcurrencyLimitName, gauge(settingsPoint("payments", "*", 20),
		settingsPoint(method, "*", 20)))
	f.assertData(breakerotel.TimeoutName, timeouts(timeoutPoint("payments", "*", 0.5), timeoutPoint(method, "*", 0.5)))
	f.assertData(breakerotel.InFlightName, gauge(resourcePoint("payments", 1), resourcePoint(method, 0),
		resourcePoint("GET /catalog", 1)))

	assert.Equal(t, map[string]bool{"payments": true, method: true, "GET /catalog": true}, f.resources(),
		"the breaker.resource values of every instrument: no template key")
}

// resources collects every instrument of f and returns each value of breaker.resource that a
// data point has.
func (f *fixture) resources() map[string]bool {
	f.t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(f.t, f.reader.Collect(context.Background(), &rm))
	out := make(map[string]bool)
	add := func(attrs attribute.Set) {
		if v, ok := attrs.Value(breakerotel.ResourceKey); ok {
			out[v.AsString()] = true
		}
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Gauge[int64]:
				for _, p := range d.DataPoints {
					add(p.Attributes)
				}
			case metricdata.Gauge[float64]:
				for _, p := range d.DataPoints {
					add(p.Attributes)
				}
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					add(p.Attributes)
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					add(p.Attributes)
				}
			default:
				f.t.Errorf("%s: unexpected data %T", m.Name, m.Data)
			}
		}
	}
	return out
}
