package breakerdebug_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakerdebug"
	"github.com/halfopen/breaker/breakertest"
)

// heapAlloc returns the bytes of the heap that are reachable, after a collection.
func heapAlloc() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// unruledCounts returns the unruled resources of the status as "name=calls", names cut to 8
// bytes.
func unruledCounts(t *testing.T, rec *breakerdebug.Recorder, clk *breakertest.Clock) []string {
	t.Helper()
	m := breaker.NewManager(breaker.WithClock(clk))
	h := breakerdebug.Handler(m, breakerdebug.WithRecorder(rec), breakerdebug.WithUnruled(100))
	var got []string
	for _, u := range readStatus(t, h).Unruled {
		got = append(got, fmt.Sprintf("%.8s=%d", u.Resource, u.Calls.Calls))
	}
	return got
}

// Given calls under 16 names of 1 MiB each, the memory kept grows by far less than their
// 16 MiB: a name longer than 1 KiB is not kept, and its calls count under Overflow.
func TestRecorderKeepsNoLongName(t *testing.T) {
	clk := breakertest.NewClock()
	rec := breakerdebug.NewRecorder(breakerdebug.RecorderClock(clk))
	before := heapAlloc()
	for i := range 16 {
		rec.OnCall(breaker.CallInfo{Resource: strings.Repeat(string(rune('a'+i)), 1<<20)})
	}
	kept := heapAlloc() - before
	runtime.KeepAlive(rec)
	assert.Less(t, kept, int64(1<<20), "bytes kept for 16 MiB of names")
	assert.Equal(t, []string{"_other=16"}, unruledCounts(t, rec, clk))
}

// Given names of 1,000 bytes and a bound of 3,000 bytes of names, the first three are kept
// and the calls of the others count under Overflow; a name of exactly the longest length
// allowed is kept, one byte more is not.
func TestRecorderBoundsTheBytesOfNames(t *testing.T) {
	clk := breakertest.NewClock()
	rec := breakerdebug.NewRecorder(breakerdebug.RecorderClock(clk), breakerdebug.RecorderLimitBytes(3000))
	for _, c := range "abcde" {
		rec.OnCall(breaker.CallInfo{Resource: strings.Repeat(string(c), 1000)})
	}
	rec.OnCall(breaker.CallInfo{Resource: "a"}) // 1 byte more than the bound
	assert.Equal(t, []string{"_other=3", "aaaaaaaa=1", "bbbbbbbb=1", "cccccccc=1"}, unruledCounts(t, rec, clk))

	rec = breakerdebug.NewRecorder(breakerdebug.RecorderClock(clk), breakerdebug.RecorderMaxNameLength(8))
	rec.OnCall(breaker.CallInfo{Resource: "12345678"})
	rec.OnCall(breaker.CallInfo{Resource: "123456789"})
	assert.Equal(t, []string{"12345678=1", "_other=1"}, unruledCounts(t, rec, clk))

	rec = breakerdebug.NewRecorder(breakerdebug.RecorderClock(clk), breakerdebug.RecorderLimitBytes(0))
	rec.OnCall(breaker.CallInfo{Resource: "a"})
	assert.Equal(t, []string{"_other=1"}, unruledCounts(t, rec, clk), "a bound of 0 keeps no name")
}

// Given a short name that is part of a long string, the Recorder keeps a copy of the name, not
// the long string it was cut from.
func TestRecorderCopiesTheNamesItKeeps(t *testing.T) {
	clk := breakertest.NewClock()
	rec := breakerdebug.NewRecorder(breakerdebug.RecorderClock(clk))
	before := heapAlloc()
	for i := range 16 {
		long := strings.Repeat(string(rune('a'+i)), 1<<20)
		rec.OnCall(breaker.CallInfo{Resource: long[:100]})
	}
	kept := heapAlloc() - before
	runtime.KeepAlive(rec)
	assert.Less(t, kept, int64(1<<20), "bytes kept for 16 names of 100 bytes")
	require.Len(t, unruledCounts(t, rec, clk), 16)
}
