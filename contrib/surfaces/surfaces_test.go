package surfaces_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
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
	"github.com/halfopen/breaker/breakerhttp"
	"github.com/halfopen/breaker/breakertest"
	breakerotel "github.com/halfopen/breaker/contrib/otel"
	breakerprom "github.com/halfopen/breaker/contrib/prometheus"
)

// said is what a surface says of one breaker, of the settings of one resource, of its last
// minute, of a name configured and not called, or of a kind of transition, in the terms all the
// surfaces share.
type said struct {
	state              string // "CLOSED", "OPEN", "HALF_OPEN"
	calls, bad         float64
	refused            float64 // of a breaker's bad calls, the refused; of a name's calls, the refused
	failed             float64 // of a name's calls, the failed, refused ones apart
	side               string  // of a name: "server" or "client"
	pacing             bool
	timeout, limit     float64 // seconds; calls
	settingsFrom       string  // "own" or the template key
	hasSettings, ruled bool
	longest            float64 // seconds: the longest call of the minute
	nearest            string  // of a name configured and not called, the called name nearest to it
	transitions        float64 // of a kind of transition, how many
}

var errDown = errors.New("down")

// refused is an error the dependency refused the call with (a 429, say).
var refused = breaker.CountAs(errDown, breaker.Refused)

// route is a name breakerhttp.Middleware makes, on the server's side.
const route = breakerhttp.ServerPrefix + "POST /orders"

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// surfaces are the four surfaces of one Manager on a fake clock: the status page with a
// Recorder, served over HTTP for its event stream, a Prometheus Collector and OpenTelemetry
// Instruments, all set up at the clock's start.
type surfaces struct {
	m        *breaker.Manager
	clock    *breakertest.Clock
	page     http.Handler
	server   *httptest.Server
	registry *prometheus.Registry
	reader   *sdkmetric.ManualReader
}

func newSurfaces(t *testing.T, clock *breakertest.Clock, managerOpts ...breaker.Option) *surfaces {
	t.Helper()
	collector := breakerprom.New()
	reader := sdkmetric.NewManualReader()
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { assert.NoError(t, provider.Shutdown(context.Background())) })
	ins, err := breakerotel.New(provider)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, ins.Close()) })
	rec := breakerdebug.NewRecorder()
	m := breaker.NewManager(append([]breaker.Option{breaker.WithClock(clock), collector.Option(), ins.Option(),
		rec.Option()}, managerOpts...)...)
	collector.Watch(m)
	require.NoError(t, ins.Watch(m))
	registry := prometheus.NewPedanticRegistry()
	require.NoError(t, registry.Register(collector))
	page := breakerdebug.Handler(m, breakerdebug.WithRecorder(rec), breakerdebug.WithLogger(quiet))
	server := httptest.NewServer(page)
	t.Cleanup(server.Close)
	return &surfaces{m: m, clock: clock, page: page, server: server, registry: registry, reader: reader}
}

// call makes a call of name that takes rt on the fake clock and ends with err.
func (s *surfaces) call(name string, rt time.Duration, err error) {
	_ = s.m.Do(context.Background(), name, func(context.Context) error {
		s.clock.Advance(rt)
		return err
	})
}

var quiet = slog.New(slog.DiscardHandler)

// Given an incident on one Manager (payments OPEN, inventory pacing under settings of its own,
// search CLOSED with a slow call in its window and a call its dependency refused, payments and
// search under the "*" template setting, a rule for "paymnets", a typo, ledger, whose only call
// took 3 s and ended 65 s ago, and a route the program serves, "@server POST /orders", with
// calls refused and failed in its window), when the status page's JSON, a Prometheus scrape, an
// OpenTelemetry collection and the event stream read it at one instant of the fake clock, then
// all four say the same of every resource: its side, each breaker's state, its window's calls,
// bad calls and refused calls, whether it paces, the timeout and limit that apply with the key
// they come from, its failed and refused calls apart, the longest call of the minute (none for
// ledger: its call is more than a minute old), the names configured and not called (paymnets,
// nearest payments, and ledger), and how many transitions of each kind there were.
func TestEverySurfaceSaysTheSame(t *testing.T) {
	s := newSurfaces(t, breakertest.NewClock())
	require.NoError(t, s.m.LoadRules([]breaker.Rule{
		{ID: "payments-errors", Resource: "payments", Strategy: breaker.ErrorRatio, Threshold: 0.5,
			MinRequestAmount: 4, RetryTimeout: time.Minute},
		{ID: "inventory-errors", Resource: "inventory", Strategy: breaker.ErrorRatio, Threshold: 0.5,
			MinRequestAmount: 4, RetryTimeout: time.Minute, Pace: true},
		{ID: "search-slow", Resource: "search", Strategy: breaker.SlowRequestRatio, Threshold: 0.9,
			MaxAllowedRT: 50 * time.Millisecond, MinRequestAmount: 4, RetryTimeout: time.Minute},
		{ID: "typo-errors", Resource: "paymnets", Strategy: breaker.ErrorCount, Threshold: 5, RetryTimeout: time.Minute},
		{ID: "ledger-errors", Resource: "ledger", Strategy: breaker.ErrorCount, Threshold: 5, RetryTimeout: time.Minute},
		{ID: "orders-errors", Resource: route, Strategy: breaker.ErrorRatio, Threshold: 0.9, MinRequestAmount: 10,
			RetryTimeout: time.Minute},
	}))
	require.NoError(t, s.m.LoadResources(map[string]breaker.ResourceConfig{
		"*":         {Timeout: 500 * time.Millisecond, MaxConcurrency: 20},
		"inventory": {Timeout: time.Second, MaxConcurrency: 5},
	}))
	s.call("ledger", 3*time.Second, nil)
	s.clock.Advance(62 * time.Second) // the call ended 62 s ago; the incident takes 3 s more
	for range 4 {
		s.call("payments", 0, errDown)
	}
	s.clock.Advance(3 * time.Second)
	for _, err := range []error{nil, nil, errDown, errDown} {
		s.call("inventory", 0, err) // pacing, in the window the surfaces read
	}
	s.call("search", 0, nil)
	s.call("search", 80*time.Millisecond, nil)
	s.call("search", 0, nil)
	s.call("search", 0, refused) // judged by its time: not slow
	for _, err := range []error{refused, refused, errDown, nil} {
		s.call(route, 0, err)
	}

	page := fromPage(t, s.page)
	stream := fromStream(t, s.server.URL)
	prom := fromPrometheus(t, s.registry)
	otel := fromOTel(t, s.reader)
	require.Len(t, page, 30, "6 breakers, the settings of 6 resources, 4 longest calls, 2 names not "+
		"called, 2 kinds of transition, the sides of 6 names and 4 names' failed or refused calls: %v", page)
	require.Equal(t, "OPEN", page["payments/payments-errors"].state, "the incident is as set up")
	require.True(t, page["inventory/inventory-errors"].pacing)
	require.Equal(t, "*", page["payments"].settingsFrom)
	require.Equal(t, 0.08, page["longest/search"].longest)
	require.NotContains(t, page, "longest/ledger", "its one call ended 65 s ago")
	require.Equal(t, "payments", page["uncalled/paymnets"].nearest)
	require.Contains(t, page, "uncalled/ledger")
	require.Equal(t, "server", page["side/"+route].side)
	require.Equal(t, "client", page["side/search"].side)
	require.Equal(t, said{failed: 1, refused: 2}, page["outcomes/"+route], "refused apart from failed")
	require.Equal(t, said{refused: 1}, page["outcomes/search"])
	require.Equal(t, float64(3), page[route+"/orders-errors"].bad, "refusals are bad in the window")
	assert.Equal(t, page, stream, "the page and the event stream")
	assert.Equal(t, page, prom, "the page and Prometheus")
	assert.Equal(t, page, otel, "the page and OpenTelemetry")
}

// Given a Manager on a clock at the Unix epoch, in 1969 and in 2300 (past the year 2262, where
// nanoseconds since 1970 overflow), when calls are made in each second of a minute, a third of
// them failing and a third refused, then every surface counts every call, in its counters and
// in its last minute, the failed and the refused apart, with the longest of them, and no call
// observer panics.
func TestEverySurfaceCountsEveryCallAtAnyTime(t *testing.T) {
	tests := []struct {
		name string
		give time.Time
	}{
		{name: "the epoch", give: time.Unix(0, 0).UTC()},
		{name: "1969", give: time.Date(1969, 7, 20, 20, 17, 40, 0, time.UTC)},
		{name: "2300", give: time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := breakertest.NewClock()
			clock.Set(tt.give)
			var logs bytes.Buffer
			s := newSurfaces(t, clock, breaker.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
			require.NoError(t, s.m.LoadRules([]breaker.Rule{{ID: "svc-errors", Resource: "svc",
				Strategy: breaker.ErrorCount, Threshold: 100, RetryTimeout: time.Minute}}))
			for i := range 60 {
				var err error
				switch i % 3 {
				case 0:
					err = errDown
				case 1:
					err = refused
				}
				s.call("svc", time.Duration(i)*time.Millisecond, err)
				s.clock.Advance(time.Second - time.Duration(i)*time.Millisecond)
			}
			s.clock.Advance(-time.Second) // the second of the last call
			s.call("svc", 0, nil)

			want := said{calls: 61, failed: 20, refused: 20, longest: 0.059}
			assert.Equal(t, want, callsOnPage(t, s.page), "the page's minute")
			assert.Equal(t, want, callsInPrometheus(t, s.registry), "Prometheus: breaker_calls_total and the minute's longest")
			assert.Equal(t, want, callsInOTel(t, s.reader), "OpenTelemetry: breaker.calls and the minute's longest")
			assert.Empty(t, logs.String(), "no call observer panicked")
		})
	}
}

// pageDoc is the part of the status page's JSON, or of a status the event stream sends, that
// the surfaces share.
type pageDoc struct {
	Resources []struct {
		Resource string
		Side     string
		Settings *struct {
			Timeout        string
			MaxConcurrency int
		}
		SettingsFrom string
		Breakers     []struct {
			Rule                breaker.Rule
			State               string
			Total, Bad, Refused uint64
			Pacing              bool
		}
		Calls *struct {
			Calls, Failures, Refused uint64
			RTMax                    string
		}
	}
	Uncalled []struct {
		Name, Nearest string
	}
}

// fromPage reads the status page's JSON.
func fromPage(t *testing.T, h http.Handler) map[string]said {
	t.Helper()
	out := saidOfPage(t, readPage(t, h))
	var doc struct {
		Transitions []transitionDoc
	}
	require.NoError(t, json.Unmarshal(readPage(t, h), &doc))
	for _, c := range doc.Transitions {
		c.count(out)
	}
	return out
}

func readPage(t *testing.T, h http.Handler) []byte {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.Header.Set("Accept", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	require.Equal(t, http.StatusOK, rec.Code)
	return rec.Body.Bytes()
}

// transitionDoc is a transition as the page and the event stream show it.
type transitionDoc struct {
	Resource, From, To, Reason string
}

// count counts c in out, under "transition/resource/from/to/reason".
func (c transitionDoc) count(out map[string]said) {
	key := "transition/" + c.Resource + "/" + c.From + "/" + c.To + "/" + c.Reason
	s := out[key]
	s.transitions++
	out[key] = s
}

// fromStream reads the event stream at the page's URL: the transitions it replays to a new
// subscriber, and the status that follows them.
func fromStream(t *testing.T, url string) map[string]said {
	t.Helper()
	resp, err := http.Get(url + "/events")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, "text/event-stream; charset=utf-8", resp.Header.Get("Content-Type"))
	var transitions []transitionDoc
	in := bufio.NewScanner(resp.Body)
	in.Buffer(nil, 1<<20)
	name := ""
	for in.Scan() {
		field, value, _ := strings.Cut(in.Text(), ": ")
		switch field {
		case "event":
			name = value
		case "data":
			if name == "transition" {
				var c transitionDoc
				require.NoError(t, json.Unmarshal([]byte(value), &c))
				transitions = append(transitions, c)
				continue
			}
			require.Equal(t, "status", name)
			out := saidOfPage(t, []byte(value))
			for _, c := range transitions {
				c.count(out)
			}
			return out
		}
	}
	require.FailNow(t, "the stream ended before its status", "%v", in.Err())
	return nil
}

// saidOfPage reads a status of the page: each breaker under "resource/rule", the settings of
// each listed resource under its name, its side under "side/resource", the longest call of each
// under "longest/resource", its failed and refused calls, where it had any, under
// "outcomes/resource", each name configured and not called under "uncalled/name".
func saidOfPage(t *testing.T, body []byte) map[string]said {
	t.Helper()
	var doc pageDoc
	require.NoError(t, json.Unmarshal(body, &doc))
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
				bad: float64(b.Bad), refused: float64(b.Refused), pacing: b.Pacing}
		}
		out["side/"+r.Resource] = said{side: r.Side}
		if r.Calls != nil && r.Calls.RTMax != "" {
			d, err := time.ParseDuration(r.Calls.RTMax)
			require.NoError(t, err)
			out["longest/"+r.Resource] = said{longest: d.Seconds()}
		}
		if r.Calls != nil {
			outcomes(out, r.Resource, "failed", float64(r.Calls.Failures))
			outcomes(out, r.Resource, "refused", float64(r.Calls.Refused))
		}
	}
	for _, u := range doc.Uncalled {
		out["uncalled/"+u.Name] = said{nearest: u.Nearest}
	}
	return out
}

// outcomes counts n calls of resource that ended as outcome ("failed" or "refused") in out, under
// "outcomes/resource", when there are any: the page keeps a minute and the exporters count
// for good, so a name without either has no entry.
func outcomes(out map[string]said, resource, outcome string, n float64) {
	if n == 0 {
		return
	}
	key := "outcomes/" + resource
	s := out[key]
	if outcome == "failed" {
		s.failed += n
	} else {
		s.refused += n
	}
	out[key] = s
}

// callsOnPage reads the page's last minute of svc: its calls, the failed and refused ones, and
// its longest call.
func callsOnPage(t *testing.T, h http.Handler) said {
	t.Helper()
	var doc pageDoc
	require.NoError(t, json.Unmarshal(readPage(t, h), &doc))
	require.Len(t, doc.Resources, 1)
	c := doc.Resources[0].Calls
	require.NotNil(t, c)
	d, err := time.ParseDuration(c.RTMax)
	require.NoError(t, err)
	return said{calls: float64(c.Calls), failed: float64(c.Failures), refused: float64(c.Refused), longest: d.Seconds()}
}

// callsInPrometheus reads one scrape's calls of svc, passed and blocked, the failed and refused
// ones, and its longest call.
func callsInPrometheus(t *testing.T, registry *prometheus.Registry) said {
	t.Helper()
	families, err := registry.Gather()
	require.NoError(t, err)
	var out said
	for _, f := range families {
		for _, mt := range f.GetMetric() {
			outcome := ""
			for _, l := range mt.GetLabel() {
				if l.GetName() == "outcome" {
					outcome = l.GetValue()
				}
			}
			switch {
			case f.GetName() == "breaker_calls_total" && (outcome == "passed" || outcome == "blocked"):
				out.calls += mt.GetCounter().GetValue()
			case f.GetName() == "breaker_calls_total" && outcome == breakerprom.OutcomeFailed:
				out.failed += mt.GetCounter().GetValue()
			case f.GetName() == "breaker_calls_total" && outcome == breakerprom.OutcomeRefused:
				out.refused += mt.GetCounter().GetValue()
			case f.GetName() == "breaker_call_duration_max_seconds":
				out.longest = mt.GetGauge().GetValue()
			}
		}
	}
	return out
}

// callsInOTel reads one collection's calls of svc, passed and blocked, the failed and refused
// ones, and its longest call.
func callsInOTel(t *testing.T, reader *sdkmetric.ManualReader) said {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	var out said
	for _, sm := range rm.ScopeMetrics {
		for _, mt := range sm.Metrics {
			switch d := mt.Data.(type) {
			case metricdata.Sum[int64]:
				if mt.Name != breakerotel.CallsName {
					continue
				}
				for _, p := range d.DataPoints {
					switch o, _ := p.Attributes.Value(breakerotel.OutcomeKey); o.AsString() {
					case breakerotel.OutcomePassed, breakerotel.OutcomeBlocked:
						out.calls += float64(p.Value)
					case breakerotel.OutcomeFailed:
						out.failed += float64(p.Value)
					case breakerotel.OutcomeRefused:
						out.refused += float64(p.Value)
					}
				}
			case metricdata.Gauge[float64]:
				if mt.Name == breakerotel.CallDurationMaxName {
					out.longest = d.DataPoints[0].Value
				}
			}
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
			case "breaker_window_refused":
				s := out[breakerKey]
				s.refused = v
				out[breakerKey] = s
			case "breaker_resource_info":
				out["side/"+resource] = said{side: labels["side"]}
			case "breaker_calls_total":
				if o := labels["outcome"]; o == breakerprom.OutcomeFailed || o == breakerprom.OutcomeRefused {
					outcomes(out, resource, o, mt.GetCounter().GetValue())
				}
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
			case "breaker_call_duration_max_seconds":
				out["longest/"+resource] = said{longest: v}
			case "breaker_uncalled":
				out["uncalled/"+resource] = said{nearest: labels["nearest"]}
			case "breaker_transitions_total":
				out["transition/"+resource+"/"+labels["from"]+"/"+labels["to"]+"/"+labels["reason"]] =
					said{transitions: mt.GetCounter().GetValue()}
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
				case breakerotel.WindowRefusedName:
					s := out[breakerKey]
					s.refused = v
					out[breakerKey] = s
				case breakerotel.ResourceInfoName:
					out["side/"+resource] = said{side: get(breakerotel.SideKey)}
				case breakerotel.CallsName:
					if o := get(breakerotel.OutcomeKey); o == breakerotel.OutcomeFailed || o == breakerotel.OutcomeRefused {
						outcomes(out, resource, o, v)
					}
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
				case breakerotel.CallDurationMaxName:
					out["longest/"+resource] = said{longest: v}
				case breakerotel.UncalledName:
					out["uncalled/"+resource] = said{nearest: get(breakerotel.NearestKey)}
				case breakerotel.TransitionsName:
					out["transition/"+resource+"/"+get(breakerotel.StateFromKey)+"/"+get(breakerotel.StateToKey)+"/"+
						get(breakerotel.ReasonKey)] = said{transitions: v}
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
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					each(p.Attributes, float64(p.Value))
				}
			}
		}
	}
	return out
}

// stateName is the name of the state an exporter writes as v.
func stateName(v float64) string { return breaker.State(int32(v)).String() }
