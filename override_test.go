package breaker_test

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakertest"
)

// newOverrideHarness is newTemplateHarness with a logger that keeps the overrides' log lines
// out of the test output.
func newOverrideHarness(t *testing.T, limit int, rules ...breaker.Rule) *harness {
	t.Helper()
	h := &harness{t: t, clock: breakertest.NewClock(), events: &recorder{}}
	h.m = breaker.NewManager(breaker.WithClock(h.clock), breaker.WithMaxTemplateBreakers(limit),
		breaker.WithLogger(slog.New(slog.DiscardHandler)))
	h.m.AddObserver(h.events)
	require.NoError(t, h.m.LoadRules(rules))
	return h
}

// overrideNotes lists the Override changes heard, as "resource rule note".
func overrideNotes(t *testing.T, r *recorder) []string {
	t.Helper()
	var out []string
	for _, c := range r.all() {
		if c.Reason == breaker.Override {
			require.Equal(t, c.From, c.To, "an override moves no breaker")
			out = append(out, fmt.Sprintf("%s %q %s", c.Resource, c.Rule.Resource, c.Note))
		}
	}
	return out
}

// An override forces a resource until its end, which the first call after it finds; observers
// hear it begin, with the operator's note, and expire at the next change.
func TestOverrideForcesUntilItEnds(t *testing.T) {
	h := newOverrideHarness(t, 100, errorCount(1, 1))
	o, err := h.m.Override("svc", breaker.ForceOpen, time.Minute, "deploy of the ledger, INC-42")
	require.NoError(t, err)
	assert.Equal(t, breaker.OverrideInfo{Resource: "svc", Force: breaker.ForceOpen, At: h.m.Now(),
		Until: h.m.Now().Add(time.Minute), Note: "deploy of the ledger, INC-42"}, o)
	assert.Equal(t, []breaker.OverrideInfo{o}, h.m.Overrides())

	assert.ErrorIs(t, h.m.Do(context.Background(), "svc", succeed), breaker.ErrForcedOpen)
	h.clock.Advance(time.Minute - time.Nanosecond)
	assert.ErrorIs(t, h.m.Do(context.Background(), "svc", succeed), breaker.ErrForcedOpen, "a nanosecond before its end")
	h.clock.Advance(time.Nanosecond)
	assert.Empty(t, h.m.Overrides(), "its end has come")
	assert.NoError(t, h.m.Do(context.Background(), "svc", succeed), "at its end, the call passes")
	assert.Equal(t, breaker.Closed, h.state("svc", 0), "the breaker counted nothing while forced open")

	assert.Equal(t, []string{`svc "svc" deploy of the ledger, INC-42`}, overrideNotes(t, h.events),
		"calls and reads publish nothing")
	require.NoError(t, h.m.LoadResources(nil))
	assert.Equal(t, []string{`svc "svc" deploy of the ledger, INC-42`, `svc "svc" expired`}, overrideNotes(t, h.events),
		"the next change ends it")
}

// An override survives reloads of rules and settings until its end, and wins over the
// settings' Force; Auto lifts it.
func TestOverrideSurvivesReloadsAndWinsOverSettings(t *testing.T) {
	h := newOverrideHarness(t, 100, errorCount(1, 1))
	require.NoError(t, h.m.LoadResources(map[string]breaker.ResourceConfig{"svc": {Force: breaker.ForceOpen, MaxConcurrency: 1}}))
	_, err := h.m.Override("svc", breaker.Auto, time.Hour, "false alarm")
	require.NoError(t, err)
	require.NoError(t, h.m.LoadRules([]breaker.Rule{errorCount(2, 1)}))
	require.NoError(t, h.m.LoadResources(map[string]breaker.ResourceConfig{"svc": {Force: breaker.ForceOpen, MaxConcurrency: 1}}))
	entries, err := enterN(h.m, "svc", 2)
	require.Len(t, entries, 1, "Auto lifts the ForceOpen of its settings")
	assert.ErrorIs(t, err, breaker.ErrConcurrencyLimit, "and their limit still applies")
	exitAll(entries)

	h.clock.Advance(time.Hour)
	assert.ErrorIs(t, h.m.Do(context.Background(), "svc", succeed), breaker.ErrForcedOpen, "the settings again")
	assert.Equal(t, map[string]breaker.ResourceConfig{"svc": {Force: breaker.ForceOpen, MaxConcurrency: 1}},
		h.m.Settings(), "an override is not a setting")
}

// ForceClosed as an override lets calls through an OPEN breaker, which still counts, and its
// observers hear that it rejects nothing.
func TestOverrideForceClosed(t *testing.T) {
	h := newOverrideHarness(t, 100, errorCount(1, 1))
	h.completeN("svc", 1, errDown)
	require.Equal(t, breaker.Open, h.state("svc", 0))
	_, err := h.m.Override("svc", breaker.ForceClosed, 10*time.Minute, "")
	require.NoError(t, err)
	assert.True(t, h.events.last().DryRun)
	assert.Equal(t, breaker.Open, h.events.last().To)
	assert.NoError(t, h.m.Do(context.Background(), "svc", succeed))

	assert.True(t, h.m.EndOverride("svc"))
	assert.False(t, h.m.EndOverride("svc"), "none left to end")
	assert.ErrorIs(t, h.m.Do(context.Background(), "svc", succeed), breaker.ErrOpen)
	assert.Equal(t, []string{`svc "svc" `, `svc "svc" ended`}, overrideNotes(t, h.events))
}

// A resource without rules, and a name a template matches, can be overridden too.
func TestOverrideWithoutRulesAndOfTemplateNames(t *testing.T) {
	h := newOverrideHarness(t, 10, tripsOnOne("GET *"))
	require.NoError(t, h.m.LoadResources(map[string]breaker.ResourceConfig{"h/*": {MaxConcurrency: 1}}))
	for _, name := range []string{"plain", "GET a", "h/a"} {
		_, err := h.m.Override(name, breaker.ForceOpen, time.Minute, "maintenance")
		require.NoError(t, err)
		assert.ErrorIs(t, h.complete(name, 0, nil), breaker.ErrForcedOpen, name)
	}
	h.clock.Advance(time.Minute)
	for _, name := range []string{"plain", "GET a", "h/a"} {
		assert.NoError(t, h.complete(name, 0, nil), name)
	}
	entries, err := enterN(h.m, "h/a", 2)
	assert.ErrorIs(t, err, breaker.ErrConcurrencyLimit, "its template setting once the override is over")
	exitAll(entries)
	assert.Contains(t, overrideNotes(t, h.events), `plain "" maintenance`, "a resource without rules: one change with a zero rule")
}

// Bad input is a *RuleError naming the field, and nothing changes.
func TestOverrideValidation(t *testing.T) {
	tests := []struct {
		name     string
		resource string
		force    breaker.Force
		d        time.Duration
		note     string
		field    string
	}{
		{"no name", "", breaker.ForceOpen, time.Minute, "", "Resource"},
		{"a template", "GET *", breaker.ForceOpen, time.Minute, "", "Resource"},
		{"unknown force", "svc", 3, time.Minute, "", "Force"},
		{"no duration", "svc", breaker.ForceOpen, 0, "", "Duration"},
		{"negative duration", "svc", breaker.ForceOpen, -time.Second, "", "Duration"},
		{"past a day", "svc", breaker.ForceOpen, 24*time.Hour + 1, "", "Duration"},
		{"long note", "svc", breaker.ForceOpen, time.Minute, strings.Repeat("x", 257), "Note"},
		{"note not UTF-8", "svc", breaker.ForceOpen, time.Minute, "\xff", "Note"},
		{"long name", strings.Repeat("n", 1025), breaker.ForceOpen, time.Minute, "", "Resource"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newOverrideHarness(t, 100, errorCount(1, 1))
			_, err := h.m.Override(tt.resource, tt.force, tt.d, tt.note)
			var re *breaker.RuleError
			require.ErrorAs(t, err, &re)
			assert.ErrorIs(t, err, breaker.ErrInvalidOverride)
			assert.NotErrorIs(t, err, breaker.ErrInvalidRule, "an override is not a rule")
			assert.Contains(t, err.Error(), "breaker: invalid override")
			assert.Equal(t, tt.field, re.Field)
			assert.Empty(t, h.m.Overrides())
			assert.Empty(t, h.events.all(), "observers hear nothing")
		})
	}
	quiet := breaker.NewManager(breaker.WithLogger(slog.New(slog.DiscardHandler)))
	_, err := quiet.Override("svc", breaker.ForceOpen, 24*time.Hour, strings.Repeat("x", 256))
	assert.NoError(t, err, "a day and 256 bytes are allowed")
}

// At most MaxOverrides resources are overridden at once; replacing one does not count.
func TestOverrideBound(t *testing.T) {
	heavyTest(t)
	m := breaker.NewManager(breaker.WithLogger(slog.New(slog.DiscardHandler)))
	for i := range breaker.MaxOverrides {
		_, err := m.Override(fmt.Sprint("r", i), breaker.ForceOpen, time.Minute, "")
		require.NoError(t, err)
	}
	_, err := m.Override("one more", breaker.ForceOpen, time.Minute, "")
	var re *breaker.RuleError
	require.ErrorAs(t, err, &re)
	assert.Contains(t, re.Reason, "one override too many")
	_, err = m.Override("r0", breaker.ForceClosed, time.Minute, "")
	assert.NoError(t, err)
	assert.Len(t, m.Overrides(), breaker.MaxOverrides)
}

// Given an override whose end has come, when the next change does nothing but take it out
// (it ends an override no longer in force), then the rule set it publishes still finds every
// resource: its own breakers, a template's, and its settings.
func TestAChangeThatOnlyRemovesExpiredOverridesKeepsEveryResource(t *testing.T) {
	clock := breakertest.NewClock()
	m := breaker.NewManager(breaker.WithClock(clock), breaker.WithLogger(slog.New(slog.DiscardHandler)))
	template := errorCount(1, 1)
	template.Resource = "t*"
	require.NoError(t, m.LoadRules([]breaker.Rule{errorCount(1, 1), template}))
	require.NoError(t, m.LoadResources(map[string]breaker.ResourceConfig{"timed": {Timeout: time.Hour}}))
	_, err := m.Override("other", breaker.ForceOpen, time.Minute, "")
	require.NoError(t, err)
	clock.Advance(2 * time.Minute)

	require.False(t, m.EndOverride("other"), "its end had come")

	ctx := context.Background()
	for _, name := range []string{"svc", "t1"} {
		require.ErrorIs(t, m.Do(ctx, name, func(context.Context) error { return errDown }), errDown)
		assert.ErrorIs(t, m.Do(ctx, name, func(context.Context) error { return nil }), breaker.ErrOpen,
			"%s has its breaker", name)
	}
	var timed bool
	require.NoError(t, m.Do(ctx, "timed", func(ctx context.Context) error {
		_, timed = ctx.Deadline()
		return nil
	}))
	assert.True(t, timed, "timed has its Timeout")
}

// Overrides whose end has come, though no call to their resources came, are left out by reads
// and removed by the next change, which observers hear; they count toward no bound, and ending
// one says it was no longer in force.
func TestOverridesThatExpiredUncalled(t *testing.T) {
	h := newOverrideHarness(t, 100)
	for i := range breaker.MaxOverrides {
		_, err := h.m.Override(fmt.Sprint("r", i), breaker.ForceOpen, time.Minute, "")
		require.NoError(t, err)
	}
	h.clock.Advance(time.Minute)
	h.events.reset()
	assert.Empty(t, h.m.Overrides(), "a read leaves out those whose end has come")
	assert.Empty(t, overrideNotes(t, h.events), "and tells no one")
	assert.False(t, h.m.EndOverride("r0"), "its end had come")
	notes := overrideNotes(t, h.events)
	assert.Len(t, notes, breaker.MaxOverrides, "the change removed them, and observers hear each expire")
	assert.Equal(t, `r0 "" expired`, notes[0])
	h.events.reset()
	_, err := h.m.Override("new", breaker.ForceOpen, time.Minute, "")
	require.NoError(t, err, "the expired ones made room")
	assert.Equal(t, []string{`new "" `}, overrideNotes(t, h.events))
}

// An override ends at its Until by the Manager's clock. A step back of the clock shorter than
// the override lasts never ends it early: a one-hour ForceOpen stays in force after a 1 s step
// back, until the clock reaches its Until again. A step back longer than it lasts ends it, so
// that it never holds for the length of the step.
func TestOverrideAcrossAClockThatSteppedBack(t *testing.T) {
	t.Run("back a second", func(t *testing.T) {
		h := newOverrideHarness(t, 100, errorCount(1, 1))
		o, err := h.m.Override("svc", breaker.ForceOpen, time.Hour, "")
		require.NoError(t, err)
		h.clock.Advance(-time.Second)
		assert.ErrorIs(t, h.m.Do(context.Background(), "svc", succeed), breaker.ErrForcedOpen)
		h.clock.Set(o.Until.Add(-time.Nanosecond))
		assert.ErrorIs(t, h.m.Do(context.Background(), "svc", succeed), breaker.ErrForcedOpen)
		h.clock.Set(o.Until)
		assert.NoError(t, h.m.Do(context.Background(), "svc", succeed), "over at its Until")
	})
	t.Run("back longer than it lasts, from its end", func(t *testing.T) {
		h := newOverrideHarness(t, 100, errorCount(1, 1))
		o, err := h.m.Override("svc", breaker.ForceOpen, time.Hour, "")
		require.NoError(t, err)
		h.clock.Set(o.At.Add(-time.Hour))
		assert.ErrorIs(t, h.m.Do(context.Background(), "svc", succeed), breaker.ErrForcedOpen,
			"an hour back from its start is as long as it lasts: still in force")
		h.clock.Set(o.At.Add(-time.Hour - time.Nanosecond))
		assert.NoError(t, h.m.Do(context.Background(), "svc", succeed), "a step back past an hour before it began ends it")
		assert.Empty(t, h.m.Overrides())
	})
}

// Every override and its end is logged.
func TestOverrideIsLogged(t *testing.T) {
	var logs bytes.Buffer
	m := breaker.NewManager(breaker.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	_, err := m.Override("svc", breaker.ForceOpen, time.Minute, "INC-7")
	require.NoError(t, err)
	m.EndOverride("svc")
	assert.Contains(t, logs.String(), `msg="breaker: override" resource=svc force=open`)
	assert.Contains(t, logs.String(), `note=INC-7`)
	assert.Contains(t, logs.String(), `msg="breaker: override over" resource=svc force=open why=ended`)
}

// Overrides and reloads from many goroutines lose nothing: each name ends as its last writer
// left it, and the rules and settings are the last ones loaded.
func TestOverridesAndReloadsConcurrently(t *testing.T) {
	h := newOverrideHarness(t, 100, errorCount(1, 1))
	const writers, rounds = 8, 200
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprint("svc", w)
			for i := range rounds {
				if i%3 == 2 {
					h.m.EndOverride(name)
					continue
				}
				_, err := h.m.Override(name, breaker.ForceOpen, time.Duration(i+1)*time.Second, fmt.Sprint(i))
				assert.NoError(t, err)
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range rounds {
			assert.NoError(t, h.m.LoadRules([]breaker.Rule{errorCount(float64(i+1), 1)}))
			assert.NoError(t, h.m.LoadResources(map[string]breaker.ResourceConfig{"svc": {MaxConcurrency: i + 1}}))
		}
	}()
	wg.Wait()
	// Round 199 (199 % 3 == 1) set an override of 200s with note "199" on every name.
	got := h.m.Overrides()
	require.Len(t, got, writers)
	for w, o := range got {
		assert.Equal(t, fmt.Sprint("svc", w), o.Resource)
		assert.Equal(t, "199", o.Note)
		assert.ErrorIs(t, h.m.Do(context.Background(), o.Resource, succeed), breaker.ErrForcedOpen)
	}
	assert.Equal(t, float64(rounds), h.m.Rules()[0].Threshold)
	assert.Equal(t, map[string]breaker.ResourceConfig{"svc": {MaxConcurrency: rounds}}, h.m.Settings())
}

// A call past an override's end goes by the settings under it, and changes nothing itself: no
// rule set is published from the call path or by a read, so observers hear the override expire
// only at the next change. An expired ForceOpen rejects nothing; an expired ForceClosed no
// longer makes the breakers dry: a tripped one rejects.
func TestExpiredOverrideIsIgnoredByCallsAndReadsAndRemovedByTheNextChange(t *testing.T) {
	other := errorCount(1, 1)
	other.Resource = "other"
	h := newOverrideHarness(t, 100, errorCount(1, 1), other)
	_, err := h.m.Override("svc", breaker.ForceOpen, time.Minute, "")
	require.NoError(t, err)
	_, err = h.m.Override("other", breaker.ForceClosed, time.Minute, "")
	require.NoError(t, err)
	h.clock.Advance(time.Minute)
	h.events.reset()

	require.NoError(t, h.m.Do(context.Background(), "svc", succeed), "past its end, ForceOpen is gone")
	require.ErrorIs(t, h.m.Do(context.Background(), "other", fail), errDown)
	require.Equal(t, breaker.Open, h.state("other", 0))
	assert.ErrorIs(t, h.m.Do(context.Background(), "other", succeed), breaker.ErrOpen, "an expired ForceClosed dries nothing")
	assert.Empty(t, overrideNotes(t, h.events), "the calls published nothing")

	snap := h.m.Snapshot()
	assert.Nil(t, snap.Resource("other").Override)
	assert.Empty(t, overrideNotes(t, h.events), "a read published nothing")
	h.m.EndOverride("third") // a change, of another resource
	assert.Len(t, overrideNotes(t, h.events), 2, "the change removed both, and observers heard it")
}

// Given a resource with two breakers, when an observer that hears the first override set sets
// another (as an operator's tool that reacts to a change may), then every StateChange of each
// override has the Seq of its change: replayed by Seq, the first override's changes come before
// the second's, and the second is the one in force, as it is.
func TestOverrideSeqIsGivenWhenTheChangeIsMade(t *testing.T) {
	second := errorCount(2, 2)
	second.ID = "second rule"
	h := newOverrideHarness(t, 100, errorCount(1, 1), second)
	reacted := false
	h.m.AddObserver(breaker.ObserverFunc(func(c breaker.StateChange) {
		if c.Reason == breaker.Override && c.Note == "first" && !reacted {
			reacted = true
			_, err := h.m.Override("svc", breaker.ForceClosed, time.Minute, "second")
			require.NoError(t, err)
		}
	}))
	_, err := h.m.Override("svc", breaker.ForceOpen, time.Minute, "first")
	require.NoError(t, err)

	heard := h.events.all()
	require.Len(t, heard, 4)
	slices.SortFunc(heard, func(a, b breaker.StateChange) int { return cmp.Compare(a.Seq, b.Seq) })
	var notes []string
	for _, c := range heard {
		notes = append(notes, c.Note)
	}
	assert.Equal(t, []string{"first", "first", "second", "second"}, notes, "by Seq")
	assert.Equal(t, breaker.ForceClosed, h.m.Overrides()[0].Force, "the last by Seq is in force")
}

// Given an override whose end has come, when a reload drops a breaker that is OPEN, then the
// override's expiry has the smaller Seq: observers hear, and replay, the change in the order it
// made them.
func TestExpiryAndDropOfOneChangeAreNumberedInOrder(t *testing.T) {
	h := newOverrideHarness(t, 100, errorCount(1, 1))
	_, err := h.m.Override("other", breaker.ForceOpen, time.Minute, "")
	require.NoError(t, err)
	h.completeN("svc", 1, errDown)
	h.clock.Advance(time.Minute)
	h.events.reset()
	require.NoError(t, h.m.LoadRules(nil))
	heard := h.events.all()
	require.Len(t, heard, 2)
	assert.Equal(t, breaker.Override, heard[0].Reason)
	assert.Equal(t, breaker.RuleChanged, heard[1].Reason)
	assert.Less(t, heard[0].Seq, heard[1].Seq)
}
