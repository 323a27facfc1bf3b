package breaker_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakertest"
)

// This file tests a breaker while OPEN: the calls it rejects and the error they get, its
// retry time, the backoff and jitter of that time, and a retry hint's hold on it.

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

// Rejections cost no allocation: a breaker hands out one error per period.
func TestRejectionReusesError(t *testing.T) {
	h := newHarness(t, errorCount(1, 1))
	h.completeN("svc", 1, errDown)
	first := h.complete("svc", 0, nil)
	second := h.complete("svc", 0, nil)
	assert.Same(t, first, second)
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

// A failure that carries the dependency's retry hint holds the breaker OPEN at least that
// long, within MaxRetryTimeout (RetryTimeout when that is 0), on a trip and on a failed probe.
func TestRetryAfterHint(t *testing.T) {
	tests := []struct {
		name    string
		max     time.Duration
		hint    time.Duration
		wantFor time.Duration
	}{
		{"the hint when longer", time.Minute, 30 * time.Second, 30 * time.Second},
		{"capped at MaxRetryTimeout", time.Minute, time.Hour, time.Minute},
		{"the OPEN time when longer", time.Minute, 100 * time.Millisecond, time.Second},
		{"no backoff: capped at RetryTimeout", 0, 30 * time.Second, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rule := errorCount(1, 1)
			rule.RetryTimeout, rule.MaxRetryTimeout = time.Second, tt.max
			h := newHarness(t, rule)
			require.NoError(t, h.complete("svc", 0, breaker.RetryAfter(errDown, tt.hint)))
			assert.Equal(t, h.clock.Now().Add(tt.wantFor), h.m.Breakers("svc")[0].Stats().RetryAt, "after the trip")
			be := blockOf(t, h.complete("svc", 0, nil))
			assert.Equal(t, h.clock.Now().Add(tt.wantFor), be.RetryAt)

			h.clock.Advance(tt.wantFor)
			err := h.m.Do(context.Background(), "svc", func(context.Context) error {
				return breaker.RetryAfter(errDown, tt.hint)
			})
			require.ErrorIs(t, err, errDown)
			assert.Equal(t, []string{tripped, probing, reopened}, h.events.transitions())
			want := max(tt.wantFor, min(2*time.Second, max(tt.max, time.Second))) // backed off, or the hint
			assert.Equal(t, h.clock.Now().Add(want), h.m.Breakers("svc")[0].Stats().RetryAt, "after the probe")
		})
	}
}
