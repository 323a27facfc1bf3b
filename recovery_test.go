package breaker_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakertest"
)

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

// With ProbeNum 2, a failed probe in the middle of a run reopens the breaker, and the next run starts from
// the first probe again.
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

// With ProbeNum 2, a probe between two of a run times out like any other, and a blocked one returns the
// breaker to OPEN with the retry time unchanged.
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

// Under -race, with ProbeNum 5: for each probe of a run of 5, 32 goroutines race to enter at once while
// the winner is still in flight: exactly one gets in each time, and the fifth success closes.
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

// Backoff with RetryTimeout 1s, MaxRetryTimeout 5s: OPEN lasts 1, 2, 4, 5, 5 s after the trip and each
// failed probe; closing starts it again at 1s.
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

// ConsecutiveErrors 3: a success ends the run, an ignored call changes nothing, and the
// third failure in a row trips it with Snapshot 3.
func TestConsecutiveErrors(t *testing.T) {
	rule := breaker.Rule{Resource: "svc", Strategy: breaker.ConsecutiveErrors, Threshold: 3,
		RetryTimeout: 5 * time.Second}
	h := newHarness(t, rule)
	h.completeN("svc", 2, errDown)
	h.completeN("svc", 1, nil)
	h.completeN("svc", 2, errDown)
	require.NoError(t, h.complete("svc", 0, context.Canceled))
	st := h.m.Breakers("svc")[0].Stats()
	assert.Equal(t, uint64(2), st.Bad, "a run of two")
	assert.Equal(t, breaker.Closed, st.State)
	h.completeN("svc", 1, errDown)
	assert.Equal(t, []string{tripped}, h.events.transitions())
	assert.Equal(t, 3.0, h.events.last().Snapshot)
	h.clock.Advance(5 * time.Second)
	require.NoError(t, h.complete("svc", 0, nil))
	assert.Equal(t, breaker.Closed, h.state("svc", 0))
	assert.Zero(t, h.m.Breakers("svc")[0].Stats().Bad, "the run starts again")
}

// The window fields do not apply to ConsecutiveErrors: they are not part of its identity,
// and its JSON name is "ConsecutiveErrors".
func TestConsecutiveErrorsIdentityAndJSON(t *testing.T) {
	rule := breaker.Rule{Resource: "svc", Strategy: breaker.ConsecutiveErrors, Threshold: 3,
		RetryTimeout: 5 * time.Second}
	h := newHarness(t, rule)
	before := h.m.Breakers("svc")[0]
	spelled := rule
	spelled.MinRequestAmount, spelled.StatInterval, spelled.BucketCount = 9, 2*time.Second, 4
	require.NoError(t, h.m.LoadRules([]breaker.Rule{spelled}))
	assert.Same(t, before, h.m.Breakers("svc")[0])

	rules, err := breaker.ParseRules([]byte(`[{"resource":"svc","strategy":"ConsecutiveErrors","threshold":5,
		"retryTimeout":"1s","probeNum":2,"maxRetryTimeout":"1m","retryJitter":0.25}]`))
	require.NoError(t, err)
	assert.Equal(t, breaker.Rule{Resource: "svc", Strategy: breaker.ConsecutiveErrors, Threshold: 5,
		RetryTimeout: time.Second, ProbeNum: 2, MaxRetryTimeout: time.Minute, RetryJitter: 0.25}, rules[0])
}

// MaxRetryTimeout, RetryJitter, ProbeNum and a ConsecutiveErrors threshold are validated.
func TestRecoveryFieldsValidation(t *testing.T) {
	tests := []struct {
		name      string
		give      func(*breaker.Rule)
		wantField string
	}{
		{"max retry below retry", func(r *breaker.Rule) { r.MaxRetryTimeout = time.Second }, "MaxRetryTimeout"},
		{"jitter 1", func(r *breaker.Rule) { r.RetryJitter = 1 }, "RetryJitter"},
		{"jitter negative", func(r *breaker.Rule) { r.RetryJitter = -0.1 }, "RetryJitter"},
		{"probes too many", func(r *breaker.Rule) { r.ProbeNum = breaker.MaxProbeNum + 1 }, "ProbeNum"},
		{"consecutive not whole", func(r *breaker.Rule) { r.Strategy, r.Threshold = breaker.ConsecutiveErrors, 2.5 }, "Threshold"},
	}
	for _, tt := range tests {
		r := errorCount(1, 1)
		tt.give(&r)
		var re *breaker.RuleError
		require.ErrorAs(t, r.Validate(), &re, tt.name)
		assert.Equal(t, tt.wantField, re.Field, tt.name)
	}
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

func TestRetryAfterOf(t *testing.T) {
	err := fmt.Errorf("wrapped: %w", breaker.RetryAfter(errDown, 3*time.Second))
	d, ok := breaker.RetryAfterOf(err)
	assert.True(t, ok)
	assert.Equal(t, 3*time.Second, d)
	assert.ErrorIs(t, err, errDown)
	assert.Equal(t, "wrapped: "+errDown.Error(), err.Error())
	_, ok = breaker.RetryAfterOf(errDown)
	assert.False(t, ok)
	assert.NoError(t, breaker.RetryAfter(nil, time.Second))
}

// RetryAfterOf finds a hint inside joined errors too, and reading a failed call's hint, which
// every failed call does, allocates nothing.
func TestRetryAfterOfJoinedAndWithoutAllocating(t *testing.T) {
	joined := errors.Join(errors.New("first"), fmt.Errorf("second: %w", breaker.RetryAfter(errDown, 2*time.Second)))
	d, ok := breaker.RetryAfterOf(joined)
	assert.True(t, ok)
	assert.Equal(t, 2*time.Second, d)
	_, ok = breaker.RetryAfterOf(errors.Join(errDown, nil))
	assert.False(t, ok)

	m := breaker.NewManager()
	require.NoError(t, m.LoadRules([]breaker.Rule{{Resource: "svc", Strategy: breaker.ErrorRatio, Threshold: 1,
		MinRequestAmount: 1 << 30, RetryTimeout: time.Second}}))
	ctx := context.Background()
	wrapped := fmt.Errorf("call: %w", errDown)
	fail := func(context.Context) error { return wrapped }
	assert.Zero(t, testing.AllocsPerRun(100, func() { _ = m.Do(ctx, "svc", fail) }), "a failed call")
}
