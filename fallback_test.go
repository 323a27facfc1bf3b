package breaker_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakertest"
)

// quickStartCall is the README quick start's call, as written there: Do, then the one if that
// serves a fallback for whatever blocked the call. It reports whether the fallback served it,
// and the error the call ended with.
func quickStartCall(m *breaker.Manager, resource string) (fellBack bool, err error) {
	err = m.Do(context.Background(), resource, func(context.Context) error { return nil })
	if errors.Is(err, breaker.ErrBlocked) {
		return true, err
	}
	return false, err
}

// Given a Manager made to reject a call each way it can (an OPEN breaker, a probe in flight, a
// forced-open resource, the concurrency limit, a slot, a name too long to keep, a ramp after
// recovery, pacing), then the quick start's one `if errors.Is(err, breaker.ErrBlocked)` serves
// its fallback for each, and every BlockKind there is has been driven: a kind added without a
// case here fails this test.
func TestQuickStartFallbackServesEveryRejection(t *testing.T) {
	ctx := context.Background()
	newManager := func(rules []breaker.Rule, opts ...breaker.Option) (*breaker.Manager, *breakertest.Clock) {
		clock := breakertest.NewClock()
		m := breaker.NewManager(append([]breaker.Option{breaker.WithClock(clock)}, opts...)...)
		require.NoError(t, m.LoadRules(rules))
		return m, clock
	}
	fail := func(m *breaker.Manager, name string, n int) {
		for range n {
			_ = m.Do(ctx, name, func(context.Context) error { return errDown })
		}
	}
	cases := []struct {
		kind  breaker.BlockKind
		cause error // matched with errors.Is, beside ErrBlocked; nil: none to match
		block func() *breaker.Manager
	}{
		{breaker.BlockedByBreaker, breaker.ErrOpen, func() *breaker.Manager {
			m, _ := newManager([]breaker.Rule{errorCount(1, 1)})
			fail(m, "svc", 1)
			return m
		}},
		{breaker.BlockedByBreaker, breaker.ErrOpen, func() *breaker.Manager { // a probe in flight
			m, clock := newManager([]breaker.Rule{errorCount(1, 1)})
			fail(m, "svc", 1)
			clock.Advance(5 * time.Second)
			_, err := m.Enter("svc") // the probe, left in flight
			require.NoError(t, err)
			return m
		}},
		{breaker.BlockedByForce, breaker.ErrForcedOpen, func() *breaker.Manager {
			m, _ := newManager(nil)
			require.NoError(t, m.LoadResources(map[string]breaker.ResourceConfig{"svc": {Force: breaker.ForceOpen}}))
			return m
		}},
		{breaker.BlockedByLimit, breaker.ErrConcurrencyLimit, func() *breaker.Manager {
			m, _ := newManager(nil)
			require.NoError(t, m.LoadResources(map[string]breaker.ResourceConfig{"svc": {MaxConcurrency: 1}}))
			_, err := m.Enter("svc") // holds the one place
			require.NoError(t, err)
			return m
		}},
		{breaker.BlockedBySlot, nil, func() *breaker.Manager {
			m, _ := newManager(nil, breaker.WithSlots(blockingSlot{}))
			return m
		}},
		{breaker.BlockedByName, breaker.ErrNameTooLong, func() *breaker.Manager {
			m, _ := newManager([]breaker.Rule{{Resource: "*", Strategy: breaker.ErrorCount, Threshold: 1,
				RetryTimeout: time.Second}}, breaker.WithMaxNameLength(2))
			return m
		}},
		{breaker.BlockedByRampUp, breaker.ErrRampingUp, func() *breaker.Manager {
			m, clock := newManager([]breaker.Rule{rampRule()})
			fail(m, "svc", 5)
			clock.Advance(5 * time.Second)
			require.NoError(t, m.Do(ctx, "svc", func(context.Context) error { return nil }), "the probe")
			fail(m, "svc", 1) // the ramp's first loss: the rest of the bucket is held back
			return m
		}},
		{breaker.BlockedByPacing, breaker.ErrPacing, func() *breaker.Manager {
			m, _ := newManager([]breaker.Rule{paceRule()})
			require.NoError(t, m.Do(ctx, "svc", func(context.Context) error { return nil }))
			require.NoError(t, m.Do(ctx, "svc", func(context.Context) error { return nil }))
			fail(m, "svc", 2) // half of four failed, with successes: it paces
			return m
		}},
	}
	driven := map[breaker.BlockKind]bool{}
	for _, c := range cases {
		m := c.block()
		name := "svc"
		if c.kind == breaker.BlockedByName {
			name = "svc-with-a-long-name"
		}
		fellBack, err := quickStartCall(m, name)
		assert.True(t, fellBack, "%v: %v", c.kind, err)
		if assert.Error(t, err, c.kind.String()) {
			assert.Equal(t, c.kind, blockOf(t, err).Kind())
			if c.cause != nil {
				assert.ErrorIs(t, err, c.cause, c.kind.String())
			}
		}
		driven[c.kind] = true
	}
	for k := breaker.BlockKind(0); !strings.HasPrefix(k.String(), "BlockKind("); k++ {
		assert.True(t, driven[k], "no case drives %v", k)
	}
}
