package breaker_test

import (
	"errors"
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
	assert.Equal(t, breaker.TemplateStats{Patterns: 1, Resources: 2, Breakers: 2, Limit: 10}, h.m.TemplateStats())

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
	assert.Equal(t, 2, h.m.TemplateStats().Patterns, "two patterns")
}

func TestTemplateWithSeveralRules(t *testing.T) {
	slow := breaker.Rule{Resource: "svc*", Strategy: breaker.SlowRequestRatio, Threshold: 1,
		MaxAllowedRT: 10 * time.Millisecond, MinRequestAmount: 1, RetryTimeout: time.Second}
	h := newTemplateHarness(t, 4, slow, tripsOnOne("svc*"))

	require.NoError(t, h.complete("svc-a", 20*time.Millisecond, nil))
	assert.Equal(t, breaker.Open, h.state("svc-a", 0), "the slow rule timed the call")
	assert.Equal(t, breaker.Closed, h.state("svc-a", 1))
	require.NoError(t, h.complete("svc-b", 0, nil))
	assert.Equal(t, breaker.TemplateStats{Patterns: 1, Resources: 2, Breakers: 4, Limit: 4}, h.m.TemplateStats())

	// A third name needs two more breakers: svc-b, CLOSED, goes first though svc-a is idler.
	h.clock.Advance(time.Second)
	require.NoError(t, h.complete("svc-c", 0, nil))
	assert.Equal(t, []string{"svc-a", "svc-c"}, h.m.TemplateResources())
	assert.Equal(t, uint64(1), h.m.TemplateStats().Dropped)
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

func TestTemplateErrorsMatchErrOpen(t *testing.T) {
	h := newTemplateHarness(t, 10, tripsOnOne("*"))
	h.completeN("x", 1, errDown)
	err := h.complete("x", 0, nil)
	assert.True(t, errors.Is(err, breaker.ErrOpen))
}
