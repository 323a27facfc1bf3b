package breakerotel_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/halfopen/breaker"
	breakerotel "github.com/halfopen/breaker/contrib/otel"
)

// upDownCounter is the aggregation of an observable up-down counter with points.
func upDownCounter(points ...metricdata.DataPoint[int64]) metricdata.Sum[int64] {
	return metricdata.Sum[int64]{Temporality: metricdata.CumulativeTemporality, IsMonotonic: false, DataPoints: points}
}

// status is the three breaker.status points of an enforcing breaker in state s: 1 for s, 0
// for the others.
func status(resource, rule string, s breaker.State) []metricdata.DataPoint[int64] {
	return statusDry(resource, rule, s, false)
}

func statusDry(resource, rule string, s breaker.State, dryRun bool) []metricdata.DataPoint[int64] {
	names := map[breaker.State]string{breaker.Closed: breakerotel.StateClosed, breaker.Open: breakerotel.StateOpen,
		breaker.HalfOpen: breakerotel.StateHalfOpen}
	var points []metricdata.DataPoint[int64]
	for _, st := range []breaker.State{breaker.Closed, breaker.Open, breaker.HalfOpen} {
		p := metricdata.DataPoint[int64]{Attributes: set(
			breakerotel.ResourceKey.String(resource), breakerotel.RuleKey.String(rule),
			breakerotel.DryRunKey.Bool(dryRun), breakerotel.StateKey.String(names[st]))}
		if st == s {
			p.Value = 1
		}
		points = append(points, p)
	}
	return points
}

// statusPoints collects breaker.status and returns its points.
func (f *fixture) statusPoints() []metricdata.DataPoint[int64] {
	f.t.Helper()
	got, found := f.metric(breakerotel.StatusName)
	require.True(f.t, found)
	sum, ok := got.Data.(metricdata.Sum[int64])
	require.True(f.t, ok, "breaker.status is a sum, got %T", got.Data)
	return sum.DataPoints
}

// Given a breaker that trips, probes and fails, then probes and recovers, then breaker.status
// has, for each breaker, 1 in the series of its state only, through each state.
func TestStatusFollowsState(t *testing.T) {
	f := newFixture(t, dbRules())
	assertStatus := func(want breaker.State) {
		t.Helper()
		f.assertData(breakerotel.StatusName, upDownCounter(append(
			status("db", "ErrorRatio#0", want),
			status("db", "db-slow", breaker.Closed)...)...))
	}

	// Given no calls, then both breakers count as closed.
	assertStatus(breaker.Closed)

	// When half of 4 calls fail, then the ErrorRatio breaker counts as open only.
	for _, err := range []error{nil, errDown, nil, errDown} {
		_ = f.call("db", time.Millisecond, err)
	}
	require.Equal(t, breaker.Open, f.m.Breakers("db")[0].State())
	assertStatus(breaker.Open)

	// When a probe is in flight, then as half_open; when it fails, as open again.
	f.clock.Advance(10 * time.Second)
	probe, err := f.m.Enter("db")
	require.NoError(t, err)
	assertStatus(breaker.HalfOpen)
	probe.SetError(errDown)
	probe.Exit()
	assertStatus(breaker.Open)

	// When the next probe succeeds, then as closed.
	f.clock.Advance(10 * time.Second)
	require.NoError(t, f.call("db", time.Millisecond, nil))
	assertStatus(breaker.Closed)
}

// Given six breakers, two enforcing ones OPEN, a dry-run one OPEN, one HALF_OPEN and two
// CLOSED, then breaker.status summed by breaker.state counts the breakers in each state, each
// breaker has three series that sum to 1, and the dry-run one is told apart by breaker.dry_run.
func TestStatusCountsBreakersByState(t *testing.T) {
	shadow := errorCount("shadow", 1)
	shadow.DryRun = true
	f := newFixture(t, []breaker.Rule{errorCount("a", 1), errorCount("b", 1), errorCount("c", 1),
		errorCount("d", 1), errorCount("e", 1), shadow})
	require.ErrorIs(t, f.call("c", 0, errDown), errDown)
	f.clock.Advance(time.Second)
	probe, err := f.m.Enter("c")
	require.NoError(t, err)
	defer probe.Exit()
	for _, name := range []string{"a", "b", "shadow"} {
		require.ErrorIs(t, f.call(name, 0, errDown), errDown)
	}
	require.NoError(t, f.call("d", 0, nil))

	byState := make(map[string]int64)
	enforcing := make(map[string]int64)
	perBreaker := make(map[string][]int64)
	for _, p := range f.statusPoints() {
		st, _ := p.Attributes.Value(breakerotel.StateKey)
		byState[st.AsString()] += p.Value
		if dry, _ := p.Attributes.Value(breakerotel.DryRunKey); !dry.AsBool() {
			enforcing[st.AsString()] += p.Value
		}
		resource, _ := p.Attributes.Value(breakerotel.ResourceKey)
		perBreaker[resource.AsString()] = append(perBreaker[resource.AsString()], p.Value)
	}
	assert.Equal(t, map[string]int64{breakerotel.StateClosed: 2, breakerotel.StateOpen: 3,
		breakerotel.StateHalfOpen: 1}, byState)
	assert.Equal(t, map[string]int64{breakerotel.StateClosed: 2, breakerotel.StateOpen: 2,
		breakerotel.StateHalfOpen: 1}, enforcing)
	require.Len(t, perBreaker, 6)
	for resource, values := range perBreaker {
		assert.ElementsMatch(t, []int64{0, 0, 1}, values, resource)
	}
}

// Given an OPEN breaker, when a reload drops its rule, then its three series are gone at the
// next collection and the new rules have theirs; without rules it reports nothing, as the
// state gauge.
func TestStatusOnReload(t *testing.T) {
	f := newFixture(t, dbRules())
	for range 4 {
		_ = f.call("db", time.Millisecond, errDown)
	}
	require.Equal(t, breaker.Open, f.m.Breakers("db")[0].State())
	f.assertData(breakerotel.StatusName, upDownCounter(append(
		status("db", "ErrorRatio#0", breaker.Open),
		status("db", "db-slow", breaker.Closed)...)...))

	require.NoError(t, f.m.LoadRules([]breaker.Rule{
		dbRules()[1],
		{Resource: "queue", Strategy: breaker.ErrorCount, Threshold: 3, RetryTimeout: time.Second},
	}))
	f.assertData(breakerotel.StatusName, upDownCounter(append(
		status("db", "db-slow", breaker.Closed),
		status("queue", "ErrorCount#0", breaker.Closed)...)...))

	require.NoError(t, f.m.LoadRules(nil))
	for _, name := range []string{breakerotel.StateName, breakerotel.StatusName} {
		_, found := f.metric(name)
		assert.False(t, found, "%s without rules", name)
	}
}

// Given a rule with RampUp whose probe closed its breaker, then breaker.status counts it as
// closed while breaker.ramping_up is 1.
func TestStatusWhileRampingUp(t *testing.T) {
	f := newFixture(t, []breaker.Rule{{ID: "warming", Resource: "db", Strategy: breaker.ErrorCount,
		Threshold: 1, MinRequestAmount: 1, RetryTimeout: time.Second, RampUp: time.Minute}})
	require.ErrorIs(t, f.call("db", 0, errDown), errDown)
	f.clock.Advance(time.Second)
	require.NoError(t, f.call("db", 0, nil), "the probe")

	f.assertData(breakerotel.StatusName, upDownCounter(status("db", "warming", breaker.Closed)...))
	ramping := state("db", "warming", breaker.Closed)
	ramping.Value = 1
	f.assertData(breakerotel.RampingUpName, gauge(ramping))
}

// Given a rule with Pace whose window met its threshold with successes in it, then
// breaker.status counts its breaker as closed while breaker.pacing is 1.
func TestStatusWhilePacing(t *testing.T) {
	f := newFixture(t, []breaker.Rule{{ID: "quota", Resource: "db", Strategy: breaker.ErrorRatio,
		Threshold: 0.5, MinRequestAmount: 4, RetryTimeout: time.Second, Pace: true}})
	for _, err := range []error{nil, nil, errDown, errDown} {
		require.Equal(t, err, f.call("db", 0, err))
	}

	f.assertData(breakerotel.StatusName, upDownCounter(status("db", "quota", breaker.Closed)...))
	pacing := state("db", "quota", breaker.Closed)
	pacing.Value = 1
	f.assertData(breakerotel.PacingName, gauge(pacing))
}

// Given a template rule and more names called than the default bound, then breaker.status has
// three series for each of the DefaultMaxResources names within the bound and none for the
// others; under the SDK's default cardinality limit of 2,000 no series is folded into its
// overflow set, so every breaker is counted under its own state.
func TestStatusWithinCardinalityLimit(t *testing.T) {
	names := breakerotel.DefaultLimits().Names + 20
	f := newFixture(t, []breaker.Rule{{Resource: "api/*", Strategy: breaker.ErrorCount, Threshold: 1,
		MinRequestAmount: 1, RetryTimeout: time.Minute}})
	for i := range names {
		var err error
		if i%2 == 0 {
			err = errDown // trips the breaker of every other name
		}
		_ = f.call("api/"+strconv.Itoa(i), 0, err)
	}
	require.Len(t, templateNames(f.m), names)

	points := f.statusPoints()
	assert.Len(t, points, 3*breakerotel.DefaultLimits().Names)
	byState := make(map[string]int64)
	for _, p := range points {
		_, overflow := p.Attributes.Value("otel.metric.overflow")
		require.False(t, overflow, "a series was folded into the SDK's overflow set")
		st, _ := p.Attributes.Value(breakerotel.StateKey)
		byState[st.AsString()] += p.Value
	}
	assert.Equal(t, map[string]int64{breakerotel.StateClosed: int64(breakerotel.DefaultLimits().Names / 2),
		breakerotel.StateOpen: int64(breakerotel.DefaultLimits().Names / 2), breakerotel.StateHalfOpen: 0}, byState)
}
