package breaker_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
)

// This file tests a breaker while HALF_OPEN: the probe it admits and how each strategy
// judges it, the calls rejected while it runs, its timeout, runs of ProbeNum probes, and a
// probe lost to another breaker of the resource.

// Each strategy judges its probe by what it measures.
func TestProbeJudgement(t *testing.T) {
	tests := []struct {
		name      string
		give      breaker.Rule
		probeRT   time.Duration
		probeErr  error
		wantState breaker.State
	}{
		{"slow: fast probe with an error succeeds", slowRatio(1, 1), 50 * time.Millisecond, errDown, breaker.Closed},
		{"slow: slow probe without error fails", slowRatio(1, 1), 51 * time.Millisecond, nil, breaker.Open},
		{"error ratio: slow probe without error succeeds", errorRatio(1, 1), time.Second, nil, breaker.Closed},
		{"error ratio: fast probe with an error fails", errorRatio(1, 1), 0, errDown, breaker.Open},
		{"error count: probe with an error fails", errorCount(1, 1), 0, errDown, breaker.Open},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, tt.give)
			require.NoError(t, h.complete("svc", time.Second, errDown)) // trips every rule above
			require.Equal(t, breaker.Open, h.state("svc", 0))
			h.clock.Advance(5 * time.Second)
			require.NoError(t, h.complete("svc", tt.probeRT, tt.probeErr))
			assert.Equal(t, tt.wantState, h.state("svc", 0))
		})
	}
}

// A successful probe empties the window: one failure just after it does not join the five
// that tripped the breaker.
func TestProbeSuccessEmptiesWindow(t *testing.T) {
	r := errorCount(5, 1)
	r.StatInterval = 60 * time.Second
	h := newHarness(t, r)
	h.completeN("svc", 5, errDown)
	require.Equal(t, breaker.Open, h.state("svc", 0))

	h.at(5 * time.Second)
	h.completeN("svc", 1, nil)
	assert.Equal(t, breaker.Closed, h.state("svc", 0))

	h.at(5*time.Second + 20*time.Millisecond)
	h.completeN("svc", 1, errDown)
	assert.Equal(t, breaker.Closed, h.state("svc", 0))
	assert.Equal(t, []string{tripped, probing, recovered}, h.events.transitions())
}

// A failed probe reopens the breaker with a new retry time counted from its completion.
func TestProbeFailureSetsNewRetryTime(t *testing.T) {
	h := newHarness(t, errorCount(1, 1))
	h.completeN("svc", 1, errDown)
	h.at(5 * time.Second)
	require.NoError(t, h.complete("svc", 2*time.Second, errDown)) // the probe ends at 7s
	assert.Equal(t, breaker.Open, h.state("svc", 0))
	assert.Equal(t, []string{tripped, probing, reopened}, h.events.transitions())

	h.at(12*time.Second - 1)
	assert.ErrorIs(t, h.complete("svc", 0, nil), breaker.ErrOpen)
	h.at(12 * time.Second)
	assert.NoError(t, h.complete("svc", 0, nil))
	assert.Equal(t, breaker.Closed, h.state("svc", 0))
}

// A probe that runs past ProbeTimeout counts as failed; its late completion is ignored.
func TestProbeTimeout(t *testing.T) {
	r := errorCount(1, 1)
	r.ProbeTimeout = time.Second
	h := newHarness(t, r)
	h.completeN("svc", 1, errDown)
	h.at(5 * time.Second)
	probe, err := h.m.Enter("svc")
	require.NoError(t, err)

	h.at(6*time.Second - 1)
	assert.ErrorIs(t, h.complete("svc", 0, nil), breaker.ErrOpen)
	assert.Equal(t, breaker.HalfOpen, h.state("svc", 0))

	h.at(6 * time.Second) // the first call at the deadline finds the breaker OPEN again
	err = h.complete("svc", 0, nil)
	var be *breaker.BlockError
	require.ErrorAs(t, err, &be)
	assert.Equal(t, breaker.Open, be.State)
	assert.Equal(t, h.clock.Now().Add(5*time.Second), be.RetryAt)
	assert.Equal(t, breaker.Open, h.state("svc", 0))
	last := h.events.last()
	assert.Equal(t, breaker.ProbeTimedOut, last.Reason)
	assert.Equal(t, h.clock.Now(), last.At)

	probe.Exit() // late: ignored
	assert.Equal(t, breaker.Open, h.state("svc", 0))
	assert.Equal(t, []string{tripped, probing, "HALF_OPEN->OPEN ProbeTimedOut"}, h.events.transitions())

	h.at(11 * time.Second)
	assert.NoError(t, h.complete("svc", 0, nil))
	assert.Equal(t, breaker.Closed, h.state("svc", 0))
}

// With no call in between, a probe completing after its deadline counts as timed out.
func TestProbeCompletingAfterDeadline(t *testing.T) {
	h := newHarness(t, errorCount(1, 1)) // ProbeTimeout defaults to RetryTimeout, 5s
	h.completeN("svc", 1, errDown)
	h.at(5 * time.Second)
	require.NoError(t, h.complete("svc", 5*time.Second, nil))
	assert.Equal(t, breaker.Open, h.state("svc", 0))
	assert.Equal(t, breaker.ProbeTimedOut, h.events.last().Reason)
}

// While a probe is in flight, a rejected call's RetryAt is never in the past: it is at least
// one bucket of the rule's window away, and no later than the probe's deadline.
func TestRetryAtWhileProbing(t *testing.T) {
	h := newHarness(t, errorCount(1, 1)) // a 1s window of 10 buckets, RetryTimeout 5s
	h.completeN("svc", 1, errDown)
	h.at(5*time.Second + 30*time.Millisecond)
	probe, err := h.m.Enter("svc")
	require.NoError(t, err)
	deadline := h.clock.Now().Add(5 * time.Second)

	for _, offset := range []time.Duration{0, 70 * time.Millisecond, 150 * time.Millisecond, 4990 * time.Millisecond} {
		h.at(5*time.Second + 30*time.Millisecond + offset)
		var be *breaker.BlockError
		require.ErrorAs(t, h.complete("svc", 0, nil), &be)
		now := h.clock.Now()
		assert.False(t, be.RetryAt.Before(now.Add(100*time.Millisecond)) && be.RetryAt.Before(deadline),
			"at +%v: RetryAt %v is less than a bucket away", offset, be.RetryAt.Sub(now))
		assert.False(t, be.RetryAt.After(deadline), "at +%v: after the probe's deadline", offset)
		assert.True(t, be.RetryAt.After(now), "at +%v: RetryAt is not after the rejection", offset)
	}
	probe.Exit()
}

// Twenty callers that each sleep until RetryAt while a probe runs make a few attempts each
// bucket, not a spin: over 250ms, at most one attempt per caller per bucket.
func TestRetryLoopDoesNotSpinWhileProbing(t *testing.T) {
	h := newHarness(t, errorCount(1, 1))
	h.completeN("svc", 1, errDown)
	h.at(5 * time.Second)
	probe, err := h.m.Enter("svc")
	require.NoError(t, err)
	start := h.clock.Now()
	end := start.Add(250 * time.Millisecond)

	wake := make([]time.Time, 20) // when each caller tries next
	for i := range wake {
		wake[i] = start
	}
	attempts := 0
	for {
		next := 0
		for i := range wake {
			if wake[i].Before(wake[next]) {
				next = i
			}
		}
		if wake[next].After(end) {
			break
		}
		h.clock.Set(wake[next])
		attempts++
		var be *breaker.BlockError
		require.ErrorAs(t, h.complete("svc", 0, nil), &be)
		require.True(t, be.RetryAt.After(h.clock.Now()), "RetryAt is in the past: the caller would spin")
		wake[next] = be.RetryAt
	}
	t.Logf("%d attempts by 20 callers in 250ms", attempts)
	assert.LessOrEqual(t, attempts, 20*4, "at most one attempt per caller per bucket")
	probe.Exit()
}

// With ProbeNum 3, three probes in a row, one at a time, close the breaker; observers see
// OPEN → HALF_OPEN once and HALF_OPEN → CLOSED once.
func TestProbeNumThreeInARow(t *testing.T) {
	rule := errorCount(1, 1)
	rule.ProbeNum = 3
	h := newHarness(t, rule)
	h.completeN("svc", 1, errDown)
	h.clock.Advance(5 * time.Second)
	for i := 1; i <= 3; i++ {
		probe, err := h.m.Enter("svc")
		require.NoError(t, err, "probe %d", i)
		_, err = h.m.Enter("svc")
		assert.ErrorIs(t, err, breaker.ErrOpen, "while probe %d is in flight", i)
		probe.Exit()
		if i < 3 {
			assert.Equal(t, breaker.HalfOpen, h.state("svc", 0), "after probe %d", i)
			assert.True(t, h.m.Breakers("svc")[0].Stats().ProbeDeadline.IsZero(), "no probe in flight")
		}
	}
	assert.Equal(t, []string{tripped, probing, recovered}, h.events.transitions())
}

// With ProbeNum 2, a failed probe in the middle of a run reopens the breaker, and the next run
// starts from the first probe again.
func TestProbeNumFailureRestartsTheRun(t *testing.T) {
	rule := errorCount(1, 1)
	rule.ProbeNum = 2
	h := newHarness(t, rule)
	h.completeN("svc", 1, errDown)
	h.clock.Advance(5 * time.Second)
	require.NoError(t, h.complete("svc", 0, nil))
	require.NoError(t, h.complete("svc", 0, errDown))
	assert.Equal(t, []string{tripped, probing, reopened}, h.events.transitions())
	h.clock.Advance(5 * time.Second)
	require.NoError(t, h.complete("svc", 0, nil))
	assert.Equal(t, breaker.HalfOpen, h.state("svc", 0), "one success of two")
	require.NoError(t, h.complete("svc", 0, nil))
	assert.Equal(t, breaker.Closed, h.state("svc", 0))
}

// With ProbeNum 2, a probe between two of a run times out like any other, and a blocked one
// returns the breaker to OPEN with the retry time unchanged.
func TestProbeNumTimeoutAndBlock(t *testing.T) {
	rule := errorCount(1, 1)
	rule.ProbeNum = 2
	rule.ProbeTimeout = time.Second
	h := newHarness(t, rule)
	h.completeN("svc", 1, errDown)
	h.clock.Advance(5 * time.Second)
	require.NoError(t, h.complete("svc", 0, nil))
	_, err := h.m.Enter("svc") // the second probe, never exited
	require.NoError(t, err)
	h.clock.Advance(time.Second)
	assert.ErrorIs(t, h.complete("svc", 0, nil), breaker.ErrOpen)
	assert.Equal(t, []string{tripped, probing, "HALF_OPEN->OPEN ProbeTimedOut"}, h.events.transitions())
}

// Under -race, with ProbeNum 5: for each probe of a run of 5, 32 goroutines race to enter at
// once while the winner is still in flight: exactly one gets in each time, and the fifth
// success closes.
func TestProbeNumOneInFlightUnderConcurrency(t *testing.T) {
	rule := errorCount(1, 1)
	rule.ProbeNum = 5
	for round := 0; round < 20; round++ {
		h := newHarness(t, rule)
		h.completeN("svc", 1, errDown)
		h.clock.Advance(5 * time.Second)
		for probe := 1; probe <= 5; probe++ {
			admitted := make(chan *breaker.Entry, 32)
			var wg sync.WaitGroup
			for g := 0; g < 32; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if e, err := h.m.Enter("svc"); err == nil {
						admitted <- e
					}
				}()
			}
			wg.Wait()
			close(admitted)
			require.Len(t, admitted, 1, "round %d, probe %d", round, probe)
			(<-admitted).Exit()
		}
		require.Equal(t, []string{tripped, probing, recovered}, h.events.transitions(), "round %d", round)
	}
}

// A call that loses a probe is judged by the breaker as it stands now. Two breakers of one
// resource are due; the call takes the first one's probe, and an observer, running on the
// call's goroutine as that probe is taken, acts before the call reaches the second. The call is
// then never rejected with a RetryAt in the past, and a breaker that admits it counts it.
func TestLostProbeIsJudgedAsTheBreakerStandsNow(t *testing.T) {
	setup := func(t *testing.T, second breaker.Rule) (*harness, breaker.Rule) {
		first := errorCount(1, 1)
		second.RetryTimeout = 5*time.Second + time.Millisecond // another rule, due at the same step
		h := newHarness(t, first, second)
		h.completeN("svc", 1, errDown) // trips both
		h.at(10 * time.Second)
		return h, first
	}
	onProbe := func(h *harness, rule breaker.Rule, act func()) {
		done := false
		h.m.AddObserver(breaker.ObserverFunc(func(c breaker.StateChange) {
			if c.Reason == breaker.RetryTimeoutElapsed && c.Rule == rule && !done {
				done = true
				act()
			}
		}))
	}

	t.Run("reset meanwhile: admitted, and counted", func(t *testing.T) {
		h, first := setup(t, errorRatio(0.5, 1))
		onProbe(h, first, func() { h.m.Reset("svc") })
		require.NoError(t, h.complete("svc", 0, nil), "both breakers are CLOSED: the call passes")
		st := h.m.Breakers("svc")[1].Stats()
		assert.Equal(t, breaker.Closed, st.State)
		assert.Equal(t, uint64(1), st.Total, "the second breaker counts the call it admitted")
	})
	t.Run("closed meanwhile by another probe, ramping: held back as the ramp says", func(t *testing.T) {
		second := errorCount(1, 1)
		second.RampUp = time.Minute
		h, first := setup(t, second)
		onProbe(h, first, func() {
			_, err := h.m.Enter("svc") // the first breaker is HALF_OPEN: rejected, but ...
			require.Error(t, err)
			b := h.m.Breakers("svc")[1]
			rival := breaker.NewRival(h.m)
			require.True(t, rival.Pass(b), "... a caller takes the second breaker's probe")
			rival.Complete(b, nil) // which succeeds: CLOSED, ramping up
			require.True(t, b.Stats().RampingUp)
			for range 2 { // the ramp's first bucket has the probe's success: it admits 1.5 of it
				require.True(t, breaker.NewRival(h.m).Pass(b))
			}
		})
		err := h.complete("svc", 0, nil)
		var be *breaker.BlockError
		require.ErrorAs(t, err, &be)
		assert.ErrorIs(t, err, breaker.ErrRampingUp)
		assert.Equal(t, breaker.Closed, be.State)
		assert.True(t, be.RetryAt.After(h.clock.Now()), "RetryAt %v is not after the rejection", be.RetryAt)
		assert.Equal(t, breaker.Open, h.state("svc", 0), "the first breaker's probe was given back")
	})
	t.Run("next probe of a run due meanwhile: the call takes it", func(t *testing.T) {
		second := errorCount(1, 1)
		second.ProbeNum = 2
		h, first := setup(t, second)
		onProbe(h, first, func() {
			b := h.m.Breakers("svc")[1]
			rival := breaker.NewRival(h.m)
			require.True(t, rival.Pass(b))
			rival.Complete(b, nil) // the first probe of two succeeds: HALF_OPEN, between probes
		})
		probe, err := h.m.Enter("svc")
		require.NoError(t, err, "the call is the second breaker's next probe")
		probe.Exit()
		assert.Equal(t, breaker.Closed, h.state("svc", 0))
		assert.Equal(t, breaker.Closed, h.state("svc", 1), "its success is the second of the run")
	})
}

// With ProbeNum 2, a probe between two of a run that a later slot blocks returns the breaker
// to OPEN with its retry time unchanged: the next call probes at once, and the run starts
// over, so two more successes close it.
func TestProbeNumBlockedProbeKeepsTheRetryTime(t *testing.T) {
	rule := errorCount(1, 1)
	rule.ProbeNum = 2
	h := newHarness(t)
	slot := &toggleSlot{}
	h.m = breaker.NewManager(breaker.WithClock(h.clock), breaker.WithSlots(slot))
	h.m.AddObserver(h.events)
	require.NoError(t, h.m.LoadRules([]breaker.Rule{rule}))
	h.completeN("svc", 1, errDown)
	retryAt := h.clock.Now().Add(5 * time.Second)
	h.clock.Advance(5 * time.Second)
	require.NoError(t, h.complete("svc", 0, nil), "the first probe of the run")

	slot.on = true
	assert.ErrorIs(t, h.complete("svc", 0, nil), errSlotBlocks, "the second probe, blocked")
	assert.Equal(t, []string{tripped, probing, "HALF_OPEN->OPEN ProbeBlocked"}, h.events.transitions())
	st := h.m.Breakers("svc")[0].Stats()
	assert.Equal(t, breaker.Open, st.State)
	assert.Equal(t, retryAt, st.RetryAt, "the retry time is not pushed back")

	slot.on = false
	require.NoError(t, h.complete("svc", 0, nil), "a probe at once")
	assert.Equal(t, breaker.HalfOpen, h.state("svc", 0), "the run started over")
	require.NoError(t, h.complete("svc", 0, nil))
	assert.Equal(t, breaker.Closed, h.state("svc", 0))
}
