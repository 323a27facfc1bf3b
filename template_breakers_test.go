package breaker_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
)

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
	assert.Equal(t, breaker.TemplateStats{Patterns: 1, Resources: 61, Breakers: 61, Limit: 64, Dropped: 4}, st)
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
	assert.Zero(t, h.m.TemplateStats().Patterns)
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

func TestTemplateResourceHandleFollowsDrops(t *testing.T) {
	h := newTemplateHarness(t, 1, tripsOnOne("*"))
	ctx := context.Background()
	a := h.m.Handle("a")
	require.NoError(t, a.Do(ctx, func(context.Context) error { return nil }))
	h.clock.Advance(2 * time.Millisecond)
	require.NoError(t, h.complete("b", 0, nil)) // drops a

	// The handle makes a a new breaker, which trips.
	require.Equal(t, errDown, a.Do(ctx, func(context.Context) error { return errDown }))
	require.Len(t, h.m.Breakers("a"), 1)
	assert.Equal(t, breaker.Open, h.state("a", 0))
	assert.ErrorIs(t, a.Do(ctx, func(context.Context) error { return nil }), breaker.ErrOpen)
}

func TestTemplateExistingBreakerAllocatesNothing(t *testing.T) {
	m := breaker.NewManager(breaker.WithMaxTemplateBreakers(10))
	require.NoError(t, m.LoadRules([]breaker.Rule{tripsOnOne("svc*")}))
	ctx := context.Background()
	fn := func(context.Context) error { return nil }
	require.NoError(t, m.Do(ctx, "svc-a", fn))
	r := m.Handle("svc-b")
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

// A narrower template added beside the one that made the breakers takes some of its names:
// those names are dropped (the template that made their breakers is no longer theirs), and
// the others keep their breakers, each plan made for its own pair of templates.
func TestTemplateNarrowerTemplateTakesSomeNames(t *testing.T) {
	wide := tripsOnOne("api/*")
	h := newTemplateHarness(t, 100, wide)
	for i := range 8 {
		require.NoError(t, h.complete(fmt.Sprintf("api/%d", i), 0, nil))
		require.NoError(t, h.complete(fmt.Sprintf("api/slow/%d", i), 0, nil))
	}
	h.completeN("api/0", 1, errDown)
	h.completeN("api/slow/0", 1, errDown)
	tripped := h.m.Breakers("api/0")[0]
	h.events.reset()

	narrow := wide
	narrow.Resource = "api/slow/*"
	ratio := breaker.Rule{Resource: "api/slow/*", Strategy: breaker.ErrorRatio, Threshold: 0.5, RetryTimeout: time.Second}
	require.NoError(t, h.m.LoadRules([]breaker.Rule{wide, narrow, ratio}))
	assert.Equal(t, []string{"OPEN->CLOSED RuleChanged"}, h.events.transitions())
	assert.Equal(t, "api/slow/0", h.events.last().Resource)
	for i := range 8 {
		require.Len(t, h.m.Breakers(fmt.Sprintf("api/%d", i)), 1)
		assert.Empty(t, h.m.Breakers(fmt.Sprintf("api/slow/%d", i)))
	}
	assert.Same(t, tripped, h.m.Breakers("api/0")[0])
	assert.ErrorIs(t, h.complete("api/0", 0, nil), breaker.ErrOpen, "the wide template's names keep their state")

	require.NoError(t, h.complete("api/slow/0", 0, nil))
	bs := h.m.Breakers("api/slow/0")
	require.Len(t, bs, 2)
	assert.Equal(t, "api/slow/*", bs[0].Rule().Resource)
	assert.Equal(t, 10, h.m.TemplateStats().Breakers)
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

// Given a template breaker that paces and is the idlest of a full bound, when a new name needs
// room, then eviction drops an idle CLOSED one instead, as it keeps an OPEN one: the pacing one
// still holds its calls back, rather than starting again with the full flow.
func TestEvictionKeepsPacingBreakers(t *testing.T) {
	r := paceRule()
	r.Resource = "p*"
	h := newTemplateHarness(t, 4, r)
	h.completeN("p0", 2, nil)
	h.completeN("p0", 2, errDown)
	require.True(t, h.m.Breakers("p0")[0].Stats().Pacing)
	h.clock.Advance(time.Millisecond)
	for _, name := range []string{"p1", "p2", "p3"} {
		h.completeN(name, 1, nil)
	}
	h.clock.Advance(time.Millisecond)
	h.events.reset()

	require.NoError(t, h.complete("p4", 0, nil))
	assert.Empty(t, h.m.Breakers("p1"), "the idlest CLOSED one")
	require.Len(t, h.m.Breakers("p0"), 1, "the idlest of all, but pacing")
	assert.True(t, h.m.Breakers("p0")[0].Stats().Pacing)
	assert.ErrorIs(t, h.complete("p0", 0, nil), breaker.ErrPacing)
	assert.Empty(t, h.events.all())
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
