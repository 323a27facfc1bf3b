package surfaces_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.uber.org/goleak"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakerdebug"
	"github.com/halfopen/breaker/breakertest"
	breakerotel "github.com/halfopen/breaker/contrib/otel"
	breakerprom "github.com/halfopen/breaker/contrib/prometheus"
)

// said is what a surface says of one breaker, or of the settings of one resource, in the terms
// all three share.
type said struct {
	state              string // "CLOSED", "OPEN", "HALF_OPEN"
	calls, bad         float64
	pacing             bool
	timeout, limit     float64 // seconds; calls
	settingsFrom       string  // "own" or the template key
	hasSettings, ruled bool
}

var errDown = errors.New("down")

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Given an incident on one Manager (payments OPEN, inventory pacing under settings of its own,
// search CLOSED with a slow call in its window, payments and search under the "*" template
// setting), when the status page's JSON, a Prometheus scrape and an OpenTelemetry
// collection read it at one instant of the fake clock, then all three say the same of every
// resource: each breaker's state, its window's calls and bad calls, whether it paces, and the
// timeout and limit that apply with the key they come from.
func TestEverySurfaceSaysTheSame(t *testing.T) {
	clock := breakertest.NewClock()
	collector := breakerprom.New()
	reader := sdkmetric.NewManualReader()
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { assert.NoError(t, provider.Shutdown(context.Background())) })
	ins, err := breakerotel.New(provider)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, ins.Close()) })
	m := breaker.NewManager(breaker.WithClock(clock), collector.Option(), ins.Option())
	collector.Watch(m)
	require.NoError(t, ins.Watch(m))
	registry := prometheus.NewPedanticRegistry()
	require.NoError(t, registry.Register(collector))

	require.NoError(t, m.LoadRules([]breaker.Rule{
		{ID: "payments-errors", Resource: "payments", Strategy: breaker.ErrorRatio, Threshold: 0.5,
			MinRequestAmount: 4, RetryTimeout: time.Minute},
		{ID: "inventory-errors", Resource: "inventory", Strategy: breaker.ErrorRatio, Threshold: 0.5,
			MinRequestAmount: 4, RetryTimeout: time.Minute, Pace: true},
		{ID: "search-slow", Resource: "search", Strategy: breaker.SlowRequestRatio, Threshold: 0.9,
			MaxAllowedRT: 50 * time.Millisecond, MinRequestAmount: 4, RetryTimeout: time.Minute},
	}))
	require.NoError(t, m.LoadResources(map[string]breaker.ResourceConfig{
		"*":         {Timeout: 500 * time.Millisecond, MaxConcurrency: 20},
		"inventory": {Timeout: time.Second, MaxConcurrency: 5},
	}))
	call := func(name string, rt time.Duration, err error) {
		_ = m.Do(context.Background(), name, func(context.Context) error {
			clock.Advance(rt)
			return err
		})
	}
	for range 4 {
		call("payments", 0, errDown)
	}
	for _, err := range []error{nil, nil, errDown, errDown} {
		call("inventory", 0, err)
	}
	call("search", 0, nil)
	call("search", 80*time.Millisecond, nil)
	call("search", 0, nil)

	page := fromPage(t, m)
	prom := fromPrometheus(t, registry)
	otel := fromOTel(t, reader)
	require.Len(t, page, 6, "three breakers, and the settings of payments, inventory and search: %v", page)
	require.Equal(t, "OPEN", page["payments/payments-errors"].state, "the incident is as set up")
	require.True(t, page["inventory/inventory-errors"].pacing)
	require.Equal(t, "*", page["payments"].settingsFrom)
	assert.Equal(t, page, prom, "the page and Prometheus")
	assert.Equal(t, page, otel, "the page and OpenTelemetry")
}

// fromPage reads the status page's JSON: each breaker under "resource/rule", the settings of
// each listed resource under its name.
func fromPage(t *testing.T, m *breaker.Manager) map[string]said {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.Header.Set("Accept", "application/json")
	rec := httptest.NewRecorder()
	breakerdebug.Handler(m).ServeHTTP(rec, req)
	require.Equal(t, http.StatusOK, rec.Code)
	var doc struct {
		Resources []struct {
			Resource string
			Settings *struct {
				Timeout        string
				MaxConcurrency int
			}
			SettingsFrom string
			Breakers     []struct {
				Rule       breaker.Rule
				State      string
				Total, Bad uint64
				Pacing     bool
			}
		}
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &doc))
	out := map[string]said{}
	for _, r := range doc.Resources {
		if r.Settings != nil {
			d, err := time.ParseDuration(r.Settings.Timeout)
			require.NoError(t, err)
			from := r.SettingsFrom
			if from == r.Resource {
				from = "own"
			}
			out[r.Resource] = said{hasSettings: true, timeout: d.Seconds(), limit: float64(r.Settings.MaxConcurrency),
				settingsFrom: from}
		}
		for _, b := range r.Breakers {
			out[r.Resource+"/"+b.Rule.ID] = said{ruled: true, state: b.State, calls: float64(b.Total),
				bad: float64(b.Bad), pacing: b.Pacing}
		}
	}
	return out
}

// fromPrometheus reads one scrape of registry in the same terms.
func fromPrometheus(t *testing.T, registry *prometheus.Registry) map[string]said {
	t.Helper()
	families, err := registry.Gather()
	require.NoError(t, err)
	out := map[string]said{}
	for _, f := range families {
		for _, mt := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range mt.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			v := mt.GetGauge().GetValue()
			breakerKey, resource := labels["resource"]+"/"+labels["rule"], labels["resource"]
			switch f.GetName() {
			case "breaker_state":
				s := out[breakerKey]
				s.ruled, s.state = true, stateName(v)
				out[breakerKey] = s
			case "breaker_window_calls":
				s := out[breakerKey]
				s.calls = v
				out[breakerKey] = s
			case "breaker_window_bad":
				s := out[breakerKey]
				s.bad = v
				out[breakerKey] = s
			case "breaker_pacing":
				s := out[breakerKey]
				s.pacing = v == 1
				out[breakerKey] = s
			case "breaker_timeout_seconds":
				s := out[resource]
				s.hasSettings, s.timeout, s.settingsFrom = true, v, labels["settings_from"]
				out[resource] = s
			case "breaker_max_concurrency":
				s := out[resource]
				s.hasSettings, s.limit, s.settingsFrom = true, v, labels["settings_from"]
				out[resource] = s
			}
		}
	}
	return out
}

// fromOTel reads one collection of reader in the same terms.
func fromOTel(t *testing.T, reader *sdkmetric.ManualReader) map[string]said {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	out := map[string]said{}
	for _, sm := range rm.ScopeMetrics {
		for _, mt := range sm.Metrics {
			each := func(attrs attribute.Set, v float64) {
				get := func(k attribute.Key) string { val, _ := attrs.Value(k); return val.String() }
				breakerKey, resource := get(breakerotel.ResourceKey)+"/"+get(breakerotel.RuleKey), get(breakerotel.ResourceKey)
				switch mt.Name {
				case breakerotel.StateName:
					s := out[breakerKey]
					s.ruled, s.state = true, stateName(v)
					out[breakerKey] = s
				case breakerotel.WindowCallsName:
					s := out[breakerKey]
					s.calls = v
					out[breakerKey] = s
				case breakerotel.WindowBadName:
					s := out[breakerKey]
					s.bad = v
					out[breakerKey] = s
				case breakerotel.PacingName:
					s := out[breakerKey]
					s.pacing = v == 1
					out[breakerKey] = s
				case breakerotel.TimeoutName:
					s := out[resource]
					s.hasSettings, s.timeout, s.settingsFrom = true, v, get(breakerotel.SettingsFromKey)
					out[resource] = s
				case breakerotel.ConcurrencyLimitName:
					s := out[resource]
					s.hasSettings, s.limit, s.settingsFrom = true, v, get(breakerotel.SettingsFromKey)
					out[resource] = s
				}
			}
			switch d := mt.Data.(type) {
			case metricdata.Gauge[int64]:
				for _, p := range d.DataPoints {
					each(p.Attributes, float64(p.Value))
				}
			case metricdata.Gauge[float64]:
				for _, p := range d.DataPoints {
					each(p.Attributes, p.Value)
				}
			}
		}
	}
	return out
}

// stateName is the name of the state an exporter writes as v.
func stateName(v float64) string { return breaker.State(int32(v)).String() }
