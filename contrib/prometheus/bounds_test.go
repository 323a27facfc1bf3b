package breakerprom_test

import (
	"context"
	"maps"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
	breakerprom "github.com/halfopen/breaker/contrib/prometheus"
)

// Given a bound of 2 resource names, when calls come under 5 names, then the first 2 names
// keep series of their own and the other 3 are counted, exactly, under resource="_other",
// rejections by cause and transitions too; a name seen before the bound filled keeps its own.
func TestMaxResources(t *testing.T) {
	clk := newClock()
	c := breakerprom.New(testBuckets, breakerprom.WithMaxResources(2))
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
		breaker_calls_total{outcome="slow",resource="_other"} 0
		breaker_calls_total{outcome="blocked",resource="a"} 0
		breaker_calls_total{outcome="failed",resource="a"} 0
		breaker_calls_total{outcome="passed",resource="a"} 2
		breaker_calls_total{outcome="slow",resource="a"} 0
		breaker_calls_total{outcome="blocked",resource="b"} 0
		breaker_calls_total{outcome="failed",resource="b"} 0
		breaker_calls_total{outcome="passed",resource="b"} 1
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
		map[string]string{"resource": breakerprom.OverflowResource, "cause": breakerprom.CauseOpen}))
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

	const series = breakerprom.DefaultMaxResources + 1
	assert.Equal(t, 4*series, testutil.CollectAndCount(c, "breaker_calls_total"))
	assert.Equal(t, 4*series, testutil.CollectAndCount(c, "breaker_rejected_total"))
	assert.Equal(t, 2*series, testutil.CollectAndCount(c, "breaker_would_reject_total"))
	assert.Equal(t, series, testutil.CollectAndCount(c, "breaker_rt_seconds"))

	var passed, overflow float64
	for _, s := range samples(t, c, "breaker_calls_total") {
		if s.labels["outcome"] != breakerprom.OutcomePassed {
			continue
		}
		passed += s.value
		if s.labels["resource"] == breakerprom.OverflowResource {
			overflow = s.value
		} else {
			assert.Equal(t, 1., s.value, s.labels["resource"])
		}
	}
	assert.Equal(t, float64(names), passed)
	assert.Equal(t, float64(names-breakerprom.DefaultMaxResources), overflow)
}

// Given WithMaxResources with a bound below 1, then the default bound holds.
func TestMaxResourcesBelowOne(t *testing.T) {
	for _, n := range []int{0, -1} {
		c := breakerprom.New(breakerprom.WithMaxResources(n))
		m := breaker.NewManager(c.Option())
		for i := range breakerprom.DefaultMaxResources + 3 {
			_ = m.Do(context.Background(), strconv.Itoa(i), func(context.Context) error { return nil })
		}
		assert.Equal(t, 4*(breakerprom.DefaultMaxResources+1), testutil.CollectAndCount(c, "breaker_calls_total"), "n=%d", n)
	}
}
