package breakerprom_test

import (
	"fmt"
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

// newBoundedFixture is newFixture with a Collector made with opts.
func newBoundedFixture(t *testing.T, opts []breakerprom.Option, rules ...breaker.Rule) *fixture {
	t.Helper()
	f := &fixture{t: t, clock: newClock(), c: breakerprom.New(append(opts, testBuckets)...)}
	f.m = breaker.NewManager(breaker.WithClock(f.clock), f.c.Option())
	f.c.Watch(f.m)
	require.NoError(t, f.m.LoadRules(rules))
	return f
}

// passedByResource gathers c and returns breaker_calls_total{outcome="passed"} by resource.
func passedByResource(t *testing.T, c *breakerprom.Collector) map[string]float64 {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(c))
	families, err := reg.Gather()
	require.NoError(t, err)
	got := make(map[string]float64)
	for _, mf := range families {
		if mf.GetName() != "breaker_calls_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := make(map[string]string)
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["outcome"] == breakerprom.OutcomePassed {
				got[labels["resource"]] = m.GetCounter().GetValue()
			}
		}
	}
	return got
}

// Given WithMaxResources(3), when ten resources are called twice each, one call failing, then
// the first three keep series of their own, the other seven count under OverflowResource, and
// a name that has series keeps them after the overflow began.
func TestMaxResources(t *testing.T) {
	f := newBoundedFixture(t, []breakerprom.Option{breakerprom.WithMaxResources(3)})
	for i := range 10 {
		name := fmt.Sprintf("r%d", i)
		require.NoError(t, f.call(name, 5*time.Millisecond, nil))
		require.ErrorIs(t, f.call(name, 20*time.Millisecond, errDown), errDown)
	}
	require.NoError(t, f.call("r0", 0, nil))

	assertMetrics(t, f.c, `
		breaker_calls_total{outcome="blocked",resource="(overflow)"} 0
		breaker_calls_total{outcome="blocked",resource="r0"} 0
		breaker_calls_total{outcome="blocked",resource="r1"} 0
		breaker_calls_total{outcome="blocked",resource="r2"} 0
		breaker_calls_total{outcome="failed",resource="(overflow)"} 7
		breaker_calls_total{outcome="failed",resource="r0"} 1
		breaker_calls_total{outcome="failed",resource="r1"} 1
		breaker_calls_total{outcome="failed",resource="r2"} 1
		breaker_calls_total{outcome="passed",resource="(overflow)"} 14
		breaker_calls_total{outcome="passed",resource="r0"} 3
		breaker_calls_total{outcome="passed",resource="r1"} 2
		breaker_calls_total{outcome="passed",resource="r2"} 2
		breaker_calls_total{outcome="slow",resource="(overflow)"} 0
		breaker_calls_total{outcome="slow",resource="r0"} 0
		breaker_calls_total{outcome="slow",resource="r1"} 0
		breaker_calls_total{outcome="slow",resource="r2"} 0
	`, "breaker_calls_total")
	assert.Equal(t, 4, testutil.CollectAndCount(f.c, "breaker_rt_seconds"), "one histogram per label value")
	assertMetrics(t, f.c, `
		breaker_rt_seconds_bucket{resource="(overflow)",le="0.01"} 7
		breaker_rt_seconds_bucket{resource="(overflow)",le="0.05"} 14
		breaker_rt_seconds_bucket{resource="(overflow)",le="0.1"} 14
		breaker_rt_seconds_bucket{resource="(overflow)",le="+Inf"} 14
		breaker_rt_seconds_sum{resource="(overflow)"} 0.175
		breaker_rt_seconds_count{resource="(overflow)"} 14
		breaker_rt_seconds_bucket{resource="r0",le="0.01"} 2
		breaker_rt_seconds_bucket{resource="r0",le="0.05"} 3
		breaker_rt_seconds_bucket{resource="r0",le="0.1"} 3
		breaker_rt_seconds_bucket{resource="r0",le="+Inf"} 3
		breaker_rt_seconds_sum{resource="r0"} 0.025
		breaker_rt_seconds_count{resource="r0"} 3
		breaker_rt_seconds_bucket{resource="r1",le="0.01"} 1
		breaker_rt_seconds_bucket{resource="r1",le="0.05"} 2
		breaker_rt_seconds_bucket{resource="r1",le="0.1"} 2
		breaker_rt_seconds_bucket{resource="r1",le="+Inf"} 2
		breaker_rt_seconds_sum{resource="r1"} 0.025
		breaker_rt_seconds_count{resource="r1"} 2
		breaker_rt_seconds_bucket{resource="r2",le="0.01"} 1
		breaker_rt_seconds_bucket{resource="r2",le="0.05"} 2
		breaker_rt_seconds_bucket{resource="r2",le="0.1"} 2
		breaker_rt_seconds_bucket{resource="r2",le="+Inf"} 2
		breaker_rt_seconds_sum{resource="r2"} 0.025
		breaker_rt_seconds_count{resource="r2"} 2
	`, "breaker_rt_seconds")
}

// Given WithMaxResources(1), when the breakers of two resources trip, then the transitions of
// the second count under OverflowResource, as its calls do.
func TestMaxResourcesTransitions(t *testing.T) {
	f := newBoundedFixture(t, []breakerprom.Option{breakerprom.WithMaxResources(1)},
		errorCount("first", 1), errorCount("second", 1))
	require.ErrorIs(t, f.call("first", 0, errDown), errDown)
	require.ErrorIs(t, f.call("second", 0, errDown), errDown)
	require.ErrorIs(t, f.call("second", 0, nil), breaker.ErrOpen)

	assertMetrics(t, f.c, `
		breaker_calls_total{outcome="blocked",resource="(overflow)"} 1
		breaker_calls_total{outcome="blocked",resource="first"} 0
		breaker_calls_total{outcome="failed",resource="(overflow)"} 1
		breaker_calls_total{outcome="failed",resource="first"} 1
		breaker_calls_total{outcome="passed",resource="(overflow)"} 1
		breaker_calls_total{outcome="passed",resource="first"} 1
		breaker_calls_total{outcome="slow",resource="(overflow)"} 0
		breaker_calls_total{outcome="slow",resource="first"} 0
		breaker_transitions_total{from="CLOSED",reason="ThresholdExceeded",resource="(overflow)",to="OPEN"} 1
		breaker_transitions_total{from="CLOSED",reason="ThresholdExceeded",resource="first",to="OPEN"} 1
	`, "breaker_calls_total", "breaker_transitions_total")
}

// Given no option, when 1,005 resources are called once each (as a server naming requests by
// path would), then DefaultMaxResources of them have series and the overflow counts exactly
// the other 5.
func TestDefaultMaxResources(t *testing.T) {
	const extra = 5
	f := newBoundedFixture(t, nil)
	for i := range breakerprom.DefaultMaxResources + extra {
		require.NoError(t, f.call(fmt.Sprintf("GET /wp-admin/%d.php", i), 0, nil))
	}

	assert.Equal(t, 4*(breakerprom.DefaultMaxResources+1), testutil.CollectAndCount(f.c, "breaker_calls_total"))
	passed := passedByResource(t, f.c)
	assert.Len(t, passed, breakerprom.DefaultMaxResources+1)
	assert.Equal(t, float64(extra), passed[breakerprom.OverflowResource])
	assert.Equal(t, float64(1), passed["GET /wp-admin/999.php"], "the last name within the bound")
	assert.NotContains(t, passed, "GET /wp-admin/1000.php", "the first name past it")
}

// Given goroutines that each call 200 resources of their own while others scrape, then (under
// -race) no scrape sees more than the bound allows, exactly 10 names get series, and the
// overflow counts every other call.
func TestMaxResourcesConcurrent(t *testing.T) {
	const goroutines, names, bound = 4, 200, 10
	f := newBoundedFixture(t, []breakerprom.Option{breakerprom.WithMaxResources(bound)})
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range names {
				assert.NoError(t, f.call(fmt.Sprintf("g%d-%d", g, i), 0, nil))
			}
		})
	}
	wg.Go(func() {
		for range 20 {
			assert.LessOrEqual(t, testutil.CollectAndCount(f.c, "breaker_calls_total"), 4*(bound+1))
		}
	})
	wg.Wait()

	passed := passedByResource(t, f.c)
	require.Len(t, passed, bound+1)
	for name, n := range passed {
		if name != breakerprom.OverflowResource {
			assert.Equal(t, float64(1), n, name)
		}
	}
	assert.Equal(t, float64(goroutines*names-bound), passed[breakerprom.OverflowResource])
}

// WithMaxResources below 1 keeps the default.
func TestMaxResourcesBelowOne(t *testing.T) {
	for _, give := range []int{0, -1} {
		f := newBoundedFixture(t, []breakerprom.Option{breakerprom.WithMaxResources(give)})
		for i := range 3 {
			require.NoError(t, f.call(fmt.Sprintf("r%d", i), 0, nil))
		}
		assert.Equal(t, map[string]float64{"r0": 1, "r1": 1, "r2": 1}, passedByResource(t, f.c), "WithMaxResources(%d)", give)
	}
}
