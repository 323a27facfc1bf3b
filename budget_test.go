package breaker_test

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
)

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
// what the budget counts for them (their names by length, their resources' entries), so a
// budget of exactly that admits them and one byte less refuses the last.
func TestMemoryBudgetBoundsTheHeap(t *testing.T) {
	heavyTest(t)
	const n = 2000
	rules := bigRules(n)
	perRule := breaker.BreakerMemory(rules[0])
	var counted int64
	for _, r := range rules {
		counted += perRule + int64(len(r.Resource)) + breaker.ResourceBytes
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

// By default, 20,000 rules of 1,000 buckets (about 550 MB) are refused before any
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
	perSettings := int64(640)
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
	assert.Empty(t, m.Settings(), "nothing was loaded")
}

// Template names are charged by their length against the memory budget: 16 names of 1 MiB
// each keep no more than the budget, the oldest dropped to make room, and a name larger than
// what the budget leaves is refused.
func TestTemplateNamesChargedByLength(t *testing.T) {
	const budget = 4 << 20
	m := breaker.NewManager(breaker.WithMemoryBudget(budget), breaker.WithMaxNameLength(8<<20),
		breaker.WithMaxTemplateBreakers(32))
	require.NoError(t, m.LoadRules([]breaker.Rule{tripsOnOne("api*")}))
	before := heapInUse()
	for i := range 16 {
		name := fmt.Sprintf("api%02d", i) + strings.Repeat("x", 1<<20)
		require.NoError(t, m.Do(context.Background(), name, func(context.Context) error { return nil }))
	}
	kept := int64(heapInUse()) - int64(before)
	t.Logf("kept %d bytes of names under a budget of %d", kept, budget)
	assert.LessOrEqual(t, kept, int64(budget))
	assert.Less(t, m.TemplateStats().Resources, 4, "the budget holds fewer than four such names")
	assert.Equal(t, uint64(16-m.TemplateStats().Resources), m.TemplateStats().Dropped)

	err := m.Do(context.Background(), "api"+strings.Repeat("x", budget), func(context.Context) error { return nil })
	assert.ErrorIs(t, err, breaker.ErrNameTooLong)
	runtime.KeepAlive(m)
}

// Rules and settings for names over the bound are refused at load, naming the bound.
func TestLoadRefusesLongNames(t *testing.T) {
	m := breaker.NewManager(breaker.WithMaxNameLength(8))
	var re *breaker.RuleError
	require.ErrorAs(t, m.LoadRules([]breaker.Rule{tripsOnOne("123456789")}), &re)
	assert.Equal(t, "Resource", re.Field)
	assert.Contains(t, re.Error(), "WithMaxNameLength")
	require.ErrorAs(t, m.LoadResources(map[string]breaker.ResourceConfig{"123456789": {Timeout: time.Second}}), &re)
	assert.Equal(t, "Resource", re.Field)
	assert.Empty(t, m.Rules())
	assert.Empty(t, m.Settings())
	require.NoError(t, m.LoadRules([]breaker.Rule{tripsOnOne("12345678")}))
}

// No bound can overflow the budget's sums: the largest bound on template breakers makes a
// template too large for the budget, not a negative size that fits.
func TestBudgetSumsSaturate(t *testing.T) {
	m := breaker.NewManager(breaker.WithMaxTemplateBreakers(math.MaxInt))
	err := m.LoadRules([]breaker.Rule{tripsOnOne("api*")})
	require.ErrorIs(t, err, breaker.ErrInvalidRule)
	assert.Contains(t, err.Error(), "memory budget of 256 MiB")
	assert.Empty(t, m.Rules())

	// With settings loaded first the sum starts above zero, where an add that wraps would
	// overflow to a negative size that fits.
	require.NoError(t, m.LoadResources(map[string]breaker.ResourceConfig{"db": {Timeout: time.Second}}))
	err = m.LoadRules([]breaker.Rule{tripsOnOne("api*"), tripsOnOne("db")})
	require.ErrorIs(t, err, breaker.ErrInvalidRule)
	assert.Empty(t, m.Rules())
}

// A template name cut from a much longer string is kept as a copy: the Manager does not keep
// the longer string alive, which the name's length would not count.
func TestTemplateNamesAreCopied(t *testing.T) {
	m := breaker.NewManager(breaker.WithMaxTemplateBreakers(64))
	require.NoError(t, m.LoadRules([]breaker.Rule{tripsOnOne("api*")}))
	before := heapInUse()
	for i := range 16 {
		big := fmt.Sprintf("api%02d", i) + strings.Repeat("x", 1<<20)
		require.NoError(t, m.Do(context.Background(), big[:100], func(context.Context) error { return nil }))
	}
	kept := int64(heapInUse()) - int64(before)
	t.Logf("kept %d bytes for 16 names of 100 bytes cut from 1 MiB strings", kept)
	assert.Less(t, kept, int64(1<<20))
	assert.Equal(t, 16, m.TemplateStats().Resources)
	runtime.KeepAlive(m)
}

// The window takes its ring in the memory budget.
func TestStatCallsInTheBudget(t *testing.T) {
	m := breaker.NewManager(breaker.WithMemoryBudget(64 << 10))
	rules := make([]breaker.Rule, 0, 60)
	for i := range 60 {
		r := callsRule(0.5, breaker.MaxStatCalls) // 2,500 bytes of rings and the breaker
		r.Resource = string(rune('a'+i%26)) + string(rune('a'+i/26))
		rules = append(rules, r)
	}
	err := m.LoadRules(rules)
	var re *breaker.RuleError
	require.ErrorAs(t, err, &re)
	assert.Contains(t, re.Reason, "memory budget")
	require.NoError(t, m.LoadRules(rules[:15]))
}

// leastBudget returns the least memory budget under which load succeeds, by bisection.
func leastBudget(t *testing.T, load func(budget int64) error) int64 {
	t.Helper()
	lo, hi := int64(1), int64(1)<<32
	require.NoError(t, load(hi))
	for lo < hi {
		mid := lo + (hi-lo)/2
		if load(mid) == nil {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// Given rules loaded at GOMAXPROCS 1 under the least budget that takes them, when GOMAXPROCS
// rises to 8 (as Go's container-aware GOMAXPROCS does when a CPU limit is raised), then the
// breakers made afterwards, by a template for 4,000 new names or by a Reset of 4,000 named
// rules, take no more than the budget: their counters keep the stripes it counted.
func TestMemoryBudgetHoldsWhenGOMAXPROCSRises(t *testing.T) {
	heavyTest(t)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(8)) // the runtime's own structures for 8 processors, made before the measure
	runtime.GOMAXPROCS(1)
	const n = 4000
	t.Run("template names", func(t *testing.T) {
		runtime.GOMAXPROCS(1)
		rule := breaker.Rule{Resource: "t-*", Strategy: breaker.ErrorRatio, Threshold: 0.5, RetryTimeout: time.Second}
		names := int64(n * len("t-0000"))
		budget := names + leastBudget(t, func(budget int64) error {
			return breaker.NewManager(breaker.WithMemoryBudget(budget), breaker.WithMaxTemplateBreakers(n)).
				LoadRules([]breaker.Rule{rule})
		})
		before := heapInUse()
		m := breaker.NewManager(breaker.WithMemoryBudget(budget), breaker.WithMaxTemplateBreakers(n))
		require.NoError(t, m.LoadRules([]breaker.Rule{rule}))
		runtime.GOMAXPROCS(8)
		for i := range n {
			require.NoError(t, m.Do(context.Background(), fmt.Sprintf("t-%04d", i), succeed))
		}
		require.Equal(t, n, m.TemplateStats().Resources)
		used := int64(heapInUse() - before)
		t.Logf("%d bytes held for %d template names under a budget of %d", used, n, budget)
		assert.LessOrEqual(t, used, budget)
		runtime.KeepAlive(m)
	})
	t.Run("reset named rules", func(t *testing.T) {
		runtime.GOMAXPROCS(1)
		rules := make([]breaker.Rule, n)
		for i := range rules {
			rules[i] = breaker.Rule{Resource: fmt.Sprintf("r-%04d", i), Strategy: breaker.ErrorRatio, Threshold: 0.5,
				RetryTimeout: time.Second}
		}
		budget := leastBudget(t, func(budget int64) error {
			return breaker.NewManager(breaker.WithMemoryBudget(budget)).LoadRules(rules)
		})
		before := heapInUse()
		m := breaker.NewManager(breaker.WithMemoryBudget(budget))
		require.NoError(t, m.LoadRules(rules))
		runtime.GOMAXPROCS(8)
		for _, r := range rules {
			m.Reset(r.Resource)
		}
		used := int64(heapInUse() - before)
		t.Logf("%d bytes held for %d named rules reset under a budget of %d", used, n, budget)
		assert.LessOrEqual(t, used, budget)
		runtime.KeepAlive(m)
		runtime.KeepAlive(rules)
	})
}
