package breakerview_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakertest"
	"github.com/halfopen/breaker/breakerview"
)

var errDown = errors.New("down")

// watched is a Manager on a fake clock whose calls a Calls hears, and when it began to.
type watched struct {
	m     *breaker.Manager
	clock *breakertest.Clock
	calls *breakerview.Calls[struct{}]
	since time.Time
}

func newWatched(t *testing.T, l breakerview.Limits, rules ...breaker.Rule) *watched {
	t.Helper()
	w := &watched{clock: breakertest.NewClock(), calls: newCalls(l)}
	w.m = breaker.NewManager(breaker.WithClock(w.clock),
		breaker.WithCallObserver(func(c breaker.CallInfo) { w.calls.Record(c) }))
	w.since = w.m.Now()
	require.NoError(t, w.m.LoadRules(rules))
	return w
}

func (w *watched) call(name string, rt time.Duration, err error) {
	_ = w.m.Do(context.Background(), name, func(context.Context) error {
		w.clock.Advance(rt)
		return err
	})
}

func (w *watched) view() *breakerview.View {
	snap := w.m.Snapshot()
	return w.calls.View(&snap, w.since)
}

func rule(resource string) breaker.Rule {
	return breaker.Rule{Resource: resource, Strategy: breaker.ErrorCount, Threshold: 1, MinRequestAmount: 1,
		RetryTimeout: time.Minute}
}

func resourceOf(t *testing.T, v *breakerview.View, name string) breakerview.Resource {
	t.Helper()
	for _, r := range v.Resources {
		if r.Name == name {
			return r
		}
	}
	require.FailNow(t, "no resource "+name)
	return breakerview.Resource{}
}

// Given rules of its own with settings of its own, a DryRun rule, a template rule and a
// template setting, and an override of a name without rules, each resource's row says what
// applies to it, where it comes from, whether each breaker rejects nothing, and each breaker's
// label; the names called say whether they have rules.
func TestViewRows(t *testing.T) {
	payments, dry := rule("payments"), rule("payments")
	payments.ID = "p"
	dry.DryRun, dry.Threshold = true, 2
	w := newWatched(t, breakerview.Limits{}, payments, dry, rule("GET *"))
	require.NoError(t, w.m.LoadResources(map[string]breaker.ResourceConfig{
		"payments": {Timeout: time.Second}, "*": {MaxConcurrency: 5}}))
	_, err := w.m.Override("legacy", breaker.ForceOpen, time.Minute, "INC-1")
	require.NoError(t, err)
	w.call("payments", 0, errDown)
	w.call("GET a", 0, nil)
	w.call("inventory", 0, nil)

	v := w.view()
	assert.Equal(t, w.clock.Now(), v.At)
	p := resourceOf(t, v, "payments")
	assert.True(t, p.OwnRules())
	assert.True(t, p.OwnSettings())
	assert.Equal(t, breaker.ResourceConfig{Timeout: time.Second}, p.Settings)
	require.Len(t, p.Breakers, 2)
	assert.Equal(t, []string{"p", "ErrorCount#1"}, []string{p.Breakers[0].Label, p.Breakers[1].Label})
	assert.Equal(t, breaker.Open, p.Breakers[0].State)
	assert.False(t, p.Breakers[0].DryRun)
	assert.True(t, p.Breakers[1].DryRun)
	assert.True(t, p.Breakers[0].Windowed)
	assert.Equal(t, uint64(1), p.Calls.Calls)

	a := resourceOf(t, v, "GET a")
	assert.Equal(t, "GET *", a.Template)
	assert.False(t, a.OwnRules())
	assert.Equal(t, "*", a.SettingsFrom)
	assert.Equal(t, breaker.ResourceConfig{MaxConcurrency: 5}, a.Settings)

	legacy := resourceOf(t, v, "legacy")
	assert.Equal(t, breaker.ForceOpen, legacy.Force)
	require.NotNil(t, legacy.Override)
	assert.Equal(t, "INC-1", legacy.Override.Note)
	assert.Equal(t, "legacy", legacy.Label)

	assert.True(t, v.TemplatesLoaded)
	assert.Equal(t, []breakerview.TemplateSetting{{Key: "*", Settings: breaker.ResourceConfig{MaxConcurrency: 5}, Names: 3}},
		v.TemplateSettings, "GET a, inventory and legacy take it")
	unruled := map[string]bool{}
	for _, c := range v.Called {
		unruled[c.Name] = c.Unruled
	}
	assert.Equal(t, map[string]bool{"payments": false, "GET a": false, "inventory": true}, unruled)
}

// Given a rule of its own under a misspelt name that a template rule and the "*" settings key
// docs/calling.md recommends also cover, and a minute of calls to the name meant, the
// misspelt name is configured and not called, with the name meant nearest; a name with nothing
// of its own (a template made its breaker) is not listed, though it went uncalled too.
func TestUncalledNameThatATemplateCovers(t *testing.T) {
	typo := rule("GET api.paymnets:443")
	w := newWatched(t, breakerview.Limits{}, typo, rule("GET *"))
	require.NoError(t, w.m.LoadResources(map[string]breaker.ResourceConfig{"*": {Timeout: time.Second}}))
	w.call("GET api.other:443", 0, nil)
	assert.Nil(t, w.view().Uncalled, "not a minute yet")
	for range 61 {
		w.call("GET api.payments:443", 0, nil)
		w.clock.Advance(time.Second)
	}
	v := w.view()
	require.NotNil(t, v.Uncalled)
	assert.Equal(t, []breakerview.Uncalled{{Name: "GET api.paymnets:443", Label: "GET api.paymnets:443", Side: breakerview.ClientSide,
		Configured: []string{"rules"}, Nearest: "GET api.payments:443", NearestLabel: "GET api.payments:443"}}, v.Uncalled)
}

// Given names with rules of their own that share a label (they differ only in bytes that are
// not UTF-8), their series report the breakers of the first in byte order, whatever the order
// of calls or the states.
func TestSeriesClaimTheFirstNameInByteOrder(t *testing.T) {
	w := newWatched(t, breakerview.Limits{}, rule("a\xff"), rule("a\xfe"))
	w.call("a\xff", 0, errDown)
	v := w.view()
	var labels []string
	for _, s := range v.Series {
		labels = append(labels, s.Label)
	}
	require.Equal(t, []string{"a\uFFFD"}, labels)
	assert.Equal(t, breaker.Closed, v.Series[0].Breakers[0].State, "a\\xfe's, CLOSED, not a\\xff's, OPEN")
	assert.True(t, v.Series[0].Ran, "the calls of both count")
}

// Given Limits of one name, template settings taken by three names and template breakers made
// for two, and overrides of names without rules, the series of the name kept have its own, and
// the others report under Overflow: the template setting once for its key, their calls in
// flight added up, their overrides counted, and no template breaker.
func TestSeriesPastTheLimits(t *testing.T) {
	w := newWatched(t, breakerview.Limits{Names: 1}, rule("t/*"))
	require.NoError(t, w.m.LoadResources(map[string]breaker.ResourceConfig{"h/*": {MaxConcurrency: 2}}))
	w.call("h/a", 0, nil) // the first name heard: kept
	for _, name := range []string{"h/a", "h/b", "h/c", "h/c"} {
		_, err := w.m.Enter(name)
		require.NoError(t, err) // held: in flight
	}
	w.call("t/x", 0, nil)
	for _, name := range []string{"x", "y"} {
		_, err := w.m.Override(name, breaker.ForceClosed, time.Minute, "")
		require.NoError(t, err)
	}
	v := w.view()
	series := map[string]breakerview.Series{}
	for _, s := range v.Series {
		series[s.Label] = s
	}
	assert.Equal(t, int64(1), series["h/a"].InFlight)
	assert.Equal(t, []breakerview.SeriesSettings{{From: "h/*", Config: breaker.ResourceConfig{MaxConcurrency: 2}}},
		series["h/a"].Settings)
	over := series[breakerview.Overflow]
	assert.Equal(t, int64(3), over.InFlight)
	assert.True(t, over.HasInFlight)
	assert.Equal(t, []breakerview.SeriesSettings{{From: "h/*", Config: breaker.ResourceConfig{MaxConcurrency: 2}}},
		over.Settings, "once for the key")
	assert.Nil(t, over.Breakers, "t/x is past the Limits")
	assert.Equal(t, []breakerview.SeriesOverride{{Force: breaker.ForceClosed, Count: 2, Until: w.clock.Now().Add(time.Minute)}},
		over.Overrides)
}

// Given one call that ran for 3 s, 65 s later no row counts it: the name is configured and not
// called, and no series has a longest call.
func TestAMinuteAfterTheOnlyCall(t *testing.T) {
	w := newWatched(t, breakerview.Limits{}, rule("payments"))
	w.call("payments", 3*time.Second, nil)
	v := w.view()
	require.Len(t, v.Series, 1)
	assert.True(t, v.Series[0].Ran)
	assert.Equal(t, 3*time.Second, v.Series[0].Longest)
	w.clock.Advance(65 * time.Second)
	v = w.view()
	assert.Empty(t, v.Called)
	assert.False(t, v.Series[0].Ran)
	require.Len(t, v.Uncalled, 1)
	assert.Equal(t, "payments", v.Uncalled[0].Name)
	assert.Equal(t, []string{""}, v.Series[0].Uncalled)
}

// Given calls a dependency refused (CountAs Refused) and calls that failed, the name's minute
// counts the refused ones apart from the failed ones, and its breakers' rows carry Stats as
// the Manager reads it, Refused among Bad.
func TestViewCountsRefusedApart(t *testing.T) {
	w := newWatched(t, breakerview.Limits{}, breaker.Rule{Resource: "partner", Strategy: breaker.ErrorCount,
		Threshold: 10, RetryTimeout: time.Minute})
	for _, err := range []error{breaker.CountAs(errDown, breaker.Refused), breaker.CountAs(errDown, breaker.Refused),
		errDown, nil} {
		w.call("partner", 0, err)
	}
	v := w.view()
	p := resourceOf(t, v, "partner")
	assert.Equal(t, uint64(4), p.Calls.Calls)
	assert.Equal(t, uint64(2), p.Calls.Refused)
	assert.Equal(t, uint64(1), p.Calls.Failed)
	require.Len(t, p.Breakers, 1)
	st := w.m.Breakers("partner")[0].Stats()
	assert.Equal(t, st.Refused, p.Breakers[0].Refused, "the breaker's Stats, as the Manager reads them")
	assert.Equal(t, uint64(3), p.Breakers[0].Bad, "a refusal is bad in the window")
}
