package breakerdebug

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakertest"
)

// Given a subscriber that reads nothing beside one that reads everything, when more changes
// come than a subscriber may fall behind by, then the observer drops the slow one at the first
// change it has no room for, closes its channel after the changes it holds, and counts it; it
// never waits for it, and the other, which reads each change as it comes, hears every one.
func TestSlowSubscriberIsDroppedWithoutWaiting(t *testing.T) {
	cs := &changes{limit: 2}
	slow, _, ok := cs.subscribe(0)
	require.True(t, ok)
	fast, _, ok := cs.subscribe(0)
	require.True(t, ok)
	heard := 0
	for i := range keep + 1 {
		cs.OnStateChange(breaker.StateChange{Seq: uint64(i + 1)})
		<-fast.ch // it reads each change as it comes
		heard++
	}
	assert.Equal(t, keep+1, heard)
	assert.Equal(t, eventsStatus{Subscribers: 1, Limit: 2, Dropped: 1}, cs.stats())
	n := 0
	for range slow.ch { // closed after what it holds
		n++
	}
	assert.Equal(t, keep, n)
	cs.unsubscribe(fast)
	assert.Equal(t, eventsStatus{Subscribers: 0, Limit: 2, Dropped: 1}, cs.stats())
	cs.unsubscribe(slow) // after the observer dropped it: nothing to do
}

// stalled is a ResponseWriter whose client stopped reading: after the first write, each write
// waits until release is closed.
type stalled struct {
	*httptest.ResponseRecorder
	mu      sync.Mutex
	writes  int
	release chan struct{}
}

func (w *stalled) Write(b []byte) (int, error) {
	w.mu.Lock()
	w.writes++
	first := w.writes == 1
	w.mu.Unlock()
	if !first {
		<-w.release
	}
	return w.ResponseRecorder.Write(b)
}

// Given a subscriber whose client stopped reading, when calls make more state changes than it
// may fall behind by, then the calls are not slowed (they run here while its writes wait), it
// is dropped and counted, and its stream ends once its write returns.
func TestSubscriberThatStopsReadingIsDropped(t *testing.T) {
	clk := breakertest.NewClock()
	m := breaker.NewManager(breaker.WithClock(clk))
	require.NoError(t, m.LoadRules([]breaker.Rule{{Resource: "svc", Strategy: breaker.ErrorCount, Threshold: 1,
		MinRequestAmount: 1, RetryTimeout: time.Second}}))
	h := Handler(m).(*handler)
	w := &stalled{ResponseRecorder: httptest.NewRecorder(), release: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req := httptest.NewRequestWithContext(ctx, http.MethodGet, "/debug/breakers/events", nil)
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.ServeHTTP(w, req)
	}()
	require.Eventually(t, func() bool { return h.changes.stats().Subscribers == 1 }, 10*time.Second, time.Millisecond)

	fail := func(context.Context) error { return errDown }
	for range keep + 2 { // each a trip, a probe and a close: three changes
		_ = m.Do(context.Background(), "svc", fail)
		clk.Advance(time.Second)
		held, err := m.Enter("svc")
		require.NoError(t, err)
		held.Exit()
	}
	assert.Equal(t, eventsStatus{Subscribers: 0, Limit: defaultSubscribers, Dropped: 1}, h.changes.stats())
	close(w.release)
	<-done // it ended without its client going
}

var errDown = errors.New("downstream: 503")
