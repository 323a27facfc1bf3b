package breaker_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakertest"
)

// The library promises to start no goroutines: every test of the package proves it.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// harness is a Manager on a fake clock with an observer that records every transition.
type harness struct {
	t      *testing.T
	clock  *breakertest.Clock
	m      *breaker.Manager
	events *recorder
}

func newHarness(t *testing.T, rules ...breaker.Rule) *harness {
	t.Helper()
	h := &harness{t: t, clock: breakertest.NewClock(), events: &recorder{}}
	h.m = breaker.NewManager(breaker.WithClock(h.clock))
	h.m.AddObserver(h.events)
	require.NoError(t, h.m.LoadRules(rules))
	return h
}

// complete makes one call to resource that takes rt and ends with err. It returns the block
// error when the call was not let through (and then the clock does not move).
func (h *harness) complete(resource string, rt time.Duration, err error) error {
	e, blocked := h.m.Enter(resource)
	if blocked != nil {
		return blocked
	}
	h.clock.Advance(rt)
	e.SetError(err)
	e.Exit()
	return nil
}

// completeN makes n calls that take no time.
func (h *harness) completeN(resource string, n int, err error) {
	h.t.Helper()
	for i := 0; i < n; i++ {
		require.NoError(h.t, h.complete(resource, 0, err), "call %d of %d", i+1, n)
	}
}

// at moves the clock to offset from the fake clock's start.
func (h *harness) at(offset time.Duration) { h.clock.Set(breakertest.Start.Add(offset)) }

// state is the state of the i-th breaker of resource.
func (h *harness) state(resource string, i int) breaker.State {
	h.t.Helper()
	bs := h.m.Breakers(resource)
	require.Greater(h.t, len(bs), i)
	return bs[i].State()
}

// recorder is an Observer that keeps every StateChange.
type recorder struct {
	mu      sync.Mutex
	changes []breaker.StateChange
}

func (r *recorder) OnStateChange(c breaker.StateChange) {
	r.mu.Lock()
	r.changes = append(r.changes, c)
	r.mu.Unlock()
}

func (r *recorder) all() []breaker.StateChange {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]breaker.StateChange(nil), r.changes...)
}

// transitions lists the changes as "FROM->TO Reason".
func (r *recorder) transitions() []string {
	var out []string
	for _, c := range r.all() {
		out = append(out, fmt.Sprintf("%v->%v %v", c.From, c.To, c.Reason))
	}
	return out
}

func (r *recorder) last() breaker.StateChange {
	all := r.all()
	if len(all) == 0 {
		return breaker.StateChange{}
	}
	return all[len(all)-1]
}

func (r *recorder) reset() {
	r.mu.Lock()
	r.changes = nil
	r.mu.Unlock()
}

const (
	tripped   = "CLOSED->OPEN ThresholdExceeded"
	probing   = "OPEN->HALF_OPEN RetryTimeoutElapsed"
	recovered = "HALF_OPEN->CLOSED ProbeSucceeded"
	reopened  = "HALF_OPEN->OPEN ProbeFailed"
)

// errDown is the error of a call that failed.
var errDown = errors.New("downstream failed")

// errorCount, errorRatio and slowRatio are rules of "svc" with RetryTimeout 5s (slowRatio's
// MaxAllowedRT is 50ms) over the default window, a second of ten buckets.
func errorCount(threshold float64, minRequests uint64) breaker.Rule {
	return breaker.Rule{Resource: "svc", Strategy: breaker.ErrorCount, Threshold: threshold,
		MinRequestAmount: minRequests, RetryTimeout: 5 * time.Second}
}

func errorRatio(threshold float64, minRequests uint64) breaker.Rule {
	return breaker.Rule{Resource: "svc", Strategy: breaker.ErrorRatio, Threshold: threshold,
		MinRequestAmount: minRequests, RetryTimeout: 5 * time.Second}
}

func slowRatio(threshold float64, minRequests uint64) breaker.Rule {
	return breaker.Rule{Resource: "svc", Strategy: breaker.SlowRequestRatio, Threshold: threshold,
		MaxAllowedRT: 50 * time.Millisecond, MinRequestAmount: minRequests, RetryTimeout: 5 * time.Second}
}

// callsRule is an ErrorRatio rule of "svc" over its last n calls.
func callsRule(threshold float64, n uint32) breaker.Rule {
	return breaker.Rule{Resource: "svc", Strategy: breaker.ErrorRatio, Threshold: threshold, StatCalls: n,
		RetryTimeout: 5 * time.Second}
}

// failIf returns errDown when bad, else nil.
func failIf(bad bool) error {
	if bad {
		return errDown
	}
	return nil
}

// blockOf returns err as a *BlockError, failing the test if it is not one.
func blockOf(t *testing.T, err error) *breaker.BlockError {
	t.Helper()
	var be *breaker.BlockError
	require.True(t, errors.As(err, &be), "want a *BlockError, got %v", err)
	return be
}

// enterN enters n calls to name and returns the entries that passed and the error of the last
// call that did not.
func enterN(m *breaker.Manager, name string, n int) ([]*breaker.Entry, error) {
	var entries []*breaker.Entry
	var last error
	for range n {
		e, err := m.Enter(name)
		if err != nil {
			last = err
			continue
		}
		entries = append(entries, e)
	}
	return entries, last
}

// exitAll exits every entry.
func exitAll(entries []*breaker.Entry) {
	for _, e := range entries {
		e.Exit()
	}
}
