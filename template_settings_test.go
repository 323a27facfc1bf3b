package breaker_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakertest"
)

// newSettingsHarness is a Manager on a fake clock with the template breaker bound limit and
// the settings cfg, and no rules.
func newSettingsHarness(t *testing.T, limit int, cfg map[string]breaker.ResourceConfig) *harness {
	t.Helper()
	h := newTemplateHarness(t, limit)
	require.NoError(t, h.m.LoadResources(cfg))
	return h
}

// A template setting gives every name it matches its Timeout and Force, and a MaxConcurrency
// counted for each name on its own.
func TestTemplateSettingsApplyToEveryName(t *testing.T) {
	h := newSettingsHarness(t, 100, map[string]breaker.ResourceConfig{
		"GET *":    {MaxConcurrency: 2, Timeout: 50 * time.Millisecond},
		"DELETE *": {Force: breaker.ForceOpen},
	})

	a, err := enterN(h.m, "GET users:443", 3)
	require.Len(t, a, 2)
	assert.ErrorIs(t, err, breaker.ErrConcurrencyLimit)
	assert.Equal(t, "GET users:443", blockOf(t, err).Resource, "the rejection names the resource called")
	b, err := enterN(h.m, "GET billing:443", 2)
	require.NoError(t, err, "each name has its own count")
	require.Len(t, b, 2)
	assert.Equal(t, int64(2), h.m.InFlight("GET users:443"))
	assert.Equal(t, int64(2), h.m.InFlight("GET billing:443"))
	exitAll(a)
	exitAll(b)
	assert.Zero(t, h.m.InFlight("GET users:443"))

	var deadline time.Duration
	require.NoError(t, h.m.Do(context.Background(), "GET orders:443", func(ctx context.Context) error {
		d, ok := ctx.Deadline()
		require.True(t, ok, "the template's Timeout gives the call a deadline")
		deadline = time.Until(d)
		return nil
	}))
	assert.LessOrEqual(t, deadline, 50*time.Millisecond)

	err = h.m.Do(context.Background(), "DELETE users:443", func(context.Context) error { return nil })
	assert.ErrorIs(t, err, breaker.ErrForcedOpen)
	assert.Equal(t, "DELETE users:443", blockOf(t, err).Resource)

	entries, err := enterN(h.m, "POST users:443", 5)
	assert.NoError(t, err, "a name no template setting matches has no limit")
	exitAll(entries)
	assert.Zero(t, h.m.InFlight("POST users:443"), "nor a count")

	assert.Equal(t, map[string]breaker.ResourceConfig{
		"GET *":    {MaxConcurrency: 2, Timeout: 50 * time.Millisecond},
		"DELETE *": {Force: breaker.ForceOpen},
	}, h.m.Settings(), "Resources lists the template settings by their keys")
}

// The longest prefix wins, "*" alone matches every name, and a name's own settings win over
// any template setting.
func TestTemplateSettingsLongestPrefixAndOwnSettingsWin(t *testing.T) {
	h := newSettingsHarness(t, 100, map[string]breaker.ResourceConfig{
		"*":         {MaxConcurrency: 1},
		"GET *":     {MaxConcurrency: 2},
		"GET api*":  {MaxConcurrency: 3},
		"GET api:1": {MaxConcurrency: 4},
	})
	for name, want := range map[string]int{"PUT x": 1, "GET x": 2, "GET api:2": 3, "GET api:1": 4} {
		entries, err := enterN(h.m, name, want+1)
		assert.Len(t, entries, want, name)
		assert.ErrorIs(t, err, breaker.ErrConcurrencyLimit, name)
		exitAll(entries)
	}
}

// A resource with rules of its own and no settings of its own takes a template setting's
// settings, beside its breakers.
func TestTemplateSettingsApplyToResourcesWithRules(t *testing.T) {
	h := newHarness(t, errorRatio(0.5, 1))
	require.NoError(t, h.m.LoadResources(map[string]breaker.ResourceConfig{"s*": {MaxConcurrency: 1}}))
	entries, err := enterN(h.m, "svc", 2)
	require.Len(t, entries, 1)
	assert.ErrorIs(t, err, breaker.ErrConcurrencyLimit)
	entries[0].SetError(errDown)
	entries[0].Exit()
	assert.ErrorIs(t, h.m.Do(context.Background(), "svc", succeed), breaker.ErrOpen, "its breaker still trips")

	// A reload of the rules keeps the count of the calls in flight, with a new breaker or not.
	fresh := errorRatio(0.5, 100)
	fresh.StatInterval = 2 * time.Second // a new window: a new breaker, CLOSED
	require.NoError(t, h.m.LoadRules([]breaker.Rule{fresh}))
	held, err := enterN(h.m, "svc", 1)
	require.NoError(t, err)
	require.NoError(t, h.m.LoadRules([]breaker.Rule{errorRatio(0.6, 100)}))
	_, err = enterN(h.m, "svc", 1)
	assert.ErrorIs(t, err, breaker.ErrConcurrencyLimit, "the call from before the reload still counts")
	exitAll(held)
	assert.Zero(t, h.m.InFlight("svc"))
}

// TemplateSettingsResources lists, sorted, every resource that takes a template setting now:
// one with rules of its own, one with an override only, and one a call made an entry for; not
// one with settings of its own, nor one the template does not match.
func TestTemplateSettingsResources(t *testing.T) {
	h := newTemplateHarness(t, 100)
	assert.Empty(t, h.m.TemplateSettingsResources(), "no template setting")
	rule := errorRatio(0.5, 1)
	rule.Resource = "GET a"
	other := rule
	other.Resource = "POST x"
	require.NoError(t, h.m.LoadRules([]breaker.Rule{rule, other}))
	require.NoError(t, h.m.LoadResources(map[string]breaker.ResourceConfig{
		"GET *": {MaxConcurrency: 5},
		"GET b": {MaxConcurrency: 1},
	}))
	_, err := h.m.Override("GET c", breaker.ForceClosed, time.Minute, "")
	require.NoError(t, err)
	require.NoError(t, h.m.Do(context.Background(), "GET d", succeed))
	require.NoError(t, h.m.Do(context.Background(), "POST y", succeed))
	assert.Equal(t, []string{"GET a", "GET c", "GET d"}, h.m.TemplateSettingsResources())
}

// A name with template settings counts against WithMaxTemplateBreakers as one more; its
// template rules' breakers count as before.
func TestTemplateSettingsCountTowardsTheBound(t *testing.T) {
	h := newTemplateHarness(t, 4, tripsOnOne("GET *"))
	require.NoError(t, h.m.LoadResources(map[string]breaker.ResourceConfig{"GET *": {MaxConcurrency: 5}}))
	for _, name := range []string{"GET a", "GET b", "GET c"} {
		require.NoError(t, h.complete(name, 0, nil))
		h.clock.Advance(10 * time.Millisecond)
	}
	assert.Equal(t, breaker.TemplateStats{Patterns: 1, Resources: 2, Breakers: 2, Settings: 2, Limit: 4, Dropped: 1},
		h.m.TemplateStats(), "two units a name: a breaker and its settings")
	assert.Equal(t, []string{"GET b", "GET c"}, h.m.TemplateResources())

	// Template settings alone make entries too, bounded the same way.
	h = newSettingsHarness(t, 3, map[string]breaker.ResourceConfig{"h/*": {MaxConcurrency: 1}})
	for i := range 5 {
		require.NoError(t, h.complete(fmt.Sprintf("h/%d", i), 0, nil))
		h.clock.Advance(10 * time.Millisecond)
	}
	assert.Equal(t, breaker.TemplateStats{Resources: 3, Settings: 3, Limit: 3, Dropped: 2}, h.m.TemplateStats())
	assert.Equal(t, []string{"h/2", "h/3", "h/4"}, h.m.TemplateResources())
}

// An entry with calls in flight under its template settings is kept over idle ones, so its
// count goes on limiting the name.
func TestTemplateSettingsKeepNamesWithCallsInFlight(t *testing.T) {
	h := newSettingsHarness(t, 2, map[string]breaker.ResourceConfig{"h/*": {MaxConcurrency: 1}})
	held, err := enterN(h.m, "h/a", 1) // the idlest from here on
	require.NoError(t, err)
	h.clock.Advance(10 * time.Millisecond)
	require.NoError(t, h.complete("h/b", 0, nil))
	h.clock.Advance(10 * time.Millisecond)
	require.NoError(t, h.complete("h/c", 0, nil))
	assert.Equal(t, []string{"h/a", "h/c"}, h.m.TemplateResources(), "b goes, idle; a has a call in flight")

	_, err = enterN(h.m, "h/a", 1)
	assert.ErrorIs(t, err, breaker.ErrConcurrencyLimit)
	exitAll(held)
	entries, err := enterN(h.m, "h/a", 1)
	assert.NoError(t, err)
	exitAll(entries)
}

// The count of a name's calls in flight belongs to the name: it goes on counting when its
// template settings are reloaded, or when it gets settings of its own.
func TestTemplateSettingsKeepCountsAcrossReloads(t *testing.T) {
	h := newSettingsHarness(t, 10, map[string]breaker.ResourceConfig{"h/*": {MaxConcurrency: 1}})
	held, err := enterN(h.m, "h/a", 1)
	require.NoError(t, err)

	require.NoError(t, h.m.LoadResources(map[string]breaker.ResourceConfig{"h/*": {MaxConcurrency: 1, Timeout: time.Second}}))
	_, err = enterN(h.m, "h/a", 1)
	assert.ErrorIs(t, err, breaker.ErrConcurrencyLimit, "reloaded template settings")

	require.NoError(t, h.m.LoadResources(map[string]breaker.ResourceConfig{"h/a": {MaxConcurrency: 1}}))
	_, err = enterN(h.m, "h/a", 1)
	assert.ErrorIs(t, err, breaker.ErrConcurrencyLimit, "settings of its own")
	assert.Equal(t, breaker.TemplateStats{Limit: 10}, h.m.TemplateStats(), "no entry: its own settings serve it")

	require.NoError(t, h.m.LoadResources(map[string]breaker.ResourceConfig{"h/*": {MaxConcurrency: 1}}))
	_, err = enterN(h.m, "h/a", 1)
	assert.ErrorIs(t, err, breaker.ErrConcurrencyLimit, "back to the template")
	assert.Equal(t, int64(1), h.m.InFlight("h/a"))

	exitAll(held)
	assert.Zero(t, h.m.InFlight("h/a"))
	entries, err := enterN(h.m, "h/a", 1)
	assert.NoError(t, err)
	exitAll(entries)
}

// Template settings with a rule template: each name gets both, and ForceClosed from the
// template setting lets through what its breakers reject.
func TestTemplateSettingsWithTemplateRules(t *testing.T) {
	h := newTemplateHarness(t, 100, tripsOnOne("GET *"))
	require.NoError(t, h.m.LoadResources(map[string]breaker.ResourceConfig{"GET *": {Force: breaker.ForceClosed}}))
	h.completeN("GET a", 1, errDown)
	assert.Equal(t, breaker.Open, h.state("GET a", 0), "the breaker trips")
	assert.NoError(t, h.complete("GET a", 0, nil), "and ForceClosed lets the call through")

	require.NoError(t, h.m.LoadResources(nil))
	assert.ErrorIs(t, h.complete("GET a", 0, nil), breaker.ErrOpen, "without the template setting, it rejects")
}

// Template settings count in the memory budget at the bound of template breakers.
func TestTemplateSettingsInTheBudget(t *testing.T) {
	m := breaker.NewManager(breaker.WithClock(breakertest.NewClock()), breaker.WithMaxTemplateBreakers(1000),
		breaker.WithMemoryBudget(512<<10))
	err := m.LoadResources(map[string]breaker.ResourceConfig{"h/*": {MaxConcurrency: 1}})
	var re *breaker.RuleError
	require.ErrorAs(t, err, &re)
	assert.Contains(t, re.Reason, "template settings for 1000 resources")
	assert.Empty(t, m.Settings(), "nothing is loaded")
	require.NoError(t, m.LoadResources(map[string]breaker.ResourceConfig{"h/a": {MaxConcurrency: 1}}))
}

// Under concurrent calls to many names and reloads of their template settings, no name ever
// has more calls in flight than its MaxConcurrency, and every count ends at 0.
func TestTemplateSettingsLimitExactUnderConcurrency(t *testing.T) {
	const limit, names, workers = 3, 4, 16
	m := breaker.NewManager(breaker.WithClock(breakertest.NewClock()), breaker.WithMaxTemplateBreakers(names))
	cfg := func(timeout time.Duration) map[string]breaker.ResourceConfig {
		return map[string]breaker.ResourceConfig{"h/*": {MaxConcurrency: limit, Timeout: timeout}}
	}
	require.NoError(t, m.LoadResources(cfg(time.Second)))
	var inside [names]atomic.Int64
	var over atomic.Int64
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				n := (w + i) % names
				e, err := m.Enter(fmt.Sprintf("h/%d", n))
				if err != nil {
					if !errors.Is(err, breaker.ErrConcurrencyLimit) {
						over.Add(1000) // any other rejection is a bug
					}
					continue
				}
				if inside[n].Add(1) > limit {
					over.Add(1)
				}
				inside[n].Add(-1)
				e.Exit()
			}
		}()
	}
	for i := range 300 {
		require.NoError(t, m.LoadResources(cfg(time.Duration(i+1)*time.Millisecond)))
	}
	close(stop)
	wg.Wait()
	assert.Zero(t, over.Load(), "a name had more calls in flight than its limit")
	for n := range names {
		assert.Zero(t, m.InFlight(fmt.Sprintf("h/%d", n)))
	}
}

// A document's resources may hold template settings; they load as LoadResources loads them.
func TestTemplateSettingsFromADocument(t *testing.T) {
	d, err := breaker.ParseDocument([]byte(`{"rules": [], "resources": {"GET *": {"timeout": "2s", "maxConcurrency": 1}}}`))
	require.NoError(t, err)
	assert.Equal(t, map[string]breaker.ResourceConfig{"GET *": {Timeout: 2 * time.Second, MaxConcurrency: 1}}, d.Resources)
	h := newTemplateHarness(t, 10)
	require.NoError(t, h.m.LoadDocument(d))
	entries, err := enterN(h.m, "GET a", 2)
	assert.Len(t, entries, 1)
	assert.ErrorIs(t, err, breaker.ErrConcurrencyLimit)
	exitAll(entries)
}

// A Manager that may hold no template resources refuses template settings.
func TestTemplateSettingsRefusedWithoutRoom(t *testing.T) {
	m := breaker.NewManager(breaker.WithMaxTemplateBreakers(0))
	err := m.LoadResources(map[string]breaker.ResourceConfig{"h/*": {Timeout: time.Second}})
	var re *breaker.RuleError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, "h/*", re.Resource)
	assert.Contains(t, re.Reason, "WithMaxTemplateBreakers(0)")
	assert.Empty(t, m.Settings())
}

// At most MaxTemplates patterns of template rules, and as many of template settings, are loaded.
func TestTemplatePatternsBounded(t *testing.T) {
	m := breaker.NewManager()
	cfg := map[string]breaker.ResourceConfig{}
	var rules []breaker.Rule
	for i := range breaker.MaxTemplates {
		cfg[fmt.Sprintf("h%04d/*", i)] = breaker.ResourceConfig{Timeout: time.Second}
		r := tripsOnOne(fmt.Sprintf("h%04d/*", i))
		rules = append(rules, r)
	}
	require.NoError(t, m.LoadResources(cfg))
	require.NoError(t, m.LoadRules(rules))

	cfg["more/*"] = breaker.ResourceConfig{Timeout: time.Second}
	var re *breaker.RuleError
	require.ErrorAs(t, m.LoadResources(cfg), &re)
	assert.Contains(t, re.Reason, "one template setting too many")
	require.ErrorAs(t, m.LoadRules(append(rules, tripsOnOne("more/*"))), &re)
	assert.Contains(t, re.Reason, "one template too many")
	assert.Equal(t, breaker.MaxTemplates, len(m.Rules()), "nothing more is loaded")
	assert.Len(t, m.Settings(), breaker.MaxTemplates)
}

// SettingsOf says what applies to a name: its own settings, else its template setting's, with
// an override's Force over either.
func TestSettingsOf(t *testing.T) {
	h := newSettingsHarness(t, 10, map[string]breaker.ResourceConfig{
		"GET *":   {Timeout: time.Second, MaxConcurrency: 3},
		"GET own": {MaxConcurrency: 1},
	})
	assert.Equal(t, breaker.AppliedSettings{ResourceConfig: breaker.ResourceConfig{Timeout: time.Second, MaxConcurrency: 3},
		Template: "GET *"}, h.m.SettingsOf("GET a"), "never called: the template's all the same")
	assert.Equal(t, breaker.AppliedSettings{ResourceConfig: breaker.ResourceConfig{MaxConcurrency: 1}}, h.m.SettingsOf("GET own"))
	assert.Equal(t, breaker.AppliedSettings{}, h.m.SettingsOf("PUT a"))

	_, err := h.m.Override("GET a", breaker.ForceClosed, time.Minute, "")
	require.NoError(t, err)
	assert.Equal(t, breaker.AppliedSettings{ResourceConfig: breaker.ResourceConfig{Timeout: time.Second, MaxConcurrency: 3,
		Force: breaker.ForceClosed}, Template: "GET *", Overridden: true}, h.m.SettingsOf("GET a"))
	h.clock.Advance(time.Minute)
	assert.False(t, h.m.SettingsOf("GET a").Overridden, "an override whose end has come is over")
}
