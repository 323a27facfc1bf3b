package breaker_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakertest"
)

// callLog is a call observer that keeps every CallInfo.
type callLog struct {
	mu    sync.Mutex
	calls []breaker.CallInfo
}

func (l *callLog) OnCall(c breaker.CallInfo) {
	l.mu.Lock()
	l.calls = append(l.calls, c)
	l.mu.Unlock()
}

func (l *callLog) take() []breaker.CallInfo {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.calls
	l.calls = nil
	return c
}

func callHarness(t *testing.T, log *callLog, opts []breaker.Option, rules ...breaker.Rule) *harness {
	h := newHarness(t)
	opts = append([]breaker.Option{breaker.WithClock(h.clock), breaker.WithCallObserver(log.OnCall)}, opts...)
	h.m = breaker.NewManager(opts...)
	h.m.AddObserver(h.events)
	require.NoError(t, h.m.LoadRules(rules))
	return h
}

// Every call is heard once: passed ones with their RT, outcome and slowness, blocked ones with
// their error, also on resources without rules.
func TestCallObserver(t *testing.T) {
	log := &callLog{}
	h := callHarness(t, log, nil, errorCount(2, 1), slowRatio(1, 100))

	require.NoError(t, h.complete("svc", 10*time.Millisecond, nil))
	require.NoError(t, h.complete("svc", 60*time.Millisecond, nil))
	assert.Equal(t, errDown, h.m.Do(t.Context(), "svc", func(context.Context) error {
		h.clock.Advance(time.Millisecond)
		return errDown
	}))
	_ = h.m.Do(t.Context(), "svc", func(context.Context) error { return context.Canceled })
	_ = h.m.Do(t.Context(), "svc", fail) // the second error trips the ErrorCount rule
	blocked := h.m.Do(t.Context(), "svc", succeed)
	require.NoError(t, h.complete("unruled", 5*time.Millisecond, nil))

	var be *breaker.BlockError
	require.ErrorAs(t, blocked, &be)
	at := func(ms int) time.Time { return breakertest.Start.Add(time.Duration(ms) * time.Millisecond) }
	assert.Equal(t, []breaker.CallInfo{
		{Resource: "svc", RT: 10 * time.Millisecond, Outcome: breaker.Success, At: at(10)},
		{Resource: "svc", RT: 60 * time.Millisecond, Outcome: breaker.Success, Slow: true, At: at(70)},
		{Resource: "svc", RT: time.Millisecond, Outcome: breaker.Failure, At: at(71)},
		{Resource: "svc", Outcome: breaker.Ignore, At: at(71)},
		{Resource: "svc", Outcome: breaker.Failure, At: at(71)},
		{Resource: "svc", Blocked: be, At: at(71)},
		{Resource: "unruled", RT: 5 * time.Millisecond, Outcome: breaker.Success, At: at(76)},
	}, log.take())
}

// A call refused before the Manager read the clock for it (its resource is forced open) is
// heard with the time of its refusal too, and one not made with none.
func TestCallObserverTimeOfARefusal(t *testing.T) {
	log := &callLog{}
	h := callHarness(t, log, nil)
	require.NoError(t, h.m.LoadResources(map[string]breaker.ResourceConfig{"svc": {Force: breaker.ForceOpen}}))
	h.clock.Advance(time.Second)
	require.ErrorIs(t, h.complete("svc", 0, nil), breaker.ErrForcedOpen)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_ = h.m.Do(ctx, "svc", succeed)
	got := log.take()
	require.Len(t, got, 2)
	assert.Equal(t, breakertest.Start.Add(time.Second), got[0].At)
	assert.True(t, got[1].At.IsZero(), "not made")
}

// A slot's block is heard too, and a panicking call observer is logged and changes nothing.
func TestCallObserverSlotsAndPanics(t *testing.T) {
	var logs bytes.Buffer
	slots, _ := newSlots("gate")
	errGate := errors.New("gate closed")
	slots[0].block = errGate
	log := &callLog{}
	h := callHarness(t, log, []breaker.Option{
		breaker.WithSlots(slots[0]),
		breaker.WithCallObserver(func(breaker.CallInfo) { panic("observer broke") }),
		breaker.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))),
	}, errorCount(1, 1))

	err := h.m.Do(t.Context(), "svc", succeed)
	assert.ErrorIs(t, err, errGate)
	calls := log.take()
	require.Len(t, calls, 1)
	assert.ErrorIs(t, calls[0].Blocked, errGate)
	assert.Contains(t, logs.String(), "observer broke")

	slots[0].block = nil
	assert.Equal(t, errDown, h.m.Do(t.Context(), "svc", fail))
	assert.Equal(t, breaker.Open, h.state("svc", 0), "the panicking observer did not stop the count")
	assert.Equal(t, []breaker.CallInfo{{Resource: "svc", Outcome: breaker.Failure, At: breakertest.Start}}, log.take())
}
