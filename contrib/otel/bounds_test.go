package breakerotel_test

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakerview"
	breakerotel "github.com/halfopen/breaker/contrib/otel"
)

// Given a bound of 2 resource names, when calls come under 5 names, then the first 2 keep
// series of their own and the other 3 are measured, exactly, as breaker.resource "_other":
// calls by outcome and cause, durations and transitions; a name seen before the bound filled
// keeps its own. The state gauge, read from the rules, keeps each rule's own name.
func TestMaxResources(t *testing.T) {
	f := newFixture(t, []breaker.Rule{errorCount("c", 1), errorCount("e", 1)},
		breakerotel.WithLimits(breakerview.Limits{Names: 2}))

	require.NoError(t, f.call("a", 62500*time.Microsecond, nil)) // a: its own
	require.NoError(t, f.call("b", 125*time.Millisecond, nil))   // b: its own; the bound is full
	require.ErrorIs(t, f.call("c", 250*time.Millisecond, errDown), errDown)
	require.ErrorIs(t, f.call("c", 0, nil), breaker.ErrOpen)
	require.NoError(t, f.call("d", 500*time.Millisecond, nil))
	require.ErrorIs(t, f.call("e", 250*time.Millisecond, errDown), errDown)
	require.ErrorIs(t, f.call("e", 0, nil), breaker.ErrOpen)
	require.NoError(t, f.call("a", 62500*time.Microsecond, nil)) // still its own

	const other = breakerview.Overflow
	f.assertData(breakerotel.CallsName, counter(
		calls("a", breakerotel.OutcomePassed, 2),
		calls("b", breakerotel.OutcomePassed, 1),
		calls(other, breakerotel.OutcomePassed, 3),
		calls(other, breakerotel.OutcomeFailed, 2),
		blocked(other, breaker.BlockedByBreaker.String(), 2),
	))
	f.assertData(breakerotel.DurationName, histogram(
		durations("a", 0.0625, 0.0625),
		durations("b", 0.125),
		durations(other, 0.25, 0.5, 0.25),
	))
	f.assertData(breakerotel.TransitionsName, counter(
		transitions(other, breaker.Closed, breaker.Open, breaker.ThresholdExceeded, 2),
	))
	f.assertData(breakerotel.StateName, gauge(
		state("c", "ErrorCount#0", breaker.Open),
		state("e", "ErrorCount#0", breaker.Open),
	))
}

// Given the default bound, when 5,000 distinct names each make a call from 4 goroutines at
// once, then the calls counter and the histogram hold DefaultMaxResources names and the overflow only, and
// every call is counted exactly once.
func TestDefaultMaxResources(t *testing.T) {
	const names, goroutines = 5000, 4
	f := newFixture(t, nil)
	ok := func(context.Context) error { return nil }
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := g; i < names; i += goroutines {
				_ = f.m.Do(context.Background(), "path/"+strconv.Itoa(i), ok)
			}
		})
	}
	wg.Wait()

	got, found := f.metric(breakerotel.CallsName)
	require.True(t, found)
	points := got.Data.(metricdata.Sum[int64]).DataPoints
	require.Len(t, points, breakerotel.DefaultLimits().Names+1)
	var total, overflow int64
	for _, p := range points {
		total += p.Value
		if v, _ := p.Attributes.Value(breakerotel.ResourceKey); v.AsString() == breakerview.Overflow {
			overflow = p.Value
		} else {
			assert.Equal(t, int64(1), p.Value, v.AsString())
		}
	}
	assert.Equal(t, int64(names), total)
	assert.Equal(t, int64(names-breakerotel.DefaultLimits().Names), overflow)

	got, found = f.metric(breakerotel.DurationName)
	require.True(t, found)
	assert.Len(t, got.Data.(metricdata.Histogram[float64]).DataPoints, breakerotel.DefaultLimits().Names+1)
}

// Given Limits.Names below 1, then the default bound holds.
func TestMaxResourcesBelowOne(t *testing.T) {
	for _, n := range []int{0, -1} {
		f := newFixture(t, nil, breakerotel.WithLimits(breakerview.Limits{Names: n}))
		for i := range breakerotel.DefaultLimits().Names + 3 {
			require.NoError(t, f.call(strconv.Itoa(i), 0, nil))
		}
		got, found := f.metric(breakerotel.CallsName)
		require.True(t, found)
		assert.Len(t, got.Data.(metricdata.Sum[int64]).DataPoints, breakerotel.DefaultLimits().Names+1, "n=%d", n)
	}
}

// passedByResource collects the calls counter and returns the passed calls of each
// breaker.resource.
func (f *fixture) passedByResource() map[string]int64 {
	f.t.Helper()
	got, found := f.metric(breakerotel.CallsName)
	require.True(f.t, found)
	out := make(map[string]int64)
	for _, p := range got.Data.(metricdata.Sum[int64]).DataPoints {
		if outcome, _ := p.Attributes.Value(breakerotel.OutcomeKey); outcome.AsString() == breakerotel.OutcomePassed {
			resource, _ := p.Attributes.Value(breakerotel.ResourceKey)
			out[resource.AsString()] = p.Value
		}
	}
	return out
}

// callEach makes one passing call to each name.
func (f *fixture) callEach(names ...string) {
	for _, name := range names {
		require.NoError(f.t, f.call(name, 0, nil))
	}
}

// heapGrowth returns how much the live heap grew across fn, each side measured after a
// collection: what fn left reachable.
func heapGrowth(fn func()) int64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.GC()
	runtime.ReadMemStats(&after)
	return int64(after.HeapAlloc) - int64(before.HeapAlloc)
}

// Given the default bounds, when sixteen distinct names of 1 MiB each make a call, then the
// Instruments and the MeterProvider keep well under 1 MiB, and the calls are measured as
// "_other".
func TestLongNamesAreNotKept(t *testing.T) {
	const names, size = 16, 1 << 20
	f := newFixture(t, nil)
	f.callEach("warm") // the sets of a first name, so that the growth is the names'

	grown := heapGrowth(func() {
		for i := range names {
			f.callEach(strings.Repeat(string(rune('a'+i)), size))
		}
	})
	assert.Less(t, grown, int64(size/4), "live heap grew by %d bytes", grown)
	got := f.passedByResource()
	assert.Equal(t, 2, len(got), "warm and the overflow only")
	assert.Equal(t, int64(names), got[breakerview.Overflow])
}

// Given names of 100 bytes cut from strings of 1 MiB, when each makes a call, then each gets
// series of its own and the Instruments keep a copy of it, not the string it was cut from.
func TestNamesAreCopied(t *testing.T) {
	const names, size, length = 16, 1 << 20, 100
	f := newFixture(t, nil)
	f.callEach("warm")

	want := map[string]int64{"warm": 1}
	grown := heapGrowth(func() {
		for i := range names {
			name := strings.Repeat(string(rune('a'+i)), size)[:length]
			f.callEach(name)
			want[strings.Clone(name)] = 1
		}
	})
	assert.Less(t, grown, int64(size/4), "live heap grew by %d bytes", grown)
	assert.Equal(t, want, f.passedByResource())
}

// Given a bound on the length of a name, then a name of exactly that length gets series of
// its own and one a byte longer is measured as "_other"; a bound below 1 keeps the default.
func TestMaxNameLength(t *testing.T) {
	tests := []struct {
		name string
		give []breakerotel.Option
		want int
	}{
		{name: "default", want: breakerotel.DefaultLimits().NameLength},
		{name: "8", give: []breakerotel.Option{breakerotel.WithLimits(breakerview.Limits{NameLength: 8})}, want: 8},
		{name: "0", give: []breakerotel.Option{breakerotel.WithLimits(breakerview.Limits{NameLength: 0})}, want: breakerotel.DefaultLimits().NameLength},
		{name: "-1", give: []breakerotel.Option{breakerotel.WithLimits(breakerview.Limits{NameLength: -1})}, want: breakerotel.DefaultLimits().NameLength},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, nil, tt.give...)
			atBound, past := strings.Repeat("a", tt.want), strings.Repeat("b", tt.want+1)
			f.callEach(atBound, past, past)
			got := f.passedByResource()
			assert.Equal(t, 2, len(got), "the name at the bound and the overflow only")
			assert.Equal(t, int64(1), got[atBound], "the name at the bound")
			assert.Equal(t, int64(2), got[breakerview.Overflow], "the name past the bound")
		})
	}
}

// Given a bound of 10 bytes of names, when names of 4, 4 and 2 bytes make calls, then they
// fill it exactly and keep series of their own; a name of 1 byte more is measured as
// "_other", and so is every new name after it; a name kept still has its own.
func TestMaxNameBytes(t *testing.T) {
	f := newFixture(t, nil, breakerotel.WithLimits(breakerview.Limits{NameBytes: 10}))
	f.callEach("aaaa", "bbbb", "cc", "d", "e", "aaaa")
	assert.Equal(t, map[string]int64{"aaaa": 2, "bbbb": 1, "cc": 1, breakerview.Overflow: 2},
		f.passedByResource())
}

// Given a name that is not UTF-8, then it is charged for its name and for its breaker.resource,
// which has the bad byte replaced by the three bytes of U+FFFD.
func TestMaxNameBytesValue(t *testing.T) {
	f := newFixture(t, nil, breakerotel.WithLimits(breakerview.Limits{NameBytes: 5}))
	f.callEach("a\xff", "b") // 2 + 4 bytes: past the bound
	assert.Equal(t, map[string]int64{breakerview.Overflow: 2}, f.passedByResource())

	f = newFixture(t, nil, breakerotel.WithLimits(breakerview.Limits{NameBytes: 6}))
	f.callEach("a\xff", "b") // 2 + 4 bytes: exactly the bound
	assert.Equal(t, map[string]int64{"a\uFFFD": 1, breakerview.Overflow: 1}, f.passedByResource())
}

// Given Limits.NameBytes below 1, then the default bound holds: 25 names of
// 1 KiB fill it, and the next is measured as "_other".
func TestMaxNameBytesBelowOne(t *testing.T) {
	const length = 1 << 10
	for _, n := range []int{0, -1} {
		f := newFixture(t, nil, breakerotel.WithLimits(breakerview.Limits{NameBytes: n}))
		for i := range breakerotel.DefaultLimits().NameBytes/length + 1 {
			f.callEach(fmt.Sprintf("%0*d", length, i))
		}
		got := f.passedByResource()
		assert.Equal(t, breakerotel.DefaultLimits().NameBytes/length+1, len(got), "n=%d", n)
		assert.Equal(t, int64(1), got[breakerview.Overflow], "n=%d", n)
	}
}

// Given a bound of 2 resource names, both taken by calls, when five other resources are
// overridden, then the override gauges keep the two names and count the other overrides as
// "_other" by force, with the latest end of each; a name too long for the bound counts there
// too.
func TestMaxResourcesOverrides(t *testing.T) {
	f := newOverrideFixture(t, nil, breakerotel.WithLimits(breakerview.Limits{Names: 2, NameLength: 8}))
	f.callEach("a", "b")
	f.override("a", breaker.ForceOpen, time.Hour)          // ends at 1767229200
	f.override("c", breaker.ForceOpen, 2*time.Hour)        // 1767232800
	f.override("d", breaker.ForceOpen, 30*time.Minute)     // 1767227400
	f.override("e", breaker.ForceClosed, 10*time.Minute)   // 1767226200
	f.override("too-long-name", breaker.Auto, time.Minute) // 1767225660

	const other = breakerview.Overflow
	f.assertData(breakerotel.OverrideName, gauge(
		overridden("a", breaker.ForceOpen, 1),
		overridden(other, breaker.ForceOpen, 2),
		overridden(other, breaker.ForceClosed, 1),
		overridden(other, breaker.Auto, 1),
	))
	f.assertData(breakerotel.OverrideEndName, floatGauge(
		overrideEnd("a", breaker.ForceOpen, 1767229200),
		overrideEnd(other, breaker.ForceOpen, 1767232800),
		overrideEnd(other, breaker.ForceClosed, 1767226200),
		overrideEnd(other, breaker.Auto, 1767225660),
	))
}

// Given the default bounds, when more resources than they allow are overridden, then
// breaker.override has a series for each of the DefaultMaxResources names within the bound and
// one for each force as "_other", and counts every override.
func TestDefaultMaxResourcesOverrides(t *testing.T) {
	names := breakerotel.DefaultLimits().Names + 20
	f := newOverrideFixture(t, nil)
	forces := []breaker.Force{breaker.Auto, breaker.ForceOpen, breaker.ForceClosed}
	for i := range names {
		f.override("svc/"+strconv.Itoa(i), forces[i%len(forces)], time.Hour)
	}

	got, found := f.metric(breakerotel.OverrideName)
	require.True(t, found)
	var own, overflow, total int64
	for _, p := range got.Data.(metricdata.Gauge[int64]).DataPoints {
		if v, _ := p.Attributes.Value(breakerotel.ResourceKey); v.AsString() == breakerview.Overflow {
			overflow++
		} else {
			own++
			assert.Equal(t, int64(1), p.Value, v.AsString())
		}
		total += p.Value
	}
	assert.Equal(t, int64(breakerotel.DefaultLimits().Names), own)
	assert.Equal(t, int64(len(forces)), overflow)
	assert.Equal(t, int64(names), total)
}

// Given a bound of 2 resource names, taken by the calls of a name that holds template settings
// and of another, then the calls in flight of the names past the bound that hold template
// settings are added up as "_other".
func TestMaxResourcesTemplateInFlight(t *testing.T) {
	f := newFixture(t, nil, breakerotel.WithLimits(breakerview.Limits{Names: 2}))
	f.settings(map[string]breaker.ResourceConfig{"api/*": {MaxConcurrency: 10}})
	f.callEach("api/a", "b") // the bound is full
	held := f.enter("api/a", "api/x", "api/x", "api/y")
	defer exit(held)
	f.assertData(breakerotel.InFlightName, gauge(resourcePoint("api/a", 1),
		resourcePoint(breakerview.Overflow, 3)))
	f.assertData(breakerotel.TemplateSettingsName, gauge(templatePoint(3)))
}

// Given a bound of 2 resource names, taken by the calls of a name that holds template settings
// and of another, when names past the bound hold the settings of two template keys, then each
// name within the bound reports its settings as its own breaker.resource, and those past it as
// "_other", once for each key (breaker.settings.from), with that key's settings; no template
// key is a resource.
func TestMaxResourcesTemplateSettings(t *testing.T) {
	f := newFixture(t, nil, breakerotel.WithLimits(breakerview.Limits{Names: 2}))
	f.settings(map[string]breaker.ResourceConfig{
		"api/*": {MaxConcurrency: 10},
		"web/*": {Timeout: time.Second, Force: breaker.ForceClosed},
	})
	f.callEach("api/a", "b") // the bound is full
	held := f.enter("api/a", "api/x", "api/y", "web/z")
	defer exit(held)
	const other = breakerview.Overflow
	f.assertData(breakerotel.ForceName, gauge(settingsPoint("api/a", "api/*", 0), settingsPoint(other, "api/*", 0),
		settingsPoint(other, "web/*", 2)))
	f.assertData(breakerotel.ConcurrencyLimitName, gauge(settingsPoint("api/a", "api/*", 10),
		settingsPoint(other, "api/*", 10), settingsPoint(other, "web/*", 0)))
	f.assertData(breakerotel.TimeoutName, timeouts(timeoutPoint("api/a", "api/*", 0), timeoutPoint(other, "api/*", 0),
		timeoutPoint(other, "web/*", 1)))
	f.assertData(breakerotel.InFlightName, gauge(resourcePoint("api/a", 1), resourcePoint(other, 3)))
}
