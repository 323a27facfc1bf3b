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
)

// doneContexts are a context canceled and one past its deadline, both done before the call.
func doneContexts() map[string]context.Context {
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), time.Unix(0, 0))
	cancel2()
	return map[string]context.Context{"canceled": canceled, "past its deadline": expired}
}

// A call whose context is already done is not a call: Do, Execute, a Handle and
// EnterContext return the context's error without calling fn or admitting anything, so a
// caller upstream that passes on a deadline it has used up never trips a healthy dependency's
// breaker. Ten such calls leave an ErrorCount rule of 3 CLOSED with nothing in its window.
func TestDoneContextIsNotACall(t *testing.T) {
	for name, ctx := range doneContexts() {
		t.Run(name, func(t *testing.T) {
			var heard []breaker.CallInfo
			h := newHarness(t)
			h.m = breaker.NewManager(breaker.WithClock(h.clock), breaker.WithCallObserver(
				func(c breaker.CallInfo) { heard = append(heard, c) }))
			require.NoError(t, h.m.LoadRules([]breaker.Rule{errorCount(3, 1)}))
			require.NoError(t, h.m.LoadResources(map[string]breaker.ResourceConfig{"svc": {MaxConcurrency: 1}}))
			called := 0
			fn := func(context.Context) error { called++; return errDown }
			handle := h.m.Handle("svc")
			for range 10 {
				assert.ErrorIs(t, h.m.Do(ctx, "svc", fn), ctx.Err())
				_, err := breaker.Execute(ctx, h.m, "svc", func(context.Context) (int, error) { called++; return 0, errDown })
				assert.ErrorIs(t, err, ctx.Err())
				assert.ErrorIs(t, handle.Do(ctx, fn), ctx.Err())
				e, err := h.m.EnterContext(ctx, "svc")
				assert.Nil(t, e)
				assert.ErrorIs(t, err, ctx.Err())
				assert.NotErrorIs(t, err, breaker.ErrBlocked)
			}
			assert.Zero(t, called, "fn is never called")
			st := h.m.Breakers("svc")[0].Stats()
			assert.Equal(t, breaker.Closed, st.State)
			assert.Zero(t, st.Total, "nothing counted")
			assert.Zero(t, h.m.InFlight("svc"), "no place of MaxConcurrency taken")
			require.Len(t, heard, 40, "call observers hear each call")
			for _, c := range heard {
				assert.Equal(t, breaker.CallInfo{Resource: "svc", NotCalled: ctx.Err()}, c)
			}
		})
	}
}

// A done context takes no probe and makes no template breaker: an OPEN breaker whose retry
// time has come stays OPEN for the next call to probe, and a name a template matches gets no
// breakers.
func TestDoneContextTakesNoProbeAndMakesNoBreakers(t *testing.T) {
	ctx := doneContexts()["canceled"]
	template := errorCount(1, 1)
	template.Resource = "tmpl-*"
	h := newHarness(t, errorCount(1, 1), template)
	h.completeN("svc", 1, errDown)
	h.clock.Advance(5 * time.Second)
	assert.ErrorIs(t, h.m.Do(ctx, "svc", succeed), context.Canceled)
	assert.Equal(t, breaker.Open, h.state("svc", 0), "the probe is still to be taken")
	assert.ErrorIs(t, h.m.Do(ctx, "tmpl-a", succeed), context.Canceled)
	assert.Empty(t, h.m.TemplateResources())
	require.NoError(t, h.complete("svc", 0, nil), "the next call is the probe")
	assert.Equal(t, []string{tripped, probing, recovered}, h.events.transitions())
}

// errDriver is a driver's own answer to a cancellation, which does not wrap context.Canceled.
var errDriver = errors.New("driver: query interrupted")

// Given a call whose caller cancels its context while it runs, when the function answers with
// an error of its own that does not wrap context.Canceled (as many drivers do), then the call
// counts neither way, through Do, Execute, a Handle and Entry.Run: a breaker that opens on one
// failure stays CLOSED with nothing in its window, and call observers hear Ignore. The function's
// error still goes to the caller.
func TestCallItsCallerCanceledCountsNeitherWay(t *testing.T) {
	calls := map[string]func(m *breaker.Manager, ctx context.Context, fn func(context.Context) error) error{
		"Do": func(m *breaker.Manager, ctx context.Context, fn func(context.Context) error) error {
			return m.Do(ctx, "svc", fn)
		},
		"Execute": func(m *breaker.Manager, ctx context.Context, fn func(context.Context) error) error {
			_, err := breaker.Execute(ctx, m, "svc", func(ctx context.Context) (int, error) { return 0, fn(ctx) })
			return err
		},
		"Handle": func(m *breaker.Manager, ctx context.Context, fn func(context.Context) error) error {
			return m.Handle("svc").Do(ctx, fn)
		},
		"Entry.Run": func(m *breaker.Manager, ctx context.Context, fn func(context.Context) error) error {
			e, err := m.EnterContext(ctx, "svc")
			if err != nil {
				return err
			}
			return e.Run(ctx, fn)
		},
	}
	for name, call := range calls {
		for _, timeout := range []time.Duration{0, time.Hour} {
			t.Run(fmt.Sprintf("%s, Timeout %v", name, timeout), func(t *testing.T) {
				var heard []breaker.Outcome
				h := newHarness(t)
				h.m = breaker.NewManager(breaker.WithClock(h.clock), breaker.WithCallObserver(
					func(c breaker.CallInfo) { heard = append(heard, c.Outcome) }))
				require.NoError(t, h.m.LoadRules([]breaker.Rule{errorCount(1, 1)}))
				require.NoError(t, h.m.LoadResources(map[string]breaker.ResourceConfig{"svc": {Timeout: timeout}}))
				ctx, cancel := context.WithCancel(context.Background())
				err := call(h.m, ctx, func(context.Context) error { cancel(); return errDriver })
				assert.ErrorIs(t, err, errDriver)
				st := h.m.Breakers("svc")[0].Stats()
				assert.Equal(t, breaker.Closed, st.State)
				assert.Zero(t, st.Total)
				assert.Equal(t, []breaker.Outcome{breaker.Ignore}, heard)
			})
		}
	}
}

// Given a call whose caller's deadline passes while it runs, then it counts as its error says:
// the dependency did not answer in time, and a breaker that opens on one failure opens. A call
// that succeeds after its caller canceled counts as the success it was.
func TestCallPastItsCallersDeadlineCountsAsItsError(t *testing.T) {
	h := newHarness(t, errorCount(1, 1))
	ctx, cancel := context.WithTimeout(context.Background(), time.Nanosecond)
	defer cancel()
	<-ctx.Done()
	e, err := h.m.Enter("svc")
	require.NoError(t, err)
	assert.ErrorIs(t, e.Run(ctx, func(context.Context) error { return errDriver }), errDriver)
	assert.Equal(t, []string{tripped}, h.events.transitions())

	h = newHarness(t, errorRatio(0.6, 2))
	canceled, cancel := context.WithCancel(context.Background())
	require.NoError(t, h.m.Do(canceled, "svc", func(context.Context) error { cancel(); return nil }))
	require.ErrorIs(t, h.m.Do(context.Background(), "svc", func(context.Context) error { return errDown }), errDown)
	assert.Equal(t, uint64(2), h.stats().Total, "the success counts")
	assert.Equal(t, uint64(1), h.stats().Bad)
}
