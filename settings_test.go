package breaker_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
)

// ForceOpen rejects every call, also to a resource without rules, before fn runs.
func TestForceOpenWithoutRules(t *testing.T) {
	h := newHarness(t)
	require.NoError(t, h.m.LoadResources(map[string]breaker.ResourceConfig{"svc": {Force: breaker.ForceOpen}}))
	called := false
	err := h.m.Do(context.Background(), "svc", func(context.Context) error { called = true; return nil })
	assert.False(t, called)
	assert.ErrorIs(t, err, breaker.ErrBlocked)
	assert.ErrorIs(t, err, breaker.ErrOpen)
	assert.ErrorIs(t, err, breaker.ErrForcedOpen)
	assert.NotErrorIs(t, err, breaker.ErrConcurrencyLimit)
	be := blockOf(t, err)
	assert.Equal(t, "svc", be.Resource)
	assert.Nil(t, be.Rule)
	_, err = h.m.Enter("svc")
	assert.ErrorIs(t, err, breaker.ErrForcedOpen)
	assert.NoError(t, h.complete("other", 0, nil), "other resources are not touched")
}

// ForceOpen moves no breaker and counts nothing; Auto brings back the breakers as they were.
func TestForceOpenLeavesBreakersAlone(t *testing.T) {
	h := newHarness(t, errorCount(3, 1))
	h.completeN("svc", 2, errDown)
	require.NoError(t, h.m.LoadResources(map[string]breaker.ResourceConfig{"svc": {Force: breaker.ForceOpen}}))
	for i := 0; i < 5; i++ {
		assert.ErrorIs(t, h.complete("svc", 0, errDown), breaker.ErrForcedOpen)
	}
	st := h.m.Breakers("svc")[0].Stats()
	assert.Equal(t, breaker.Closed, st.State)
	assert.Equal(t, uint64(2), st.Total)
	assert.Empty(t, h.events.all())

	require.NoError(t, h.m.LoadResources(nil))
	h.completeN("svc", 1, errDown) // the third failure
	assert.Equal(t, []string{tripped}, h.events.transitions())
}

// Force survives LoadRules, and a resource's settings survive a reload that drops its rules.
func TestForceSurvivesLoadRules(t *testing.T) {
	h := newHarness(t, errorCount(3, 1))
	require.NoError(t, h.m.LoadResources(map[string]breaker.ResourceConfig{"svc": {Force: breaker.ForceOpen}}))
	require.NoError(t, h.m.LoadRules([]breaker.Rule{errorRatio(0.5, 1)}))
	assert.ErrorIs(t, h.complete("svc", 0, nil), breaker.ErrForcedOpen)
	require.NoError(t, h.m.LoadRules(nil))
	assert.ErrorIs(t, h.complete("svc", 0, nil), breaker.ErrForcedOpen)
	assert.Equal(t, map[string]breaker.ResourceConfig{"svc": {Force: breaker.ForceOpen}}, h.m.Settings())
}

// ForceClosed lets every call through; the breakers still count, trip, probe and report,
// with DryRun set, as if their rules were DryRun.
func TestForceClosed(t *testing.T) {
	h := newHarness(t, errorCount(3, 1))
	require.NoError(t, h.m.LoadResources(map[string]breaker.ResourceConfig{"svc": {Force: breaker.ForceClosed}}))
	h.completeN("svc", 3, errDown)
	require.Equal(t, breaker.Open, h.state("svc", 0))
	assert.True(t, h.events.last().DryRun)
	h.completeN("svc", 4, errDown) // OPEN, but let through
	h.clock.Advance(5 * time.Second)
	h.completeN("svc", 1, nil) // the probe
	assert.Equal(t, []string{tripped, probing, recovered}, h.events.transitions())
	for _, c := range h.events.all() {
		assert.True(t, c.DryRun, "%v", c.Reason)
	}

	require.NoError(t, h.m.LoadResources(nil))
	h.completeN("svc", 3, errDown)
	assert.ErrorIs(t, h.complete("svc", 0, nil), breaker.ErrOpen, "Auto enforces the breaker again")
	assert.False(t, h.events.last().DryRun)
}

// With MaxConcurrency 2, the third call in flight is rejected with ErrConcurrencyLimit,
// not ErrOpen, and no breaker counts it; an exit makes room.
func TestMaxConcurrency(t *testing.T) {
	h := newHarness(t, errorRatio(0.5, 1))
	require.NoError(t, h.m.LoadResources(map[string]breaker.ResourceConfig{"svc": {MaxConcurrency: 2}}))
	first, err := h.m.Enter("svc")
	require.NoError(t, err)
	_, err = h.m.Enter("svc")
	require.NoError(t, err)
	assert.Equal(t, int64(2), h.m.InFlight("svc"))

	_, err = h.m.Enter("svc")
	assert.ErrorIs(t, err, breaker.ErrConcurrencyLimit)
	assert.ErrorIs(t, err, breaker.ErrBlocked)
	assert.NotErrorIs(t, err, breaker.ErrOpen)
	assert.Zero(t, h.m.Breakers("svc")[0].Stats().Total)

	first.Exit()
	assert.Equal(t, int64(1), h.m.InFlight("svc"))
	assert.NoError(t, h.complete("svc", 0, nil))
	assert.Equal(t, int64(1), h.m.InFlight("svc"))
	first.Exit() // a second Exit gives back nothing
	assert.Equal(t, int64(1), h.m.InFlight("svc"))
}

// A probe that the limit blocks is given back at once, with the retry time unchanged.
func TestMaxConcurrencyGivesBackTheProbe(t *testing.T) {
	h := newHarness(t, errorCount(1, 1))
	require.NoError(t, h.m.LoadResources(map[string]breaker.ResourceConfig{"svc": {MaxConcurrency: 1}}))
	h.completeN("svc", 1, errDown)
	require.NoError(t, h.m.LoadResources(map[string]breaker.ResourceConfig{"svc": {MaxConcurrency: 1, Force: breaker.ForceClosed}}))
	held, err := h.m.Enter("svc") // let through by ForceClosed, and holds the one place
	require.NoError(t, err)
	require.NoError(t, h.m.LoadResources(map[string]breaker.ResourceConfig{"svc": {MaxConcurrency: 1}}))
	h.clock.Advance(5 * time.Second)
	h.events.reset()

	_, err = h.m.Enter("svc")
	assert.ErrorIs(t, err, breaker.ErrConcurrencyLimit)
	assert.Equal(t, []string{probing, "HALF_OPEN->OPEN ProbeBlocked"}, h.events.transitions())
	held.Exit()
	require.NoError(t, h.complete("svc", 0, nil), "the retry time is unchanged: the next call probes")
	assert.Equal(t, breaker.Closed, h.state("svc", 0))
}

// Changing the limit keeps the calls in flight counted: lowered below them, it rejects
// until enough exit; removing the settings and adding them back does not lose them.
func TestMaxConcurrencyChangedInFlight(t *testing.T) {
	h := newHarness(t)
	cfg := func(n int) map[string]breaker.ResourceConfig {
		return map[string]breaker.ResourceConfig{"svc": {MaxConcurrency: n}}
	}
	require.NoError(t, h.m.LoadResources(cfg(3)))
	var held []*breaker.Entry
	for i := 0; i < 3; i++ {
		e, err := h.m.Enter("svc")
		require.NoError(t, err)
		held = append(held, e)
	}
	require.NoError(t, h.m.LoadResources(cfg(2)))
	_, err := h.m.Enter("svc")
	assert.ErrorIs(t, err, breaker.ErrConcurrencyLimit)
	held[0].Exit()
	_, err = h.m.Enter("svc")
	assert.ErrorIs(t, err, breaker.ErrConcurrencyLimit, "two still in flight")
	held[1].Exit()
	assert.Equal(t, int64(1), h.m.InFlight("svc"))

	require.NoError(t, h.m.LoadResources(cfg(5)))
	assert.Equal(t, int64(1), h.m.InFlight("svc"), "a raised limit keeps the count")
	held[2].Exit()
	assert.Zero(t, h.m.InFlight("svc"))
}

// Under -race, 16 goroutines that never exit: exactly MaxConcurrency of them get in.
func TestMaxConcurrencyExactUnderConcurrency(t *testing.T) {
	h := newHarness(t, errorRatio(0.5, 100))
	require.NoError(t, h.m.LoadResources(map[string]breaker.ResourceConfig{"svc": {MaxConcurrency: 5}}))
	for round := 0; round < 50; round++ {
		var in, limited atomic.Int64
		entries := make(chan *breaker.Entry, 16)
		var wg sync.WaitGroup
		for g := 0; g < 16; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				e, err := h.m.Enter("svc")
				switch {
				case err == nil:
					in.Add(1)
					entries <- e
				case errors.Is(err, breaker.ErrConcurrencyLimit):
					limited.Add(1)
				}
			}()
		}
		wg.Wait()
		close(entries)
		require.Equal(t, int64(5), in.Load(), "round %d", round)
		require.Equal(t, int64(11), limited.Load(), "round %d", round)
		for e := range entries {
			e.Exit()
		}
		require.Zero(t, h.m.InFlight("svc"))
	}
}

// With ForceClosed, MaxConcurrency still applies.
func TestForceClosedKeepsTheLimit(t *testing.T) {
	h := newHarness(t)
	require.NoError(t, h.m.LoadResources(map[string]breaker.ResourceConfig{
		"svc": {MaxConcurrency: 1, Force: breaker.ForceClosed}}))
	_, err := h.m.Enter("svc")
	require.NoError(t, err)
	_, err = h.m.Enter("svc")
	assert.ErrorIs(t, err, breaker.ErrConcurrencyLimit)
}

// LoadResources validates everything first and changes nothing on error.
func TestLoadResourcesValidation(t *testing.T) {
	tests := []struct {
		name      string
		give      map[string]breaker.ResourceConfig
		wantField string
	}{
		{"empty name", map[string]breaker.ResourceConfig{"": {}}, "Resource"},
		{"template with a negative limit", map[string]breaker.ResourceConfig{"api/*": {MaxConcurrency: -2}}, "MaxConcurrency"},
		{"negative timeout", map[string]breaker.ResourceConfig{"a": {Timeout: -time.Second}}, "Timeout"},
		{"negative limit", map[string]breaker.ResourceConfig{"a": {MaxConcurrency: -1}}, "MaxConcurrency"},
		{"unknown force", map[string]breaker.ResourceConfig{"a": {Force: 3}}, "Force"},
		{"one bad among good", map[string]breaker.ResourceConfig{"a": {}, "b": {Force: 9}, "c": {}}, "Force"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := breaker.NewManager()
			before := map[string]breaker.ResourceConfig{"kept": {Force: breaker.ForceOpen}}
			require.NoError(t, m.LoadResources(before))
			err := m.LoadResources(tt.give)
			assert.ErrorIs(t, err, breaker.ErrInvalidRule)
			var re *breaker.RuleError
			require.ErrorAs(t, err, &re)
			assert.Equal(t, tt.wantField, re.Field)
			assert.Equal(t, before, m.Settings(), "nothing changed")
		})
	}
}

// The count of calls in flight belongs to the name: removing a resource's settings and
// loading them again keeps counting the calls still in flight against the limit.
func TestInFlightSurvivesSettingsRemoved(t *testing.T) {
	h := newHarness(t)
	limit := map[string]breaker.ResourceConfig{"db": {MaxConcurrency: 1}}
	require.NoError(t, h.m.LoadResources(limit))
	first, err := h.m.Enter("db")
	require.NoError(t, err)

	require.NoError(t, h.m.LoadResources(nil))
	require.NoError(t, h.m.LoadResources(limit))
	assert.Equal(t, int64(1), h.m.InFlight("db"))
	_, err = h.m.Enter("db")
	assert.ErrorIs(t, err, breaker.ErrConcurrencyLimit, "the first call is still in flight")

	first.Exit()
	assert.Equal(t, int64(0), h.m.InFlight("db"))
	second, err := h.m.Enter("db")
	require.NoError(t, err)
	second.Exit()
}
