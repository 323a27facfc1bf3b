package breakerdebug_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakerdebug"
	"github.com/halfopen/breaker/breakertest"
)

// Given calls of 10ms, 80ms and 20ms in one second and one of about 12ms half a minute later,
// when the status is read, then "rtMax" is the 80ms call's until its second leaves the minute,
// then the later call's, rounded to the microsecond, then "" once no call of the minute is
// left; a call that took no time is "0s", and a resource with no call that ran has "".
func TestRecorderRTMax(t *testing.T) {
	m, clk, h := newRecorded(t, nil, inventoryRule, paymentsErrors)
	start := clk.Now().Truncate(time.Second)
	clk.Set(start)
	for _, rt := range []time.Duration{10 * time.Millisecond, 80 * time.Millisecond, 20 * time.Millisecond} {
		timed(m, clk, "payments", rt, nil)
	}
	for range 5 {
		call(m, "inventory", fail) // 3 failures trip it: the last 2 are rejected
	}
	clk.Set(start.Add(30 * time.Second))
	timed(m, clk, "payments", 12345678*time.Nanosecond, nil)
	clk.Set(start.Add(59 * time.Second))
	st := readStatus(t, h)
	assert.Equal(t, "80ms", callsOf(t, st, "payments").RTMax)
	assert.Equal(t, "0s", callsOf(t, st, "inventory").RTMax, "its failures took no time on the fake clock")

	clk.Set(start.Add(60 * time.Second)) // the first second has left the minute
	st = readStatus(t, h)
	assert.Equal(t, "12.346ms", callsOf(t, st, "payments").RTMax)
	assert.Empty(t, callsOf(t, st, "inventory").RTMax, "no call of the minute ran")

	clk.Set(start.Add(90 * time.Second))
	assert.Empty(t, callsOf(t, readStatus(t, h), "payments").RTMax)
}

// Given a call in a second whose bucket the minute used before, then only the new call counts:
// the old second's longest call does not come back with its bucket.
func TestRecorderRTMaxBucketReused(t *testing.T) {
	m, clk, h := newRecorded(t, nil, paymentsErrors)
	start := clk.Now().Truncate(time.Second)
	clk.Set(start)
	timed(m, clk, "payments", 800*time.Millisecond, nil)
	clk.Set(start.Add(60 * time.Second)) // the same bucket
	timed(m, clk, "payments", 10*time.Millisecond, nil)
	assert.Equal(t, "10ms", callsOf(t, readStatus(t, h), "payments").RTMax)
}

// Keeping the longest call leaves OnCall as it was: once a name is kept, a call allocates
// nothing.
func TestRecorderOnCallAllocations(t *testing.T) {
	clk := breakertest.NewClock()
	rec := breakerdebug.NewRecorder(breakerdebug.RecorderClock(clk))
	c := breaker.CallInfo{Resource: "payments", RT: 3 * time.Millisecond}
	rec.OnCall(c) // keeps the name
	allocs := testing.AllocsPerRun(100, func() {
		clk.Advance(time.Millisecond)
		c.RT += time.Millisecond // a longer call each time: the longest is raised
		rec.OnCall(c)
	})
	require.Zero(t, allocs)
}
