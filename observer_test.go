package breaker_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakertest"
)

// Every observer hears each transition once, in registration order, after the state changed.
func TestObserversInOrderAfterTheChange(t *testing.T) {
	h := newHarness(t, errorCount(1, 1))
	var order []string
	var seen []breaker.State
	h.m.AddObserver(breaker.ObserverFunc(func(c breaker.StateChange) {
		order = append(order, "first")
		seen = append(seen, h.m.Breakers(c.Resource)[0].State())
	}))
	h.m.AddObserver(breaker.ObserverFunc(func(breaker.StateChange) { order = append(order, "second") }))

	h.at(time.Second)
	h.completeN("svc", 1, errDown)
	assert.Equal(t, []string{"first", "second"}, order)
	assert.Equal(t, []breaker.State{breaker.Open}, seen)

	c := h.events.last()
	assert.Equal(t, "svc", c.Resource)
	assert.Equal(t, errorCount(1, 1), c.Rule)
	assert.Equal(t, breaker.Closed, c.From)
	assert.Equal(t, breaker.Open, c.To)
	assert.Equal(t, breaker.ThresholdExceeded, c.Reason)
	assert.Equal(t, 1.0, c.Snapshot)
	assert.Equal(t, h.clock.Now(), c.At)
}

// Observers run with no library lock held: they may read, reload and add observers.
func TestObserverMayCallTheManager(t *testing.T) {
	h := newHarness(t, errorCount(1, 1))
	reloaded := false
	h.m.AddObserver(breaker.ObserverFunc(func(c breaker.StateChange) {
		_ = h.m.Rules()
		_ = h.m.Breakers(c.Resource)[0].State()
		h.m.AddObserver(breaker.ObserverFunc(func(breaker.StateChange) {}))
		if c.Reason == breaker.ThresholdExceeded && !reloaded {
			reloaded = true
			relaxed := errorCount(10, 1)
			relaxed.StatInterval = 2 * time.Second                     // a new window: a new breaker
			require.NoError(t, h.m.LoadRules([]breaker.Rule{relaxed})) // reports RuleChanged, re-entering
		}
	}))
	h.completeN("svc", 1, errDown)
	assert.Equal(t, []string{tripped, "OPEN->CLOSED RuleChanged"}, h.events.transitions())
	assert.Equal(t, breaker.Closed, h.state("svc", 0))
}

// A panicking observer is recovered and logged; the others and the caller go on.
func TestPanickingObserver(t *testing.T) {
	var logs bytes.Buffer
	h := newHarness(t)
	h.m = breaker.NewManager(breaker.WithClock(h.clock), breaker.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	h.m.AddObserver(breaker.ObserverFunc(func(breaker.StateChange) { panic("observer broke") }))
	h.m.AddObserver(h.events)
	require.NoError(t, h.m.LoadRules([]breaker.Rule{errorCount(1, 1)}))

	assert.NotPanics(t, func() { h.completeN("svc", 1, errDown) })
	assert.Equal(t, []string{tripped}, h.events.transitions())
	assert.Equal(t, breaker.Open, h.state("svc", 0))
	assert.Contains(t, logs.String(), "observer panicked")
	assert.Contains(t, logs.String(), "observer broke")
}

// The remove function AddObserver returns stops further calls; calling it twice is harmless.
func TestRemoveObserver(t *testing.T) {
	h := newHarness(t, errorCount(1, 1))
	calls := 0
	remove := h.m.AddObserver(breaker.ObserverFunc(func(breaker.StateChange) { calls++ }))
	other := &recorder{}
	h.m.AddObserver(other)
	h.completeN("svc", 1, errDown)
	require.Equal(t, 1, calls)

	remove()
	remove()
	h.at(5 * time.Second)
	h.completeN("svc", 1, nil)
	assert.Equal(t, 1, calls)
	assert.Len(t, other.all(), 3, "the other observer is still there")
}

// Removing a rule and adding it back restarts Generation, but Seq, which increases across the
// whole Manager, keeps increasing.
func TestSeqIncreasesAcrossReloads(t *testing.T) {
	h := newHarness(t, errorCount(1, 1))
	h.completeN("svc", 1, errDown) // OPEN, generation 1
	require.NoError(t, h.m.LoadRules(nil))
	require.NoError(t, h.m.LoadRules([]breaker.Rule{errorCount(1, 1)}))
	h.completeN("svc", 1, errDown) // OPEN again, generation 1 of the new breaker

	all := h.events.all()
	require.Len(t, all, 3)
	assert.Equal(t, []uint64{1, 2, 1}, []uint64{all[0].Generation, all[1].Generation, all[2].Generation})
	assert.Less(t, all[0].Seq, all[1].Seq)
	assert.Less(t, all[1].Seq, all[2].Seq)
	assert.NotZero(t, all[0].Seq)
}

// Cause before effect: a call observer and a state observer writing to one stream hear of a
// call before the transitions its outcome makes, on the same goroutine: a call that trips the
// breaker, and a probe that closes it; and of a call a concurrency limit blocks after it took
// a probe before the probe goes back. What a call finds due as it arrives (its retry time, a
// probe past its deadline) is reported as the call meets it, before the call is heard of.
func TestCallIsHeardBeforeTheTransitionItMakes(t *testing.T) {
	var stream []string
	clock := breakertest.NewClock()
	m := breaker.NewManager(breaker.WithClock(clock), breaker.WithCallObserver(func(c breaker.CallInfo) {
		if c.Blocked != nil {
			stream = append(stream, "call blocked")
		} else {
			stream = append(stream, "call "+c.Outcome.String())
		}
	}))
	m.AddObserver(breaker.ObserverFunc(func(c breaker.StateChange) {
		stream = append(stream, fmt.Sprintf("%v->%v %v", c.From, c.To, c.Reason))
	}))
	rule := errorCount(1, 1)
	rule.ProbeTimeout = time.Second
	require.NoError(t, m.LoadRules([]breaker.Rule{rule}))
	ctx := context.Background()

	require.ErrorIs(t, m.Do(ctx, "svc", func(context.Context) error { return errDown }), errDown)
	assert.Equal(t, []string{"call Failure", tripped}, stream)

	stream = nil
	clock.Advance(5 * time.Second)
	probe, err := m.Enter("svc")
	require.NoError(t, err)
	clock.Advance(time.Second) // the probe's deadline
	assert.ErrorIs(t, m.Do(ctx, "svc", succeed), breaker.ErrOpen)
	assert.Equal(t, []string{probing, "HALF_OPEN->OPEN ProbeTimedOut", "call blocked"}, stream)
	probe.Exit()

	stream = nil
	require.NoError(t, m.LoadResources(map[string]breaker.ResourceConfig{"svc": {MaxConcurrency: 1}}))
	clock.Advance(5 * time.Second)
	inFlight, err := m.EnterContext(ctx, "svc") // the probe, which holds the only place
	require.NoError(t, err)
	clock.Advance(time.Second)
	assert.ErrorIs(t, m.Do(ctx, "svc", succeed), breaker.ErrOpen, "its probe timed out")
	clock.Advance(5 * time.Second)
	assert.ErrorIs(t, m.Do(ctx, "svc", succeed), breaker.ErrConcurrencyLimit, "took the probe, then the limit")
	inFlight.Exit()
	assert.Equal(t, []string{probing, "HALF_OPEN->OPEN ProbeTimedOut", "call blocked",
		probing, "call blocked", "HALF_OPEN->OPEN ProbeBlocked", "call Success"}, stream)

	stream = nil
	require.NoError(t, m.Do(ctx, "svc", succeed))
	assert.Equal(t, []string{probing, "call Success", recovered}, stream)
}
