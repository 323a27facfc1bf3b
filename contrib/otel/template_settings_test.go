package breakerotel_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/halfopen/breaker"
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

// templatePoint is the data point of a template instrument.
func templatePoint(v int64) metricdata.DataPoint[int64] { return metricdata.DataPoint[int64]{Value: v} }

// Given template settings, a name with settings of its own and one with rules of its own,
// with calls in flight, then each template key reports its force, limit and timeout and no
// calls in flight, and each name that holds a template's settings reports its own calls in
// flight; breaker.template.settings counts the names templates made entries for. Without the
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

	f.assertData(breakerotel.ForceName, gauge(resourcePoint("api/*", 2), resourcePoint("api/own", 0),
		resourcePoint("api/slow/*", 0)))
	f.assertData(breakerotel.InFlightName, gauge(resourcePoint("api/own", 1), resourcePoint("api/a", 2),
		resourcePoint("api/ruled", 1), resourcePoint("api/slow/x", 1)))
	f.assertData(breakerotel.ConcurrencyLimitName, gauge(resourcePoint("api/*", 5), resourcePoint("api/own", 3),
		resourcePoint("api/slow/*", 1)))
	f.assertData(breakerotel.TimeoutName, metricdata.Gauge[float64]{DataPoints: []metricdata.DataPoint[float64]{
		{Value: 2, Attributes: set(breakerotel.ResourceKey.String("api/*"))},
		{Value: 0, Attributes: set(breakerotel.ResourceKey.String("api/own"))},
		{Value: 0, Attributes: set(breakerotel.ResourceKey.String("api/slow/*"))},
	}})
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
