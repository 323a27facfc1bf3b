package scenario

import (
	"context"
	"sync"
	"time"
)

// Clock is the harness's time: offsets from the start of a run. The real runs use RealClock;
// the harness's tests use FakeClock, so they never sleep.
type Clock interface {
	// Now is the time since the run started.
	Now() time.Duration
	// Sleep waits d, or until ctx is done, whichever comes first; it returns ctx.Err() if ctx
	// ended the wait.
	Sleep(ctx context.Context, d time.Duration) error
}

// RealClock reads the monotonic clock from a fixed start.
type RealClock struct{ start time.Time }

// NewRealClock returns a RealClock whose zero is now.
func NewRealClock() *RealClock { return &RealClock{start: time.Now()} }

// Now returns the time since the clock was made.
func (c *RealClock) Now() time.Duration { return time.Since(c.start) }

// Sleep waits on a timer, so a canceled context ends it at once.
func (c *RealClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// FakeClock moves only when something sleeps on it: Sleep advances it by the whole duration
// at once. It suits a single goroutine driving the harness (Runner with a synchronous Spawn).
type FakeClock struct {
	mu  sync.Mutex
	now time.Duration
}

// Now returns the fake time.
func (c *FakeClock) Now() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Sleep advances the fake time by d; the context is not consulted, as nothing else runs.
func (c *FakeClock) Sleep(_ context.Context, d time.Duration) error {
	c.Advance(d)
	return nil
}

// Advance moves the fake time forward by d (backwards moves are ignored).
func (c *FakeClock) Advance(d time.Duration) {
	if d <= 0 {
		return
	}
	c.mu.Lock()
	c.now += d
	c.mu.Unlock()
}
