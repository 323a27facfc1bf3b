package breaker_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakertest"
)

// An identical rule keeps its breaker, state, retry time and window; only ID may differ.
func TestReloadKeepsIdenticalRule(t *testing.T) {
	open := errorCount(1, 1)
	open.ID = "first"
	h := newHarness(t, open)
	h.completeN("svc", 1, errDown)
	before := h.m.Breakers("svc")[0]
	h.events.reset()

	relabeled := open
	relabeled.ID = "second"
	require.NoError(t, h.m.LoadRules([]breaker.Rule{relabeled}))
	after := h.m.Breakers("svc")[0]
	assert.Same(t, before, after)
	assert.Equal(t, breaker.Open, after.State())
	assert.Equal(t, "second", after.Rule().ID)
	assert.Empty(t, h.events.transitions())

	var be *breaker.BlockError
	require.ErrorAs(t, h.complete("svc", 0, nil), &be)
	assert.Equal(t, "second", be.Rule.ID, "a rejection names the rule as reloaded")

	h.at(5*time.Second - 1)
	assert.ErrorIs(t, h.complete("svc", 0, nil), breaker.ErrOpen, "retry time unchanged")
	h.at(5 * time.Second)
	assert.NoError(t, h.complete("svc", 0, nil))
}

// The window survives a reload too.
func TestReloadKeepsWindow(t *testing.T) {
	r := errorCount(3, 1)
	h := newHarness(t, r)
	h.completeN("svc", 2, errDown)
	other := breaker.Rule{Resource: "other", Strategy: breaker.ErrorRatio, Threshold: 0.5, RetryTimeout: time.Second}
	require.NoError(t, h.m.LoadRules([]breaker.Rule{other, r}))
	h.completeN("svc", 1, errDown)
	assert.Equal(t, breaker.Open, h.state("svc", 0))
}

// A changed or removed rule's breaker is dropped; observers hear of the ones not CLOSED.
func TestReloadDropsChangedRules(t *testing.T) {
	a := errorCount(1, 1)
	b := slowRatio(1, 1)
	c := breaker.Rule{Resource: "quiet", Strategy: breaker.ErrorRatio, Threshold: 0.5, RetryTimeout: time.Second}
	h := newHarness(t, a, b, c)
	require.NoError(t, h.complete("svc", time.Second, errDown)) // trips a and b
	require.Equal(t, breaker.Open, h.state("svc", 0))
	require.Equal(t, breaker.Open, h.state("svc", 1))
	oldA := h.m.Breakers("svc")[0]
	h.events.reset()

	changed := a
	changed.StatInterval = 2 * time.Second
	require.NoError(t, h.m.LoadRules([]breaker.Rule{changed})) // a's window changed, b and c removed

	got := h.events.all()
	require.Len(t, got, 2, "c was CLOSED: no event")
	for i, want := range []breaker.Rule{a, b} {
		assert.Equal(t, want, got[i].Rule)
		assert.Equal(t, breaker.Open, got[i].From)
		assert.Equal(t, breaker.Closed, got[i].To)
		assert.Equal(t, breaker.RuleChanged, got[i].Reason)
		assert.Equal(t, h.clock.Now(), got[i].At)
	}
	assert.Equal(t, breaker.Closed, oldA.State(), "the dropped breaker is CLOSED")
	bs := h.m.Breakers("svc")
	require.Len(t, bs, 1)
	assert.NotSame(t, oldA, bs[0])
	assert.Equal(t, breaker.Closed, bs[0].State())
	assert.Equal(t, []breaker.Rule{changed}, h.m.Rules())
	assert.Nil(t, h.m.Breakers("quiet"))
	assert.NoError(t, h.complete("svc", 0, nil))
}

// Calls that entered under the old rules exit without error, panic or effect.
func TestReloadWithCallsInFlight(t *testing.T) {
	h := newHarness(t, errorCount(1, 1), slowRatio(1, 1))
	inFlight, err := h.m.Enter("svc")
	require.NoError(t, err)

	require.NoError(t, h.complete("svc", time.Second, errDown)) // trips both
	h.clock.Advance(5 * time.Second)
	probe, err := h.m.Enter("svc")
	require.NoError(t, err)
	h.events.reset()

	otherWindow := errorCount(2, 1)
	otherWindow.BucketCount = 5
	require.NoError(t, h.m.LoadRules([]breaker.Rule{otherWindow}))
	assert.Len(t, h.events.all(), 2, "both dropped breakers were HALF_OPEN")
	h.events.reset()

	inFlight.SetError(errDown)
	probe.SetError(errDown)
	assert.NotPanics(t, inFlight.Exit)
	assert.NotPanics(t, probe.Exit)
	assert.Empty(t, h.events.all(), "dropped breakers report nothing more")
	assert.Equal(t, breaker.Closed, h.state("svc", 0))
	h.completeN("svc", 1, errDown)
	assert.Equal(t, breaker.Closed, h.state("svc", 0), "old calls did not count in the new breaker")
}

// A default spelled out is the same rule: the breaker is kept, and reports the new spelling.
func TestReloadDefaultsSpelledOut(t *testing.T) {
	r := errorCount(6, 0)
	h := newHarness(t, r)
	h.completeN("svc", 6, errDown)
	before := h.m.Breakers("svc")[0]
	require.Equal(t, breaker.Open, before.State())

	spelled := r
	spelled.MinRequestAmount = 5
	spelled.StatInterval = time.Second
	spelled.BucketCount = 10
	spelled.ProbeTimeout = r.RetryTimeout
	spelled.MaxAllowedRT = time.Second // ignored by ErrorCount
	require.NoError(t, h.m.LoadRules([]breaker.Rule{spelled}))
	after := h.m.Breakers("svc")[0]
	assert.Same(t, before, after)
	assert.Equal(t, breaker.Open, after.State())
	assert.Equal(t, spelled, after.Rule())

	err := h.m.LoadRules([]breaker.Rule{r, spelled})
	assert.ErrorIs(t, err, breaker.ErrInvalidRule, "the two are duplicates")
}

// Raising the threshold of an OPEN rule mid-incident keeps its breaker OPEN until its retry
// time: the dependency is not flooded, observers hear nothing, and the new threshold applies
// from the next window.
func TestReloadTuningKeepsOpenBreaker(t *testing.T) {
	h := newHarness(t, errorCount(1, 1))
	h.completeN("svc", 1, errDown)
	before := h.m.Breakers("svc")[0]
	require.Equal(t, breaker.Open, before.State())
	h.events.reset()

	tuned := errorCount(3, 1)
	tuned.ProbeNum = 1
	require.NoError(t, h.m.LoadRules([]breaker.Rule{tuned}))
	assert.Same(t, before, h.m.Breakers("svc")[0])
	assert.Equal(t, breaker.Open, before.State())
	assert.Empty(t, h.events.all())
	var be *breaker.BlockError
	require.ErrorAs(t, h.complete("svc", 0, nil), &be, "still OPEN")
	assert.Equal(t, 3.0, be.Rule.Threshold, "the rejection names the tuned rule")

	h.at(5 * time.Second)
	require.NoError(t, h.complete("svc", 0, nil), "the probe at the old retry time")
	assert.Equal(t, []string{probing, recovered}, h.events.transitions())
	h.completeN("svc", 2, errDown)
	assert.Equal(t, breaker.Closed, before.State(), "two failures no longer trip")
	h.completeN("svc", 1, errDown)
	assert.Equal(t, breaker.Open, before.State(), "the third does")
}

// A probe in flight stays the probe through a reload that tunes its rule, also one that
// shortens ProbeTimeout below the time the probe has left.
func TestReloadTuningKeepsProbe(t *testing.T) {
	h := newHarness(t, errorCount(1, 1))
	h.completeN("svc", 1, errDown)
	h.at(5 * time.Second)
	probe, err := h.m.Enter("svc")
	require.NoError(t, err)
	h.events.reset()

	tuned := errorCount(2, 1)
	tuned.ProbeTimeout = time.Second
	require.NoError(t, h.m.LoadRules([]breaker.Rule{tuned}))
	h.clock.Advance(2 * time.Second) // within the old ProbeTimeout (5s), past the new one
	assert.ErrorIs(t, h.complete("svc", 0, nil), breaker.ErrOpen, "the probe is still in flight")
	probe.Exit()
	assert.Equal(t, []string{recovered}, h.events.transitions())
}

// Reordering a resource's rules keeps each rule's breaker with it.
func TestReloadReorderKeepsBreakers(t *testing.T) {
	count, slow := errorCount(1, 1), slowRatio(1, 1)
	h := newHarness(t, count, slow)
	h.completeN("svc", 1, errDown) // trips the count rule only
	bs := h.m.Breakers("svc")
	require.Equal(t, []breaker.State{breaker.Open, breaker.Closed}, []breaker.State{bs[0].State(), bs[1].State()})
	h.events.reset()

	require.NoError(t, h.m.LoadRules([]breaker.Rule{slow, count}))
	after := h.m.Breakers("svc")
	assert.Same(t, bs[1], after[0])
	assert.Same(t, bs[0], after[1])
	assert.Equal(t, breaker.Open, after[1].State())
	assert.Empty(t, h.events.all())
}

// Two rules of one shape: each keeps its own breaker by identity, and a tuned one takes the
// breaker left over.
func TestReloadPairsIdenticalRulesFirst(t *testing.T) {
	strict, loose := errorCount(1, 1), errorCount(10, 1)
	h := newHarness(t, strict, loose)
	h.completeN("svc", 1, errDown) // trips the strict one
	bs := h.m.Breakers("svc")

	looser := errorCount(20, 1)
	require.NoError(t, h.m.LoadRules([]breaker.Rule{looser, strict}))
	after := h.m.Breakers("svc")
	assert.Same(t, bs[0], after[1], "the identical rule keeps its breaker, OPEN")
	assert.Equal(t, breaker.Open, after[1].State())
	assert.Same(t, bs[1], after[0], "the tuned one takes the other")
}

// ErrorCount's default MinRequestAmount is part of the rule's identity: MinRequestAmount 3
// spelled out is the same rule as {ErrorCount, Threshold 3}, and keeps its breaker.
func TestErrorCountDefaultMinimumIsPartOfIdentity(t *testing.T) {
	r := errorCount(3, 0)
	h := newHarness(t, r)
	before := h.m.Breakers("svc")[0]
	spelled := r
	spelled.MinRequestAmount = 3
	require.NoError(t, h.m.LoadRules([]breaker.Rule{spelled}))
	assert.Same(t, before, h.m.Breakers("svc")[0])
	assert.ErrorIs(t, h.m.LoadRules([]breaker.Rule{r, spelled}), breaker.ErrInvalidRule, "the two are one rule")
	five := r
	five.MinRequestAmount = 5
	require.NoError(t, h.m.LoadRules([]breaker.Rule{r, five}), "an explicit 5 is another rule")
}

// Given an OPEN breaker, when a reload gives its rule FastBuckets, FastThreshold and RampUp,
// then it keeps the breaker, OPEN and silent; the probe that closes it starts a ramp, whose
// held back calls name the rule as reloaded again. A reload that shortens RampUp ends the ramp
// in progress no later than the close plus the new RampUp, and one that takes RampUp away ends
// it at once: the next call passes, and observers hear nothing.
func TestReloadTuningProtection(t *testing.T) {
	h := newHarness(t, errorRatio(0.5, 5))
	h.completeN("svc", 5, errDown)
	before := h.m.Breakers("svc")[0]
	require.Equal(t, breaker.Open, before.State())
	h.events.reset()

	tuned := errorRatio(0.5, 5)
	tuned.FastBuckets, tuned.FastThreshold, tuned.RampUp = 2, 0.9, time.Minute
	require.NoError(t, h.m.LoadRules([]breaker.Rule{tuned}))
	assert.Same(t, before, h.m.Breakers("svc")[0])
	assert.Equal(t, breaker.Open, before.State())
	assert.Empty(t, h.events.all())

	h.at(5 * time.Second)
	require.NoError(t, h.complete("svc", 0, nil), "the probe")
	require.True(t, before.Stats().RampingUp)
	require.NoError(t, h.complete("svc", 0, errDown), "the ramp's first call, admitted, fails")
	require.ErrorIs(t, h.complete("svc", 0, nil), breaker.ErrRampingUp, "held back, naming the rule")
	h.events.reset()

	shorter := tuned
	shorter.ID, shorter.RampUp = "shorter", 50*time.Millisecond
	require.NoError(t, h.m.LoadRules([]breaker.Rule{shorter}))
	assert.Same(t, before, h.m.Breakers("svc")[0])
	assert.True(t, before.Stats().RampingUp, "within the new RampUp of the close")
	var be *breaker.BlockError
	require.ErrorAs(t, h.complete("svc", 0, nil), &be)
	assert.ErrorIs(t, be, breaker.ErrRampingUp)
	assert.Equal(t, "shorter", be.Rule.ID, "the held back call names the rule as reloaded")
	assert.Equal(t, breakertest.Start.Add(5*time.Second+50*time.Millisecond), be.RetryAt,
		"the ramp's new end, which comes before the next bucket")
	h.at(5*time.Second + 50*time.Millisecond)
	assert.False(t, before.Stats().RampingUp, "the ramp ended at the close plus the new RampUp")
	require.NoError(t, h.complete("svc", 0, nil))

	h = newHarness(t, tuned)
	h.completeN("svc", 5, errDown)
	h.at(5 * time.Second)
	require.NoError(t, h.complete("svc", 0, nil), "the probe")
	require.NoError(t, h.complete("svc", 0, errDown), "the ramp's first call, admitted, fails")
	require.ErrorIs(t, h.complete("svc", 0, nil), breaker.ErrRampingUp)
	h.events.reset()
	off := tuned
	off.RampUp = 0
	require.NoError(t, h.m.LoadRules([]breaker.Rule{off}))
	assert.False(t, h.m.Breakers("svc")[0].Stats().RampingUp)
	require.NoError(t, h.complete("svc", 0, nil), "RampUp 0: the next call passes")
	assert.Empty(t, h.events.all(), "observers hear nothing")
}

// A reload that changes StatCalls gives the rule a new breaker; one that changes only its
// threshold keeps the breaker and its window.
func TestStatCallsReload(t *testing.T) {
	h := newHarness(t, callsRule(0.5, 4))
	h.completeN("svc", 4, errDown)
	require.Equal(t, breaker.Open, h.state("svc", 0))
	require.NoError(t, h.m.LoadRules([]breaker.Rule{callsRule(0.75, 4)}))
	assert.Equal(t, breaker.Open, h.state("svc", 0), "tuned: kept")
	require.NoError(t, h.m.LoadRules([]breaker.Rule{callsRule(0.75, 8)}))
	assert.Equal(t, breaker.Closed, h.state("svc", 0), "a new window: a new breaker")
	assert.Equal(t, "OPEN->CLOSED RuleChanged", h.events.transitions()[1])
	assert.Equal(t, breaker.Stats{Rule: h.m.Breakers("svc")[0].Rule(), State: breaker.Closed, Generation: 0}, h.m.Breakers("svc")[0].Stats())
}
