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

// A breaker with 10 buckets, with its share of the manager's maps, stays under 1 KiB.
func TestBreakerMemory(t *testing.T) {
	const resources = 5000
	rules := manyRules(resources)
	before := heapInUse()
	m := breaker.NewManager()
	require.NoError(t, m.LoadRules(rules))
	perBreaker := (heapInUse() - before) / uint64(len(rules))
	t.Logf("%d bytes per breaker", perBreaker)
	assert.Less(t, perBreaker, uint64(1024))
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

// bigRules returns n ErrorRatio rules of 1,000 buckets each, one per resource.
func bigRules(n int) []breaker.Rule {
	rules := make([]breaker.Rule, n)
	for i := range rules {
		rules[i] = breaker.Rule{Resource: "r" + strconv.Itoa(i), Strategy: breaker.ErrorRatio, Threshold: 0.5,
			StatInterval: 10 * time.Second, BucketCount: 1000, RetryTimeout: time.Second}
	}
	return rules
}

// The budget is a true bound: what 2,000 breakers of 1,000 buckets really take stays within
// what the budget counts for them (their names by length), so a budget of exactly that
// admits them and one byte less refuses the last.
func TestMemoryBudgetBoundsTheHeap(t *testing.T) {
	const n = 2000
	rules := bigRules(n)
	perRule := int64(640 + 1000*16*9/8)
	var counted int64
	for _, r := range rules {
		counted += perRule + int64(len(r.Resource))
	}
	before := heapInUse()
	m := breaker.NewManager(breaker.WithMemoryBudget(counted))
	require.NoError(t, m.LoadRules(rules))
	used := heapInUse() - before
	t.Logf("%d bytes per breaker of 1,000 buckets, %d counted", used/n, perRule)
	assert.LessOrEqual(t, used, uint64(counted))
	runtime.KeepAlive(m)

	m = breaker.NewManager(breaker.WithMemoryBudget(counted - 1))
	err := m.LoadRules(rules)
	var re *breaker.RuleError
	require.ErrorAs(t, err, &re)
	assert.ErrorIs(t, err, breaker.ErrInvalidRule)
	assert.Equal(t, n-1, re.Index)
	assert.Contains(t, err.Error(), "memory budget")
	assert.Empty(t, m.Rules(), "nothing was loaded")
}

// By default, 20,000 rules of 1,000 buckets (about 340 MB) are refused before any
// window is made, and the error names the default budget.
func TestMemoryBudgetDefault(t *testing.T) {
	rules := bigRules(20_000)
	before := heapInUse()
	m := breaker.NewManager()
	err := m.LoadRules(rules)
	require.ErrorIs(t, err, breaker.ErrInvalidRule)
	assert.Contains(t, err.Error(), "memory budget of 256 MiB (WithMemoryBudget)")
	assert.Less(t, int64(heapInUse())-int64(before), int64(16<<20), "refused before the windows were made")
	assert.Empty(t, m.Rules())

	m = breaker.NewManager(breaker.WithMemoryBudget(0))
	require.NoError(t, m.LoadRules(bigRules(20)), "0 removes the bound")
}

// Resource settings count against the budget too: 20,000 of them take no more heap than
// the budget counts for them, and a budget of one less refuses them, naming itself.
func TestMemoryBudgetCountsSettings(t *testing.T) {
	const n = 20_000
	cfg := make(map[string]breaker.ResourceConfig, n)
	for i := 0; i < n; i++ {
		cfg["r"+strconv.Itoa(i)] = breaker.ResourceConfig{MaxConcurrency: 1, Timeout: time.Second}
	}
	perSettings := int64(512)
	var counted int64
	for name := range cfg {
		counted += perSettings + int64(len(name))
	}
	before := heapInUse()
	m := breaker.NewManager(breaker.WithMemoryBudget(counted))
	require.NoError(t, m.LoadResources(cfg))
	used := int64(heapInUse()) - int64(before)
	t.Logf("%d bytes per resource's settings, %d counted", used/n, perSettings)
	assert.LessOrEqual(t, used, counted)
	runtime.KeepAlive(m)

	m = breaker.NewManager(breaker.WithMemoryBudget(counted - 1))
	err := m.LoadResources(cfg)
	require.ErrorIs(t, err, breaker.ErrInvalidRule)
	assert.Contains(t, err.Error(), "20000 resources with settings")
	assert.Contains(t, err.Error(), "memory budget")
	assert.Empty(t, m.Resources(), "nothing was loaded")
}

// A million distinct names under a "*" template leave the Manager holding at most its
// bound of template breakers, in a heap that stays within what the memory budget counts for
// them (templateEntryBytes and the breaker's size), however many names went through.
func TestTemplateBound(t *testing.T) {
	if raceEnabled {
		t.Skip("a million names take minutes under -race; make test runs this test without it")
	}
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
	perBreaker := int64(640+10*16*9/8) + 256 // breakerBytes with 10 buckets, and templateEntryBytes
	t.Logf("%d template breakers, %d dropped, peak heap %d bytes (%d per breaker), %d counted per breaker",
		st.Breakers, st.Dropped, peak, peak/limit, perBreaker)
	assert.LessOrEqual(t, peak, uint64(limit*perBreaker))

	// The most recent names are the ones kept.
	assert.NotEmpty(t, m.Breakers("host-"+strconv.Itoa(names-1)))
	assert.Empty(t, m.Breakers("host-0"))
	runtime.KeepAlive(m)
}
