package breaker_test

import (
	"context"
	"fmt"
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakertest"
)

// farYears are how far past the Manager's start the tests move the clock: past the 73 years at
// which the library's time once stopped, past the 146 years after which the Manager converts
// times from a new reading, and past the 292 years a time.Duration spans.
var farYears = []int{80, 200, 1000}

// Given a clock decades or centuries past the Manager's start, when calls fail, then the
// breaker trips at the clock's time, rejects calls with a RetryAt RetryTimeout ahead until
// then, and a probe at RetryTimeout closes it.
func TestFarClockTripsWaitsAndRecovers(t *testing.T) {
	for _, years := range farYears {
		for _, rule := range []breaker.Rule{errorCount(2, 1), errorRatio(0.5, 2)} {
			t.Run(fmt.Sprintf("%v %d years on", rule.Strategy, years), func(t *testing.T) {
				h := newHarness(t, rule)
				far := breakertest.Start.AddDate(years, 0, 0)
				h.clock.Set(far)
				assert.WithinDuration(t, far, h.m.Now(), 0, "Manager.Now")

				h.completeN("svc", 2, errDown)
				require.Equal(t, breaker.Open, h.state("svc", 0))
				assert.WithinDuration(t, far, h.events.last().At, 0, "the trip's StateChange.At")
				retryAt := far.Add(rule.RetryTimeout)
				assert.WithinDuration(t, retryAt, h.m.Breakers("svc")[0].Stats().RetryAt, 0, "Stats.RetryAt")

				h.clock.Advance(rule.RetryTimeout - time.Millisecond)
				var blocked *breaker.BlockError
				require.ErrorAs(t, h.complete("svc", 0, nil), &blocked, "OPEN until RetryTimeout")
				assert.True(t, blocked.RetryAt.After(h.clock.Now()), "RetryAt %v is after the rejection at %v",
					blocked.RetryAt, h.clock.Now())
				assert.WithinDuration(t, retryAt, blocked.RetryAt, 0, "RetryAt")

				h.clock.Advance(time.Millisecond)
				require.NoError(t, h.complete("svc", 0, nil), "the probe")
				assert.Equal(t, breaker.Closed, h.state("svc", 0))
				assert.Equal(t, []string{tripped, probing, recovered}, h.events.transitions())
				assert.WithinDuration(t, retryAt, h.events.last().At, 0, "the recovery's StateChange.At")
			})
		}
	}
}

// Given a clock decades or centuries past the Manager's start, two failures a minute apart do
// not trip a 1s window that trips on two, and two at once do.
func TestFarClockWindowSlides(t *testing.T) {
	for _, years := range farYears {
		t.Run(fmt.Sprintf("%d years on", years), func(t *testing.T) {
			h := newHarness(t, errorCount(2, 1))
			h.clock.Set(breakertest.Start.AddDate(years, 0, 0))
			h.completeN("svc", 1, errDown)
			assertWindowSlides(t, h)
		})
	}
}

// Given a probe in flight, when the clock leaps a thousand years, then the next call finds the
// probe overdue, and the probe after RetryTimeout closes the breaker.
func TestFarLeapDuringProbeDoesNotWedge(t *testing.T) {
	h := newHarness(t, errorCount(1, 1))
	h.completeN("svc", 1, errDown)
	h.clock.Advance(5 * time.Second)
	_, err := h.m.Enter("svc") // the probe, never exited
	require.NoError(t, err)
	h.clock.Set(h.clock.Now().AddDate(1000, 0, 0))

	assert.ErrorIs(t, h.complete("svc", 0, nil), breaker.ErrOpen, "the probe counts as timed out")
	h.clock.Advance(5 * time.Second)
	require.NoError(t, h.complete("svc", 0, nil))
	assert.Equal(t, []string{tripped, probing, "HALF_OPEN->OPEN ProbeTimedOut", probing, recovered},
		h.events.transitions())
	assert.WithinDuration(t, h.clock.Now(), h.events.last().At, 0)
}

// Given a clock that jumps back decades or centuries, the window starts again on the clock's
// new course: two failures a minute apart do not trip a 1s window, two at once do.
func TestClockJumpBackWindowStartsAgain(t *testing.T) {
	for _, years := range []int{50, 1000} {
		t.Run(fmt.Sprintf("%d years back", years), func(t *testing.T) {
			h := newHarness(t, errorCount(2, 1))
			h.completeN("svc", 1, errDown)
			h.clock.Set(breakertest.Start.AddDate(-years, 0, 0))
			h.completeN("svc", 1, errDown)
			assert.Equal(t, breaker.Closed, h.state("svc", 0), "the failure before the jump is gone")
			assertWindowSlides(t, h)
		})
	}
}

// Given an OPEN breaker, when the clock jumps back decades or centuries, or back from
// centuries ahead to the start, then its retry time lies further ahead than its OPEN time and
// the next call probes.
func TestClockJumpBackWhileOpenProbes(t *testing.T) {
	tests := []struct {
		name       string
		tripAt, to time.Time
	}{
		{name: "50 years back", tripAt: breakertest.Start, to: breakertest.Start.AddDate(-50, 0, 0)},
		{name: "1000 years back", tripAt: breakertest.Start, to: breakertest.Start.AddDate(-1000, 0, 0)},
		{name: "from 1000 years on back to the start", tripAt: breakertest.Start.AddDate(1000, 0, 0),
			to: breakertest.Start},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, errorCount(1, 1))
			h.clock.Set(tt.tripAt)
			h.completeN("svc", 1, errDown)
			assert.WithinDuration(t, tt.tripAt, h.events.last().At, 0, "the trip's StateChange.At")
			h.clock.Set(tt.to)
			require.NoError(t, h.complete("svc", 0, nil))
			assert.Equal(t, []string{tripped, probing, recovered}, h.events.transitions())
			assert.WithinDuration(t, tt.to, h.events.last().At, 0)
		})
	}
}

// The library's times wrap around 292 years after the Manager's start. A breaker that trips or
// probes just before then keeps its whole RetryTimeout and ProbeTimeout across the wrap.
func TestBreakerAcrossTheWrapOfTimes(t *testing.T) {
	wrap := breakertest.Start.Add(math.MaxInt64) // the last nanosecond before the wrap
	t.Run("OPEN waits its retry time", func(t *testing.T) {
		h := newHarness(t, errorCount(1, 1))
		h.clock.Set(wrap.Add(-time.Second))
		h.completeN("svc", 1, errDown)
		h.clock.Advance(500 * time.Millisecond)
		assert.ErrorIs(t, h.complete("svc", 0, nil), breaker.ErrOpen, "before the wrap")
		h.clock.Advance(4500*time.Millisecond - time.Millisecond)
		var blocked *breaker.BlockError
		require.ErrorAs(t, h.complete("svc", 0, nil), &blocked)
		assert.WithinDuration(t, wrap.Add(4*time.Second), blocked.RetryAt, 0)
		h.clock.Advance(time.Millisecond)
		require.NoError(t, h.complete("svc", 0, nil))
		assert.Equal(t, []string{tripped, probing, recovered}, h.events.transitions())
	})
	t.Run("a probe whose deadline is past the wrap is not overdue", func(t *testing.T) {
		h := newHarness(t, errorCount(1, 1))
		h.clock.Set(wrap.Add(-7 * time.Second))
		h.completeN("svc", 1, errDown)
		h.clock.Advance(5 * time.Second)
		probe, err := h.m.Enter("svc")
		require.NoError(t, err)
		h.clock.Advance(time.Second)
		assert.ErrorIs(t, h.complete("svc", 0, nil), breaker.ErrOpen, "the probe is in flight")
		assert.Equal(t, breaker.HalfOpen, h.state("svc", 0))
		probe.Exit()
		assert.Equal(t, []string{tripped, probing, recovered}, h.events.transitions(),
			"the probe's success decides")
	})
}

// twoTemplateBreakers returns a Manager on a fake clock with a template rule "d*" and room for
// two template breakers, and a function that calls a name through it.
func twoTemplateBreakers(t *testing.T) (*breakertest.Clock, *breaker.Manager, func(string)) {
	clock := breakertest.NewClock()
	m := breaker.NewManager(breaker.WithClock(clock), breaker.WithMaxTemplateBreakers(2))
	rule := errorCount(5, 1)
	rule.Resource = "d*"
	require.NoError(t, m.LoadRules([]breaker.Rule{rule}))
	return clock, m, func(name string) { require.NoError(t, m.Do(t.Context(), name, succeed)) }
}

// Template breakers are dropped idlest first also centuries past the Manager's start, across
// the wrap of the library's times: da, made first but used last, outlives db.
func TestFarClockDropsTheIdlest(t *testing.T) {
	clock, m, call := twoTemplateBreakers(t)
	call("da")
	call("db")
	clock.Set(breakertest.Start.AddDate(250, 0, 0))
	call("db")
	clock.Set(breakertest.Start.AddDate(300, 0, 0))
	call("da")
	call("dc") // needs room: db goes
	assert.Equal(t, []string{"da", "dc"}, m.TemplateResources())
}

// After the clock jumps back, the template breakers used before the jump count as the
// idlest: da, used an hour before the jump, goes before db, used after it.
func TestClockJumpBackDropsThoseUsedBeforeIt(t *testing.T) {
	clock, m, call := twoTemplateBreakers(t)
	call("db")
	clock.Advance(time.Hour)
	call("da")
	clock.Set(breakertest.Start.AddDate(-50, 0, 0))
	call("db")
	call("dc") // needs room: da goes
	assert.Equal(t, []string{"db", "dc"}, m.TemplateResources())
}

// The clock steps back an hour while a probe is in flight. The next call finds the probe
// overdue (its deadline is 50 minutes ahead, more than ProbeTimeout), instead of being
// rejected for an hour.
func TestClockBackDuringProbeDoesNotWedge(t *testing.T) {
	rule := errorCount(1, 1)
	rule.ProbeTimeout = 10 * time.Minute
	h := newHarness(t, rule)
	h.completeN("svc", 1, errDown)
	h.clock.Advance(5 * time.Second)
	_, err := h.m.Enter("svc") // the probe, never exited
	require.NoError(t, err)
	h.clock.Advance(-time.Hour)

	_, err = h.m.Enter("svc")
	assert.ErrorIs(t, err, breaker.ErrOpen, "the probe counts as timed out, and OPEN starts again")
	assert.Equal(t, []string{tripped, probing, "HALF_OPEN->OPEN ProbeTimedOut"}, h.events.transitions())
	h.clock.Advance(5 * time.Second)
	require.NoError(t, h.complete("svc", 0, nil), "the next retry time is RetryTimeout after the step back")
	assert.Equal(t, breaker.Closed, h.state("svc", 0))
}

// The clock steps back an hour while OPEN: the retry time is an hour and 5s ahead, more
// than RetryTimeout, so the next call probes.
func TestClockBackWhileOpenDoesNotExtendIt(t *testing.T) {
	h := newHarness(t, errorCount(1, 1))
	h.completeN("svc", 1, errDown)
	h.clock.Advance(-time.Hour)
	require.NoError(t, h.complete("svc", 0, nil))
	assert.Equal(t, []string{tripped, probing, recovered}, h.events.transitions())
}

// When the clock goes backwards the completion counts in the newest bucket.
func TestClockBackwardsCountsInNewestBucket(t *testing.T) {
	h := newHarness(t, errorCount(3, 1))
	h.at(time.Second)
	h.completeN("svc", 1, errDown)
	h.at(500 * time.Millisecond)
	h.completeN("svc", 1, errDown) // counts in the 1s bucket
	h.at(1950 * time.Millisecond)  // a 500ms bucket would have left the window by now
	h.completeN("svc", 1, errDown)
	assert.Equal(t, breaker.Open, h.state("svc", 0))
	assert.Equal(t, 3.0, h.events.last().Snapshot)
}

// A probe still decides when the clock went back during it.
func TestClockBackwardsProbeStillDecides(t *testing.T) {
	h := newHarness(t, slowRatio(1, 1))
	require.NoError(t, h.complete("svc", time.Second, nil))
	h.clock.Advance(5 * time.Second)
	probe, err := h.m.Enter("svc")
	require.NoError(t, err)
	h.clock.Advance(-time.Hour)
	probe.Exit()
	assert.Equal(t, breaker.Closed, h.state("svc", 0))
	assert.Equal(t, recovered, h.events.transitions()[2])
}

// Now reads the manager's clock.
func TestManagerNow(t *testing.T) {
	h := newHarness(t)
	h.clock.Advance(90 * time.Second)
	assert.Equal(t, h.clock.Now(), h.m.Now())
	real := breaker.NewManager()
	before := time.Now()
	now := real.Now()
	after := time.Now()
	// The system clock is read as the runtime's monotonic clock since the Manager's start.
	assert.False(t, now.Before(before.Add(-time.Millisecond)), "Now %v is before %v", now, before)
	assert.False(t, now.After(after.Add(time.Millisecond)), "Now %v is after %v", now, after)
}

// Given a Manager made inside a testing/synctest bubble with the system clock, then its
// breakers follow the bubble's fake time: one that tripped lets a probe through once the
// bubble has slept past its RetryTimeout, and not before.
func TestSystemClockFollowsSynctestBubble(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := breaker.NewManager()
		require.NoError(t, m.LoadRules([]breaker.Rule{errorCount(1, 1)}))
		ctx := context.Background()
		_ = m.Do(ctx, "svc", func(context.Context) error { return errDown })
		require.ErrorIs(t, m.Do(ctx, "svc", succeed), breaker.ErrOpen)
		time.Sleep(errorCount(1, 1).RetryTimeout - time.Millisecond)
		require.ErrorIs(t, m.Do(ctx, "svc", succeed), breaker.ErrOpen, "just before the retry time")
		time.Sleep(time.Millisecond)
		assert.NoError(t, m.Do(ctx, "svc", succeed), "the probe at the retry time")
		assert.Equal(t, breaker.Closed, m.Breakers("svc")[0].State())
	})
}

// assertWindowSlides checks that a Manager whose only rule is errorCount(2, 1) on "svc", and
// that has just counted one failure, judges a 1s window on the clock's course: a failure a
// minute later does not trip it, a third at once does, and the trip is reported at the
// clock's time.
func assertWindowSlides(t *testing.T, h *harness) {
	t.Helper()
	h.clock.Advance(time.Minute)
	h.completeN("svc", 1, errDown)
	assert.Equal(t, breaker.Closed, h.state("svc", 0), "the failure a minute ago left the window")
	h.completeN("svc", 1, errDown)
	assert.Equal(t, breaker.Open, h.state("svc", 0))
	assert.WithinDuration(t, h.clock.Now(), h.events.last().At, 0)
}
