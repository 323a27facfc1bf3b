// Package fakeclock is a clock that moves only when told to, for tests and examples.
package fakeclock

import (
	"sync"
	"time"
)

// Clock is a settable clock. Its methods are safe for concurrent use.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// Start is the time a new Clock shows: a fixed instant, so tests read the same times every run.
var Start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// New returns a Clock showing Start.
func New() *Clock { return &Clock{now: Start} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock by d, which may be negative.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}

// Since returns the time from Start to the clock's time.
func (c *Clock) Since() time.Duration { return c.Now().Sub(Start) }
