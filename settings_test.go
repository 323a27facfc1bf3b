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

// blockOf returns err as a *BlockError, failing the test if it is not one.
func blockOf(t *testing.T, err error) *breaker.BlockError {
	t.Helper()
	var be *breaker.BlockError
	require.True(t, errors.As(err, &be), "want a *BlockError, got %v", err)
	return be
}

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
	assert.Equal(t, map[string]breaker.ResourceConfig{"svc": {Force: breaker.ForceOpen}}, h.m.Resources())
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

// Reset closes every breaker of the resource with an empty window; observers hear Reset
// from those that were not CLOSED.
func TestReset(t *testing.T) {
	open, closed := errorCount(1, 1), errorRatio(0.5, 4)
	h := newHarness(t, open, closed)
	h.completeN("svc", 1, errDown) // trips the count rule; the ratio rule holds 1 call
	require.Equal(t, uint64(1), h.m.Breakers("svc")[1].Stats().Total)
	h.events.reset()

	h.m.Reset("svc")
	assert.Equal(t, []string{"OPEN->CLOSED Reset"}, h.events.transitions())
	for i, b := range h.m.Breakers("svc") {
		st := b.Stats()
		assert.Equal(t, breaker.Closed, st.State, "breaker %d", i)
		assert.Zero(t, st.Total, "breaker %d: the window starts empty", i)
	}
	require.NoError(t, h.complete("svc", 0, nil))
	h.m.Reset("nothing") // no rules: nothing happens
	h.m.Reset("svc")     // all CLOSED: no event
	assert.Len(t, h.events.all(), 1)
}

// A call admitted before Reset does not count in the new window.
func TestResetMakesEarlierCallsStale(t *testing.T) {
	h := newHarness(t, errorCount(1, 1))
	e, err := h.m.Enter("svc")
	require.NoError(t, err)
	h.m.Reset("svc")
	e.SetError(errDown)
	e.Exit()
	assert.Equal(t, breaker.Closed, h.state("svc", 0))
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

// With a Timeout, fn's context has a deadline of at most admission + Timeout, and never later than the
// caller's own.
func TestTimeoutDeadline(t *testing.T) {
	m := breaker.NewManager()
	require.NoError(t, m.LoadResources(map[string]breaker.ResourceConfig{"svc": {Timeout: time.Minute}}))
	before := time.Now()
	var deadline time.Time
	require.NoError(t, m.Do(context.Background(), "svc", func(ctx context.Context) error {
		var ok bool
		deadline, ok = ctx.Deadline()
		require.True(t, ok)
		return nil
	}))
	assert.False(t, deadline.Before(before.Add(time.Minute)))
	assert.False(t, deadline.After(time.Now().Add(time.Minute)))

	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	want, _ := ctx.Deadline()
	require.NoError(t, m.Do(ctx, "svc", func(ctx context.Context) error {
		deadline, _ = ctx.Deadline()
		return nil
	}))
	assert.Equal(t, want, deadline, "the caller's earlier deadline stands")

	_, err := breaker.Execute(context.Background(), m, "other", func(ctx context.Context) (int, error) {
		_, ok := ctx.Deadline()
		assert.False(t, ok, "a resource without a Timeout gets the caller's context")
		return 0, nil
	})
	require.NoError(t, err)
}

// A dependency that hangs trips an ErrorRatio rule after MinRequestAmount calls have run
// into the timeout, through Do, a Resource handle and Enter with Entry.WithTimeout.
func TestTimeoutTripsOnAHang(t *testing.T) {
	hang := func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }
	h := newHarness(t, errorRatio(1, 3))
	require.NoError(t, h.m.LoadResources(map[string]breaker.ResourceConfig{"svc": {Timeout: 5 * time.Millisecond}}))
	assert.ErrorIs(t, h.m.Do(context.Background(), "svc", hang), context.DeadlineExceeded)
	assert.ErrorIs(t, h.m.Resource("svc").Do(context.Background(), hang), context.DeadlineExceeded)
	e, err := h.m.Enter("svc")
	require.NoError(t, err)
	ctx, cancel := e.WithTimeout(context.Background())
	e.SetError(hang(ctx))
	cancel()
	e.Exit()
	assert.Equal(t, []string{tripped}, h.events.transitions())
	assert.ErrorIs(t, h.m.Do(context.Background(), "svc", hang), breaker.ErrOpen)
}

// The RT of a call that ran into the timeout counts for SlowRequestRatio.
func TestTimeoutCountsAsSlow(t *testing.T) {
	h := newHarness(t, slowRatio(1, 2))
	require.NoError(t, h.m.LoadResources(map[string]breaker.ResourceConfig{"svc": {Timeout: 5 * time.Millisecond}}))
	for i := 0; i < 2; i++ {
		err := h.m.Do(context.Background(), "svc", func(ctx context.Context) error {
			<-ctx.Done()
			h.clock.Advance(100 * time.Millisecond) // the Manager's clock sees the wait
			return ctx.Err()
		})
		assert.ErrorIs(t, err, context.DeadlineExceeded)
	}
	assert.Equal(t, []string{tripped}, h.events.transitions())
}

// LoadResources validates everything first and changes nothing on error.
func TestLoadResourcesValidation(t *testing.T) {
	tests := []struct {
		name      string
		give      map[string]breaker.ResourceConfig
		wantField string
	}{
		{"empty name", map[string]breaker.ResourceConfig{"": {}}, "Resource"},
		{"template name", map[string]breaker.ResourceConfig{"api/*": {Timeout: time.Second}}, "Resource"},
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
			assert.Equal(t, before, m.Resources(), "nothing changed")
		})
	}
}

// Kind tells apart what blocked a call: a breaker, the force, the limit or a slot.
func TestBlockErrorKind(t *testing.T) {
	h := newHarness(t, errorCount(1, 1))
	h.completeN("svc", 1, errDown)
	assert.Equal(t, breaker.BlockedByBreaker, blockOf(t, h.complete("svc", 0, nil)).Kind())

	require.NoError(t, h.m.LoadResources(map[string]breaker.ResourceConfig{
		"svc": {Force: breaker.ForceOpen}, "limited": {MaxConcurrency: 1}}))
	assert.Equal(t, breaker.BlockedByForce, blockOf(t, h.complete("svc", 0, nil)).Kind())
	held, err := h.m.Enter("limited")
	require.NoError(t, err)
	_, err = h.m.Enter("limited")
	assert.Equal(t, breaker.BlockedByLimit, blockOf(t, err).Kind())
	held.Exit()

	m := breaker.NewManager(breaker.WithSlots(blockingSlot{}))
	_, err = m.Enter("any")
	assert.Equal(t, breaker.BlockedBySlot, blockOf(t, err).Kind())

	names := []string{}
	for _, k := range []breaker.BlockKind{breaker.BlockedByBreaker, breaker.BlockedByForce,
		breaker.BlockedByLimit, breaker.BlockedBySlot, 9} {
		names = append(names, k.String())
	}
	assert.Equal(t, []string{"open", "forced_open", "concurrency_limit", "slot", "BlockKind(9)"}, names)
}

// blockingSlot blocks every call.
type blockingSlot struct{}

func (blockingSlot) OnEntry(*breaker.Entry) error { return errors.New("no") }
func (blockingSlot) OnExit(*breaker.Entry)        {}

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
