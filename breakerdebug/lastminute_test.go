package breakerdebug_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/halfopen/breaker/breakerdebug"
	"github.com/halfopen/breaker/breakertest"
)

// Given calls of 10ms, 80ms and 20ms and a rejected one, then 30 seconds on one of 30ms, then
// the 80ms call is the longest for a minute and at most 10 seconds more; then the 30ms call,
// once the 80ms call's step has left the ring; then none, once no call of the minute is left.
// The calls count the same way, the rejected one included.
func TestLastMinute(t *testing.T) {
	var m breakerdebug.LastMinute
	start := breakertest.Start
	read := func(d time.Duration) (uint64, time.Duration, bool) { return m.Read(start.Add(d)) }
	for _, rt := range []time.Duration{10, 80, 20} {
		m.Record(start, true, rt*time.Millisecond)
	}
	m.Record(start, false, 0)
	m.Record(start.Add(30*time.Second), true, 30*time.Millisecond)

	calls, longest, ran := read(69 * time.Second)
	assert.Equal(t, []any{uint64(5), 80 * time.Millisecond, true}, []any{calls, longest, ran})
	calls, longest, ran = read(70 * time.Second) // the first step has left the ring
	assert.Equal(t, []any{uint64(1), 30 * time.Millisecond, true}, []any{calls, longest, ran})
	calls, _, ran = read(100 * time.Second)
	assert.Equal(t, []any{uint64(0), false}, []any{calls, ran})
	calls, _, ran = read(-time.Hour) // a clock that stepped back reads no step ahead of it
	assert.Equal(t, []any{uint64(0), false}, []any{calls, ran})
}

// Given a call in a step whose slot the ring used a minute before, then only the new call
// counts: the old step's calls and longest call do not come back with its slot. A reading
// older than the step its slot holds now counts nowhere.
func TestLastMinuteSlotReused(t *testing.T) {
	var m breakerdebug.LastMinute
	start := breakertest.Start
	m.Record(start, true, 80*time.Millisecond)
	m.Record(start.Add(70*time.Second), true, 10*time.Millisecond) // the same slot of 7
	m.Record(start, true, time.Second)                             // stale: its step has gone
	calls, longest, _ := m.Read(start.Add(70 * time.Second))
	assert.Equal(t, uint64(1), calls)
	assert.Equal(t, 10*time.Millisecond, longest)
}

// Given eight goroutines recording into one step at once, then every call counts and the
// longest is the longest of them all (under -race, a lost update or a torn raise shows).
func TestLastMinuteConcurrent(t *testing.T) {
	var m breakerdebug.LastMinute
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 1000 {
				m.Record(breakertest.Start, true, time.Duration(g*1000+i))
			}
		}()
	}
	wg.Wait()
	calls, longest, _ := m.Read(breakertest.Start)
	assert.Equal(t, uint64(8000), calls)
	assert.Equal(t, time.Duration(7999), longest)
}
