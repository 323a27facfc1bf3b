package breaker_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakerhttp"
)

// logSlot records OnEntry and OnExit in a shared log, and blocks when block is set.
type logSlot struct {
	name  string
	log   *[]string
	mu    *sync.Mutex
	block error
}

func (s *logSlot) OnEntry(e *breaker.Entry) error {
	s.mu.Lock()
	*s.log = append(*s.log, s.name+".entry")
	s.mu.Unlock()
	return s.block
}

func (s *logSlot) OnExit(e *breaker.Entry) {
	s.mu.Lock()
	*s.log = append(*s.log, fmt.Sprintf("%s.exit(%v)", s.name, e.Err()))
	s.mu.Unlock()
}

func newSlots(names ...string) ([]*logSlot, *[]string) {
	log, mu := &[]string{}, &sync.Mutex{}
	var slots []*logSlot
	for _, n := range names {
		slots = append(slots, &logSlot{name: n, log: log, mu: mu})
	}
	return slots, log
}

func slotHarness(t *testing.T, slots []*logSlot, rules ...breaker.Rule) *harness {
	t.Helper()
	var ss []breaker.Slot
	for _, s := range slots {
		ss = append(ss, s)
	}
	h := newHarness(t)
	h.m = breaker.NewManager(breaker.WithClock(h.clock), breaker.WithSlots(ss...))
	h.m.AddObserver(h.events)
	require.NoError(t, h.m.LoadRules(rules))
	return h
}

// Slots run in order on entry and in reverse order on exit.
func TestSlotsRunInOrder(t *testing.T) {
	slots, log := newSlots("a", "b")
	h := slotHarness(t, slots, errorCount(1, 1))
	require.NoError(t, h.complete("svc", 0, errDown))
	assert.Equal(t, []string{"a.entry", "b.entry", "b.exit(downstream failed)", "a.exit(downstream failed)"}, *log)
	assert.Equal(t, breaker.Open, h.state("svc", 0), "the breaker counted the call after the slots")
}

// A blocking slot's error is the Cause; the slots before it get OnExit at once, the
// blocking and later ones never; the call is not counted.
func TestSlotBlocks(t *testing.T) {
	slots, log := newSlots("a", "b", "c")
	errFull := errors.New("queue full")
	slots[1].block = errFull
	h := slotHarness(t, slots, errorCount(1, 1))

	err := h.complete("svc", 0, errDown)
	assert.ErrorIs(t, err, breaker.ErrBlocked)
	assert.ErrorIs(t, err, errFull)
	assert.NotErrorIs(t, err, breaker.ErrOpen)
	var be *breaker.BlockError
	require.ErrorAs(t, err, &be)
	assert.Nil(t, be.Rule)
	assert.Equal(t, errFull, be.Cause)
	assert.Equal(t, "svc", be.Resource)
	assert.Contains(t, be.Error(), "queue full")
	assert.Equal(t, []string{"a.entry", "b.entry", "a.exit(<nil>)"}, *log)

	slots[1].block = nil
	require.NoError(t, h.complete("svc", 0, nil))
	assert.Equal(t, breaker.Closed, h.state("svc", 0), "the blocked call was not counted as an error")
}

// A probe blocked by a later slot returns its breaker to OPEN with the retry time unchanged.
func TestProbeBlockedBySlot(t *testing.T) {
	slots, _ := newSlots("gate")
	h := slotHarness(t, slots, errorCount(1, 1))
	h.completeN("svc", 1, errDown)
	h.at(5 * time.Second)

	slots[0].block = errors.New("not now")
	assert.ErrorIs(t, h.complete("svc", 0, nil), breaker.ErrBlocked)
	assert.Equal(t, breaker.Open, h.state("svc", 0))
	assert.Equal(t, []string{tripped, probing, "HALF_OPEN->OPEN ProbeBlocked"}, h.events.transitions())

	slots[0].block = nil
	require.NoError(t, h.complete("svc", 0, nil), "the next call may probe at once")
	assert.Equal(t, breaker.Closed, h.state("svc", 0))
}

// A panicking OnEntry unwinds like a block: earlier slots exit, the probe is given back, and
// the panic goes on up.
func TestSlotPanicOnEntry(t *testing.T) {
	slots, log := newSlots("a")
	boom := &panicSlot{}
	h := newHarness(t)
	h.m = breaker.NewManager(breaker.WithClock(h.clock), breaker.WithSlots(slots[0], boom))
	h.m.AddObserver(h.events)
	require.NoError(t, h.m.LoadRules([]breaker.Rule{errorCount(1, 1)}))
	h.completeN("svc", 1, errDown)
	h.at(5 * time.Second)
	*log = nil

	boom.armed = true
	assert.PanicsWithValue(t, "slot broke", func() { _, _ = h.m.Enter("svc") })
	assert.Equal(t, []string{"a.entry", "a.exit(<nil>)"}, *log)
	assert.Equal(t, breaker.Open, h.state("svc", 0))
	assert.Equal(t, []string{tripped, probing, "HALF_OPEN->OPEN ProbeBlocked"}, h.events.transitions())

	boom.armed = false
	require.NoError(t, h.complete("svc", 0, nil))
	assert.Equal(t, breaker.Closed, h.state("svc", 0))
}

// A panicking OnExit still lets the breakers count the call.
func TestSlotPanicOnExit(t *testing.T) {
	boom := &panicSlot{}
	h := newHarness(t)
	h.m = breaker.NewManager(breaker.WithClock(h.clock), breaker.WithSlots(boom))
	require.NoError(t, h.m.LoadRules([]breaker.Rule{errorCount(1, 1)}))
	e, err := h.m.Enter("svc")
	require.NoError(t, err)
	boom.armed = true
	e.SetError(errDown)
	assert.Panics(t, e.Exit)
	assert.Equal(t, breaker.Open, h.state("svc", 0))
}

type panicSlot struct{ armed bool }

func (s *panicSlot) OnEntry(*breaker.Entry) error {
	if s.armed {
		panic("slot broke")
	}
	return nil
}

func (s *panicSlot) OnExit(*breaker.Entry) {
	if s.armed {
		panic("slot broke on exit")
	}
}

// Given a resource of two breakers, when the door of one of them, TryPass, is made to reject
// every call (through the package's test hook), then every entry point follows it: Do, Execute,
// a handle's Do and Enter, Enter, EnterContext, a Manager with slots, and breakerhttp's
// transport and middleware all refuse the call with that breaker's error, and the function is
// not called; once the door lets calls through again, so do they all.
func TestEveryEntryPointTakesTheDoor(t *testing.T) {
	first, second := errorCount(1, 1), slowRatio(1, 1)
	second.ID = "the vetoed one"
	ctx := context.Background()
	called := 0
	fn := func(context.Context) error { called++; return nil }
	entries := map[string]func(m *breaker.Manager) error{
		"Do":     func(m *breaker.Manager) error { return m.Do(ctx, "svc", fn) },
		"Handle": func(m *breaker.Manager) error { return m.Handle("svc").Do(ctx, fn) },
		"Execute": func(m *breaker.Manager) error {
			_, err := breaker.Execute(ctx, m, "svc", func(ctx context.Context) (int, error) { return 0, fn(ctx) })
			return err
		},
		"Enter": func(m *breaker.Manager) error {
			e, err := m.Enter("svc")
			if err == nil {
				err = e.Run(ctx, fn)
			}
			return err
		},
		"Handle.Enter": func(m *breaker.Manager) error {
			e, err := m.Handle("svc").Enter()
			if err == nil {
				err = e.Run(ctx, fn)
			}
			return err
		},
		"EnterContext": func(m *breaker.Manager) error {
			e, err := m.EnterContext(ctx, "svc")
			if err == nil {
				err = e.Run(ctx, fn)
			}
			return err
		},
		"transport": func(m *breaker.Manager) error {
			next := roundTrip(func(*http.Request) (*http.Response, error) {
				called++
				return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}, nil
			})
			rt := breakerhttp.NewTransport(next, m, breakerhttp.WithResource(func(*http.Request) string { return "svc" }))
			req := httptest.NewRequest(http.MethodGet, "http://api/", nil)
			resp, err := rt.RoundTrip(req)
			if err == nil {
				resp.Body.Close()
			}
			return err
		},
		"middleware": func(m *breaker.Manager) error {
			h := breakerhttp.Middleware(m, breakerhttp.WithResource(func(*http.Request) string { return "svc" }))(
				http.HandlerFunc(func(http.ResponseWriter, *http.Request) { called++ }))
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
			if rec.Code != http.StatusOK {
				return fmt.Errorf("status %d", rec.Code)
			}
			return nil
		},
	}
	for name, call := range entries {
		for _, withSlots := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, slots %v", name, withSlots), func(t *testing.T) {
				var opts []breaker.Option
				if withSlots {
					slots, _ := newSlots("s")
					opts = append(opts, breaker.WithSlots(slots[0]))
				}
				m := breaker.NewManager(opts...)
				require.NoError(t, m.LoadRules([]breaker.Rule{first, second}))
				lift := breaker.Veto(m.Breakers("svc")[1])
				called = 0
				err := call(m)
				require.Error(t, err)
				if name != "middleware" { // the middleware answers 503
					be := blockOf(t, err)
					assert.Equal(t, "the vetoed one", be.Rule.ID)
				}
				assert.Zero(t, called, "the function is not called")
				lift()
				require.NoError(t, call(m), "the door lets the call through again")
				assert.Equal(t, 1, called)
			})
		}
	}
}

// roundTrip is an http.RoundTripper made of a function.
type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
