package breakerprom_test

import (
	"context"
	"fmt"
	"maps"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakerview"
	breakerprom "github.com/halfopen/breaker/contrib/prometheus"
)

// Given a bound of 2 resource names, when calls come under 5 names, then the first 2 names
// keep series of their own and the other 3 are counted, exactly, under resource="_other",
// rejections by cause and transitions too; a name seen before the bound filled keeps its own.
func TestMaxResources(t *testing.T) {
	clk := newClock()
	c := breakerprom.New(testBuckets, breakerprom.WithLimits(breakerview.Limits{Names: 2}))
	m := breaker.NewManager(breaker.WithClock(clk), c.Option())
	c.Watch(m)
	f := &fixture{t: t, clock: clk, m: m, c: c}
	require.NoError(t, m.LoadRules([]breaker.Rule{errorCount("c", 1), errorCount("e", 1)}))

	require.NoError(t, f.call("a", 10*time.Millisecond, nil)) // a: its own
	require.NoError(t, f.call("b", 10*time.Millisecond, nil)) // b: its own; the bound is full
	assert.ErrorIs(t, f.call("c", 20*time.Millisecond, errDown), errDown)
	assert.ErrorIs(t, f.call("c", 0, nil), breaker.ErrOpen)
	require.NoError(t, f.call("d", 60*time.Millisecond, nil))
	assert.ErrorIs(t, f.call("e", 20*time.Millisecond, errDown), errDown)
	assert.ErrorIs(t, f.call("e", 0, nil), breaker.ErrOpen)
	require.NoError(t, f.call("a", 10*time.Millisecond, nil)) // still its own

	assertMetrics(t, c, `
		breaker_calls_total{outcome="blocked",resource="_other"} 2
		breaker_calls_total{outcome="failed",resource="_other"} 2
		breaker_calls_total{outcome="passed",resource="_other"} 3
		breaker_calls_total{outcome="refused",resource="_other"} 0
		breaker_calls_total{outcome="slow",resource="_other"} 0
		breaker_calls_total{outcome="blocked",resource="a"} 0
		breaker_calls_total{outcome="failed",resource="a"} 0
		breaker_calls_total{outcome="passed",resource="a"} 2
		breaker_calls_total{outcome="refused",resource="a"} 0
		breaker_calls_total{outcome="slow",resource="a"} 0
		breaker_calls_total{outcome="blocked",resource="b"} 0
		breaker_calls_total{outcome="failed",resource="b"} 0
		breaker_calls_total{outcome="passed",resource="b"} 1
		breaker_calls_total{outcome="refused",resource="b"} 0
		breaker_calls_total{outcome="slow",resource="b"} 0
		breaker_rt_seconds_bucket{resource="_other",le="0.01"} 0
		breaker_rt_seconds_bucket{resource="_other",le="0.05"} 2
		breaker_rt_seconds_bucket{resource="_other",le="0.1"} 3
		breaker_rt_seconds_bucket{resource="_other",le="+Inf"} 3
		breaker_rt_seconds_sum{resource="_other"} 0.1
		breaker_rt_seconds_count{resource="_other"} 3
		breaker_rt_seconds_bucket{resource="a",le="0.01"} 2
		breaker_rt_seconds_bucket{resource="a",le="0.05"} 2
		breaker_rt_seconds_bucket{resource="a",le="0.1"} 2
		breaker_rt_seconds_bucket{resource="a",le="+Inf"} 2
		breaker_rt_seconds_sum{resource="a"} 0.02
		breaker_rt_seconds_count{resource="a"} 2
		breaker_rt_seconds_bucket{resource="b",le="0.01"} 1
		breaker_rt_seconds_bucket{resource="b",le="0.05"} 1
		breaker_rt_seconds_bucket{resource="b",le="0.1"} 1
		breaker_rt_seconds_bucket{resource="b",le="+Inf"} 1
		breaker_rt_seconds_sum{resource="b"} 0.01
		breaker_rt_seconds_count{resource="b"} 1
		breaker_transitions_total{dry_run="false",from="CLOSED",reason="ThresholdExceeded",resource="_other",to="OPEN"} 2
	`, "breaker_calls_total", "breaker_rt_seconds", "breaker_transitions_total")
	assert.Equal(t, 2., valueOf(t, c, "breaker_rejected_total",
		map[string]string{"resource": breakerview.Overflow, "cause": breaker.BlockedByBreaker.String()}))
	// The states are read from the rules, which operators bound: each has its own name.
	assertMetrics(t, c, `
		breaker_state{dry_run="false",resource="c",rule="ErrorCount#0"} 1
		breaker_state{dry_run="false",resource="e",rule="ErrorCount#0"} 1
	`, "breaker_state")
}

// sample is one series of a scrape: its labels and value (a counter's or a gauge's).
type sample struct {
	labels map[string]string
	value  float64
}

// samples scrapes c and returns the series of family.
func samples(t *testing.T, c *breakerprom.Collector, family string) []sample {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(c))
	families, err := reg.Gather()
	require.NoError(t, err)
	var out []sample
	for _, f := range families {
		if f.GetName() != family {
			continue
		}
		for _, m := range f.GetMetric() {
			s := sample{labels: make(map[string]string), value: m.GetCounter().GetValue() + m.GetGauge().GetValue()}
			for _, l := range m.GetLabel() {
				s.labels[l.GetName()] = l.GetValue()
			}
			out = append(out, s)
		}
	}
	return out
}

// valueOf returns the value of the one series of family with labels.
func valueOf(t *testing.T, c *breakerprom.Collector, family string, labels map[string]string) float64 {
	t.Helper()
	for _, s := range samples(t, c, family) {
		if maps.Equal(s.labels, labels) {
			return s.value
		}
	}
	require.FailNow(t, "no such series", "%s%v", family, labels)
	return 0
}

// Given the default bound, when 5,000 distinct names each make a call from 4 goroutines at
// once, then the call families hold series for 1,000 names and the overflow only, and every
// call is counted exactly once.
func TestDefaultMaxResources(t *testing.T) {
	const names, goroutines = 5000, 4
	c := breakerprom.New(testBuckets)
	m := breaker.NewManager(breaker.WithClock(newClock()), c.Option())
	ok := func(context.Context) error { return nil }

	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := g; i < names; i += goroutines {
				_ = m.Do(context.Background(), "path/"+strconv.Itoa(i), ok)
			}
		})
	}
	wg.Wait()

	series := breakerview.DefaultLimits().Names + 1
	assert.Equal(t, 5*series, testutil.CollectAndCount(c, "breaker_calls_total"))
	assert.Equal(t, 7*series, testutil.CollectAndCount(c, "breaker_rejected_total"))
	assert.Equal(t, 2*series, testutil.CollectAndCount(c, "breaker_would_reject_total"))
	assert.Equal(t, series, testutil.CollectAndCount(c, "breaker_rt_seconds"))

	var passed, overflow float64
	for _, s := range samples(t, c, "breaker_calls_total") {
		if s.labels["outcome"] != breakerprom.OutcomePassed {
			continue
		}
		passed += s.value
		if s.labels["resource"] == breakerview.Overflow {
			overflow = s.value
		} else {
			assert.Equal(t, 1., s.value, s.labels["resource"])
		}
	}
	assert.Equal(t, float64(names), passed)
	assert.Equal(t, float64(names-breakerview.DefaultLimits().Names), overflow)
}

// Given Limits.Names below 1, then the default bound holds.
func TestMaxResourcesBelowOne(t *testing.T) {
	for _, n := range []int{0, -1} {
		c := breakerprom.New(breakerprom.WithLimits(breakerview.Limits{Names: n}))
		m := breaker.NewManager(c.Option())
		for i := range breakerview.DefaultLimits().Names + 3 {
			_ = m.Do(context.Background(), strconv.Itoa(i), func(context.Context) error { return nil })
		}
		assert.Equal(t, 5*(breakerview.DefaultLimits().Names+1), testutil.CollectAndCount(c, "breaker_calls_total"), "n=%d", n)
	}
}

// passedByResource scrapes c and returns the passed calls of each resource label.
func passedByResource(t *testing.T, c *breakerprom.Collector) map[string]float64 {
	t.Helper()
	out := make(map[string]float64)
	for _, s := range samples(t, c, "breaker_calls_total") {
		if s.labels["outcome"] == breakerprom.OutcomePassed {
			out[s.labels["resource"]] = s.value
		}
	}
	return out
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

// callEach makes one passing call to each name, through m.
func callEach(m *breaker.Manager, names ...string) {
	for _, name := range names {
		_ = m.Do(context.Background(), name, func(context.Context) error { return nil })
	}
}

// Given the default bounds, when sixteen distinct names of 1 MiB each make a call, then the
// Collector keeps well under 1 MiB, and the calls are counted under "_other".
func TestLongNamesAreNotKept(t *testing.T) {
	const names, size = 16, 1 << 20
	c := breakerprom.New()
	m := breaker.NewManager(c.Option())
	callEach(m, "warm") // the series of a first name, so that the growth is the names'

	grown := heapGrowth(func() {
		for i := range names {
			callEach(m, strings.Repeat(string(rune('a'+i)), size))
		}
	})
	assert.Less(t, grown, int64(size/4), "live heap grew by %d bytes", grown)
	got := passedByResource(t, c)
	assert.Equal(t, 2, len(got), "warm and the overflow only")
	assert.Equal(t, float64(names), got[breakerview.Overflow])
	runtime.KeepAlive(m)
}

// Given names of 100 bytes cut from strings of 1 MiB, when each makes a call, then each gets
// series of its own and the Collector keeps a copy of it, not the string it was cut from.
func TestNamesAreCopied(t *testing.T) {
	const names, size, length = 16, 1 << 20, 100
	c := breakerprom.New()
	m := breaker.NewManager(c.Option())
	callEach(m, "warm")

	want := map[string]float64{"warm": 1}
	grown := heapGrowth(func() {
		for i := range names {
			name := strings.Repeat(string(rune('a'+i)), size)[:length]
			callEach(m, name)
			want[strings.Clone(name)] = 1
		}
	})
	assert.Less(t, grown, int64(size/4), "live heap grew by %d bytes", grown)
	assert.Equal(t, want, passedByResource(t, c))
	runtime.KeepAlive(m)
}

// Given a bound on the length of a name, then a name of exactly that length gets series of
// its own and one a byte longer is counted under "_other"; a bound below 1 keeps the default.
func TestMaxNameLength(t *testing.T) {
	tests := []struct {
		name string
		give []breakerprom.Option
		want int
	}{
		{name: "default", want: breakerview.DefaultLimits().NameLength},
		{name: "8", give: []breakerprom.Option{breakerprom.WithLimits(breakerview.Limits{NameLength: 8})}, want: 8},
		{name: "0", give: []breakerprom.Option{breakerprom.WithLimits(breakerview.Limits{NameLength: 0})}, want: breakerview.DefaultLimits().NameLength},
		{name: "-1", give: []breakerprom.Option{breakerprom.WithLimits(breakerview.Limits{NameLength: -1})}, want: breakerview.DefaultLimits().NameLength},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := breakerprom.New(tt.give...)
			m := breaker.NewManager(c.Option())
			atBound, past := strings.Repeat("a", tt.want), strings.Repeat("b", tt.want+1)
			callEach(m, atBound, past, past)
			got := passedByResource(t, c)
			assert.Equal(t, 2, len(got), "the name at the bound and the overflow only")
			assert.Equal(t, 1., got[atBound], "the name at the bound")
			assert.Equal(t, 2., got[breakerview.Overflow], "the name past the bound")
		})
	}
}

// Given a bound of 10 bytes of names, when names of 4, 4 and 2 bytes make calls, then they
// fill it exactly and keep series of their own; a name of 1 byte more is counted under
// "_other", and so is every new name after it; a name kept still has its own.
func TestMaxNameBytes(t *testing.T) {
	c := breakerprom.New(breakerprom.WithLimits(breakerview.Limits{NameBytes: 10}))
	m := breaker.NewManager(c.Option())
	callEach(m, "aaaa", "bbbb", "cc", "d", "e", "aaaa")
	assert.Equal(t, map[string]float64{"aaaa": 2, "bbbb": 1, "cc": 1, breakerview.Overflow: 2},
		passedByResource(t, c))
}

// Given a name that is not UTF-8, then it is charged for its name and for its label, which has
// the bad byte replaced by the three bytes of U+FFFD.
func TestMaxNameBytesLabel(t *testing.T) {
	c := breakerprom.New(breakerprom.WithLimits(breakerview.Limits{NameBytes: 5}))
	m := breaker.NewManager(c.Option())
	callEach(m, "a\xff", "b") // 2 + 4 bytes: past the bound
	assert.Equal(t, map[string]float64{breakerview.Overflow: 2}, passedByResource(t, c))

	c = breakerprom.New(breakerprom.WithLimits(breakerview.Limits{NameBytes: 6}))
	m = breaker.NewManager(c.Option())
	callEach(m, "a\xff", "b") // 2 + 4 bytes: exactly the bound
	assert.Equal(t, map[string]float64{"a\uFFFD": 1, breakerview.Overflow: 1}, passedByResource(t, c))
}

// Given Limits.NameBytes below 1, then the default bound holds: 128 names of
// 1 KiB fill it, and the next is counted under "_other".
func TestMaxNameBytesBelowOne(t *testing.T) {
	const length = 1 << 10
	for _, n := range []int{0, -1} {
		c := breakerprom.New(breakerprom.WithLimits(breakerview.Limits{NameBytes: n}))
		m := breaker.NewManager(c.Option())
		for i := range breakerview.DefaultLimits().NameBytes/length + 1 {
			callEach(m, fmt.Sprintf("%0*d", length, i))
		}
		got := passedByResource(t, c)
		assert.Len(t, got, breakerview.DefaultLimits().NameBytes/length+1, "n=%d", n)
		assert.Equal(t, 1., got[breakerview.Overflow], "n=%d", n)
	}
}

// Given a bound of 2 resource names, both taken by calls, when five other resources are
// overridden, then the override gauges keep the two names and count the other overrides under
// resource="_other" by force, with the latest end of each; a name too long for the bound is
// counted there too.
func TestMaxResourcesOverrides(t *testing.T) {
	f := newOverrideFixture(t, []breakerprom.Option{breakerprom.WithLimits(breakerview.Limits{Names: 2, NameLength: 8})})
	callEach(f.m, "a", "b")
	f.override("a", breaker.ForceOpen, time.Hour)          // ends at 1767229200
	f.override("c", breaker.ForceOpen, 2*time.Hour)        // 1767232800
	f.override("d", breaker.ForceOpen, 30*time.Minute)     // 1767227400
	f.override("e", breaker.ForceClosed, 10*time.Minute)   // 1767226200
	f.override("too-long-name", breaker.Auto, time.Minute) // 1767225660

	assertMetrics(t, f.c, `
		breaker_override{force="auto",resource="_other"} 1
		breaker_override{force="closed",resource="_other"} 1
		breaker_override{force="open",resource="_other"} 2
		breaker_override{force="open",resource="a"} 1
		breaker_override_end_timestamp_seconds{force="auto",resource="_other"} 1767225660
		breaker_override_end_timestamp_seconds{force="closed",resource="_other"} 1767226200
		breaker_override_end_timestamp_seconds{force="open",resource="_other"} 1767232800
		breaker_override_end_timestamp_seconds{force="open",resource="a"} 1767229200
	`, overrideFamilies...)
}

// Given a bound of 2 resource names, taken by the calls of a name that holds template settings
// and of another, then the calls in flight of the names past the bound that hold template
// settings are added up under resource="_other".
func TestMaxResourcesTemplateInFlight(t *testing.T) {
	f := newFixtureWith(t, []breakerprom.Option{breakerprom.WithLimits(breakerview.Limits{Names: 2})}, nil)
	f.settings(map[string]breaker.ResourceConfig{"api/*": {MaxConcurrency: 10}})
	callEach(f.m, "api/a", "b") // the bound is full
	held := f.enter("api/a", "api/x", "api/x", "api/y")
	defer exit(held)
	assertMetrics(t, f.c, `
		breaker_in_flight{resource="_other"} 3
		breaker_in_flight{resource="api/a"} 1
	`, "breaker_in_flight")
	assertMetrics(t, f.c, `
		breaker_template_breakers 0
		breaker_template_settings 3
		breaker_template_limit 10000
		breaker_template_dropped_total 0
	`, templateFamilies...)
}

// Given a bound of 2 resource names, taken by the calls of a name that holds template settings
// and of another, when names past the bound hold the settings of two template keys, then each
// name within the bound reports its settings under its own name, and those past it under
// resource="_other", once for each key (settings_from), with that key's settings; no template
// key is a resource.
func TestMaxResourcesTemplateSettings(t *testing.T) {
	f := newFixtureWith(t, []breakerprom.Option{breakerprom.WithLimits(breakerview.Limits{Names: 2})}, nil)
	f.settings(map[string]breaker.ResourceConfig{
		"api/*": {MaxConcurrency: 10},
		"web/*": {Timeout: time.Second, Force: breaker.ForceClosed},
	})
	callEach(f.m, "api/a", "b") // the bound is full
	held := f.enter("api/a", "api/x", "api/y", "web/z")
	defer exit(held)
	assertMetrics(t, f.c, `
		breaker_force{resource="_other",settings_from="api/*"} 0
		breaker_force{resource="_other",settings_from="web/*"} 2
		breaker_force{resource="api/a",settings_from="api/*"} 0
		breaker_in_flight{resource="_other"} 3
		breaker_in_flight{resource="api/a"} 1
		breaker_max_concurrency{resource="_other",settings_from="api/*"} 10
		breaker_max_concurrency{resource="_other",settings_from="web/*"} 0
		breaker_max_concurrency{resource="api/a",settings_from="api/*"} 10
		breaker_timeout_seconds{resource="_other",settings_from="api/*"} 0
		breaker_timeout_seconds{resource="_other",settings_from="web/*"} 1
		breaker_timeout_seconds{resource="api/a",settings_from="api/*"} 0
	`, settingsFamilies...)
}

// Given a bound of one name, taken by a resource really named as the overflow, and a minute of
// its calls, then its series are its own, labelled "_other\uFFFD", and its calls leave
// breaker_uncalled on; a call of a name past the bound counts under "_other", and turns it off.
func TestResourceNamedAsTheOverflow(t *testing.T) {
	f := newFixtureWith(t, []breakerprom.Option{breakerprom.WithLimits(breakerview.Limits{Names: 1})}, nil,
		errorCount("paymnets", 5))
	require.NoError(t, f.call(breakerview.Overflow, 0, nil))
	f.clock.Advance(time.Minute)
	require.NoError(t, f.call(breakerview.Overflow, 0, nil))
	assertMetrics(t, f.c, `breaker_uncalled{nearest="",resource="paymnets"} 1`, "breaker_uncalled")

	require.NoError(t, f.call("refunds", 0, nil)) // past the bound
	assertMetrics(t, f.c, `
		breaker_calls_total{outcome="blocked",resource="_other"} 0
		breaker_calls_total{outcome="failed",resource="_other"} 0
		breaker_calls_total{outcome="passed",resource="_other"} 1
		breaker_calls_total{outcome="refused",resource="_other"} 0
		breaker_calls_total{outcome="slow",resource="_other"} 0
		breaker_calls_total{outcome="blocked",resource="_other�"} 0
		breaker_calls_total{outcome="failed",resource="_other�"} 0
		breaker_calls_total{outcome="passed",resource="_other�"} 2
		breaker_calls_total{outcome="refused",resource="_other�"} 0
		breaker_calls_total{outcome="slow",resource="_other�"} 0
	`, "breaker_calls_total")
	assertMetrics(t, f.c, ``, "breaker_uncalled")
}
