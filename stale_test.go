package breaker_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakertest"
)

// stallingClock is a fake clock that, once armed, runs a function after it has read the time
// and before it returns the reading: what another goroutine does while the one that read the
// clock is paused (preempted, or stopped for a collection) before it uses the reading.
type stallingClock struct {
	*breakertest.Clock
	mu    sync.Mutex
	stall func()
}

func (c *stallingClock) Now() time.Time {
	t := c.Clock.Now()
	c.mu.Lock()
	f := c.stall
	c.stall = nil
	c.mu.Unlock()
	if f != nil {
		f()
	}
	return t
}

// arm makes the next reading stall for f.
func (c *stallingClock) arm(f func()) {
	c.mu.Lock()
	c.stall = f
	c.mu.Unlock()
}

func newStallingHarness(t *testing.T, rules ...breaker.Rule) (*harness, *stallingClock) {
	t.Helper()
	clock := &stallingClock{Clock: breakertest.NewClock()}
	h := &harness{t: t, clock: clock.Clock, events: &recorder{}}
	h.m = breaker.NewManager(breaker.WithClock(clock))
	h.m.AddObserver(h.events)
	require.NoError(t, h.m.LoadRules(rules))
	return h, clock
}

// Given a call that read the clock before another call took the probe 20 ms later, when the
// first goes on with its older reading, then the probe is not taken for overdue: its
// ProbeTimeout runs from its own admission. The first call is rejected while the probe runs,
// and the probe's success closes the breaker.
func TestStaleReadingDoesNotTimeOutAProbe(t *testing.T) {
	rule := errorCount(1, 1)
	rule.RetryTimeout, rule.ProbeTimeout = 10*time.Second, 200*time.Millisecond
	h, clock := newStallingHarness(t, rule)
	h.completeN("svc", 1, errDown)
	h.at(10 * time.Second)

	var probe *breaker.Entry
	clock.arm(func() {
		h.clock.Advance(20 * time.Millisecond)
		var err error
		probe, err = h.m.Enter("svc")
		require.NoError(t, err, "the call that read the clock later takes the probe")
	})
	_, err := h.m.Enter("svc") // reads 10s, then stalls while the probe is taken at 10.02s
	var be *breaker.BlockError
	require.ErrorAs(t, err, &be)
	assert.Equal(t, breaker.HalfOpen, be.State, "rejected while the probe is in flight")
	assert.Equal(t, []string{tripped, probing}, h.events.transitions(), "no ProbeTimedOut")
	assert.True(t, be.RetryAt.After(breakertest.Start.Add(10*time.Second)), "RetryAt is after the rejection")

	probe.Exit()
	assert.Equal(t, []string{tripped, probing, recovered}, h.events.transitions())
}

// Given a call that read the clock before other calls tripped the breaker 3 ms later, when it
// goes on with its older reading, then it does not take the OPEN period's retry time for past:
// it is rejected until RetryTimeout after the trip.
func TestStaleReadingDoesNotShortenOpen(t *testing.T) {
	rule := slowRatio(1, 1)
	rule.RetryTimeout = 10 * time.Second
	h, clock := newStallingHarness(t, rule)

	clock.arm(func() {
		h.clock.Advance(3 * time.Millisecond)
		require.NoError(t, h.complete("svc", 60*time.Millisecond, nil), "a slow call trips the breaker")
	})
	err := h.m.Do(context.Background(), "svc", succeed) // reads 0, stalls while the breaker trips
	var be *breaker.BlockError
	require.ErrorAs(t, err, &be, "the breaker is OPEN for 10 s from the trip at 63 ms")
	assert.Equal(t, breaker.Open, be.State)
	assert.Equal(t, breakertest.Start.Add(10*time.Second+63*time.Millisecond), be.RetryAt)
	assert.Equal(t, []string{tripped}, h.events.transitions(), "no probe")

	h.at(10*time.Second + 62*time.Millisecond)
	assert.ErrorIs(t, h.complete("svc", 0, nil), breaker.ErrOpen)
	h.at(10*time.Second + 63*time.Millisecond)
	require.NoError(t, h.complete("svc", 0, nil), "the retry time has come")
	assert.Equal(t, []string{tripped, probing, recovered}, h.events.transitions())
}

// A clock other than the system's may step back. A reading up to a StatInterval (at least a
// second) before a period's start is taken for a stale one, and waits; one further back is a
// step of the clock, and lets the probe through at once rather than hold the breaker OPEN for
// the length of the step.
func TestClockStepBackBeyondStalenessProbes(t *testing.T) {
	tests := []struct {
		name string
		back time.Duration
		due  bool
	}{
		{"back a second, within staleness: still OPEN", time.Second, false},
		{"back a second and a tick: a step of the clock", time.Second + time.Nanosecond, true},
		{"back an hour", time.Hour, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, errorCount(1, 1))
			h.completeN("svc", 1, errDown)
			h.clock.Advance(-tt.back)
			err := h.complete("svc", 0, nil)
			if tt.due {
				assert.NoError(t, err)
				assert.Equal(t, []string{tripped, probing, recovered}, h.events.transitions())
				return
			}
			assert.ErrorIs(t, err, breaker.ErrOpen)
			h.clock.Advance(tt.back + 5*time.Second - time.Nanosecond)
			assert.ErrorIs(t, h.complete("svc", 0, nil), breaker.ErrOpen, "the retry time is 5 s after the trip")
			h.clock.Advance(time.Nanosecond)
			assert.NoError(t, h.complete("svc", 0, nil))
		})
	}
}

// The staleness a clock other than the system's is allowed is the rule's StatInterval when
// that is longer than a second.
func TestStalenessFollowsTheWindow(t *testing.T) {
	rule := errorCount(1, 1)
	rule.StatInterval, rule.BucketCount = 10*time.Second, 10
	h := newHarness(t, rule)
	h.completeN("svc", 1, errDown)
	h.clock.Advance(-10 * time.Second)
	assert.ErrorIs(t, h.complete("svc", 0, nil), breaker.ErrOpen, "10 s back is within the window's staleness")
	h.clock.Advance(-time.Nanosecond)
	assert.NoError(t, h.complete("svc", 0, nil), "further back is a step of the clock")
}

// Given a run of two probes, when a call that read the clock before the first probe succeeded
// takes the second with its older reading, then the second probe's ProbeTimeout runs from when
// the first succeeded, not from the older reading: a call 150 ms after that is rejected, and
// does not time the probe out.
func TestStaleReadingDoesNotShortenTheNextProbe(t *testing.T) {
	rule := errorCount(1, 1)
	rule.ProbeNum, rule.ProbeTimeout = 2, 200*time.Millisecond
	h, clock := newStallingHarness(t, rule)
	h.completeN("svc", 1, errDown)
	h.at(5 * time.Second)
	first, err := h.m.Enter("svc")
	require.NoError(t, err)
	h.clock.Advance(50 * time.Millisecond)

	clock.arm(func() {
		h.clock.Advance(100 * time.Millisecond)
		first.Exit() // succeeds at 5.15 s: the next call is the second probe
	})
	second, err := h.m.Enter("svc") // reads 5.05 s, stalls while the first probe succeeds
	require.NoError(t, err, "the second probe")
	h.clock.Advance(150 * time.Millisecond) // 5.3 s: 250 ms after the stale reading, 150 ms after the start
	assert.ErrorIs(t, h.complete("svc", 0, nil), breaker.ErrOpen)
	assert.Equal(t, []string{tripped, probing}, h.events.transitions(), "the second probe has not timed out")
	second.Exit()
	assert.Equal(t, []string{tripped, probing, recovered}, h.events.transitions())
}

// Given a pacing breaker, when a call reads the clock at 20 ms and stalls while calls at 110 ms
// move pacing on to the next bucket and fill it, then the stalled call counts in that bucket and
// is held back until the bucket after it, 200 ms: never the 100 ms its own reading's next bucket
// names, which has passed by the time it is rejected.
func TestStaleReadingHeldBackByPacingRetriesAfterItsBucket(t *testing.T) {
	h, clock := newStallingHarness(t, paceRule())
	h.startPacing()
	h.at(20 * time.Millisecond)
	clock.arm(func() {
		h.at(110 * time.Millisecond)
		require.NoError(t, h.complete("svc", 0, errDown), "the bucket's first call")
		require.ErrorIs(t, h.complete("svc", 0, nil), breaker.ErrPacing, "a loss and no success: held back")
	})
	err := h.complete("svc", 0, nil)
	require.ErrorIs(t, err, breaker.ErrPacing)
	assert.Equal(t, breakertest.Start.Add(200*time.Millisecond), blockOf(t, err).RetryAt)
}

// Given a ramp after recovery, when a call reads the clock in the probe's bucket and stalls
// while calls of the next bucket move the ramp on and fill it, then the stalled call is held
// back until the end of the bucket it counted in.
func TestStaleReadingHeldBackByARampRetriesAfterItsBucket(t *testing.T) {
	h, clock := newStallingHarness(t, rampRule())
	h.recovered() // at 5 s
	h.at(5*time.Second + 20*time.Millisecond)
	clock.arm(func() {
		h.at(5*time.Second + 110*time.Millisecond)
		require.NoError(t, h.complete("svc", 0, errDown), "the bucket's first call")
		require.ErrorIs(t, h.complete("svc", 0, nil), breaker.ErrRampingUp, "a loss and no success: held back")
	})
	err := h.complete("svc", 0, nil)
	require.ErrorIs(t, err, breaker.ErrRampingUp)
	assert.Equal(t, breakertest.Start.Add(5*time.Second+200*time.Millisecond), blockOf(t, err).RetryAt)
}

// Given a breaker that needs two probes, when a call reads the clock at 4.95 s, before its
// retry time, and stalls while the first probe succeeds at 5 s and another call takes the second
// at 5.2 s, then the stalled call is rejected for the probe in flight with a RetryAt two buckets
// after the probe was taken, 5.4 s: never 5.1 s, two buckets after its own old reading.
func TestStaleReadingRejectedBetweenProbesRetriesAfterTheProbe(t *testing.T) {
	r := errorCount(1, 1)
	r.ProbeNum = 2
	h, clock := newStallingHarness(t, r)
	h.completeN("svc", 1, errDown)
	h.at(4950 * time.Millisecond)
	clock.arm(func() {
		h.at(5 * time.Second)
		h.completeN("svc", 1, nil) // the first probe
		h.at(5200 * time.Millisecond)
		_, err := h.m.Enter("svc") // the second, in flight
		require.NoError(t, err)
	})
	_, err := h.m.Enter("svc")
	be := blockOf(t, err)
	assert.Equal(t, breaker.HalfOpen, be.State)
	assert.Equal(t, breakertest.Start.Add(5400*time.Millisecond), be.RetryAt)
}
