package breaker_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakertest"
)

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

// A call rejected by several breakers names the latest retry time among them: with two OPEN
// rules retrying in 2s and 60s, every rejection says 60s, whichever rule rejects first.
func TestRejectionNamesLatestRetryTime(t *testing.T) {
	short := errorCount(1, 1)
	short.RetryTimeout = 2 * time.Second
	long := errorCount(1, 1)
	long.RetryTimeout = time.Minute
	for _, rules := range [][]breaker.Rule{{short, long}, {long, short}} {
		h := newHarness(t, rules...)
		h.completeN("svc", 1, errDown)
		want := breakertest.Start.Add(time.Minute)
		for _, at := range []time.Duration{0, 2 * time.Second, 30 * time.Second} {
			h.at(at)
			err := h.complete("svc", 0, nil)
			var be *breaker.BlockError
			require.True(t, errors.As(err, &be), "at %v: %v", at, err)
			assert.Equal(t, want, be.RetryAt, "at %v", at)
			assert.Equal(t, time.Minute, be.Rule.RetryTimeout, "at %v", at)
		}
	}
}

// Rejections cost no allocation: a breaker hands out one error per period.
func TestRejectionReusesError(t *testing.T) {
	h := newHarness(t, errorCount(1, 1))
	h.completeN("svc", 1, errDown)
	first := h.complete("svc", 0, nil)
	second := h.complete("svc", 0, nil)
	assert.Same(t, first, second)
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
