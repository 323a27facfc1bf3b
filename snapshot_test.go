package breaker_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakertest"
)

// A Snapshot lists every resource the Manager holds something for, by name, each with its
// breakers' Stats and rules, the settings that apply to it and the key they come from, its
// calls in flight and its override: a resource with rules and settings of its own; one with
// rules, whose settings come from a "*" template setting, with a call in flight and an override;
// names a template rule made breakers for, one of them OPEN; and a name with only settings.
func TestSnapshotListsWhatAppliesToEachResource(t *testing.T) {
	h := newHarness(t)
	pay := errorCount(1, 1)
	pay.Resource = "pay"
	inv := slowRatio(1, 1)
	inv.Resource = "inv"
	cat := errorCount(1, 1)
	cat.Resource = "cat-*"
	require.NoError(t, h.m.LoadRules([]breaker.Rule{pay, inv, cat}))
	require.NoError(t, h.m.LoadResources(map[string]breaker.ResourceConfig{
		"*":    {Timeout: 500 * time.Millisecond, MaxConcurrency: 20},
		"inv":  {MaxConcurrency: 3},
		"only": {Force: breaker.ForceClosed},
	}))
	require.NoError(t, h.m.Do(context.Background(), "cat-1", succeed))
	require.ErrorIs(t, h.m.Do(context.Background(), "cat-2", fail), errDown) // trips cat-2
	inFlight, err := h.m.Enter("pay")
	require.NoError(t, err)
	defer inFlight.Exit()
	o, err := h.m.Override("pay", breaker.ForceOpen, time.Hour, "INC-7")
	require.NoError(t, err)

	snap := h.m.Snapshot()
	assert.Equal(t, h.clock.Now(), snap.At)
	assert.Equal(t, []breaker.Rule{pay, inv, cat}, snap.Rules)
	assert.Equal(t, map[string]breaker.ResourceConfig{"*": {Timeout: 500 * time.Millisecond, MaxConcurrency: 20},
		"inv": {MaxConcurrency: 3}, "only": {Force: breaker.ForceClosed}}, snap.Settings)
	assert.Equal(t, 2, snap.Templates.Resources)
	var names []string
	byName := map[string]breaker.ResourceStatus{}
	for _, r := range snap.Resources {
		names = append(names, r.Name)
		byName[r.Name] = r
	}
	assert.Equal(t, []string{"cat-1", "cat-2", "inv", "only", "pay"}, names, "sorted by name")
	assert.Same(t, &snap.Resources[2], snap.Resource("inv"))
	assert.Nil(t, snap.Resource("cat-3"), "a name the template never saw")

	p := byName["pay"]
	require.Len(t, p.Breakers, 1)
	assert.Equal(t, pay, p.Breakers[0].Rule)
	assert.Equal(t, breaker.ResourceConfig{Timeout: 500 * time.Millisecond, MaxConcurrency: 20,
		Force: breaker.ForceOpen}, p.Settings, "the template setting's, with the override's Force")
	assert.Equal(t, "*", p.SettingsFrom)
	assert.Equal(t, &o, p.Override)
	assert.Equal(t, int64(1), p.InFlight)
	assert.Empty(t, p.Template)

	i := byName["inv"]
	assert.Equal(t, breaker.ResourceConfig{MaxConcurrency: 3}, i.Settings)
	assert.Equal(t, "inv", i.SettingsFrom)
	assert.Nil(t, i.Override)

	c2 := byName["cat-2"]
	assert.Equal(t, "cat-*", c2.Template)
	require.Len(t, c2.Breakers, 1)
	assert.Equal(t, breaker.Open, c2.Breakers[0].State)
	assert.Equal(t, cat, c2.Breakers[0].Rule, "a template's breaker enforces the template's rule")
	assert.Equal(t, "*", c2.SettingsFrom)
	assert.Equal(t, breaker.Closed, byName["cat-1"].Breakers[0].State)

	only := byName["only"]
	assert.Empty(t, only.Breakers)
	assert.Equal(t, "only", only.SettingsFrom)
	assert.Equal(t, breaker.ForceClosed, only.Settings.Force)
}

// A Snapshot leaves out the overrides whose end has come and changes nothing: observers hear
// nothing from a read. The next change removes them, and observers hear them expire then. The
// calls to their resource already went by the settings under them.
func TestSnapshotSkipsExpiredOverrides(t *testing.T) {
	h := newOverrideHarness(t, 100, errorCount(1, 1))
	_, err := h.m.Override("svc", breaker.ForceOpen, time.Minute, "")
	require.NoError(t, err)
	h.clock.Advance(time.Minute)
	require.NoError(t, h.m.Do(context.Background(), "svc", succeed), "the override has ended")
	h.events.reset()
	snap := h.m.Snapshot()
	require.Len(t, snap.Resources, 1)
	assert.Nil(t, snap.Resources[0].Override)
	assert.Equal(t, breaker.Auto, snap.Resources[0].Settings.Force)
	assert.Empty(t, h.events.all(), "a read tells no one")
	require.NoError(t, h.m.LoadResources(nil))
	assert.Equal(t, []string{`svc "svc" expired`}, overrideNotes(t, h.events))
}

// Snapshots read while goroutines call, trip and reload never show a breaker's window with
// more bad calls than calls, nor a resource twice, nor a breaker under a rule its rules lack.
func TestSnapshotUnderConcurrency(t *testing.T) {
	h := newHarness(t, errorRatio(0.5, 2))
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if g == 0 && i%50 == 0 {
					_ = h.m.LoadRules([]breaker.Rule{errorRatio(0.5, 2), errorCount(float64(1+i%3), 1)})
				}
				if i%2 == 0 {
					_ = h.m.Do(context.Background(), "svc", fail)
				} else {
					_ = h.m.Do(context.Background(), "svc", succeed)
				}
			}
		}()
	}
	for range 200 {
		seen := map[string]bool{}
		snap := h.m.Snapshot()
		for _, r := range snap.Resources {
			assert.False(t, seen[r.Name], "%s listed twice", r.Name)
			seen[r.Name] = true
			for _, b := range r.Breakers {
				assert.LessOrEqual(t, b.Bad, b.Total)
				assert.Contains(t, snap.Rules, b.Rule, "one rule set")
			}
		}
	}
	close(stop)
	wg.Wait()
}

// gateClock is a fake clock that counts its readings and, once armed, holds the next reading
// until it is let go, telling when it has begun.
type gateClock struct {
	*breakertest.Clock
	reads   atomic.Int64
	mu      sync.Mutex
	arm     chan struct{} // closed to let the held reading go; nil: not armed
	holding chan struct{} // closed once a reading is held
}

func (c *gateClock) Now() time.Time {
	c.reads.Add(1)
	c.mu.Lock()
	release, holding := c.arm, c.holding
	c.arm = nil
	c.mu.Unlock()
	if release != nil {
		close(holding)
		<-release
	}
	return c.Clock.Now()
}

// hold arms the clock: the next reading waits for the returned release. held is closed once it
// waits.
func (c *gateClock) hold() (release func(), held <-chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.arm, c.holding = make(chan struct{}), make(chan struct{})
	arm := c.arm
	return func() { close(arm) }, c.holding
}

// Given a Manager with named and template breakers, then a Snapshot reads the user's Clock once
// (not once a breaker), and takes no lock while it does: with the Snapshot held in its reading,
// a template name's first call, a reload and an override go through.
func TestSnapshotReadsTheClockOnceAndHoldsNoLock(t *testing.T) {
	clock := &gateClock{Clock: breakertest.NewClock()}
	m := breaker.NewManager(breaker.WithClock(clock), breaker.WithLogger(slog.New(slog.DiscardHandler)))
	tmpl := errorCount(1, 1)
	tmpl.Resource = "t-*"
	rules := []breaker.Rule{errorCount(1, 1), slowRatio(1, 1), tmpl}
	require.NoError(t, m.LoadRules(rules))
	for i := range 50 {
		require.NoError(t, m.Do(context.Background(), fmt.Sprintf("t-%d", i), succeed))
	}
	before := clock.reads.Load()
	snap := m.Snapshot()
	assert.Equal(t, int64(1), clock.reads.Load()-before, "one reading for %d resources", len(snap.Resources))

	release, held := clock.hold()
	done := make(chan breaker.Snapshot)
	go func() { done <- m.Snapshot() }()
	<-held
	require.NoError(t, m.Do(context.Background(), "t-new", succeed), "a template name's first call")
	require.NoError(t, m.LoadRules(rules), "a reload")
	_, err := m.Override("svc", breaker.ForceClosed, time.Minute, "")
	require.NoError(t, err, "an override")
	release()
	snap = <-done
	assert.Len(t, snap.Resources, 52)
}
