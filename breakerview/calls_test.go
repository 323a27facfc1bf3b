package breakerview_test

import (
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakerview"
)

var at = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// counts returns the calls of each name called at at, as "label=calls", the most called first,
// then by name, the overflow after the names as called.
func counts(calls *breakerview.Calls[struct{}]) []string {
	var out []string
	for _, c := range calls.View(&breaker.Snapshot{At: at}, at).Called {
		out = append(out, c.Label+"="+strconv.FormatUint(c.Calls, 10))
	}
	return out
}

// Given each bound of the Limits in turn, the names within it are kept apart and the calls of
// the others are counted under Overflow; once a new name finds no room, no later new name is
// kept, as its series would otherwise come and go with the order of calls.
func TestCallsKeepNamesWithinTheirLimits(t *testing.T) {
	tests := []struct {
		name  string
		give  breakerview.Limits
		calls []string
		want  []string
	}{
		{name: "names", give: breakerview.Limits{Names: 2}, calls: []string{"a", "b", "c", "a", "d"},
			want: []string{"a=2", "_other=2", "b=1"}},
		{name: "length", give: breakerview.Limits{NameLength: 3}, calls: []string{"abc", "abcd"},
			want: []string{"abc=1", "_other=1"}},
		{name: "bytes", give: breakerview.Limits{NameBytes: 5}, calls: []string{"ab", "cde", "f", "ab"},
			want: []string{"ab=2", "cde=1", "_other=1"}},
		{name: "a rewritten label is charged too", give: breakerview.Limits{NameBytes: 6},
			calls: []string{"a\xff", "b"}, want: []string{"a\uFFFD=1", "_other=1"}},
		{name: "defaults", calls: []string{strings.Repeat("x", breaker.DefaultMaxNameLength),
			strings.Repeat("y", breaker.DefaultMaxNameLength+1)}, want: []string{strings.Repeat("x", 1024) + "=1", "_other=1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := newCalls(tt.give)
			for _, name := range tt.calls {
				require.NotNil(t, calls.Record(ran(name, at, 0)))
			}
			assert.Equal(t, tt.want, counts(calls))
		})
	}
}

// Given a resource really named as the overflow, it keeps a label of its own, and its calls
// turn neither the overflow's series nor the names configured and not called off.
func TestNoNameIsCountedAsTheOverflow(t *testing.T) {
	calls := newCalls(breakerview.Limits{Names: 1})
	e := calls.Record(ran(breakerview.Overflow, at, 0))
	assert.Equal(t, "_other\uFFFD", e.Label())
	assert.NotSame(t, calls.Overflow(), e)
	assert.Equal(t, []string{"_other\uFFFD=1"}, counts(calls))
	snap := &breaker.Snapshot{At: at.Add(time.Minute), Rules: []breaker.Rule{{Resource: "paymnets"}},
		Resources: []breaker.ResourceStatus{{Name: "paymnets", Breakers: []breaker.Stats{{Rule: breaker.Rule{Resource: "paymnets"}}}}}}
	calls.Record(ran(breakerview.Overflow, at.Add(time.Minute), 0))
	v := calls.View(snap, at)
	require.NotNil(t, v.Uncalled, "no call went to the overflow")
	assert.Equal(t, "paymnets", v.Uncalled[0].Name)

	calls.Record(ran("payments", at.Add(time.Minute), 0)) // past the Limits
	assert.Nil(t, calls.View(snap, at).Uncalled, "a call under the overflow could be any name's")
}

// Labels are valid UTF-8, and none is the overflow's.
func TestLabel(t *testing.T) {
	tests := []struct{ give, want string }{
		{give: "payments", want: "payments"},
		{give: "a\xffb", want: "a\uFFFDb"},
		{give: "_other", want: "_other\uFFFD"},
		{give: "_other\xff", want: "_other\uFFFD"},
		{give: "", want: ""},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, breakerview.Label(tt.give), "%q", tt.give)
	}
}

// heapAlloc returns the bytes of the heap that are reachable, after a collection.
func heapAlloc() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// Given short names that are each part of a long string, and names longer than the longest
// kept, the Calls keep copies of the short names only, not the strings they were cut from.
func TestCallsCopyTheNamesTheyKeep(t *testing.T) {
	calls := newCalls(breakerview.Limits{})
	before := heapAlloc()
	for i := range 16 {
		long := strings.Repeat(string(rune('a'+i)), 1<<20)
		calls.Record(ran(long[:100], at, 0))
		calls.Record(ran(long, at, 0))
	}
	kept := heapAlloc() - before
	runtime.KeepAlive(calls)
	assert.Less(t, kept, int64(1<<20), "bytes kept for 16 names of 100 bytes and 16 of 1 MiB")
	assert.Len(t, counts(calls), 17, "16 names and the overflow")
}

// A call of a name kept, a name past the Limits, or one too long to look up allocates nothing.
func TestRecordAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	calls := newCalls(breakerview.Limits{Names: 1})
	calls.Record(ran("kept", at, 0))
	calls.Record(ran("past", at, 0))
	long := strings.Repeat("x", 2000)
	for _, name := range []string{"kept", "past", long} {
		info := ran(name, at, time.Millisecond)
		assert.Zero(t, testing.AllocsPerRun(100, func() { calls.Record(info) }), name)
	}
}

// The value of an entry is built once, from its label, when the entry is made; the overflow
// has its own.
func TestEntryValue(t *testing.T) {
	built := 0
	calls := breakerview.NewCalls(breakerview.Limits{Names: 1}, func(label string) string {
		built++
		return "series of " + label
	})
	assert.Equal(t, 1, built, "the overflow's")
	assert.Equal(t, "series of a\uFFFD", calls.Entry("a\xff").Value())
	assert.Equal(t, "series of a\uFFFD", calls.Entry("a\xff").Value())
	assert.Equal(t, "series of _other", calls.Entry("b").Value())
	assert.Equal(t, 2, built)
	assert.Nil(t, calls.Record(breaker.CallInfo{Resource: "a\xff", NotCalled: errSlot}), "not a call")
}

// A rule's label is its ID, made valid UTF-8, or else its strategy and index.
func TestRuleLabel(t *testing.T) {
	tests := []struct {
		give  breaker.Rule
		giveI int
		want  string
	}{
		{give: breaker.Rule{Strategy: breaker.ErrorRatio}, giveI: 0, want: "ErrorRatio#0"},
		{give: breaker.Rule{Strategy: breaker.SlowRequestRatio}, giveI: 3, want: "SlowRequestRatio#3"},
		{give: breaker.Rule{ID: "slow-orders", Strategy: breaker.SlowRequestRatio}, giveI: 1, want: "slow-orders"},
		{give: breaker.Rule{ID: "a\xff", Strategy: breaker.ErrorRatio}, giveI: 1, want: "a\uFFFD"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, breakerview.RuleLabel(tt.give, tt.giveI))
	}
}
