package breakerhttp_test

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakertest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// retryTimeout is how long the breakers of the tests stay OPEN.
const retryTimeout = 10 * time.Second

// tripOnFirstFailure is a rule that opens the breaker of resource at its first failure.
func tripOnFirstFailure(resource string) breaker.Rule {
	return breaker.Rule{
		Resource:         resource,
		Strategy:         breaker.ErrorCount,
		Threshold:        1,
		MinRequestAmount: 1,
		RetryTimeout:     retryTimeout,
	}
}

// newManager returns a manager on a fake clock with rules loaded, and the calls it completes.
func newManager(t *testing.T, rules ...breaker.Rule) (*breaker.Manager, *breakertest.Clock, *calls) {
	t.Helper()
	clk := breakertest.NewClock()
	rec := &calls{}
	m := breaker.NewManager(breaker.WithClock(clk), breaker.WithSlots(rec))
	require.NoError(t, m.LoadRules(rules))
	return m, clk, rec
}

// state is the state of the only breaker of resource.
func state(t *testing.T, m *breaker.Manager, resource string) breaker.State {
	t.Helper()
	bs := m.Breakers(resource)
	require.Len(t, bs, 1, "breakers of %q", resource)
	return bs[0].State()
}

// calls is a slot that records the resource and the error of every call that exits.
type calls struct {
	mu   sync.Mutex
	done []call
}

type call struct {
	resource string
	err      error
}

func (c *calls) OnEntry(*breaker.Entry) error { return nil }

func (c *calls) OnExit(e *breaker.Entry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.done = append(c.done, call{e.Resource(), e.Err()})
}

func (c *calls) all() []call {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]call(nil), c.done...)
}

// only returns the one call recorded.
func (c *calls) only(t *testing.T) call {
	t.Helper()
	all := c.all()
	require.Len(t, all, 1, "calls exited")
	return all[0]
}

// blockingSlot blocks every call with err.
type blockingSlot struct{ err error }

func (s blockingSlot) OnEntry(*breaker.Entry) error { return s.err }
func (s blockingSlot) OnExit(*breaker.Entry)        {}

// roundTripperFunc adapts a function to an http.RoundTripper.
type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
