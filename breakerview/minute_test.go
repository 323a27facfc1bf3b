package breakerview_test

import (
	"errors"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakerview"
)

// newCalls returns a Calls whose entries have no value of their own.
func newCalls(l breakerview.Limits) *breakerview.Calls[struct{}] {
	return breakerview.NewCalls(l, func(string) struct{} { return struct{}{} })
}

// ran is a call of name that ran for rt and ended at at.
func ran(name string, at time.Time, rt time.Duration) breaker.CallInfo {
	return breaker.CallInfo{Resource: name, At: at, RT: rt, Outcome: breaker.Success}
}

// calledAt returns the View of calls at now, by name, with no resource of a Manager.
func calledAt(calls *breakerview.Calls[struct{}], now time.Time) map[string]breakerview.Called {
	out := map[string]breakerview.Called{}
	for _, c := range calls.View(&breaker.Snapshot{At: now}, now).Called {
		out[c.Name] = c
	}
	return out
}

// Given a call in each second of a minute and one more, at instants a Clock may give (the zero
// time the library writes for no time at all, the Unix epoch, a second before it, 1969, past
// the year 2262 where nanoseconds since 1970 overflow an int64, and the ends of what a Unix
// second can say), when the minute is read at its last second, then every call is counted, in
// its second, and the longest is the longest; nothing panics.
func TestMinuteCountsEveryCallAtAnyTime(t *testing.T) {
	tests := []struct {
		name string
		give time.Time
	}{
		{name: "zero", give: time.Time{}},
		{name: "epoch", give: time.Unix(0, 0)},
		{name: "a second before the epoch", give: time.Unix(-1, 0)},
		{name: "1969", give: time.Date(1969, 7, 20, 20, 17, 40, 0, time.UTC)},
		{name: "2300", give: time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC)},
		{name: "the earliest Unix second", give: time.Unix(math.MinInt64+1, 0)},
		{name: "the last Unix second", give: time.Unix(math.MaxInt64-Seconds, 0)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := newCalls(breakerview.Limits{})
			for i := range Seconds {
				calls.Record(ran("svc", tt.give.Add(time.Duration(i)*time.Second), time.Duration(i)*time.Millisecond))
			}
			last := tt.give.Add((Seconds - 1) * time.Second)
			calls.Record(ran("svc", last, 0))
			got := calledAt(calls, last)["svc"]
			assert.Equal(t, uint64(Seconds+1), got.Calls)
			assert.Equal(t, uint64(Seconds+1), got.Ran())
			assert.Equal(t, uint64(2), got.PerSecond[Seconds-1], "the last second")
			assert.Equal(t, uint64(1), got.PerSecond[0], "the first second")
			assert.Equal(t, (Seconds-1)*time.Millisecond, got.Longest)
			assert.Equal(t, uint64(RecentSeconds+1), got.Recent.Calls)
		})
	}
}

// Seconds and RecentSeconds, as the tests write them.
const (
	Seconds       = breakerview.Seconds
	RecentSeconds = breakerview.RecentSeconds
)

// Given one call that ran for 3 s, the minute counts it, and its longest call, until the
// second of the call is a minute behind the reading: no surface counts it 65 s on.
func TestMinuteLastsAMinute(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 500*int(time.Millisecond), time.UTC)
	calls := newCalls(breakerview.Limits{})
	calls.Record(ran("svc", at, 3*time.Second))
	for _, tt := range []struct {
		give time.Duration
		want uint64
	}{{0, 1}, {59 * time.Second, 1}, {59*time.Second + 499*time.Millisecond, 1}, {59*time.Second + 500*time.Millisecond, 0},
		{65 * time.Second, 0}, {-time.Second, 0}} {
		got := calledAt(calls, at.Add(tt.give))["svc"]
		assert.Equal(t, tt.want, got.Calls, "%v after", tt.give)
		if tt.want > 0 {
			assert.Equal(t, 3*time.Second, got.Longest, "%v after", tt.give)
		}
	}
}

var errSlot = errors.New("slot")

// Given calls that failed, were refused, were slow, or were rejected for each cause, the minute
// counts each as it was, a refused call apart from the failed ones, a rejected call takes no
// time, and the causes add up to the calls not let through.
func TestMinuteCountsByCause(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	calls := newCalls(breakerview.Limits{})
	calls.Record(breaker.CallInfo{Resource: "svc", At: at, RT: time.Second, Outcome: breaker.Failure, Slow: true})
	calls.Record(breaker.CallInfo{Resource: "svc", At: at, RT: 2 * time.Second, Outcome: breaker.Failure})
	calls.Record(breaker.CallInfo{Resource: "svc", At: at.Add(-20 * time.Second), Outcome: breaker.Refused, Slow: true})
	calls.Record(breaker.CallInfo{Resource: "svc", At: at, Outcome: breaker.Refused})
	calls.Record(breaker.CallInfo{Resource: "svc", At: at, Outcome: breaker.Ignore})
	errs := map[breaker.BlockKind]error{breaker.BlockedByForce: breaker.ErrForcedOpen,
		breaker.BlockedByLimit: breaker.ErrConcurrencyLimit, breaker.BlockedBySlot: errSlot,
		breaker.BlockedByName: breaker.ErrNameTooLong, breaker.BlockedByRampUp: breaker.ErrRampingUp,
		breaker.BlockedByPacing: breaker.ErrPacing}
	for i, kind := range breakerview.Causes {
		blocked := &breaker.BlockError{Resource: "svc", Cause: errs[kind]}
		if kind == breaker.BlockedByBreaker {
			blocked.Rule = &breaker.Rule{Resource: "svc"}
		}
		require.Equal(t, kind, blocked.Kind())
		for range i + 1 {
			calls.Record(breaker.CallInfo{Resource: "svc", At: at, Blocked: blocked, RT: time.Hour})
		}
	}
	calls.Record(breaker.CallInfo{Resource: "svc", At: at, NotCalled: errSlot}) // not a call

	got := calledAt(calls, at)["svc"]
	assert.Equal(t, uint64(5+28), got.Calls)
	assert.Equal(t, uint64(5), got.Ran())
	assert.Equal(t, uint64(2), got.Failed)
	assert.Equal(t, uint64(2), got.Refused)
	assert.Equal(t, uint64(2), got.Slow)
	assert.Equal(t, uint64(1), got.Recent.Refused, "the other was 20 s ago")
	assert.Equal(t, uint64(2), got.Recent.Failed)
	assert.Equal(t, [len(breakerview.Causes)]uint64{1, 2, 3, 4, 5, 6, 7}, got.Rejected)
	assert.Equal(t, 2*time.Second, got.Longest, "a rejected call takes no time")
}

// Given calls at a time, then a clock stepped back an hour and calls there, the minute read at
// the earlier time counts the calls made there and none of those from ahead of it; read at the
// later time again, it counts those of the later second that no earlier call took the place of.
func TestMinuteAfterAClockSteppedBack(t *testing.T) {
	at := time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC)
	calls := newCalls(breakerview.Limits{})
	calls.Record(ran("svc", at, 0))
	calls.Record(ran("svc", at.Add(time.Second), 0))
	back := at.Add(-time.Hour)
	for range 3 {
		calls.Record(ran("svc", back, 0))
	}
	assert.Equal(t, uint64(3), calledAt(calls, back)["svc"].Calls, "the calls at the earlier time, and none ahead")
	assert.Equal(t, uint64(1), calledAt(calls, at.Add(time.Second))["svc"].Calls,
		"the second whose step the earlier calls took is gone; the other is not")
}

// Given 8 goroutines making 1,000 calls each within one second, under -race, the minute counts
// exactly 8,000.
func TestMinuteCountsConcurrentCalls(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	calls := newCalls(breakerview.Limits{})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 1000 {
				calls.Record(ran("svc", at.Add(time.Duration(i)*time.Microsecond), time.Duration(g)*time.Millisecond))
			}
		})
	}
	wg.Wait()
	got := calledAt(calls, at)["svc"]
	assert.Equal(t, uint64(8000), got.Calls)
	assert.Equal(t, 7*time.Millisecond, got.Longest)
}
