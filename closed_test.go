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

// This file tests a breaker while CLOSED: what it counts in its window (a sliding window of
// buckets, or the last StatCalls calls), the thresholds it trips at, the fast trip on its
// newest buckets, and calls in flight counted as slow.

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

// A 1s window of ten buckets slides: at 1950ms the errors made at 900ms have left it, and
// those made at 1100ms are still in it.
func TestWindowSlides(t *testing.T) {
	r := errorCount(11, 1) // StatInterval 1s, 10 buckets by default
	h := newHarness(t, r)
	h.at(900 * time.Millisecond)
	h.completeN("svc", 6, errDown)
	h.at(1100 * time.Millisecond)
	h.completeN("svc", 4, errDown) // 10 in the window
	require.Equal(t, breaker.Closed, h.state("svc", 0))

	h.at(1950 * time.Millisecond) // the 900ms bucket has left: 4 remain
	h.completeN("svc", 6, errDown)
	assert.Equal(t, breaker.Closed, h.state("svc", 0), "10 errors in the window, not 16")
	h.completeN("svc", 1, errDown)
	assert.Equal(t, breaker.Open, h.state("svc", 0))
	assert.Equal(t, 11.0, h.events.last().Snapshot)
}

// At 1100ms, the errors at 900ms and 1100ms are all in the window.
func TestWindowHoldsPreviousBuckets(t *testing.T) {
	h := newHarness(t, errorCount(10, 1))
	h.at(900 * time.Millisecond)
	h.completeN("svc", 6, errDown)
	h.at(1100 * time.Millisecond)
	h.completeN("svc", 3, errDown)
	require.Equal(t, breaker.Closed, h.state("svc", 0))
	h.completeN("svc", 1, errDown)
	assert.Equal(t, breaker.Open, h.state("svc", 0))
	assert.Equal(t, 10.0, h.events.last().Snapshot)
}

// fastRule is errorRatio(0.5, 5) over a 1s window of 10 buckets whose 2 newest buckets are
// also judged on their own, at the default FastThreshold of 0.8.
func fastRule() breaker.Rule {
	r := errorRatio(0.5, 5)
	r.FastBuckets = 2
	return r
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

// A window of calls judges the last StatCalls calls however long they took to come: ten
// failures an hour apart trip it on the tenth, where a time window would forget them.
func TestStatCallsIgnoreTime(t *testing.T) {
	h := newHarness(t, callsRule(0.5, 10))
	for i := range 9 {
		require.NoError(t, h.complete("svc", 0, errDown), "call %d", i)
		h.clock.Advance(time.Hour)
	}
	assert.Equal(t, breaker.Stats{Rule: h.m.Breakers("svc")[0].Rule(), State: breaker.Closed, Total: 9, Bad: 9}, h.m.Breakers("svc")[0].Stats(),
		"MinRequestAmount is StatCalls: nine calls are not enough")
	require.NoError(t, h.complete("svc", 0, errDown))
	assert.Equal(t, breaker.Open, h.state("svc", 0))
	assert.Equal(t, 1.0, h.events.last().Snapshot)
}

// The window slides one call at a time: the oldest call leaves as each new one comes.
func TestStatCallsSlide(t *testing.T) {
	r := callsRule(0.5, 4)
	h := newHarness(t, r)
	for _, err := range []error{nil, nil, errDown, nil} {
		require.NoError(t, h.complete("svc", 0, err))
	}
	assert.Equal(t, breaker.Stats{Rule: h.m.Breakers("svc")[0].Rule(), State: breaker.Closed, Total: 4, Bad: 1}, h.m.Breakers("svc")[0].Stats())
	require.NoError(t, h.complete("svc", 0, nil)) // the first good call leaves
	require.NoError(t, h.complete("svc", 0, nil)) // the second
	assert.Equal(t, breaker.Stats{Rule: h.m.Breakers("svc")[0].Rule(), State: breaker.Closed, Total: 4, Bad: 1}, h.m.Breakers("svc")[0].Stats())
	require.NoError(t, h.complete("svc", 0, nil)) // the failure leaves: good, good, good, good
	assert.Equal(t, breaker.Stats{Rule: h.m.Breakers("svc")[0].Rule(), State: breaker.Closed, Total: 4, Bad: 0}, h.m.Breakers("svc")[0].Stats())
	require.NoError(t, h.complete("svc", 0, errDown))
	assert.Equal(t, breaker.Closed, h.state("svc", 0), "1 of 4")
	require.NoError(t, h.complete("svc", 0, errDown))
	assert.Equal(t, breaker.Open, h.state("svc", 0), "2 of 4 trips at 0.5")
	assert.Equal(t, 0.5, h.events.last().Snapshot)
}

// ErrorCount counts the failures among the last StatCalls calls; failures further apart than
// that never add up.
func TestStatCallsErrorCount(t *testing.T) {
	r := breaker.Rule{Resource: "svc", Strategy: breaker.ErrorCount, Threshold: 3, StatCalls: 100,
		MinRequestAmount: 1, RetryTimeout: time.Second}
	h := newHarness(t, r)
	for range 5 {
		require.NoError(t, h.complete("svc", 0, errDown))
		h.completeN("svc", 100, nil) // the failure leaves the window
	}
	assert.Equal(t, breaker.Closed, h.state("svc", 0))
	for range 2 {
		require.NoError(t, h.complete("svc", 0, errDown))
		h.completeN("svc", 48, nil) // three failures in 99 calls
	}
	require.NoError(t, h.complete("svc", 0, errDown))
	assert.Equal(t, breaker.Open, h.state("svc", 0), "three failures within 100 calls")
}

// A slow rule over a window of calls counts a call still in flight past MaxAllowedRT as one of
// its calls, slow, once.
func TestStatCallsCountHungCalls(t *testing.T) {
	r := breaker.Rule{Resource: "svc", Strategy: breaker.SlowRequestRatio, Threshold: 1, MaxAllowedRT: 50 * time.Millisecond,
		StatCalls: 3, RetryTimeout: time.Second}
	h := newHarness(t, r)
	hung, err := enterN(h.m, "svc", 3)
	require.NoError(t, err)
	h.clock.Advance(200 * time.Millisecond) // past MaxAllowedRT and a slot of the ring
	require.NoError(t, h.complete("svc", 0, nil))
	assert.Equal(t, breaker.Open, h.state("svc", 0), "three hung calls, counted as slow while in flight")
	assert.Equal(t, []string{tripped}, h.events.transitions())
	exitAll(hung)
	assert.Equal(t, breaker.Open, h.state("svc", 0))
}

// Under concurrent calls, every read of the window holds no more bad calls than calls and no
// more calls than StatCalls, and a trip's ratio is never above 1.
func TestStatCallsInvariantsUnderConcurrency(t *testing.T) {
	r := callsRule(0.75, 64)
	r.MinRequestAmount = 1
	h := newHarness(t, r)
	var broken atomic.Int64
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 3000 {
				err := error(nil)
				if (g+i)%4 != 0 { // three in four fail: the window trips now and then
					err = errDown
				}
				if errors.Is(h.m.Do(context.Background(), "svc", func(context.Context) error { return err }), breaker.ErrOpen) && g == 0 {
					h.m.Reset("svc")
				}
				if st := h.m.Breakers("svc")[0].Stats(); st.Bad > st.Total || st.Total > 64 {
					broken.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	assert.Zero(t, broken.Load(), "a read with Bad > Total or Total > StatCalls")
	trips := 0
	for _, c := range h.events.all() {
		if c.Reason == breaker.ThresholdExceeded {
			trips++
			assert.LessOrEqual(t, c.Snapshot, 1.0)
			assert.GreaterOrEqual(t, c.Snapshot, 0.75)
		}
	}
	assert.Positive(t, trips, "the test must trip the breaker to check its snapshots")
}

// A call through a window of calls allocates nothing.
func TestStatCallsAllocateNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	m := breaker.NewManager()
	r := callsRule(0.5, 100)
	require.NoError(t, m.LoadRules([]breaker.Rule{r}))
	ctx := context.Background()
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _ = m.Do(ctx, "svc", succeed) }))
}
