package breaker_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakertest"
)

// Backoff with RetryTimeout 1s, MaxRetryTimeout 5s: OPEN lasts 1, 2, 4, 5, 5 s after the trip
// and each failed probe; closing starts it again at 1s.
func TestBackoff(t *testing.T) {
	rule := errorCount(1, 1)
	rule.RetryTimeout, rule.MaxRetryTimeout = time.Second, 5*time.Second
	h := newHarness(t, rule)
	h.completeN("svc", 1, errDown)
	for _, want := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second} {
		h.clock.Advance(want - time.Millisecond)
		require.ErrorIs(t, h.complete("svc", 0, nil), breaker.ErrOpen, "OPEN for %v", want)
		h.clock.Advance(time.Millisecond)
		require.NoError(t, h.complete("svc", 0, errDown), "a probe after %v", want)
	}
	h.clock.Advance(5 * time.Second)
	require.NoError(t, h.complete("svc", 0, nil))
	require.Equal(t, breaker.Closed, h.state("svc", 0))
	h.completeN("svc", 1, errDown)
	st := h.m.Breakers("svc")[0].Stats()
	assert.Equal(t, h.clock.Now().Add(time.Second), st.RetryAt, "closing resets the backoff")
}

// One rule on 100 instances that trip together: the jitter spreads their retry times over
// [RetryTimeout·(1−RetryJitter), RetryTimeout), the same name always gives the same time, and
// BlockError.RetryAt and Stats show the real one.
func TestJitterSpreadsAFleet(t *testing.T) {
	rule := errorCount(1, 1)
	rule.RetryTimeout, rule.RetryJitter = 10*time.Second, 0.5
	retryIn := func(name string) time.Duration {
		clock := breakertest.NewClock()
		m := breaker.NewManager(breaker.WithClock(clock), breaker.WithInstanceName(name))
		require.NoError(t, m.LoadRules([]breaker.Rule{rule}))
		e, err := m.Enter("svc")
		require.NoError(t, err)
		e.SetError(errDown)
		e.Exit()
		_, err = m.Enter("svc")
		be := blockOf(t, err)
		require.Equal(t, be.RetryAt, m.Breakers("svc")[0].Stats().RetryAt)
		return be.RetryAt.Sub(clock.Now())
	}
	seen := map[time.Duration]bool{}
	lowest, highest := time.Hour, time.Duration(0)
	for i := 0; i < 100; i++ {
		d := retryIn(fmt.Sprintf("pod-%d", i))
		require.GreaterOrEqual(t, d, 5*time.Second)
		require.Less(t, d, 10*time.Second)
		seen[d] = true
		lowest, highest = min(lowest, d), max(highest, d)
	}
	assert.Greater(t, len(seen), 90, "the instances retry at different times")
	assert.Less(t, lowest, 5500*time.Millisecond, "some retry early in the range")
	assert.Greater(t, highest, 9500*time.Millisecond, "and some late")
	assert.Equal(t, retryIn("pod-7"), retryIn("pod-7"), "reproducible")
}
