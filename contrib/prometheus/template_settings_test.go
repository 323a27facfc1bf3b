package breakerprom_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
)

// settingsFamilies are the families of the settings gauges.
var settingsFamilies = []string{"breaker_force", "breaker_in_flight", "breaker_max_concurrency", "breaker_timeout_seconds"}

// templateFamilies are the families of the breaker_template metrics.
var templateFamilies = []string{"breaker_template_breakers", "breaker_template_settings", "breaker_template_limit",
	"breaker_template_dropped_total"}

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

// Given template settings, a name with settings of its own and one with rules of its own,
// with calls in flight, then each name that holds a template's settings reports them, with
// settings_from its key, and its own calls in flight; no template key is reported as a
// resource; breaker_template_settings counts the names templates made entries for. Without the
// settings, nothing is reported.
func TestTemplateSettingsGauges(t *testing.T) {
	f := newFixture(t, errorCount("api/ruled", 1))
	f.settings(map[string]breaker.ResourceConfig{
		"api/*":      {Timeout: 2 * time.Second, MaxConcurrency: 5, Force: breaker.ForceClosed},
		"api/slow/*": {MaxConcurrency: 1},
		"api/own":    {MaxConcurrency: 3},
	})
	held := f.enter("api/a", "api/a", "api/slow/x", "api/own", "api/ruled", "unsettled")
	assert.ErrorIs(t, f.call("api/slow/x", 0, nil), breaker.ErrConcurrencyLimit, "api/slow/x counts its own calls")

	assertMetrics(t, f.c, `
		breaker_force{resource="api/a",settings_from="api/*"} 2
		breaker_force{resource="api/own",settings_from="own"} 0
		breaker_force{resource="api/ruled",settings_from="api/*"} 2
		breaker_force{resource="api/slow/x",settings_from="api/slow/*"} 0
		breaker_in_flight{resource="api/a"} 2
		breaker_in_flight{resource="api/own"} 1
		breaker_in_flight{resource="api/ruled"} 1
		breaker_in_flight{resource="api/slow/x"} 1
		breaker_max_concurrency{resource="api/a",settings_from="api/*"} 5
		breaker_max_concurrency{resource="api/own",settings_from="own"} 3
		breaker_max_concurrency{resource="api/ruled",settings_from="api/*"} 5
		breaker_max_concurrency{resource="api/slow/x",settings_from="api/slow/*"} 1
		breaker_timeout_seconds{resource="api/a",settings_from="api/*"} 2
		breaker_timeout_seconds{resource="api/own",settings_from="own"} 0
		breaker_timeout_seconds{resource="api/ruled",settings_from="api/*"} 2
		breaker_timeout_seconds{resource="api/slow/x",settings_from="api/slow/*"} 0
	`, settingsFamilies...)
	assertMetrics(t, f.c, `
		breaker_template_breakers 0
		breaker_template_settings 2
		breaker_template_limit 10000
		breaker_template_dropped_total 0
	`, templateFamilies...)
	// The template setting forces api/ruled closed: its breaker rejects nothing.
	assertMetrics(t, f.c, `breaker_state{dry_run="true",resource="api/ruled",rule="ErrorCount#0"} 0`, "breaker_state")

	exit(held[:2])
	assertMetrics(t, f.c, `
		breaker_in_flight{resource="api/a"} 0
		breaker_in_flight{resource="api/own"} 1
		breaker_in_flight{resource="api/ruled"} 1
		breaker_in_flight{resource="api/slow/x"} 1
	`, "breaker_in_flight")

	exit(held[2:])
	f.settings(nil)
	assertMetrics(t, f.c, ``, append(settingsFamilies, templateFamilies...)...)
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
	assert.ErrorIs(t, f.call("api/held", 0, nil), breaker.ErrConcurrencyLimit, "the template's limit still applies")
	assertMetrics(t, f.c, `breaker_in_flight{resource="api/held"} 1`, "breaker_in_flight")
}

// Given rules of their own for payments and for a gRPC method, and settings only from a "*"
// template setting written for other hosts, when a scrape is read, then payments' and the
// method's timeout, limit and force show under their own names with settings_from="*" (so
// that "why do payments calls die at 500 ms?" has an answer), and "*" is no resource: no
// series of any family carries resource="*". A "GET *" template with zero settings reports
// no settings, only its names' calls in flight.
func TestTemplateSettingOfARuledResource(t *testing.T) {
	const method = "/shop.Payments/Charge"
	f := newFixture(t, errorCount("payments", 1), errorCount(method, 1))
	f.settings(map[string]breaker.ResourceConfig{
		"*":     {Timeout: 500 * time.Millisecond, MaxConcurrency: 20},
		"GET *": {},
	})
	held := f.enter("payments", "GET /catalog")
	defer exit(held)

	assertMetrics(t, f.c, `
		breaker_force{resource="/shop.Payments/Charge",settings_from="*"} 0
		breaker_force{resource="payments",settings_from="*"} 0
		breaker_in_flight{resource="/shop.Payments/Charge"} 0
		breaker_in_flight{resource="GET /catalog"} 1
		breaker_in_flight{resource="payments"} 1
		breaker_max_concurrency{resource="/shop.Payments/Charge",settings_from="*"} 20
		breaker_max_concurrency{resource="payments",settings_from="*"} 20
		breaker_timeout_seconds{resource="/shop.Payments/Charge",settings_from="*"} 0.5
		breaker_timeout_seconds{resource="payments",settings_from="*"} 0.5
	`, settingsFamilies...)

	got := gatherDistinct(t, f.c)
	resources := map[string]bool{}
	for family, series := range got {
		for _, s := range series {
			assert.NotContains(t, []string{"*", "GET *"}, s.labels["resource"], "%s%v: a template key as a resource", family, s.labels)
			if r, ok := s.labels["resource"]; ok {
				resources[r] = true
			}
		}
	}
	assert.Equal(t, map[string]bool{"payments": true, method: true, "GET /catalog": true}, resources)
}
