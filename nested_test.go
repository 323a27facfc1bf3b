package breaker_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakerretry"
)

// innerCalls are the ways a function may call a resource again: Do, a handle's Do, and
// EnterContext with Entry.Run, as an integration does.
var innerCalls = map[string]func(m *breaker.Manager, ctx context.Context, fn func(context.Context) error) error{
	"Do": func(m *breaker.Manager, ctx context.Context, fn func(context.Context) error) error {
		return m.Do(ctx, "svc", fn)
	},
	"Handle": func(m *breaker.Manager, ctx context.Context, fn func(context.Context) error) error {
		return m.Handle("svc").Do(ctx, fn)
	},
	"EnterContext": func(m *breaker.Manager, ctx context.Context, fn func(context.Context) error) error {
		e, err := m.EnterContext(ctx, "svc")
		if err != nil {
			return err
		}
		return e.Run(ctx, fn)
	},
}

// Given a tripped breaker whose retry time has come, when the probe's function calls the same
// resource with the context it was given, then that call passes as part of the probe (the
// dependency is called), uncounted, and the probe is judged once, by the outer call's outcome:
// the outer call succeeds and the breaker closes, though the inner call failed. The same call
// with a context of its own is rejected for the probe in flight.
func TestNestedCallPassesAsPartOfTheProbe(t *testing.T) {
	for name, inner := range innerCalls {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, errorCount(1, 1))
			h.completeN("svc", 1, errDown)
			h.clock.Advance(5 * time.Second)
			called := 0
			err := h.m.Do(context.Background(), "svc", func(ctx context.Context) error {
				require.ErrorIs(t, inner(h.m, context.Background(), fail), breaker.ErrOpen, "a context of its own")
				err := inner(h.m, ctx, func(context.Context) error { called++; return errDown })
				assert.ErrorIs(t, err, errDown, "the dependency's answer, not a rejection")
				return nil // the outer call's own outcome
			})
			require.NoError(t, err)
			assert.Equal(t, 1, called)
			assert.Equal(t, []string{tripped, probing, recovered}, h.events.transitions())
		})
	}
}

// Given a tripped breaker, when a breakerretry loop's function calls the same resource through Do with
// the context it is given (as a retry loop around an HTTP client whose transport is breakerhttp's
// does), then the first attempt after the retry time takes the probe and its nested call
// reaches the dependency: the breaker recovers as it would for the loop alone. A function that
// drops its context gets the rejection for its own probe on every attempt, which counts neither
// way: the dependency is never called and the breaker stays OPEN.
func TestRetryAroundANestedCallRecovers(t *testing.T) {
	for _, passesContext := range []bool{true, false} {
		h := newHarness(t, errorCount(1, 1))
		h.completeN("svc", 1, errDown)
		called := 0
		fn := func(ctx context.Context) error {
			if !passesContext {
				ctx = context.Background()
			}
			return h.m.Do(ctx, "svc", func(context.Context) error { called++; return nil })
		}
		retry := breakerretry.Policy{Attempts: 5, Sleep: func(_ context.Context, d time.Duration) error {
			h.clock.Advance(d)
			return nil
		}}
		err := retry.Do(context.Background(), h.m, "svc", fn)
		if passesContext {
			require.NoError(t, err)
			assert.Equal(t, 1, called)
			assert.Equal(t, []string{tripped, probing, recovered}, h.events.transitions())
			continue
		}
		assert.ErrorIs(t, err, breaker.ErrOpen)
		assert.Zero(t, called, "the dependency is never called")
		assert.Equal(t, breaker.Open, h.state("svc", 0))
	}
}

// Given CLOSED breakers, a call nested in another on the same resource is a call of its own:
// both count, so a failure seen by both counts twice.
func TestNestedCallWhileClosedCountsOnItsOwn(t *testing.T) {
	h := newHarness(t, errorCount(2, 1))
	err := h.m.Do(context.Background(), "svc", func(ctx context.Context) error {
		return h.m.Do(ctx, "svc", fail)
	})
	require.ErrorIs(t, err, errDown)
	assert.Equal(t, []string{tripped}, h.events.transitions(), "two failures")
}

// A plain call's context is handed on as it came: only a call that holds a probe marks it.
func TestOnlyAProbeMarksItsContext(t *testing.T) {
	type key struct{}
	h := newHarness(t, errorCount(1, 1))
	ctx := context.WithValue(context.Background(), key{}, "caller's")
	require.NoError(t, h.m.Do(ctx, "svc", func(got context.Context) error {
		assert.Equal(t, ctx, got)
		return nil
	}))
}
