package breaker_test

import (
	"context"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakertest"
	"github.com/halfopen/breaker/internal/window"
)

// manyRules returns two rules (slow and error ratio, 10 buckets each) for each of n resources.
func manyRules(resources int) []breaker.Rule {
	rules := make([]breaker.Rule, 0, 2*resources)
	for i := 0; i < resources; i++ {
		rules = append(rules, passRules("resource-"+strconv.Itoa(i))...)
	}
	return rules
}

// heapInUse returns the live heap after a full collection.
func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// A breaker with 10 buckets, with its share of the manager's maps, takes what the budget counts
// for it at most, and the budget counts it at most 1.5 KiB beside its counters' stripes, which
// follow GOMAXPROCS.
func TestBreakerMemory(t *testing.T) {
	const resources = 5000
	rules := manyRules(resources)
	counted := breaker.BreakerMemory(rules[0]) + breaker.BreakerMemory(rules[1])
	_, slots := window.FlightShape(int64(time.Second/10), int64(rules[0].MaxAllowedRT))
	procs := runtime.GOMAXPROCS(0)
	stripes := window.StripedBytes(slots, procs) // the slow rule's ring of calls in flight, its base words included
	if window.Stripes(10, procs) > 1 {
		stripes += 2 * window.StripedBytes(10, procs) // the two windows' stripes beside their base words
	}
	before := heapInUse()
	m := breaker.NewManager()
	require.NoError(t, m.LoadRules(rules))
	perBreaker := (heapInUse() - before) / uint64(len(rules))
	t.Logf("%d bytes per breaker, %d counted, %d of them stripes", perBreaker, counted/2, stripes/2)
	assert.LessOrEqual(t, perBreaker, uint64(counted/2))
	assert.LessOrEqual(t, counted/2-stripes/2, int64(1536))
	runtime.KeepAlive(m)
	runtime.KeepAlive(rules)
}

// BenchmarkLoadRules100k loads 100,000 rules over 50,000 resources into an empty manager and
// reports the live heap it takes.
func BenchmarkLoadRules100k(b *testing.B) {
	rules := manyRules(50_000)
	b.ReportAllocs()
	var heap uint64
	for range b.N {
		b.StopTimer()
		base := heapInUse()
		m := breaker.NewManager()
		b.StartTimer()
		if err := m.LoadRules(rules); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		heap = heapInUse() - base
		runtime.KeepAlive(m)
		b.StartTimer()
	}
	b.ReportMetric(float64(heap)/(1<<20), "heap-MB")
}

// A million distinct names under a "*" template leave the Manager holding at most its
// bound of template breakers, in a heap that stays within what the memory budget counts for
// them (templateEntryBytes and the breaker's size), however many names went through.
func TestTemplateBound(t *testing.T) {
	heavyTest(t) // a million names take minutes under -race
	const limit, names = 10_000, 1_000_000
	rule := breaker.Rule{Resource: "*", Strategy: breaker.ErrorRatio, Threshold: 0.5, RetryTimeout: time.Second}
	clock := breakertest.NewClock()
	before := heapInUse()
	m := breaker.NewManager(breaker.WithClock(clock), breaker.WithMaxTemplateBreakers(limit))
	require.NoError(t, m.LoadRules([]breaker.Rule{rule}))
	ctx := context.Background()
	ok := func(context.Context) error { return nil }
	var peak uint64
	for i := range names {
		if i%1000 == 0 {
			clock.Advance(time.Millisecond)
		}
		require.NoError(t, m.Do(ctx, "host-"+strconv.Itoa(i), ok))
		if i == 100_000 || i == names-1 {
			peak = max(peak, heapInUse()-before)
		}
	}
	st := m.TemplateStats()
	assert.LessOrEqual(t, st.Breakers, limit)
	assert.Equal(t, st.Breakers, st.Resources)
	assert.Equal(t, uint64(names), st.Dropped+uint64(st.Resources), "every name made is held or was dropped")
	perBreaker := breaker.BreakerMemory(rule) + 256 // and templateEntryBytes
	t.Logf("%d template breakers, %d dropped, peak heap %d bytes (%d per breaker), %d counted per breaker",
		st.Breakers, st.Dropped, peak, peak/limit, perBreaker)
	assert.LessOrEqual(t, peak, uint64(limit*perBreaker))

	// The most recent names are the ones kept.
	assert.NotEmpty(t, m.Breakers("host-"+strconv.Itoa(names-1)))
	assert.Empty(t, m.Breakers("host-0"))
	runtime.KeepAlive(m)
}

// Given rules for one resource and settings for another, when calls go to 200,000 names
// that neither a rule nor a template names, then the Manager keeps nothing of them: the index
// that finds resources by name holds only the names the rules and settings name.
func TestUnruledNamesKeepNothing(t *testing.T) {
	m := breaker.NewManager()
	require.NoError(t, m.LoadRules(passRules("svc")))
	require.NoError(t, m.LoadResources(map[string]breaker.ResourceConfig{"db": {MaxConcurrency: 10}}))
	ctx := context.Background()
	ok := func(context.Context) error { return nil }
	require.NoError(t, m.Do(ctx, "warm-up", ok))
	before := heapInUse()
	for i := range 200_000 {
		require.NoError(t, m.Do(ctx, "GET /item/"+strconv.Itoa(i), ok))
	}
	grown := int64(heapInUse()) - int64(before)
	t.Logf("heap grew %d bytes over 200,000 names", grown)
	assert.Less(t, grown, int64(64<<10), "nothing per name")
	assert.Len(t, m.Settings(), 1, "only db has settings")
	assert.Zero(t, m.TemplateStats().Resources, "no template made breakers")
	runtime.KeepAlive(m)
}
