package breaker_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakertest"
)

// errQuota is what a dependency answers beyond its quota.
var errQuota = fmt.Errorf("429 too many requests")

// refused is errQuota marked as a refusal, as the integrations record a 429.
func refused() error { return breaker.CountAs(errQuota, breaker.Refused) }

// refusedFor is a refusal whose dependency asks to wait d.
func refusedFor(d time.Duration) error {
	return breaker.CountAs(breaker.RetryAfter(errQuota, d), breaker.Refused)
}

// Given an error rule, then a refusal counts against it as a bad call, apart from failures,
// however it is marked: CountAs, wrapped by the function's caller, or said by a Classifier.
func TestRefusalCountsAgainstErrorRules(t *testing.T) {
	classifier := breaker.WithClassifier(func(err error) breaker.Outcome {
		if err == errQuota {
			return breaker.Refused
		}
		return breaker.Failure
	})
	tests := []struct {
		name string
		give error
		opts []breaker.Option
	}{
		{"CountAs", refused(), nil},
		{"wrapped", fmt.Errorf("push: %w", refused()), nil},
		{"joined", fmt.Errorf("push: %w", fmt.Errorf("partner: %w", refusedFor(time.Second))), nil},
		{"a Classifier", errQuota, []breaker.Option{classifier}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := breakertest.NewClock()
			m := breaker.NewManager(append([]breaker.Option{breaker.WithClock(clock)}, tt.opts...)...)
			require.NoError(t, m.LoadRules([]breaker.Rule{errorRatio(0.5, 100), errorCount(100, 1)}))
			ctx := context.Background()
			require.NoError(t, m.Do(ctx, "svc", func(context.Context) error { return nil }))
			require.Error(t, m.Do(ctx, "svc", func(context.Context) error { return errDown }))
			require.ErrorIs(t, m.Do(ctx, "svc", func(context.Context) error { return tt.give }), errQuota)
			for _, b := range m.Breakers("svc") {
				st := b.Stats()
				assert.Equal(t, uint64(3), st.Total, b.Rule().Strategy)
				assert.Equal(t, uint64(2), st.Bad, b.Rule().Strategy)
				assert.Equal(t, uint64(1), st.Refused, b.Rule().Strategy)
			}
		})
	}
}

// Given a window of the last calls, then it counts its refusals apart too, and forgets one
// when a later call takes its place.
func TestRefusalInAWindowOfCalls(t *testing.T) {
	h := newHarness(t, callsRule(0.9, 3))
	require.NoError(t, h.complete("svc", 0, refused()))
	require.NoError(t, h.complete("svc", 0, nil))
	st := h.stats()
	assert.Equal(t, []uint64{2, 1, 1}, []uint64{st.Total, st.Bad, st.Refused})
	h.completeN("svc", 2, nil)
	st = h.stats()
	assert.Equal(t, []uint64{3, 0, 0}, []uint64{st.Total, st.Bad, st.Refused}, "the refusal left the window")
}

// Given a rule with a fast threshold over a window that holds successes, when the newest bucket
// holds nothing but refusals, then it does not fast-trip: refusals are a live dependency, not a
// hard outage. The same calls failing do.
func TestRefusalsNeverFastTrip(t *testing.T) {
	for _, tt := range []struct {
		name string
		give error
		want []string
	}{
		{"refused", refused(), nil},
		{"failed", errDown, []string{"CLOSED->OPEN FastTrip"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := errorRatio(0.5, 4)
			r.FastBuckets, r.FastThreshold = 1, 0.8
			h := newHarness(t, r)
			h.completeN("svc", 20, nil)
			h.clock.Advance(100 * time.Millisecond)
			for range 5 {
				_ = h.complete("svc", 0, tt.give)
			}
			assert.Equal(t, tt.want, h.events.transitions())
		})
	}
}

// Given ConsecutiveErrors, then refusals between failures neither lengthen the run nor end it:
// three failures with refusals between trip a threshold of 3, and Stats counts no refusal.
func TestRefusalsNeitherLengthenNorEndARun(t *testing.T) {
	h := newHarness(t, breaker.Rule{Resource: "svc", Strategy: breaker.ConsecutiveErrors, Threshold: 3,
		RetryTimeout: time.Second})
	for i := range 2 {
		require.NoError(t, h.complete("svc", 0, errDown))
		require.NoError(t, h.complete("svc", 0, refused()))
		st := h.stats()
		assert.Equal(t, uint64(i+1), st.Bad, "the run")
		assert.Zero(t, st.Refused)
	}
	require.NoError(t, h.complete("svc", 0, errDown))
	assert.Equal(t, []string{tripped}, h.events.transitions())
}

// Given a slow rule, then a refusal is judged by its time alone: a quick one is a good call,
// a slow one a slow call, and neither is counted as a refusal.
func TestRefusalIsJudgedByItsTimeOnASlowRule(t *testing.T) {
	h := newHarness(t, slowRatio(0.9, 100))
	require.NoError(t, h.complete("svc", time.Millisecond, refused()))
	require.NoError(t, h.complete("svc", 100*time.Millisecond, refused()))
	st := h.stats()
	assert.Equal(t, []uint64{2, 1, 0}, []uint64{st.Total, st.Bad, st.Refused})
}

// Given a breaker that lets its probe through, when the probe is refused with a hint longer
// than its RetryTimeout, then the probe failed, and the breaker stays OPEN for the hint,
// within MaxRetryTimeout.
func TestRefusedProbeFails(t *testing.T) {
	r := errorCount(1, 1)
	r.RetryTimeout, r.MaxRetryTimeout = time.Second, 10*time.Second
	h := newHarness(t, r)
	require.NoError(t, h.complete("svc", 0, errDown))
	h.clock.Advance(time.Second)
	require.NoError(t, h.complete("svc", 0, refusedFor(3*time.Second)))
	assert.Equal(t, []string{tripped, probing, reopened}, h.events.transitions())
	assert.Equal(t, h.clock.Now().Add(3*time.Second), h.stats().RetryAt)
}

// quotaRule paces "svc" as the README recommends for a quota: ErrorRatio 0.5 over a second of
// ten buckets, MinRequestAmount 4, FastBuckets 2.
func quotaRule() breaker.Rule {
	r := paceRule()
	r.FastBuckets = 2
	return r
}

// Given a rule that paces, when refusals with a hint start pacing, then calls are held back
// until the hint says the dependency takes calls again, with that time as RetryAt (a hint
// longer than the window holds them for the window only); each bucket meanwhile lets its first
// call through, and the first of them to succeed ends the hold, as a quota's Retry-After is
// rounded up to whole seconds.
func TestRefusalHintHoldsPacing(t *testing.T) {
	for _, tt := range []struct {
		name string
		hint time.Duration
		want time.Duration
	}{
		{"the hint", 300 * time.Millisecond, 300 * time.Millisecond},
		{"at most a window", time.Minute, time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, quotaRule())
			h.completeN("svc", 2, nil)
			h.completeN("svc", 2, refusedFor(tt.hint))
			require.Equal(t, []string{pacingStarted}, h.events.transitions())
			resume := h.clock.Now().Add(tt.want)

			err := h.complete("svc", 0, nil)
			require.ErrorIs(t, err, breaker.ErrPacing, "held back for the rest of the bucket")
			assert.Equal(t, resume, blockOf(t, err).RetryAt)

			h.clock.Advance(100 * time.Millisecond)
			require.NoError(t, h.complete("svc", 0, refusedFor(tt.hint)), "the bucket's first call")
			err = h.complete("svc", 0, nil)
			require.ErrorIs(t, err, breaker.ErrPacing, "and no more")
			assert.Equal(t, h.clock.Now().Add(tt.want), blockOf(t, err).RetryAt, "held longer, by the new hint")

			h.clock.Advance(100 * time.Millisecond)
			require.NoError(t, h.complete("svc", 0, nil), "the first call of the next bucket succeeds")
			for i := range 10 {
				require.NoError(t, h.complete("svc", 0, nil), "then every call passes: call %d", i)
			}
			assert.True(t, h.stats().Pacing, "until the next refusal says otherwise")
		})
	}
}

// Given pacing on a quota, when each period of the quota begins with a bucket that takes every
// call offered, then pacing goes on while the dependency refused within the last window, and
// ends a window after the last refusal's hold; a bucket in which the only call ended refused
// is a live dependency, not a dead one.
func TestRefusalsKeepPacingOn(t *testing.T) {
	h := newHarness(t, quotaRule())
	h.completeN("svc", 2, nil)
	h.completeN("svc", 2, refusedFor(200*time.Millisecond)) // pacing, held until 200ms
	h.clock.Set(breakertest.Start.Add(300 * time.Millisecond))
	for range 3 {
		require.NoError(t, h.complete("svc", 0, nil)) // the quota's new period: all admitted
	}
	h.clock.Set(breakertest.Start.Add(400 * time.Millisecond))
	require.NoError(t, h.complete("svc", 0, refused()), "admitted")
	h.clock.Set(breakertest.Start.Add(500 * time.Millisecond))
	require.NoError(t, h.complete("svc", 0, nil), "a bucket with only a refusal did not die")
	assert.Equal(t, []string{pacingStarted}, h.events.transitions())
	assert.True(t, h.stats().Pacing)

	h.clock.Set(breakertest.Start.Add(1500 * time.Millisecond)) // a window after the last hold
	for i := range 20 {
		if i == 10 {
			h.clock.Advance(100 * time.Millisecond)
		}
		_ = h.complete("svc", 0, nil)
	}
	assert.Equal(t, []string{pacingStarted, pacingEnded}, h.events.transitions())
}
