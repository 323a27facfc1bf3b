// Package breakertest helps test code that uses package breaker. Its Clock moves only when
// told to, so a test can trip a breaker, pass its retry timeout and check the probe without
// sleeping:
//
//	clock := breakertest.NewClock()
//	m := breaker.NewManager(breaker.WithClock(clock))
//	... // calls that fail until the breaker is OPEN
//	clock.Advance(rule.RetryTimeout) // the next call is the probe
package breakertest

import (
	"sync"
	"time"
)

// Start is the time a new Clock shows: a fixed instant, so tests read the same times on every
// run.
var Start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Clock is a breaker.Clock that moves only when told to. Its methods are safe for concurrent
// use.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a Clock showing Start.
func NewClock() *Clock { return &Clock{now: Start} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock by d, which may be negative: a breaker must cope with a clock that
// steps back.
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
