package breaker_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
)

var errDown = errors.New("downstream failed")

func errorCount(threshold float64, minRequests uint64) breaker.Rule {
	return breaker.Rule{Resource: "svc", Strategy: breaker.ErrorCount, Threshold: threshold,
		MinRequestAmount: minRequests, RetryTimeout: 5 * time.Second}
}

func errorRatio(threshold float64, minRequests uint64) breaker.Rule {
	return breaker.Rule{Resource: "svc", Strategy: breaker.ErrorRatio, Threshold: threshold,
		MinRequestAmount: minRequests, RetryTimeout: 5 * time.Second}
}

func slowRatio(threshold float64, minRequests uint64) breaker.Rule {
	return breaker.Rule{Resource: "svc", Strategy: breaker.SlowRequestRatio, Threshold: threshold,
		MaxAllowedRT: 50 * time.Millisecond, MinRequestAmount: minRequests, RetryTimeout: 5 * time.Second}
}

// Worked examples of when each strategy trips, call by call, and the Snapshot it reports.
func TestTripExamples(t *testing.T) {
	t.Run("ErrorCount 3: the third error trips, Snapshot 3", func(t *testing.T) {
		h := newHarness(t, errorCount(3, 1))
		h.completeN("svc", 2, errDown)
		assert.Equal(t, breaker.Closed, h.state("svc", 0))
		h.completeN("svc", 1, errDown)
		assert.Equal(t, breaker.Open, h.state("svc", 0))
		assert.Equal(t, []string{tripped}, h.events.transitions())
		assert.Equal(t, 3.0, h.events.last().Snapshot)
	})
	t.Run("ErrorRatio 0.5, min 4: S,E,S,E trips after the fourth, Snapshot 0.5", func(t *testing.T) {
		h := newHarness(t, errorRatio(0.5, 4))
		for i, err := range []error{nil, errDown, nil} {
			require.NoError(t, h.complete("svc", 0, err))
			assert.Equal(t, breaker.Closed, h.state("svc", 0), "after call %d", i+1)
		}
		require.NoError(t, h.complete("svc", 0, errDown))
		assert.Equal(t, breaker.Open, h.state("svc", 0))
		assert.Equal(t, 0.5, h.events.last().Snapshot)
	})
	t.Run("ErrorRatio 0.5, min 5: E×4 stays CLOSED, then S makes 4/5 and trips", func(t *testing.T) {
		h := newHarness(t, errorRatio(0.5, 5))
		h.completeN("svc", 4, errDown)
		assert.Equal(t, breaker.Closed, h.state("svc", 0))
		h.completeN("svc", 1, nil)
		assert.Equal(t, breaker.Open, h.state("svc", 0))
		assert.Equal(t, 0.8, h.events.last().Snapshot)
	})
	t.Run("SlowRequestRatio 1.0, 50ms, min 3: three 60ms calls trip", func(t *testing.T) {
		h := newHarness(t, slowRatio(1.0, 3))
		for i := 0; i < 3; i++ {
			assert.Equal(t, breaker.Closed, h.state("svc", 0))
			require.NoError(t, h.complete("svc", 60*time.Millisecond, nil))
		}
		assert.Equal(t, breaker.Open, h.state("svc", 0))
		assert.Equal(t, 1.0, h.events.last().Snapshot)
	})
	t.Run("12 slow of 15 meets 0.8", func(t *testing.T) {
		r := slowRatio(0.8, 15)
		r.StatInterval = time.Minute
		h := newHarness(t, r)
		for i := 0; i < 3; i++ {
			require.NoError(t, h.complete("svc", 10*time.Millisecond, nil))
		}
		for i := 0; i < 12; i++ {
			assert.Equal(t, breaker.Closed, h.state("svc", 0), "after %d slow calls", i)
			require.NoError(t, h.complete("svc", 60*time.Millisecond, nil))
		}
		assert.Equal(t, breaker.Open, h.state("svc", 0))
		assert.Equal(t, 0.8, h.events.last().Snapshot)
	})
}

// CLOSED→OPEN just below, at and above each threshold, and the MinRequestAmount gate.
func TestTripBoundaries(t *testing.T) {
	tests := []struct {
		name     string
		give     breaker.Rule
		good     int // calls that succeed, first
		bad      int // then calls that fail (or are slow)
		wantOpen bool
	}{
		{"ErrorCount below", errorCount(5, 1), 0, 4, false},
		{"ErrorCount at", errorCount(5, 1), 0, 5, true},
		{"ErrorCount successes do not count", errorCount(5, 1), 100, 4, false},
		{"ErrorCount gated by MinRequestAmount", errorCount(2, 10), 0, 9, false},
		{"ErrorCount gate reached", errorCount(2, 10), 0, 10, true},
		{"ErrorRatio below", errorRatio(0.5, 10), 6, 4, false},
		{"ErrorRatio at", errorRatio(0.5, 10), 5, 5, true},
		{"ErrorRatio above", errorRatio(0.5, 10), 3, 7, true},
		{"ErrorRatio 1.0 below", errorRatio(1.0, 10), 1, 9, false},
		{"ErrorRatio 1.0 at", errorRatio(1.0, 10), 0, 10, true},
		{"ErrorRatio gated by MinRequestAmount", errorRatio(0.1, 10), 0, 9, false},
		{"ErrorRatio default MinRequestAmount 5 not reached", errorRatio(0.1, 0), 0, 4, false},
		{"ErrorRatio default MinRequestAmount 5 reached", errorRatio(0.1, 0), 0, 5, true},
		{"SlowRatio below", slowRatio(0.3, 10), 8, 2, false},
		{"SlowRatio at", slowRatio(0.3, 10), 7, 3, true},
		{"SlowRatio above", slowRatio(0.3, 10), 6, 4, true},
		{"SlowRatio gated by MinRequestAmount", slowRatio(0.3, 10), 0, 9, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, tt.give)
			slow := tt.give.Strategy == breaker.SlowRequestRatio
			for i := 0; i < tt.good; i++ {
				require.NoError(t, h.complete("svc", time.Millisecond, nil))
			}
			for i := 0; i < tt.bad; i++ {
				if slow {
					require.NoError(t, h.complete("svc", 51*time.Millisecond, nil))
				} else {
					require.NoError(t, h.complete("svc", time.Millisecond, errDown))
				}
			}
			want := breaker.Closed
			if tt.wantOpen {
				want = breaker.Open
			}
			assert.Equal(t, want, h.state("svc", 0))
		})
	}
}

// OPEN rejects with ErrOpen until trip time + RetryTimeout, then admits one probe.
func TestOpenRejectsUntilRetryTime(t *testing.T) {
	h := newHarness(t, errorCount(1, 1))
	h.at(time.Second)
	h.completeN("svc", 1, errDown)
	require.Equal(t, breaker.Open, h.state("svc", 0))

	h.at(time.Second + 5*time.Second - 1)
	err := h.complete("svc", 0, nil)
	assert.ErrorIs(t, err, breaker.ErrOpen)
	assert.ErrorIs(t, err, breaker.ErrBlocked)
	var be *breaker.BlockError
	require.ErrorAs(t, err, &be)
	assert.Equal(t, breaker.Open, be.State)
	assert.Equal(t, "svc", be.Resource)
	require.NotNil(t, be.Rule)
	assert.Equal(t, breaker.ErrorCount, be.Rule.Strategy)
	assert.Equal(t, h.clock.Now().Add(1), be.RetryAt)

	h.at(time.Second + 5*time.Second)
	probe, err := h.m.Enter("svc")
	require.NoError(t, err)
	assert.Equal(t, breaker.HalfOpen, h.state("svc", 0))
	assert.Equal(t, []string{tripped, probing}, h.events.transitions())

	// While the probe is in flight every other call is rejected.
	err = h.complete("svc", 0, nil)
	assert.ErrorIs(t, err, breaker.ErrOpen)
	require.ErrorAs(t, err, &be)
	assert.Equal(t, breaker.HalfOpen, be.State)
	probe.Exit()
	assert.Equal(t, breaker.Closed, h.state("svc", 0))
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

// A call admitted before a transition neither decides the probe nor enters the new window.
func TestStaleCallsAreIgnored(t *testing.T) {
	h := newHarness(t, errorCount(2, 1))
	early, err := h.m.Enter("svc") // admitted while CLOSED
	require.NoError(t, err)
	h.completeN("svc", 2, errDown)
	require.Equal(t, breaker.Open, h.state("svc", 0))

	h.at(5 * time.Second)
	probe, err := h.m.Enter("svc")
	require.NoError(t, err)
	require.Equal(t, breaker.HalfOpen, h.state("svc", 0))

	early.SetError(errDown)
	early.Exit() // finishes while HALF_OPEN: must not decide the probe
	assert.Equal(t, breaker.HalfOpen, h.state("svc", 0))

	late, err := h.m.Enter("svc")
	assert.Nil(t, late)
	assert.ErrorIs(t, err, breaker.ErrOpen)

	probe.Exit()
	require.Equal(t, breaker.Closed, h.state("svc", 0))

	// An old call finishing now must not count in the new window either.
	h2 := newHarness(t, errorCount(2, 1))
	old, err := h2.m.Enter("svc")
	require.NoError(t, err)
	h2.completeN("svc", 2, errDown)
	h2.at(5 * time.Second)
	h2.completeN("svc", 1, nil) // probe succeeds: a new, empty window
	old.SetError(errDown)
	old.Exit()
	h2.completeN("svc", 1, errDown) // one error in the new window: below 2
	assert.Equal(t, breaker.Closed, h2.state("svc", 0))
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

// The breakers that Manager.Breakers returns are read-only to anyone but the admission path:
// TryPass on a Ticket it did not make lets nothing through, takes no probe and enters no call
// in flight, and OnRequestComplete counts nothing.
func TestBreakersAreReadOnly(t *testing.T) {
	h := newHarness(t, slowRatio(1, 1), errorCount(1, 1))
	for _, b := range h.m.Breakers("svc") {
		assert.False(t, b.TryPass(&breaker.Ticket{}), "CLOSED, but not the admission path's Ticket")
		assert.False(t, b.TryPass(nil))
		b.OnRequestComplete(&breaker.Ticket{})
		b.OnRequestComplete(nil)
		assert.Zero(t, b.Stats().Total, "nothing counted")
	}
	h.clock.Advance(time.Hour) // a call the ring held would have run an hour: slow
	require.NoError(t, h.complete("svc", 0, nil))
	assert.Empty(t, h.events.transitions(), "no call in flight was entered")

	h.completeN("svc", 1, errDown) // trips the count rule
	h.clock.Advance(5 * time.Second)
	b := h.m.Breakers("svc")[1]
	assert.False(t, b.TryPass(&breaker.Ticket{}))
	assert.Equal(t, breaker.Open, b.State(), "its probe is still to be taken")
	require.NoError(t, h.complete("svc", 0, nil), "by the next call")
}

// A breaker's door takes the probe of a breaker whose retry time has come, and only one.
func TestTryPassTakesTheProbe(t *testing.T) {
	h := newHarness(t, errorRatio(1, 1))
	h.completeN("svc", 1, errDown)
	b := h.m.Breakers("svc")[0]
	e1, e2 := breaker.NewRival(h.m), breaker.NewRival(h.m)
	assert.False(t, e1.Pass(b), "before the retry time")
	h.at(5 * time.Second)
	e1 = breaker.NewRival(h.m)
	assert.True(t, e1.Pass(b))
	assert.Equal(t, breaker.HalfOpen, b.State())
	assert.False(t, e2.Pass(b), "one probe")
	e1.Complete(b, nil)
	assert.Equal(t, breaker.Closed, b.State())
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

// Stats reads the window and the times of the current period.
func TestStats(t *testing.T) {
	r := errorCount(3, 1)
	r.ProbeTimeout = time.Second
	h := newHarness(t, r)
	b := h.m.Breakers("svc")[0]
	assert.Equal(t, breaker.Stats{Rule: b.Rule(), State: breaker.Closed}, b.Stats())
	assert.Zero(t, b.Stats().Ratio(), "an empty window")

	h.at(100 * time.Millisecond)
	h.completeN("svc", 3, nil)
	h.completeN("svc", 2, errDown)
	assert.Equal(t, breaker.Stats{Rule: b.Rule(), State: breaker.Closed, Total: 5, Bad: 2}, b.Stats())
	assert.Equal(t, 0.4, b.Stats().Ratio())
	h.at(1100 * time.Millisecond) // the 100ms bucket has left the window
	assert.Equal(t, breaker.Stats{Rule: b.Rule(), State: breaker.Closed}, b.Stats())

	h.completeN("svc", 3, errDown)
	tripAt := h.clock.Now()
	assert.Equal(t, breaker.Stats{Rule: b.Rule(), State: breaker.Open, Generation: 1, RetryAt: tripAt.Add(5 * time.Second)}, b.Stats())

	h.clock.Advance(5 * time.Second)
	probe, err := h.m.Enter("svc")
	require.NoError(t, err)
	assert.Equal(t, breaker.Stats{Rule: b.Rule(), State: breaker.HalfOpen, Generation: 2, RetryAt: tripAt.Add(5 * time.Second),
		ProbeDeadline: h.clock.Now().Add(time.Second)}, b.Stats())
	probe.Exit()
	assert.Equal(t, breaker.Stats{Rule: b.Rule(), State: breaker.Closed, Generation: 3}, b.Stats())
}

// fastRule is errorRatio(0.5, 5) over a 1s window of 10 buckets whose 2 newest buckets are
// also judged on their own, at the default FastThreshold of 0.8.
func fastRule() breaker.Rule {
	r := errorRatio(0.5, 5)
	r.FastBuckets = 2
	return r
}

// failIf returns errDown when bad, else nil.
func failIf(bad bool) error {
	if bad {
		return errDown
	}
	return nil
}

// callEvery makes n calls to "svc", one every gap, each ending with errFor(i) (i from 0). It
// returns how many were let through before the first rejection, and whether one was rejected.
func (h *harness) callEvery(n int, gap time.Duration, errFor func(i int) error) (passed int, rejected bool) {
	for i := 0; i < n; i++ {
		if h.complete("svc", 0, errFor(i)) != nil {
			return passed, true
		}
		passed++
		h.clock.Advance(gap)
	}
	return passed, false
}

// Given 100 calls a second that succeed for a second, when the dependency fails every call,
// then a rule with FastBuckets 2 trips on the first call of the outage's second bucket (11
// failures, FastTrip, its two buckets all failed), where the whole window alone needs 50.
func TestFastTripOnHardOutage(t *testing.T) {
	for _, fast := range []bool{true, false} {
		rule := fastRule()
		if !fast {
			rule.FastBuckets = 0
		}
		h := newHarness(t, rule)
		_, rejected := h.callEvery(100, 10*time.Millisecond, func(int) error { return nil })
		require.False(t, rejected)
		failed, rejected := h.callEvery(1000, 10*time.Millisecond, func(int) error { return errDown })
		require.True(t, rejected)
		trip := h.events.last()
		if fast {
			assert.Equal(t, 11, failed, "calls sent to the dead dependency")
			assert.Equal(t, breaker.FastTrip, trip.Reason)
			assert.Equal(t, 1.0, trip.Snapshot, "the ratio of the two newest buckets")
		} else {
			assert.Equal(t, 50, failed, "calls sent to the dead dependency")
			assert.Equal(t, breaker.ThresholdExceeded, trip.Reason)
		}
	}
}

// Given 100 calls a second of which every hundredth fails, or a burst of 3 failures in a row
// every second, then a rule with FastBuckets 2 does not trip in ten minutes.
func TestFastTripNotOnNoise(t *testing.T) {
	patterns := map[string]func(i int) error{
		"1% errors":       func(i int) error { return failIf(i%100 == 99) },
		"bursts of three": func(i int) error { return failIf(i%100 >= 50 && i%100 < 53) },
	}
	for name, errFor := range patterns {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, fastRule())
			passed, rejected := h.callEvery(60_000, 10*time.Millisecond, errFor)
			assert.False(t, rejected, "tripped after %d calls: %v", passed, h.events.transitions())
		})
	}
}

// Given an empty window, when calls fail from the first, then the newest buckets and the
// whole window meet their thresholds on the same call, and the trip says ThresholdExceeded.
func TestFastTripAndWindowTogether(t *testing.T) {
	h := newHarness(t, fastRule())
	h.completeN("svc", 5, errDown)
	assert.Equal(t, []string{tripped}, h.events.transitions())
	assert.Equal(t, 1.0, h.events.last().Snapshot)
}

// Given FastThreshold left at 0, then the newest buckets trip at max(0.8, Threshold): at 0.9
// for Threshold 0.9, so 8 failures of 10 (0.8) do not trip them and 9 of 10 do.
func TestFastThresholdDefault(t *testing.T) {
	for _, tc := range []struct {
		bad      int
		wantTrip bool
	}{{8, false}, {9, true}} {
		rule := fastRule()
		rule.Threshold = 0.9
		h := newHarness(t, rule)
		// A second of good calls, then two buckets of 10 calls with tc.bad failures, which the
		// whole window (100 + 20 calls, at most 18 failed) cannot trip on.
		h.callEvery(100, 10*time.Millisecond, func(int) error { return nil })
		_, rejected := h.callEvery(20, 10*time.Millisecond, func(i int) error {
			return failIf(i%10 < tc.bad)
		})
		tripped := h.m.Breakers("svc")[0].State() == breaker.Open || rejected
		assert.Equal(t, tc.wantTrip, tripped, "%d of 10 bad a bucket", tc.bad)
		if tc.wantTrip {
			assert.Equal(t, breaker.FastTrip, h.events.last().Reason)
		}
	}
	r := fastRule()
	r.Threshold = 0.9
	assert.Equal(t, 0.9, r.WithDefaults().FastThreshold)
	assert.Equal(t, breaker.DefaultFastThreshold, fastRule().WithDefaults().FastThreshold)
}
