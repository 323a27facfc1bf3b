package breaker_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakertest"
)

// rampRule is errorRatio(0.5, 5) over a 1s window of 10 buckets of 100ms, which ramps up for
// 3s after it closes on a probe.
func rampRule() breaker.Rule {
	r := errorRatio(0.5, 5)
	r.RampUp = 3 * time.Second
	return r
}

// recovered trips the harness's "svc" with five failures at the start of a bucket, waits out
// RetryTimeout and closes it with a probe that succeeds, at the start of a bucket too.
func (h *harness) recovered() {
	h.t.Helper()
	h.completeN("svc", 5, errDown)
	require.Equal(h.t, breaker.Open, h.state("svc", 0))
	h.clock.Advance(5 * time.Second)
	h.completeN("svc", 1, nil)
	require.Equal(h.t, breaker.Closed, h.state("svc", 0))
}

// offerBucket offers 20 calls to "svc", one every 5ms from now, the start of a bucket of
// 100ms, to its end. Each takes no time and ends with errFor(i) for the i-th call the breaker
// let through in the bucket (from 0). It returns the calls let through and the errors of those
// held back.
func (h *harness) offerBucket(errFor func(i int) error) (passed int, held []*breaker.BlockError) {
	for range 20 {
		err := h.complete("svc", 0, errFor(passed))
		h.clock.Advance(5 * time.Millisecond)
		var blocked *breaker.BlockError
		if errors.As(err, &blocked) {
			held = append(held, blocked)
			continue
		}
		passed++
	}
	return passed, held
}

// Given a breaker that closed on a probe, when every call succeeds before the next arrives,
// then the ramp admits the whole first bucket and ends at its end: Stats says so from the
// bucket's end on, before any call comes.
func TestRampAdmitsAHealthyFlowAtOnce(t *testing.T) {
	h := newHarness(t, rampRule())
	h.recovered()
	assert.True(t, h.m.Breakers("svc")[0].Stats().RampingUp)
	passed, held := h.offerBucket(func(int) error { return nil })
	assert.Equal(t, 20, passed, "the bucket's calls after the probe")
	assert.Empty(t, held)
	h.clock.Advance(-time.Millisecond) // a moment before the bucket's end
	assert.True(t, h.m.Breakers("svc")[0].Stats().RampingUp, "the bucket has not ended")
	h.clock.Advance(time.Millisecond)
	assert.False(t, h.m.Breakers("svc")[0].Stats().RampingUp, "a bucket took the whole flow")
	require.NoError(t, h.complete("svc", 0, nil))
	assert.False(t, h.m.Breakers("svc")[0].Stats().RampingUp)
}

// Given a breaker that closed on a probe at the start of a bucket, when calls come every 5ms
// and each takes 7ms (still running when the next comes), then the ramp admits all 20 of the
// bucket and ends at its end: the probe is the bucket's first success, so the second call
// passes at 1.5 × 1, and each success after it lets 1.5 more through. (Counting the probe in
// the bucket before instead held back the calls at 10 and 20ms, and the ramp went on.)
func TestRampAdmitsOverlappingCallsOfAHealthyDependency(t *testing.T) {
	h := newHarness(t, rampRule())
	h.recovered()
	start := h.clock.Now()
	advanceTo := func(d time.Duration) { h.clock.Advance(start.Add(d).Sub(h.clock.Now())) }
	type running struct {
		e   *breaker.Entry
		end time.Duration
	}
	var inFlight []running // in the order they end, which is the order they came
	admitted := 0
	for j := range 20 {
		at := time.Duration(j) * 5 * time.Millisecond
		for len(inFlight) > 0 && inFlight[0].end <= at {
			advanceTo(inFlight[0].end)
			inFlight[0].e.Exit()
			inFlight = inFlight[1:]
		}
		advanceTo(at)
		if e, err := h.m.Enter("svc"); err == nil {
			admitted++
			inFlight = append(inFlight, running{e, at + 7*time.Millisecond})
		}
	}
	for _, r := range inFlight {
		advanceTo(r.end)
		r.e.Exit()
	}
	assert.Equal(t, 20, admitted)
	advanceTo(100 * time.Millisecond)
	require.NoError(t, h.complete("svc", 0, nil))
	assert.False(t, h.m.Breakers("svc")[0].Stats().RampingUp, "a bucket took the whole flow")
}

// Given a dependency that serves 4 calls a bucket and fails the rest, then the ramp admits 5
// calls in its first bucket, the probe's (whose success is the bucket's first: the fifth call
// fails, and the bucket before had no success to go on) and 6 in each bucket after it
// (1.5 × 4), so failures stay a third and the rule (0.5) does not trip again for its 3s of
// RampUp; then the full flow trips it within two buckets.
func TestRampPacesAWarmingDependency(t *testing.T) {
	h := newHarness(t, rampRule())
	h.recovered()
	h.events.reset()
	servesFour := func(i int) error { return failIf(i >= 4) }
	passed, held := h.offerBucket(servesFour)
	assert.Equal(t, 5, passed, "the first bucket")
	assert.Len(t, held, 15)
	for b := 1; b < 30; b++ {
		passed, held := h.offerBucket(servesFour)
		require.Equal(t, 6, passed, "bucket %d", b)
		require.Len(t, held, 14)
	}
	assert.Empty(t, h.events.transitions(), "no trip while ramping")
	assert.False(t, h.m.Breakers("svc")[0].Stats().RampingUp,
		"RampUp has passed since the close: the ramp is over, though no call has come since")

	passed, _ = h.offerBucket(servesFour) // RampUp has passed: the full flow
	assert.Equal(t, 20, passed)
	h.offerBucket(servesFour)
	assert.Equal(t, []string{tripped}, h.events.transitions(), "16 failures a bucket trip it")
}

// Given a ramp whose bucket before had 5 successes (the probe and 4 calls), when the first
// call of a bucket fails and every later call is canceled (it counts neither way, so no
// success lets the ramp grow), then the rest of the bucket is offered the bucket before's rate
// spread evenly over it: the call at 0ms, then one whenever 5 × the share of the bucket gone
// by exceeds the calls admitted (past 20, 40, 60 and 80ms: at 25, 45, 65 and 85ms). The fewer
// of the two buckets' successes, 0, would leave only one call in ten (the one at 50ms).
func TestRampAfterALossSpreadsTheRateOfTheBucketBefore(t *testing.T) {
	h := newHarness(t, rampRule())
	h.recovered()
	passed, _ := h.offerBucket(func(i int) error { return failIf(i >= 4) })
	require.Equal(t, 5, passed, "the probe's bucket: 4 more successes, then a loss")
	var admittedAt []time.Duration
	for j := range 20 {
		err := errDown // the bucket's first call: a loss
		if len(admittedAt) > 0 {
			err = context.Canceled
		}
		if h.complete("svc", 0, err) == nil {
			admittedAt = append(admittedAt, time.Duration(j)*5*time.Millisecond)
		}
		h.clock.Advance(5 * time.Millisecond)
	}
	ms := time.Millisecond
	assert.Equal(t, []time.Duration{0, 25 * ms, 45 * ms, 65 * ms, 85 * ms}, admittedAt)
	assert.True(t, h.m.Breakers("svc")[0].Stats().RampingUp)
}

// Given a ramp that held a call back, then its error matches ErrRampingUp and ErrBlocked but
// not ErrOpen, says Closed, names the rule, and tells the caller to retry at the next bucket.
func TestRampRejection(t *testing.T) {
	h := newHarness(t, rampRule())
	h.recovered()
	_, held := h.offerBucket(func(i int) error { return failIf(i >= 1) })
	require.NotEmpty(t, held)
	err := held[0]
	assert.ErrorIs(t, err, breaker.ErrRampingUp)
	assert.ErrorIs(t, err, breaker.ErrBlocked)
	assert.NotErrorIs(t, err, breaker.ErrOpen)
	assert.Equal(t, breaker.BlockedByRampUp, err.Kind())
	assert.Equal(t, "ramping_up", err.Kind().String())
	assert.Equal(t, breaker.Closed, err.State)
	assert.Equal(t, rampRule(), *err.Rule)
	assert.Equal(t, breakertest.Start.Add(5100*time.Millisecond), err.RetryAt, "the next bucket's start")
	assert.Contains(t, err.Error(), "ramping up")
}

// Given a dependency that serves 2 calls a bucket and fails the rest, offered 60 calls a
// bucket, then after the first failure of a bucket the ramp admits no more than the successes
// it has seen allow, however many calls are offered: 3 calls a bucket, a third of them failing,
// so the rule (0.5) does not trip again. A tenth of the calls offered (5 of 60, 3 failing)
// tripped it.
func TestRampAfterALossAdmitsWhatItSawAtAnyLoad(t *testing.T) {
	h := newHarness(t, rampRule())
	h.recovered()
	h.events.reset()
	for bucket := range 10 {
		start, served, passed := h.clock.Now(), 0, 0
		for range 60 {
			err := h.complete("svc", 0, failIf(served >= 2))
			if err == nil {
				passed++
				served++
			}
			h.clock.Advance(time.Millisecond)
		}
		require.Equal(t, 3, passed, "bucket %d", bucket)
		h.clock.Set(start.Add(100 * time.Millisecond))
	}
	assert.Empty(t, h.events.transitions(), "no trip while ramping")
}

// During a ramp, a held back call's RetryAt is the next bucket's start, or the ramp's end if
// that comes first: a single bucket of a minute with RampUp 3 s tells callers to come back
// after 3 s, not 59.
func TestRampRetryAtIsNoLaterThanItsEnd(t *testing.T) {
	rule := rampRule()
	rule.StatInterval, rule.BucketCount = time.Minute, 1
	h := newHarness(t, rule)
	h.recovered()
	closed := h.clock.Now()
	require.NoError(t, h.complete("svc", 0, errDown), "the ramp's first call fails")
	var be *breaker.BlockError
	require.ErrorAs(t, h.complete("svc", 0, nil), &be)
	assert.ErrorIs(t, be, breaker.ErrRampingUp)
	assert.Equal(t, closed.Add(3*time.Second), be.RetryAt)
	h.clock.Set(be.RetryAt)
	assert.NoError(t, h.complete("svc", 0, nil), "the ramp is over at its RetryAt")
}

// Given a ramp that admitted a call which the resource's MaxConcurrency then blocked, then the
// call's place is given back: the ramp still admits as many calls as before.
func TestRampGivesBackABlockedCall(t *testing.T) {
	h := newHarness(t, rampRule())
	require.NoError(t, h.m.LoadResources(map[string]breaker.ResourceConfig{"svc": {MaxConcurrency: 1}}))
	h.recovered()
	first, err := h.m.Enter("svc") // the ramp's first place; it holds the only slot of the limit
	require.NoError(t, err)
	for range 10 {
		_, err := h.m.Enter("svc")
		require.ErrorIs(t, err, breaker.ErrConcurrencyLimit, "the ramp admits, the limit blocks")
	}
	first.Exit() // a success: the bucket before's probe and this one allow 2 more
	for i := range 2 {
		e, err := h.m.Enter("svc")
		require.NoError(t, err, "call %d after the blocked ones", i)
		e.Exit()
	}
}

// Given a first call after the probe that fails, then a ramp admits no other call for the
// rest of the bucket (1 of 20): after a loss it admits no more than the successes it has seen
// allow, and the bucket before had none. A breaker without RampUp lets the full flow through at
// once.
func TestNoRampWithoutRampUp(t *testing.T) {
	for _, rule := range []breaker.Rule{rampRule(), errorRatio(0.5, 5)} {
		h := newHarness(t, rule)
		h.recovered()
		assert.Equal(t, rule.RampUp > 0, h.m.Breakers("svc")[0].Stats().RampingUp)
		passed, _ := h.offerBucket(func(i int) error { return failIf(i == 0) })
		if rule.RampUp > 0 {
			assert.Equal(t, 1, passed)
		} else {
			assert.Equal(t, 20, passed)
		}
	}
}

// Given a ramp whose second call failed, then a Do that it holds back returns the ramp's error
// without calling fn.
func TestRampHoldsBackDo(t *testing.T) {
	h := newHarness(t, rampRule())
	h.recovered()
	ctx := context.Background()
	require.NoError(t, h.m.Do(ctx, "svc", succeed))
	require.ErrorIs(t, h.m.Do(ctx, "svc", func(context.Context) error { return errDown }), errDown,
		"a success allows a second call")
	called := false
	err := h.m.Do(ctx, "svc", func(context.Context) error { called = true; return nil })
	assert.ErrorIs(t, err, breaker.ErrRampingUp)
	assert.False(t, called)
}

// A call whose check ends the ramp and finds a hung call in flight trips the breaker: the
// ramp's end replaces the period with a copy that counts in the same window, and the trip
// moves from that copy. (The hung call and a slow one are 2 of 2 calls, at MinRequestAmount 2.)
func TestRampEndDoesNotLoseATrip(t *testing.T) {
	slow := breaker.Rule{Resource: "svc", Strategy: breaker.SlowRequestRatio, Threshold: 0.5,
		MaxAllowedRT: 10 * time.Millisecond, MinRequestAmount: 2, StatInterval: 200 * time.Millisecond,
		BucketCount: 2, RetryTimeout: 200 * time.Millisecond, RampUp: 100 * time.Millisecond}
	h := newHarness(t, slow)
	require.NoError(t, h.complete("svc", 12*time.Millisecond, nil))
	require.NoError(t, h.complete("svc", 12*time.Millisecond, nil))
	require.Equal(t, breaker.Open, h.state("svc", 0))
	h.clock.Advance(time.Second)
	require.NoError(t, h.complete("svc", 0, nil), "the probe closes it, ramping")
	_, err := h.m.Enter("svc") // hangs
	require.NoError(t, err)
	require.NoError(t, h.complete("svc", 12*time.Millisecond, nil), "slow")
	require.True(t, h.m.Breakers("svc")[0].Stats().RampingUp)

	h.clock.Advance(130 * time.Millisecond) // past the ramp, and the hung call past MaxAllowedRT
	e, err := h.m.Enter("svc")
	require.NoError(t, err, "the ramp is over")
	defer e.Exit()
	assert.Equal(t, breaker.Open, h.state("svc", 0), "2 slow calls of 2")
	trs := h.events.transitions()
	assert.Equal(t, "CLOSED->OPEN ThresholdExceeded", trs[len(trs)-1])
}

// quietSpells are the lulls in traffic a ramp and pacing must come through: the default
// window's buckets are 100ms, so 2^15 and 2^16 buckets are where a bucket number of 16 bits
// would take a new bucket for an old one.
var quietSpells = []struct {
	name string
	give time.Duration
}{
	{"a minute", time.Minute},
	{"an hour", time.Hour},
	{"2^15 buckets", (1 << 15) * 100 * time.Millisecond},
	{"2^16 buckets", (1 << 16) * 100 * time.Millisecond},
	{"a night", 10 * time.Hour},
	{"a year", 365 * 24 * time.Hour},
}

// Given a ramp after recovery that has lost its bucket's only call and holds calls back, when
// no call comes for a quiet spell (the ramp lasting longer still), then the first call after it
// finds its bucket fresh: it passes, and a healthy flow takes the whole bucket, which ends the
// ramp, as it would in the ramp's first bucket.
func TestRampFindsItsBucketFreshAfterAQuietSpell(t *testing.T) {
	for _, tt := range quietSpells {
		t.Run(tt.name, func(t *testing.T) {
			r := rampRule()
			r.RampUp = 2 * 365 * 24 * time.Hour
			h := newHarness(t, r)
			h.recovered()
			require.NoError(t, h.complete("svc", 0, errDown))
			require.ErrorIs(t, h.complete("svc", 0, errDown), breaker.ErrRampingUp, "the bucket holds calls back")
			h.clock.Advance(tt.give) // to the start of a bucket, as the probe's was
			passed, held := h.offerBucket(func(int) error { return nil })
			assert.Equal(t, 20, passed)
			assert.Empty(t, held)
			assert.False(t, h.stats().RampingUp, "a bucket took the whole flow")
			assert.Equal(t, []string{tripped, probing, recovered}, h.events.transitions())
		})
	}
}
