package breakerotel_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"
	"go.uber.org/goleak"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakertest"
	"github.com/halfopen/breaker/breakerview"
	breakerotel "github.com/halfopen/breaker/contrib/otel"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// newClock returns a fake clock that moves only when told to.
func newClock() *breakertest.Clock { return breakertest.NewClock() }

var errDown = errors.New("service down")

// fixture is a Manager on a fake clock whose Instruments report to a ManualReader.
type fixture struct {
	t      *testing.T
	clock  *breakertest.Clock
	reader *sdkmetric.ManualReader
	ins    *breakerotel.Instruments
	m      *breaker.Manager
}

func newFixture(t *testing.T, rules []breaker.Rule, opts ...breakerotel.Option) *fixture {
	t.Helper()
	return newFixtureWith(t, rules, opts)
}

// newFixtureWith is newFixture with options for the Manager too. The Instruments' last minute
// goes by the Manager's fake clock.
func newFixtureWith(t *testing.T, rules []breaker.Rule, opts []breakerotel.Option, managerOpts ...breaker.Option) *fixture {
	t.Helper()
	reader := sdkmetric.NewManualReader()
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { assert.NoError(t, provider.Shutdown(context.Background())) })
	clk := newClock()
	ins, err := breakerotel.New(provider, opts...)
	require.NoError(t, err)
	m := breaker.NewManager(append([]breaker.Option{breaker.WithClock(clk), ins.Option()}, managerOpts...)...)
	require.NoError(t, ins.Watch(m))
	t.Cleanup(func() { assert.NoError(t, ins.Close()) })
	require.NoError(t, m.LoadRules(rules))
	return &fixture{t: t, clock: clk, reader: reader, ins: ins, m: m}
}

// call makes one call to resource that takes rt by the fake clock and returns err.
func (f *fixture) call(resource string, rt time.Duration, err error) error {
	return f.m.Do(context.Background(), resource, func(context.Context) error {
		f.clock.Advance(rt)
		return err
	})
}

// metric collects and returns the metric called name; ok is false when it has no data.
func (f *fixture) metric(name string) (m metricdata.Metrics, ok bool) {
	f.t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(f.t, f.reader.Collect(context.Background(), &rm))
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == name {
				return m, true
			}
		}
	}
	return metricdata.Metrics{}, false
}

// assertData checks the data of the metric called name.
func (f *fixture) assertData(name string, want metricdata.Aggregation) {
	f.t.Helper()
	got, ok := f.metric(name)
	if !assert.True(f.t, ok, "no data for %s", name) {
		return
	}
	metricdatatest.AssertAggregationsEqual(f.t, want, got.Data,
		metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
}

func set(kvs ...attribute.KeyValue) attribute.Set { return attribute.NewSet(kvs...) }

func counter(points ...metricdata.DataPoint[int64]) metricdata.Sum[int64] {
	return metricdata.Sum[int64]{Temporality: metricdata.CumulativeTemporality, IsMonotonic: true, DataPoints: points}
}

func gauge(points ...metricdata.DataPoint[int64]) metricdata.Gauge[int64] {
	return metricdata.Gauge[int64]{DataPoints: points}
}

func calls(resource, outcome string, n int64) metricdata.DataPoint[int64] {
	return metricdata.DataPoint[int64]{Value: n, Attributes: set(
		breakerotel.ResourceKey.String(resource), breakerotel.OutcomeKey.String(outcome))}
}

// blocked is the data point of the calls to resource that cause rejected.
func blocked(resource, cause string, n int64) metricdata.DataPoint[int64] {
	return metricdata.DataPoint[int64]{Value: n, Attributes: set(
		breakerotel.ResourceKey.String(resource), breakerotel.OutcomeKey.String(breakerotel.OutcomeBlocked),
		breakerotel.CauseKey.String(cause))}
}

// wouldReject is the data point of the calls to resource that ran although a breaker would
// have rejected them, for the reason mode.
func wouldReject(resource, mode string, n int64) metricdata.DataPoint[int64] {
	return metricdata.DataPoint[int64]{Value: n, Attributes: set(
		breakerotel.ResourceKey.String(resource), breakerotel.OutcomeKey.String(breakerotel.OutcomeWouldReject),
		breakerotel.ModeKey.String(mode))}
}

// state is the state gauge's data point of an enforcing breaker.
func state(resource, rule string, s breaker.State) metricdata.DataPoint[int64] {
	return stateDry(resource, rule, s, false)
}

func stateDry(resource, rule string, s breaker.State, dryRun bool) metricdata.DataPoint[int64] {
	return metricdata.DataPoint[int64]{Value: int64(s), Attributes: set(
		breakerotel.ResourceKey.String(resource), breakerotel.RuleKey.String(rule),
		breakerotel.DryRunKey.Bool(dryRun))}
}

// transitions is the transitions counter's data point of enforcing breakers.
func transitions(resource string, from, to breaker.State, reason breaker.Reason, n int64) metricdata.DataPoint[int64] {
	return transitionsDry(resource, from, to, reason, false, n)
}

func transitionsDry(resource string, from, to breaker.State, reason breaker.Reason, dryRun bool, n int64) metricdata.DataPoint[int64] {
	return metricdata.DataPoint[int64]{Value: n, Attributes: set(
		breakerotel.ResourceKey.String(resource),
		breakerotel.StateFromKey.String(from.String()),
		breakerotel.StateToKey.String(to.String()),
		breakerotel.ReasonKey.String(reason.String()),
		breakerotel.DryRunKey.Bool(dryRun))}
}

// durations is the histogram data point of resource with the RTs given in seconds; each must
// be exact in binary so that the sum is.
func durations(resource string, seconds ...float64) metricdata.HistogramDataPoint[float64] {
	p := metricdata.HistogramDataPoint[float64]{
		Attributes:   set(breakerotel.ResourceKey.String(resource)),
		Bounds:       breakerotel.DurationBoundaries,
		BucketCounts: make([]uint64, len(breakerotel.DurationBoundaries)+1),
	}
	for _, s := range seconds {
		p.Count++
		p.Sum += s
		if lo, ok := p.Min.Value(); !ok || s < lo {
			p.Min = metricdata.NewExtrema(s)
		}
		if hi, ok := p.Max.Value(); !ok || s > hi {
			p.Max = metricdata.NewExtrema(s)
		}
		b := 0
		for b < len(p.Bounds) && s > p.Bounds[b] { // a bucket holds values ≤ its bound
			b++
		}
		p.BucketCounts[b]++
	}
	return p
}

func histogram(points ...metricdata.HistogramDataPoint[float64]) metricdata.Histogram[float64] {
	return metricdata.Histogram[float64]{Temporality: metricdata.CumulativeTemporality, DataPoints: points}
}

// dbRules are an ErrorRatio rule that trips at half of 4 calls failed, and a SlowRequestRatio
// rule with an ID that finds calls over 200ms slow but never trips; both windows last a minute.
func dbRules() []breaker.Rule {
	return []breaker.Rule{
		{Resource: "db", Strategy: breaker.ErrorRatio, Threshold: 0.5, MinRequestAmount: 4,
			StatInterval: time.Minute, RetryTimeout: 10 * time.Second},
		{ID: "db-slow", Resource: "db", Strategy: breaker.SlowRequestRatio, Threshold: 1,
			MaxAllowedRT: 200 * time.Millisecond, MinRequestAmount: 1000, StatInterval: time.Minute, RetryTimeout: 10 * time.Second},
	}
}

// Given calls that pass, fail, are refused, are slow, are ignored and are blocked, on a resource
// with rules and one without, the calls counter holds each outcome per resource, the refused
// apart from the failed, and the histogram the RTs of the calls that ran.
func TestCallsAndDurations(t *testing.T) {
	f := newFixture(t, dbRules())

	require.NoError(t, f.call("db", 62500*time.Microsecond, nil))                                // passed
	require.ErrorIs(t, f.call("db", 125*time.Millisecond, errDown), errDown)                     // passed, failed
	require.NoError(t, f.call("db", 250*time.Millisecond, nil))                                  // passed, slow
	require.ErrorIs(t, f.call("db", 62500*time.Microsecond, context.Canceled), context.Canceled) // passed; ignored by the breakers
	require.ErrorIs(t, f.call("db", 1500*time.Millisecond, errDown), errDown)                    // passed, failed, slow: 2 of 4 failed, trips
	require.Equal(t, breaker.Open, f.m.Breakers("db")[0].State())
	for range 2 {
		require.ErrorIs(t, f.call("db", time.Second, nil), breaker.ErrOpen) // blocked
	}
	require.NoError(t, f.call("cache", 500*time.Millisecond, nil))              // no rules: passed
	require.ErrorIs(t, f.call("cache", 250*time.Millisecond, refused), errDown) // passed, refused

	f.assertData(breakerotel.CallsName, counter(
		calls("db", breakerotel.OutcomePassed, 5),
		calls("db", breakerotel.OutcomeFailed, 2),
		calls("db", breakerotel.OutcomeSlow, 2),
		blocked("db", breaker.BlockedByBreaker.String(), 2),
		calls("cache", breakerotel.OutcomePassed, 2),
		calls("cache", breakerotel.OutcomeRefused, 1),
	))
	f.assertData(breakerotel.DurationName, histogram(
		durations("db", 0.0625, 0.125, 0.25, 0.0625, 1.5),
		durations("cache", 0.5, 0.25),
	))
}

// Given a breaker that trips, probes and fails, then probes and recovers, the state gauge
// shows each state of each rule, and the transitions counter every change with its reason.
func TestStateAndTransitions(t *testing.T) {
	f := newFixture(t, dbRules())
	assertStates := func(want breaker.State) {
		t.Helper()
		f.assertData(breakerotel.StateName, gauge(
			state("db", "ErrorRatio#0", want),
			state("db", "db-slow", breaker.Closed),
		))
	}

	// Given no calls, when collected, then both breakers are CLOSED and nothing changed.
	assertStates(breaker.Closed)
	_, ok := f.metric(breakerotel.TransitionsName)
	assert.False(t, ok, "no transitions yet")

	// When half of 4 calls fail, then the ErrorRatio breaker is OPEN.
	for _, err := range []error{nil, errDown, nil, errDown} {
		_ = f.call("db", time.Millisecond, err)
	}
	assertStates(breaker.Open)

	// When the retry time comes and a probe is in flight, then it is HALF_OPEN.
	f.clock.Advance(10 * time.Second)
	probe, err := f.m.Enter("db")
	require.NoError(t, err)
	assertStates(breaker.HalfOpen)

	// When the probe fails, then it is OPEN again; when the next probe succeeds, CLOSED.
	probe.SetError(errDown)
	probe.Exit()
	assertStates(breaker.Open)
	f.clock.Advance(10 * time.Second)
	require.NoError(t, f.call("db", time.Millisecond, nil))
	assertStates(breaker.Closed)

	f.assertData(breakerotel.TransitionsName, counter(
		transitions("db", breaker.Closed, breaker.Open, breaker.ThresholdExceeded, 1),
		transitions("db", breaker.Open, breaker.HalfOpen, breaker.RetryTimeoutElapsed, 2),
		transitions("db", breaker.HalfOpen, breaker.Open, breaker.ProbeFailed, 1),
		transitions("db", breaker.HalfOpen, breaker.Closed, breaker.ProbeSucceeded, 1),
	))
}

// Given an OPEN breaker, when a reload drops its rule, then the gauge shows the new rules only
// and the transitions counter counts the RuleChanged change.
func TestReload(t *testing.T) {
	f := newFixture(t, dbRules())
	for range 4 {
		_ = f.call("db", time.Millisecond, errDown)
	}
	require.Equal(t, breaker.Open, f.m.Breakers("db")[0].State())

	require.NoError(t, f.m.LoadRules([]breaker.Rule{
		dbRules()[1], // kept: still index 0 of db's rules, but named by its ID
		{Resource: "queue", Strategy: breaker.ErrorCount, Threshold: 3, RetryTimeout: time.Second},
		{Resource: "queue", Strategy: breaker.ErrorRatio, Threshold: 0.9, RetryTimeout: time.Second},
	}))

	f.assertData(breakerotel.StateName, gauge(
		state("db", "db-slow", breaker.Closed),
		state("queue", "ErrorCount#0", breaker.Closed),
		state("queue", "ErrorRatio#1", breaker.Closed),
	))
	f.assertData(breakerotel.TransitionsName, counter(
		transitions("db", breaker.Closed, breaker.Open, breaker.ThresholdExceeded, 1),
		transitions("db", breaker.Open, breaker.Closed, breaker.RuleChanged, 1),
	))
}

// WithAttributes adds its attributes to every measurement of every instrument.
func TestWithAttributes(t *testing.T) {
	manager := attribute.String("breaker.manager", "payments")
	f := newOverrideFixture(t, []breaker.Rule{{Resource: "db", Strategy: breaker.ErrorCount, Threshold: 1,
		MinRequestAmount: 1, RetryTimeout: time.Second}}, breakerotel.WithAttributes(manager))
	require.NoError(t, f.m.LoadResources(map[string]breaker.ResourceConfig{"db": {MaxConcurrency: 1}}))
	_ = f.call("db", 0, errDown)
	f.override("db", breaker.ForceClosed, time.Hour)

	for _, name := range []string{breakerotel.CallsName, breakerotel.DurationName, breakerotel.StateName,
		breakerotel.StatusName, breakerotel.TransitionsName, breakerotel.ForceName, breakerotel.InFlightName,
		breakerotel.ConcurrencyLimitName, breakerotel.TimeoutName, breakerotel.OverrideName,
		breakerotel.OverrideEndName, breakerotel.WindowCallsName, breakerotel.WindowBadName,
		breakerotel.WindowRefusedName, breakerotel.WindowRatioName, breakerotel.ResourceInfoName} {
		m, ok := f.metric(name)
		require.True(t, ok, name)
		metricdatatest.AssertHasAttributes(t, m, manager)
	}
}

// The instruments have the names, kinds, units and descriptions documented in the README.
func TestInstruments(t *testing.T) {
	f := newOverrideFixture(t, []breaker.Rule{
		{Resource: "db", Strategy: breaker.ErrorCount, Threshold: 1, MinRequestAmount: 1, RetryTimeout: time.Second},
		{Resource: "api/*", Strategy: breaker.ErrorCount, Threshold: 1, RetryTimeout: time.Second},
		{Resource: "quota", Strategy: breaker.ErrorRatio, Threshold: 0.5, RetryTimeout: time.Second,
			RampUp: time.Minute, Pace: true}, // observed by breaker.ramping_up and breaker.pacing
	})
	require.NoError(t, f.m.LoadResources(map[string]breaker.ResourceConfig{"db": {MaxConcurrency: 1}}))
	_ = f.call("db", time.Millisecond, errDown) // trips: every instrument has data
	f.override("db", breaker.ForceClosed, time.Hour)

	tests := []struct {
		give     string
		wantUnit string
		wantKind metricdata.Aggregation
	}{
		{give: "breaker.calls", wantUnit: "{call}", wantKind: metricdata.Sum[int64]{}},
		{give: "breaker.call.duration", wantUnit: "s", wantKind: metricdata.Histogram[float64]{}},
		{give: "breaker.state", wantUnit: "1", wantKind: metricdata.Gauge[int64]{}},
		{give: "breaker.status", wantUnit: "1", wantKind: metricdata.Sum[int64]{}},
		{give: "breaker.ramping_up", wantUnit: "1", wantKind: metricdata.Gauge[int64]{}},
		{give: "breaker.pacing", wantUnit: "1", wantKind: metricdata.Gauge[int64]{}},
		{give: "breaker.window.calls", wantUnit: "{call}", wantKind: metricdata.Gauge[int64]{}},
		{give: "breaker.window.bad", wantUnit: "{call}", wantKind: metricdata.Gauge[int64]{}},
		{give: "breaker.window.refused", wantUnit: "{call}", wantKind: metricdata.Gauge[int64]{}},
		{give: "breaker.window.ratio", wantUnit: "1", wantKind: metricdata.Gauge[float64]{}},
		{give: "breaker.transitions", wantUnit: "{transition}", wantKind: metricdata.Sum[int64]{}},
		{give: "breaker.force", wantUnit: "1", wantKind: metricdata.Gauge[int64]{}},
		{give: "breaker.in_flight", wantUnit: "{call}", wantKind: metricdata.Gauge[int64]{}},
		{give: "breaker.concurrency.limit", wantUnit: "{call}", wantKind: metricdata.Gauge[int64]{}},
		{give: "breaker.timeout", wantUnit: "s", wantKind: metricdata.Gauge[float64]{}},
		{give: "breaker.override", wantUnit: "{override}", wantKind: metricdata.Gauge[int64]{}},
		{give: "breaker.override.end", wantUnit: "s", wantKind: metricdata.Gauge[float64]{}},
		{give: "breaker.template.breakers", wantUnit: "{breaker}", wantKind: metricdata.Gauge[int64]{}},
		{give: "breaker.template.settings", wantUnit: "{resource}", wantKind: metricdata.Gauge[int64]{}},
		{give: "breaker.template.limit", wantUnit: "{breaker}", wantKind: metricdata.Gauge[int64]{}},
		{give: "breaker.template.dropped", wantUnit: "{resource}", wantKind: metricdata.Sum[int64]{}},
		{give: "breaker.resource.info", wantUnit: "{resource}", wantKind: metricdata.Gauge[int64]{}},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			m, ok := f.metric(tt.give)
			require.True(t, ok)
			assert.Equal(t, tt.wantUnit, m.Unit)
			assert.NotEmpty(t, m.Description)
			assert.IsType(t, tt.wantKind, m.Data)
		})
	}
}

// Given closed Instruments, nothing more is counted, the gauge reports nothing, and counts
// made before stay.
func TestClose(t *testing.T) {
	f := newFixture(t, dbRules())
	_ = f.call("db", time.Millisecond, nil)
	require.NoError(t, f.ins.Close())
	require.NoError(t, f.ins.Close(), "a second Close does nothing")

	for range 4 {
		_ = f.call("db", time.Millisecond, errDown) // trips
	}
	require.Equal(t, breaker.Open, f.m.Breakers("db")[0].State())

	f.assertData(breakerotel.CallsName, counter(calls("db", breakerotel.OutcomePassed, 1)))
	f.assertData(breakerotel.DurationName, histogram(durations("db", 0.001)))
	for _, name := range []string{breakerotel.StateName, breakerotel.StatusName, breakerotel.TransitionsName,
		breakerotel.WindowCallsName, breakerotel.WindowBadName, breakerotel.WindowRefusedName,
		breakerotel.WindowRatioName, breakerotel.ResourceInfoName} {
		_, ok := f.metric(name)
		assert.False(t, ok, "%s reports after Close", name)
	}
}

func TestObserveErrors(t *testing.T) {
	m := breaker.NewManager()
	tests := []struct {
		name    string
		give    func(ins *breakerotel.Instruments) error
		wantErr error
	}{
		{
			name: "observing twice",
			give: func(ins *breakerotel.Instruments) error {
				require.NoError(t, ins.Watch(m))
				return ins.Watch(breaker.NewManager())
			},
			wantErr: breakerotel.ErrWatching,
		},
		{
			name: "after Close",
			give: func(ins *breakerotel.Instruments) error {
				require.NoError(t, ins.Close())
				return ins.Watch(m)
			},
			wantErr: breakerotel.ErrClosed,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			provider := sdkmetric.NewMeterProvider()
			defer func() { assert.NoError(t, provider.Shutdown(context.Background())) }()
			ins, err := breakerotel.New(provider)
			require.NoError(t, err)
			defer func() { assert.NoError(t, ins.Close()) }()
			assert.ErrorIs(t, tt.give(ins), tt.wantErr)
		})
	}

	t.Run("nil Manager", func(t *testing.T) {
		ins, err := breakerotel.New(nil) // the global MeterProvider, a no-op one here
		require.NoError(t, err)
		assert.Error(t, ins.Watch(nil))
	})
	t.Run("nil Meter", func(t *testing.T) {
		_, err := breakerotel.NewWithMeter(nil)
		assert.Error(t, err)
	})
}

// Given many goroutines calling resources seen for the first time, a quarter of the calls
// failing and a quarter refused, when they race to build the resource's attribute sets, then
// every call is counted exactly once, the refused apart from the failed.
func TestConcurrentCalls(t *testing.T) {
	const goroutines, perGoroutine = 8, 200
	resources := []string{"a", "b", "c"}
	f := newFixture(t, nil)

	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range perGoroutine {
				var err error
				switch (g + i) % 4 {
				case 0:
					err = errDown
				case 1:
					err = breaker.CountAs(errDown, breaker.Refused)
				}
				_ = f.call(resources[i%len(resources)], 0, err)
			}
		})
	}
	wg.Wait()

	var want []metricdata.DataPoint[int64]
	for i, r := range resources {
		var n, failed, refused int64
		for g := range goroutines {
			for j := i; j < perGoroutine; j += len(resources) {
				n++
				switch (g + j) % 4 {
				case 0:
					failed++
				case 1:
					refused++
				}
			}
		}
		want = append(want, calls(r, breakerotel.OutcomePassed, n), calls(r, breakerotel.OutcomeFailed, failed),
			calls(r, breakerotel.OutcomeRefused, refused))
	}
	f.assertData(breakerotel.CallsName, counter(want...))
}

// Once a resource has been seen, a call allocates nothing in the Instruments, whether it
// succeeded, failed or was refused: the same as without them. Nor does a call to a name too
// long to keep, or to a new name once the Instruments are full.
func TestCallAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	f := newFixture(t, []breaker.Rule{
		{Resource: "pass", Strategy: breaker.ErrorRatio, Threshold: 0.5, RetryTimeout: time.Hour},
		{Resource: "open", Strategy: breaker.ErrorCount, Threshold: 1, MinRequestAmount: 1, RetryTimeout: time.Hour},
	}, breakerotel.WithLimits(breakerview.Limits{Names: 2}))
	ctx := context.Background()
	_ = f.m.Do(ctx, "open", fail)
	require.Equal(t, breaker.Open, f.m.Breakers("open")[0].State())

	tests := []struct {
		give string
		fn   func(context.Context) error
	}{
		{give: "pass", fn: succeed},
		{give: "pass", fn: fail},
		{give: "pass", fn: refuse},
		{give: "open", fn: succeed},
		{give: strings.Repeat("x", breakerotel.DefaultLimits().NameLength+1), fn: succeed},
		{give: "new name past the bound", fn: succeed},
	}
	for _, tt := range tests {
		_ = f.m.Do(ctx, tt.give, tt.fn) // the first call builds the resource's sets
		allocs := testing.AllocsPerRun(100, func() { _ = f.m.Do(ctx, tt.give, tt.fn) })
		assert.Zero(t, allocs, "%.40s", tt.give)
	}
}

func succeed(context.Context) error { return nil }
func fail(context.Context) error    { return errDown }

// refused is made once, so that refuse allocates nothing.
var refused = breaker.CountAs(errDown, breaker.Refused)

func refuse(context.Context) error { return refused }

// Given a template rule, then the state gauge and the window gauges have the breaker it made
// for each name within the bound, and none for a name measured as "_other".
func TestTemplateStates(t *testing.T) {
	tmpl := breaker.Rule{ID: "per-host", Resource: "api/*", Strategy: breaker.ErrorCount, Threshold: 1,
		RetryTimeout: time.Minute}
	f := newFixture(t, []breaker.Rule{tmpl}, breakerotel.WithLimits(breakerview.Limits{Names: 2}))
	_ = f.call("api/a", time.Millisecond, errDown)
	_ = f.call("api/b", time.Millisecond, nil)
	_ = f.call("api/c", time.Millisecond, errDown) // measured as _other
	require.Len(t, templateNames(f.m), 3)
	f.assertData(breakerotel.StateName, gauge(
		state("api/a", "per-host", breaker.Open),
		state("api/b", "per-host", breaker.Closed),
	))
	f.assertData(breakerotel.WindowCallsName, gauge(
		windowPoint("api/a", "per-host", int64(0)), // OPEN: its window starts empty when it closes
		windowPoint("api/b", "per-host", int64(1)),
	))
	f.assertData(breakerotel.WindowRatioName, floatGauge(
		windowPoint("api/a", "per-host", 0.),
		windowPoint("api/b", "per-host", 0.),
	))
}

// Given a template rule, then the template instruments count the breakers it made, their bound
// and the drops, with the attributes of WithAttributes; before any template they report
// nothing.
func TestTemplateInstruments(t *testing.T) {
	manager := attribute.String("breaker.manager", "payments")
	f := newFixtureWith(t, nil, []breakerotel.Option{breakerotel.WithAttributes(manager)},
		breaker.WithMaxTemplateBreakers(2))
	for _, name := range []string{breakerotel.TemplateBreakersName, breakerotel.TemplateSettingsName,
		breakerotel.TemplateLimitName, breakerotel.TemplateDroppedName} {
		_, ok := f.metric(name)
		assert.False(t, ok, "%s before a template", name)
	}
	require.NoError(t, f.m.LoadRules([]breaker.Rule{{Resource: "api/*", Strategy: breaker.ErrorCount,
		Threshold: 1, RetryTimeout: time.Minute}}))
	value := func(n int64) metricdata.DataPoint[int64] {
		return metricdata.DataPoint[int64]{Value: n, Attributes: set(manager)}
	}
	f.assertData(breakerotel.TemplateBreakersName, gauge(value(0)))

	_ = f.call("api/a", time.Millisecond, errDown) // trips api/a
	_ = f.call("api/b", time.Millisecond, nil)
	f.clock.Advance(time.Second)
	_ = f.call("api/c", time.Millisecond, nil) // drops api/b, the idle CLOSED one
	assert.Equal(t, []string{"api/a", "api/c"}, templateNames(f.m))
	f.assertData(breakerotel.TemplateBreakersName, gauge(value(2)))
	f.assertData(breakerotel.TemplateLimitName, gauge(value(2)))
	f.assertData(breakerotel.TemplateDroppedName, counter(value(1)))
}

// Given a rule with RampUp beside one without, then breaker.ramping_up is observed for the
// first only: 0 until a probe closes its breaker, 1 while the ramp paces its calls, and 0 once
// a bucket took the whole flow.
func TestRampingUp(t *testing.T) {
	warming := breaker.Rule{ID: "warming", Resource: "db", Strategy: breaker.ErrorCount, Threshold: 2,
		MinRequestAmount: 1, RetryTimeout: time.Second, RampUp: time.Minute}
	plain := breaker.Rule{ID: "plain", Resource: "db", Strategy: breaker.ErrorRatio, Threshold: 1,
		MinRequestAmount: 100, RetryTimeout: time.Second}
	f := newFixture(t, []breaker.Rule{warming, plain})
	ramping := func(v int64) metricdata.DataPoint[int64] {
		p := state("db", "warming", breaker.Closed)
		p.Value = v
		return p
	}
	f.assertData(breakerotel.RampingUpName, gauge(ramping(0)))
	for range 2 {
		require.ErrorIs(t, f.call("db", 0, errDown), errDown)
	}
	f.clock.Advance(time.Second)
	require.NoError(t, f.call("db", 0, nil), "the probe")
	f.assertData(breakerotel.RampingUpName, gauge(ramping(1)))
	require.NoError(t, f.call("db", 0, nil), "a call of the first bucket, let through")
	f.clock.Advance(100 * time.Millisecond)
	require.NoError(t, f.call("db", 0, nil))
	f.assertData(breakerotel.RampingUpName, gauge(ramping(0)))
}

// Given a rule with Pace beside one without, then breaker.pacing is observed for the first
// only: 0 until its window meets the threshold with successes in it, 1 while it paces, which
// counts the calls it holds back as blocked with cause pacing, and 0 once a bucket held nothing
// back.
func TestPacing(t *testing.T) {
	quota := breaker.Rule{ID: "quota", Resource: "db", Strategy: breaker.ErrorRatio, Threshold: 0.5,
		MinRequestAmount: 4, RetryTimeout: time.Second, Pace: true}
	plain := breaker.Rule{ID: "plain", Resource: "db", Strategy: breaker.ErrorRatio, Threshold: 1,
		MinRequestAmount: 100, RetryTimeout: time.Second}
	f := newFixture(t, []breaker.Rule{quota, plain})
	pacing := func(v int64) metricdata.DataPoint[int64] {
		p := state("db", "quota", breaker.Closed)
		p.Value = v
		return p
	}
	f.assertData(breakerotel.PacingName, gauge(pacing(0)))
	for _, err := range []error{nil, nil, errDown, errDown} {
		require.Equal(t, err, f.call("db", 0, err)) // the fourth meets 0.5 with two successes
	}
	f.assertData(breakerotel.PacingName, gauge(pacing(1)))
	require.ErrorIs(t, f.call("db", 0, nil), breaker.ErrPacing, "held back in the same bucket")
	f.assertData(breakerotel.CallsName, counter(
		calls("db", breakerotel.OutcomePassed, 4),
		calls("db", breakerotel.OutcomeFailed, 2),
		blocked("db", breaker.BlockedByPacing.String(), 1),
	))
	f.clock.Advance(100 * time.Millisecond)
	require.NoError(t, f.call("db", 0, nil), "the next bucket: let through, it holds nothing back")
	f.clock.Advance(100 * time.Millisecond)
	require.NoError(t, f.call("db", 0, nil))
	f.assertData(breakerotel.PacingName, gauge(pacing(0)))
}

// windowPoint is the data point of a window gauge of the breaker of rule on resource.
func windowPoint[N int64 | float64](resource, rule string, v N) metricdata.DataPoint[N] {
	return metricdata.DataPoint[N]{Value: v, Attributes: set(
		breakerotel.ResourceKey.String(resource), breakerotel.RuleKey.String(rule))}
}

// Given the three strategies that keep a window and a ConsecutiveErrors rule on one resource,
// with calls of known RTs and outcomes on the fake clock, then the window gauges are each
// breaker's window: its calls, its slow (SlowRequestRatio) or failed (ErrorRatio, ErrorCount)
// calls and their share; the ConsecutiveErrors breaker its run of failures and no ratio. Once
// the window's time has passed, the window is empty: 0 calls, ratio 0. A tripped breaker's are 0.
func TestWindow(t *testing.T) {
	const minute = time.Minute
	f := newFixture(t, []breaker.Rule{
		{ID: "db-errors", Resource: "db", Strategy: breaker.ErrorRatio, Threshold: 0.9,
			MinRequestAmount: 100, StatInterval: minute, RetryTimeout: minute},
		{ID: "db-slow", Resource: "db", Strategy: breaker.SlowRequestRatio, Threshold: 0.9,
			MaxAllowedRT: 100 * time.Millisecond, MinRequestAmount: 100, StatInterval: minute, RetryTimeout: minute},
		{ID: "db-count", Resource: "db", Strategy: breaker.ErrorCount, Threshold: 100,
			MinRequestAmount: 1, StatInterval: minute, RetryTimeout: minute},
		{ID: "db-run", Resource: "db", Strategy: breaker.ConsecutiveErrors, Threshold: 5, RetryTimeout: minute},
		errorCount("mail", 1),
	})
	require.NoError(t, f.call("db", 200*time.Millisecond, nil)) // slow
	require.NoError(t, f.call("db", 10*time.Millisecond, nil))
	require.ErrorIs(t, f.call("db", 10*time.Millisecond, errDown), errDown)
	require.ErrorIs(t, f.call("db", 10*time.Millisecond, errDown), errDown) // a run of 2
	require.ErrorIs(t, f.call("mail", 0, errDown), errDown)                 // trips

	f.assertData(breakerotel.WindowCallsName, gauge(
		windowPoint("db", "db-errors", int64(4)),
		windowPoint("db", "db-slow", int64(4)),
		windowPoint("db", "db-count", int64(4)),
		windowPoint("db", "db-run", int64(2)),
		windowPoint("mail", "ErrorCount#0", int64(0)),
	))
	f.assertData(breakerotel.WindowBadName, gauge(
		windowPoint("db", "db-errors", int64(2)),
		windowPoint("db", "db-slow", int64(1)),
		windowPoint("db", "db-count", int64(2)),
		windowPoint("db", "db-run", int64(2)),
		windowPoint("mail", "ErrorCount#0", int64(0)),
	))
	f.assertData(breakerotel.WindowRatioName, floatGauge(
		windowPoint("db", "db-errors", 0.5),
		windowPoint("db", "db-slow", 0.25),
		windowPoint("db", "db-count", 0.5),
		windowPoint("mail", "ErrorCount#0", 0.),
	))

	f.clock.Advance(2 * minute) // the windows have moved past every call; the run goes on
	f.assertData(breakerotel.WindowCallsName, gauge(
		windowPoint("db", "db-errors", int64(0)),
		windowPoint("db", "db-slow", int64(0)),
		windowPoint("db", "db-count", int64(0)),
		windowPoint("db", "db-run", int64(2)),
		windowPoint("mail", "ErrorCount#0", int64(0)),
	))
	f.assertData(breakerotel.WindowRatioName, floatGauge(
		windowPoint("db", "db-errors", 0.),
		windowPoint("db", "db-slow", 0.),
		windowPoint("db", "db-count", 0.),
		windowPoint("mail", "ErrorCount#0", 0.),
	))
}

// templateNames returns the names that template rules made breakers for, as a Snapshot lists
// them, in order.
func templateNames(m *breaker.Manager) []string {
	var names []string
	for _, r := range m.Snapshot().Resources {
		if r.Template != "" {
			names = append(names, r.Name)
		}
	}
	return names
}
