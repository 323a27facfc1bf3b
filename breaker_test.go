package breaker_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
)

// This file tests the whole cycle of a breaker and its door: TryPass, OnRequestComplete and
// Stats, and the read-only breakers that Manager.Breakers returns. The tests of each state are
// in closed_test.go, open_test.go and halfopen_test.go.

// A call admitted before a transition neither decides the probe nor enters the new window.
func TestStaleCallsAreIgnored(t *testing.T) {
	h := newHarness(t, errorCount(2, 1))
	early, err := h.m.Enter("svc") // admitted while CLOSED
	require.NoError(t, err)
	h.completeN("svc", 2, errDown)
	require.Equal(t, breaker.Open, h.state("svc", 0))

	h.at(5 * time.Second)
	probe, err := h.m.Enter("svc")
	require.NoError(t, err)
	require.Equal(t, breaker.HalfOpen, h.state("svc", 0))

	early.SetError(errDown)
	early.Exit() // finishes while HALF_OPEN: must not decide the probe
	assert.Equal(t, breaker.HalfOpen, h.state("svc", 0))

	late, err := h.m.Enter("svc")
	assert.Nil(t, late)
	assert.ErrorIs(t, err, breaker.ErrOpen)

	probe.Exit()
	require.Equal(t, breaker.Closed, h.state("svc", 0))

	// An old call finishing now must not count in the new window either.
	h2 := newHarness(t, errorCount(2, 1))
	old, err := h2.m.Enter("svc")
	require.NoError(t, err)
	h2.completeN("svc", 2, errDown)
	h2.at(5 * time.Second)
	h2.completeN("svc", 1, nil) // probe succeeds: a new, empty window
	old.SetError(errDown)
	old.Exit()
	h2.completeN("svc", 1, errDown) // one error in the new window: below 2
	assert.Equal(t, breaker.Closed, h2.state("svc", 0))
}

// A breaker's door takes the probe of a breaker whose retry time has come, and only one.
func TestTryPassTakesTheProbe(t *testing.T) {
	h := newHarness(t, errorRatio(1, 1))
	h.completeN("svc", 1, errDown)
	b := h.m.Breakers("svc")[0]
	e1, e2 := breaker.NewRival(h.m), breaker.NewRival(h.m)
	assert.False(t, e1.Pass(b), "before the retry time")
	h.at(5 * time.Second)
	e1 = breaker.NewRival(h.m)
	assert.True(t, e1.Pass(b))
	assert.Equal(t, breaker.HalfOpen, b.State())
	assert.False(t, e2.Pass(b), "one probe")
	e1.Complete(b, nil)
	assert.Equal(t, breaker.Closed, b.State())
}

// The breakers that Manager.Breakers returns are read-only to anyone but the admission path:
// TryPass on a Ticket it did not make lets nothing through, takes no probe and enters no call
// in flight, and OnRequestComplete counts nothing.
func TestBreakersAreReadOnly(t *testing.T) {
	h := newHarness(t, slowRatio(1, 1), errorCount(1, 1))
	for _, b := range h.m.Breakers("svc") {
		assert.False(t, b.TryPass(&breaker.Ticket{}), "CLOSED, but not the admission path's Ticket")
		assert.False(t, b.TryPass(nil))
		b.OnRequestComplete(&breaker.Ticket{})
		b.OnRequestComplete(nil)
		assert.Zero(t, b.Stats().Total, "nothing counted")
	}
	h.clock.Advance(time.Hour) // a call the ring held would have run an hour: slow
	require.NoError(t, h.complete("svc", 0, nil))
	assert.Empty(t, h.events.transitions(), "no call in flight was entered")

	h.completeN("svc", 1, errDown) // trips the count rule
	h.clock.Advance(5 * time.Second)
	b := h.m.Breakers("svc")[1]
	assert.False(t, b.TryPass(&breaker.Ticket{}))
	assert.Equal(t, breaker.Open, b.State(), "its probe is still to be taken")
	require.NoError(t, h.complete("svc", 0, nil), "by the next call")
}

// Stats reads the window and the times of the current period.
func TestStats(t *testing.T) {
	r := errorCount(3, 1)
	r.ProbeTimeout = time.Second
	h := newHarness(t, r)
	b := h.m.Breakers("svc")[0]
	assert.Equal(t, breaker.Stats{Rule: b.Rule(), State: breaker.Closed}, b.Stats())
	assert.Zero(t, b.Stats().Ratio(), "an empty window")

	h.at(100 * time.Millisecond)
	h.completeN("svc", 3, nil)
	h.completeN("svc", 2, errDown)
	assert.Equal(t, breaker.Stats{Rule: b.Rule(), State: breaker.Closed, Total: 5, Bad: 2}, b.Stats())
	assert.Equal(t, 0.4, b.Stats().Ratio())
	h.at(1100 * time.Millisecond) // the 100ms bucket has left the window
	assert.Equal(t, breaker.Stats{Rule: b.Rule(), State: breaker.Closed}, b.Stats())

	h.completeN("svc", 3, errDown)
	tripAt := h.clock.Now()
	assert.Equal(t, breaker.Stats{Rule: b.Rule(), State: breaker.Open, Generation: 1, RetryAt: tripAt.Add(5 * time.Second)}, b.Stats())

	h.clock.Advance(5 * time.Second)
	probe, err := h.m.Enter("svc")
	require.NoError(t, err)
	assert.Equal(t, breaker.Stats{Rule: b.Rule(), State: breaker.HalfOpen, Generation: 2, RetryAt: tripAt.Add(5 * time.Second),
		ProbeDeadline: h.clock.Now().Add(time.Second)}, b.Stats())
	probe.Exit()
	assert.Equal(t, breaker.Stats{Rule: b.Rule(), State: breaker.Closed, Generation: 3}, b.Stats())
}
