package breaker_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakertest"
)

// tripsOnOne is a template rule that trips on the first failure and retries after a second.
func tripsOnOne(resource string) breaker.Rule {
	return breaker.Rule{Resource: resource, Strategy: breaker.ErrorCount, Threshold: 1, RetryTimeout: time.Second}
}

// newTemplateHarness is newHarness for a Manager that holds at most limit template breakers.
func newTemplateHarness(t *testing.T, limit int, rules ...breaker.Rule) *harness {
	t.Helper()
	h := &harness{t: t, clock: breakertest.NewClock(), events: &recorder{}}
	h.m = breaker.NewManager(breaker.WithClock(h.clock), breaker.WithMaxTemplateBreakers(limit))
	h.m.AddObserver(h.events)
	require.NoError(t, h.m.LoadRules(rules))
	return h
}

func TestTemplateGivesEachNameItsOwnBreaker(t *testing.T) {
	h := newTemplateHarness(t, 10, tripsOnOne("api:*"))
	assert.Empty(t, h.m.Breakers("api:orders"), "no breaker before the first call")
	assert.Empty(t, h.m.Breakers("api:*"), "the template itself is not a resource")

	h.completeN("api:orders", 1, errDown)
	bs := h.m.Breakers("api:orders")
	require.Len(t, bs, 1)
	assert.Equal(t, "api:*", bs[0].Rule().Resource, "a template breaker's rule is the template")
	assert.Equal(t, breaker.Open, bs[0].State())

	change := h.events.last()
	assert.Equal(t, "api:orders", change.Resource, "StateChange names the resource called")
	assert.Equal(t, "api:*", change.Rule.Resource)

	var be *breaker.BlockError
	require.ErrorAs(t, h.complete("api:orders", 0, nil), &be)
	assert.Equal(t, "api:orders", be.Resource, "BlockError names the resource called")
	assert.Equal(t, "api:*", be.Rule.Resource)

	// Another name of the template has its own breaker, still CLOSED.
	require.NoError(t, h.complete("api:users", 0, nil))
	assert.Equal(t, breaker.Closed, h.state("api:users", 0))
	assert.Equal(t, []string{"api:orders", "api:users"}, h.m.TemplateResources())
	assert.Equal(t, breaker.TemplateStats{Templates: 1, Resources: 2, Breakers: 2, Limit: 10}, h.m.TemplateStats())

	// A name outside the template has none.
	require.NoError(t, h.complete("db", 0, errDown))
	assert.Empty(t, h.m.Breakers("db"))
}

func TestTemplateLongestPrefixWinsAndOwnRulesWin(t *testing.T) {
	all := tripsOnOne("*")
	all.ID = "all"
	api := tripsOnOne("api*")
	api.ID = "api"
	orders := breaker.Rule{ID: "orders", Resource: "api/orders", Strategy: breaker.ErrorCount, Threshold: 5,
		RetryTimeout: time.Second}
	h := newTemplateHarness(t, 10, all, api, orders)

	for _, tt := range []struct{ name, rule string }{
		{"api/users", "api"},
		{"apiary", "api"},
		{"db", "all"},
		{"", "all"},
		{"api/orders", "orders"},
	} {
		require.NoError(t, h.complete(tt.name, 0, nil))
		bs := h.m.Breakers(tt.name)
		require.Len(t, bs, 1, tt.name)
		assert.Equal(t, tt.rule, bs[0].Rule().ID, "the rule of %q", tt.name)
	}
	assert.Equal(t, []string{"", "api/users", "apiary", "db"}, h.m.TemplateResources(),
		"a resource with its own rule gets no template breaker")
	assert.Equal(t, 2, h.m.TemplateStats().Templates, "two patterns")
}

func TestTemplateWithSeveralRules(t *testing.T) {
	slow := breaker.Rule{Resource: "svc*", Strategy: breaker.SlowRequestRatio, Threshold: 1,
		MaxAllowedRT: 10 * time.Millisecond, MinRequestAmount: 1, RetryTimeout: time.Second}
	h := newTemplateHarness(t, 4, slow, tripsOnOne("svc*"))

	require.NoError(t, h.complete("svc-a", 20*time.Millisecond, nil))
	assert.Equal(t, breaker.Open, h.state("svc-a", 0), "the slow rule timed the call")
	assert.Equal(t, breaker.Closed, h.state("svc-a", 1))
	require.NoError(t, h.complete("svc-b", 0, nil))
	assert.Equal(t, breaker.TemplateStats{Templates: 1, Resources: 2, Breakers: 4, Limit: 4}, h.m.TemplateStats())

	// A third name needs two more breakers: svc-b, CLOSED, goes first though svc-a is idler.
	h.clock.Advance(time.Second)
	require.NoError(t, h.complete("svc-c", 0, nil))
	assert.Equal(t, []string{"svc-a", "svc-c"}, h.m.TemplateResources())
	assert.Equal(t, uint64(1), h.m.TemplateStats().Dropped)
}

func TestTemplateBoundDropsLongestIdleClosedFirst(t *testing.T) {
	h := newTemplateHarness(t, 3, tripsOnOne("*"))
	for _, name := range []string{"a", "b", "c"} {
		require.NoError(t, h.complete(name, 0, nil))
		h.clock.Advance(10 * time.Millisecond)
	}
	require.NoError(t, h.complete("a", 0, nil)) // a is now the most recent; b the idlest
	h.clock.Advance(10 * time.Millisecond)

	require.NoError(t, h.complete("d", 0, nil))
	assert.Equal(t, []string{"a", "c", "d"}, h.m.TemplateResources())

	// An OPEN breaker is kept over CLOSED ones that were used after it.
	h.clock.Advance(10 * time.Millisecond)
	h.completeN("c", 1, errDown) // c trips, then sits idle
	h.clock.Advance(10 * time.Millisecond)
	require.NoError(t, h.complete("a", 0, nil))
	h.clock.Advance(10 * time.Millisecond)
	require.NoError(t, h.complete("d", 0, nil))
	h.clock.Advance(10 * time.Millisecond)
	require.NoError(t, h.complete("e", 0, nil))
	assert.Equal(t, []string{"c", "d", "e"}, h.m.TemplateResources(), "a, CLOSED, goes before c, OPEN")
	assert.Equal(t, breaker.Open, h.state("c", 0))

	// With every breaker OPEN, the idlest goes, and observers hear it.
	for _, name := range []string{"d", "e"} {
		h.clock.Advance(10 * time.Millisecond)
		h.completeN(name, 1, errDown)
	}
	h.events.reset()
	h.clock.Advance(10 * time.Millisecond)
	require.NoError(t, h.complete("f", 0, nil))
	assert.Equal(t, []string{"d", "e", "f"}, h.m.TemplateResources())
	change := h.events.last()
	assert.Equal(t, "c", change.Resource)
	assert.Equal(t, breaker.Evicted, change.Reason)
	assert.Equal(t, breaker.Open, change.From)
	assert.Equal(t, breaker.Closed, change.To)
	assert.Equal(t, uint64(3), h.m.TemplateStats().Dropped)

	// A dropped name starts again with a fresh breaker.
	h.clock.Advance(10 * time.Millisecond)
	require.NoError(t, h.complete("c", 0, nil))
	assert.Equal(t, breaker.Closed, h.state("c", 0))
}

func TestTemplateBoundDropsASixteenthAtOnce(t *testing.T) {
	h := newTemplateHarness(t, 64, tripsOnOne("n*"))
	for i := range 64 {
		require.NoError(t, h.complete(fmt.Sprintf("n%02d", i), 0, nil))
		h.clock.Advance(time.Millisecond * 2)
	}
	require.NoError(t, h.complete("n64", 0, nil))
	st := h.m.TemplateStats()
	assert.Equal(t, breaker.TemplateStats{Templates: 1, Resources: 61, Breakers: 61, Limit: 64, Dropped: 4}, st)
	names := h.m.TemplateResources()
	assert.Equal(t, "n04", names[0], "n00 to n03, the idlest, were dropped")
}

func TestTemplateReload(t *testing.T) {
	tmpl := tripsOnOne("api*")
	tmpl.ID = "v1"
	h := newTemplateHarness(t, 10, tmpl)
	h.completeN("api/a", 1, errDown)
	require.NoError(t, h.complete("api/b", 0, nil))

	// The same template under another ID keeps the breakers and their state.
	relabeled := tmpl
	relabeled.ID = "v2"
	h.events.reset()
	require.NoError(t, h.m.LoadRules([]breaker.Rule{relabeled}))
	assert.Empty(t, h.events.all())
	require.Len(t, h.m.Breakers("api/a"), 1)
	assert.Equal(t, breaker.Open, h.state("api/a", 0))
	assert.Equal(t, "v2", h.m.Breakers("api/a")[0].Rule().ID)
	var be *breaker.BlockError
	require.ErrorAs(t, h.complete("api/a", 0, nil), &be)
	assert.Equal(t, "v2", be.Rule.ID, "the blocked calls name the reloaded rule")

	// A template whose window changes drops them: RuleChanged for the one not CLOSED.
	changed := relabeled
	changed.BucketCount = 5
	require.NoError(t, h.m.LoadRules([]breaker.Rule{changed}))
	assert.Equal(t, []string{"OPEN->CLOSED RuleChanged"}, h.events.transitions())
	assert.Equal(t, "api/a", h.events.last().Resource)
	assert.Empty(t, h.m.TemplateResources())
	assert.Equal(t, uint64(0), h.m.TemplateStats().Dropped, "a reload is not a drop for room")

	// A rule of its own, or a longer template, takes a name from the template.
	require.NoError(t, h.complete("api/a", 0, nil))
	require.NoError(t, h.complete("api/b", 0, nil))
	own := breaker.Rule{Resource: "api/a", Strategy: breaker.ErrorCount, Threshold: 9, RetryTimeout: time.Second}
	longer := tripsOnOne("api/b*")
	require.NoError(t, h.m.LoadRules([]breaker.Rule{changed, own, longer}))
	assert.Empty(t, h.m.TemplateResources())
	require.NoError(t, h.complete("api/b", 0, nil))
	assert.Equal(t, "api/b*", h.m.Breakers("api/b")[0].Rule().Resource)
	assert.Equal(t, float64(9), h.m.Breakers("api/a")[0].Rule().Threshold)

	// Removing the templates removes their breakers.
	require.NoError(t, h.m.LoadRules([]breaker.Rule{own}))
	assert.Empty(t, h.m.TemplateResources())
	assert.Zero(t, h.m.TemplateStats().Templates)
	require.NoError(t, h.complete("api/c", 0, errDown))
	assert.Empty(t, h.m.Breakers("api/c"))
}

func TestTemplateCallInFlightAcrossDrop(t *testing.T) {
	h := newTemplateHarness(t, 1, tripsOnOne("*"))
	e, err := h.m.Enter("a")
	require.NoError(t, err)
	h.clock.Advance(time.Millisecond * 2)
	require.NoError(t, h.complete("b", 0, nil)) // a is dropped while its call runs
	e.SetError(errDown)
	e.Exit()
	assert.Empty(t, h.events.all(), "the dropped breaker counts nothing")
	require.NoError(t, h.complete("a", 0, nil))
	assert.Equal(t, breaker.Closed, h.state("a", 0))
}

func TestTemplateWithSettingsAndReset(t *testing.T) {
	h := newTemplateHarness(t, 10, tripsOnOne("*"))
	require.NoError(t, h.m.LoadResources(map[string]breaker.ResourceConfig{
		"forced": {Force: breaker.ForceOpen},
		"dry":    {Force: breaker.ForceClosed},
	}))
	assert.ErrorIs(t, h.complete("forced", 0, nil), breaker.ErrForcedOpen)

	h.completeN("dry", 1, errDown)
	assert.Equal(t, breaker.Open, h.state("dry", 0))
	assert.True(t, h.events.last().DryRun, "ForceClosed makes a template breaker dry")
	require.NoError(t, h.complete("dry", 0, nil), "ForceClosed lets the call through")

	// Settings loaded after the breaker was made apply to it.
	h.completeN("late", 1, errDown)
	require.Error(t, h.complete("late", 0, nil))
	require.NoError(t, h.m.LoadResources(map[string]breaker.ResourceConfig{"late": {Force: breaker.ForceClosed}}))
	require.NoError(t, h.complete("late", 0, nil))
	require.NoError(t, h.m.LoadResources(nil))
	require.Error(t, h.complete("late", 0, nil))

	h.m.Reset("late")
	assert.Equal(t, breaker.Reset, h.events.last().Reason)
	assert.Equal(t, "late", h.events.last().Resource)
	require.NoError(t, h.complete("late", 0, nil))
}

func TestTemplateResourceHandleFollowsDrops(t *testing.T) {
	h := newTemplateHarness(t, 1, tripsOnOne("*"))
	ctx := context.Background()
	a := h.m.Resource("a")
	require.NoError(t, a.Do(ctx, func(context.Context) error { return nil }))
	h.clock.Advance(2 * time.Millisecond)
	require.NoError(t, h.complete("b", 0, nil)) // drops a

	// The handle makes a a new breaker, which trips.
	require.Equal(t, errDown, a.Do(ctx, func(context.Context) error { return errDown }))
	require.Len(t, h.m.Breakers("a"), 1)
	assert.Equal(t, breaker.Open, h.state("a", 0))
	assert.ErrorIs(t, a.Do(ctx, func(context.Context) error { return nil }), breaker.ErrOpen)
}

func TestTemplateLoadErrors(t *testing.T) {
	two := []breaker.Rule{tripsOnOne("x*"), {Resource: "x*", Strategy: breaker.ErrorRatio, Threshold: 0.5,
		RetryTimeout: time.Second}}

	m := breaker.NewManager(breaker.WithMaxTemplateBreakers(1))
	var re *breaker.RuleError
	require.ErrorAs(t, m.LoadRules(two), &re)
	assert.Equal(t, 1, re.Index)
	assert.Equal(t, "Resource", re.Field)
	assert.Contains(t, re.Error(), "WithMaxTemplateBreakers")

	m = breaker.NewManager(breaker.WithMaxTemplateBreakers(0))
	require.ErrorIs(t, m.LoadRules(two[:1]), breaker.ErrInvalidRule)
	require.NoError(t, m.LoadRules([]breaker.Rule{tripsOnOne("x")}), "plain rules still load")

	// 10,000 breakers of 1,000 buckets each take about 190 MB.
	big := tripsOnOne("big*")
	big.Strategy, big.Threshold, big.BucketCount, big.StatInterval = breaker.ErrorRatio, 0.5, 1000, time.Minute
	m = breaker.NewManager(breaker.WithMemoryBudget(100 << 20))
	require.ErrorAs(t, m.LoadRules([]breaker.Rule{tripsOnOne("x"), big}), &re)
	assert.Equal(t, 1, re.Index)
	assert.Contains(t, re.Error(), "WithMemoryBudget")
	m = breaker.NewManager(breaker.WithMemoryBudget(100<<20), breaker.WithMaxTemplateBreakers(1000))
	require.NoError(t, m.LoadRules([]breaker.Rule{big}), "1,000 of them fit")
}

func TestTemplateExistingBreakerAllocatesNothing(t *testing.T) {
	m := breaker.NewManager(breaker.WithMaxTemplateBreakers(10))
	require.NoError(t, m.LoadRules([]breaker.Rule{tripsOnOne("svc*")}))
	ctx := context.Background()
	fn := func(context.Context) error { return nil }
	require.NoError(t, m.Do(ctx, "svc-a", fn))
	r := m.Resource("svc-b")
	require.NoError(t, r.Do(ctx, fn))
	assert.Zero(t, testing.AllocsPerRun(100, func() { _ = m.Do(ctx, "svc-a", fn) }))
	assert.Zero(t, testing.AllocsPerRun(100, func() { _ = r.Do(ctx, fn) }))
	assert.Zero(t, testing.AllocsPerRun(100, func() { _ = m.Do(ctx, "other", fn) }),
		"a name no template matches")
	e, err := m.Enter("svc-a")
	require.NoError(t, err)
	e.Exit()
	assert.Equal(t, 2, m.TemplateStats().Resources)
}

func TestTemplateErrorsMatchErrOpen(t *testing.T) {
	h := newTemplateHarness(t, 10, tripsOnOne("*"))
	h.completeN("x", 1, errDown)
	err := h.complete("x", 0, nil)
	assert.True(t, errors.Is(err, breaker.ErrOpen))
}

// Idle means no call completed and no breaker rejected one: a call in flight since long ago
// makes its resource used when it ends, and an OPEN breaker that keeps rejecting stays used.
func TestTemplateIdleMeansNoCallEnded(t *testing.T) {
	h := newTemplateHarness(t, 3, tripsOnOne("*"))
	slow, err := h.m.Enter("slow") // made at 0, ends at 30ms
	require.NoError(t, err)
	h.clock.Advance(10 * time.Millisecond)
	require.NoError(t, h.complete("quick", 0, nil)) // ends at 10ms
	h.clock.Advance(10 * time.Millisecond)
	h.completeN("down", 1, errDown) // trips at 20ms
	h.clock.Advance(10 * time.Millisecond)
	slow.Exit()
	h.clock.Advance(10 * time.Millisecond)
	require.ErrorIs(t, h.complete("down", 0, nil), breaker.ErrOpen) // rejected at 40ms

	h.clock.Advance(10 * time.Millisecond)
	require.NoError(t, h.complete("new", 0, nil))
	assert.Equal(t, []string{"down", "new", "slow"}, h.m.TemplateResources(), "quick was idle the longest")
}

// A breaker that rejects a call marks its resource used: of two OPEN resources, the one still
// called is kept.
func TestTemplateRejectedCallsKeepAResourceUsed(t *testing.T) {
	h := newTemplateHarness(t, 2, tripsOnOne("*"))
	h.completeN("called", 1, errDown) // trips at 0
	h.clock.Advance(10 * time.Millisecond)
	h.completeN("forgotten", 1, errDown) // trips at 10ms
	h.clock.Advance(10 * time.Millisecond)
	require.ErrorIs(t, h.complete("called", 0, nil), breaker.ErrOpen) // rejected at 20ms
	h.clock.Advance(10 * time.Millisecond)
	require.NoError(t, h.complete("new", 0, nil))
	assert.Equal(t, []string{"called", "new"}, h.m.TemplateResources())
	assert.Equal(t, breaker.Evicted, h.events.last().Reason)
	assert.Equal(t, "forgotten", h.events.last().Resource)
}

// Editing, adding, removing or reordering one rule of a template keeps the breakers of its
// other rules, with their state, for every resource the template made them for.
func TestTemplateRuleEditKeepsSiblings(t *testing.T) {
	count := tripsOnOne("api*")
	slow := breaker.Rule{Resource: "api*", Strategy: breaker.SlowRequestRatio, Threshold: 1,
		MaxAllowedRT: time.Second, MinRequestAmount: 1, RetryTimeout: time.Second}
	h := newTemplateHarness(t, 100, count, slow)
	h.completeN("api/a", 1, errDown)
	tripped := h.m.Breakers("api/a")[0]
	require.Equal(t, breaker.Open, tripped.State())
	h.events.reset()

	otherWindow := slow
	otherWindow.BucketCount = 5
	ratio := breaker.Rule{Resource: "api*", Strategy: breaker.ErrorRatio, Threshold: 0.5, RetryTimeout: time.Second}
	tuned := count
	tuned.Threshold = 2
	for _, rules := range [][]breaker.Rule{
		{count, otherWindow},        // the sibling's window changed
		{count, otherWindow, ratio}, // a rule added
		{ratio, count},              // one removed, the others reordered
		{ratio, tuned},              // the tripped rule itself tuned
	} {
		require.NoError(t, h.m.LoadRules(rules))
		i := slices.IndexFunc(rules, func(r breaker.Rule) bool { return r.Strategy == breaker.ErrorCount })
		bs := h.m.Breakers("api/a")
		require.Len(t, bs, len(rules))
		assert.Same(t, tripped, bs[i], "%v", rules)
		assert.ErrorIs(t, h.complete("api/a", 0, nil), breaker.ErrOpen, "the dependency is not called")
	}
	for _, c := range h.events.all() {
		assert.NotEqual(t, breaker.ErrorCount, c.Rule.Strategy, "the tripped breaker was never reset: %v", c)
	}
	assert.Equal(t, 2, h.m.TemplateStats().Breakers, "api/a's two breakers, and none left over")
}

// A new name past the bound drops CLOSED breakers only, and a tripped one only while there is
// still no room: with a bound of 320 (a batch of 20), 319 names OPEN and one CLOSED, a new
// name drops the CLOSED one alone, and no dependency known to be down is called again.
func TestEvictionKeepsTrippedBreakers(t *testing.T) {
	h := newTemplateHarness(t, 320, tripsOnOne("n*"))
	for i := range 319 {
		h.completeN(fmt.Sprintf("n%03d", i), 1, errDown)
	}
	h.clock.Advance(time.Second / 2)
	require.NoError(t, h.complete("n319", 0, nil))
	h.events.reset()

	require.NoError(t, h.complete("n320", 0, nil))
	assert.Equal(t, uint64(1), h.m.TemplateStats().Dropped, "only the CLOSED one")
	assert.Empty(t, h.m.Breakers("n319"))
	assert.Empty(t, h.events.all(), "no tripped breaker was evicted")
	for i := range 319 {
		require.ErrorIs(t, h.complete(fmt.Sprintf("n%03d", i), 0, nil), breaker.ErrOpen, "n%03d", i)
	}

	// With no CLOSED one left, a new name must drop the idlest tripped one.
	require.NoError(t, h.complete("n320", 0, errDown))
	h.events.reset()
	require.NoError(t, h.complete("n321", 0, nil))
	assert.Equal(t, []string{"OPEN->CLOSED Evicted"}, h.events.transitions())
	assert.Equal(t, "n000", h.events.last().Resource)
}

// A template name longer than the bound is refused with ErrNameTooLong and kept nowhere.
func TestTemplateRefusesLongNames(t *testing.T) {
	h := newTemplateHarness(t, 10, tripsOnOne("api*"))
	long := "api" + strings.Repeat("x", breaker.DefaultMaxNameLength)
	err := h.complete(long, 0, nil)
	require.ErrorIs(t, err, breaker.ErrNameTooLong)
	assert.ErrorIs(t, err, breaker.ErrBlocked)
	assert.NotErrorIs(t, err, breaker.ErrOpen)
	assert.Equal(t, breaker.BlockedByName, blockOf(t, err).Kind())
	assert.Less(t, len(err.Error()), 300, "the message does not repeat the whole name")
	assert.Zero(t, h.m.TemplateStats().Resources)
	require.NoError(t, h.complete(long[:breaker.DefaultMaxNameLength], 0, nil), "a name at the bound is kept")
	assert.Equal(t, 1, h.m.TemplateStats().Resources)
	require.NoError(t, h.complete(strings.Repeat("y", 5000), 0, nil), "names no template matches are not kept")
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
	assert.Empty(t, m.Resources())
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
}
