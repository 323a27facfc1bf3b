package breakerdebug_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakerdebug"
	"github.com/halfopen/breaker/breakertest"
	"github.com/halfopen/breaker/breakerview"
)

// callsJSON is the part of the JSON a Recorder adds to each resource.
type callsJSON struct {
	Calls          uint64            `json:"calls"`
	Rejected       map[string]uint64 `json:"rejected"`
	Ran            uint64            `json:"ran"`
	Failures       uint64            `json:"failures"`
	Refused        uint64            `json:"refused"`
	Slow           uint64            `json:"slow"`
	ErrorPercent   float64           `json:"errorPercent"`
	RefusedPercent float64           `json:"refusedPercent"`
	SlowPercent    float64           `json:"slowPercent"`
	RTMax          string            `json:"rtMax"`
	PerSecond      []uint64          `json:"perSecond"`
	Last10s        lastJSON          `json:"last10s"`
}

// rejected is the "rejected" of callsJSON: every cause, with the counts of some.
func rejected(counts map[string]uint64) map[string]uint64 {
	out := map[string]uint64{}
	for _, kind := range breakerview.Causes {
		out[kind.String()] = counts[kind.String()]
	}
	return out
}

// lastJSON is the part of callsJSON that counts the last 10 seconds.
type lastJSON struct {
	Calls          uint64  `json:"calls"`
	Ran            uint64  `json:"ran"`
	Failures       uint64  `json:"failures"`
	Refused        uint64  `json:"refused"`
	Slow           uint64  `json:"slow"`
	ErrorPercent   float64 `json:"errorPercent"`
	RefusedPercent float64 `json:"refusedPercent"`
	SlowPercent    float64 `json:"slowPercent"`
}

type statusJSON struct {
	Now       time.Time `json:"now"`
	Resources []struct {
		Resource string     `json:"resource"`
		Side     string     `json:"side"`
		Calls    *callsJSON `json:"calls"`
		Breakers []struct {
			State   string `json:"state"`
			Bad     uint64 `json:"bad"`
			Refused uint64 `json:"refused"`
		} `json:"breakers"`
	} `json:"resources"`
	Unruled []struct {
		Resource string    `json:"resource"`
		Side     string    `json:"side"`
		Overflow bool      `json:"overflow"`
		Calls    callsJSON `json:"calls"`
	} `json:"unruled"`
}

// newRecorded returns a Manager on a fake clock with a Recorder, rules loaded, and the handler.
func newRecorded(t *testing.T, opts []breakerdebug.RecorderOption, rules ...breaker.Rule) (
	*breaker.Manager, *breakertest.Clock, http.Handler) {
	t.Helper()
	clk := breakertest.NewClock()
	rec := breakerdebug.NewRecorder(opts...)
	m := breaker.NewManager(breaker.WithClock(clk), breaker.WithCallObserver(rec.OnCall))
	require.NoError(t, m.LoadRules(rules))
	return m, clk, breakerdebug.Handler(m, breakerdebug.WithRecorder(rec))
}

func readStatus(t *testing.T, h http.Handler) statusJSON {
	t.Helper()
	rec := get(h, http.MethodGet, path+"?format=json", nil)
	require.Equal(t, http.StatusOK, rec.Code)
	var st statusJSON
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &st), rec.Body.String())
	return st
}

func callsOf(t *testing.T, st statusJSON, resource string) callsJSON {
	t.Helper()
	for _, r := range st.Resources {
		if r.Resource == resource {
			require.NotNil(t, r.Calls, resource)
			return *r.Calls
		}
	}
	require.FailNow(t, "no resource "+resource)
	return callsJSON{}
}

// timed makes one call to resource that takes rt on clk and ends with err.
func timed(m *breaker.Manager, clk *breakertest.Clock, resource string, rt time.Duration, err error) {
	_ = m.Do(context.Background(), resource, func(context.Context) error {
		clk.Advance(rt)
		return err
	})
}

// Given calls that ran, failed, were slow and were rejected by a breaker, by force and by the
// concurrency limit, when the status is read, then each resource carries exact counts by
// cause, percentages, the longest call and calls per second over the last minute.
func TestRecorderCounts(t *testing.T) {
	m, clk, h := newRecorded(t, nil, inventoryRule, paymentsErrors, paymentsSlow)
	require.NoError(t, m.LoadResources(map[string]breaker.ResourceConfig{
		"payments": {MaxConcurrency: 1},
		"legacy":   {Force: breaker.ForceOpen},
	}))
	start := clk.Now().Truncate(time.Second)
	clk.Set(start.Add(100 * time.Millisecond))

	// payments, second 0: 7 calls of 3ms, 2 of them failing, 1 slow call of 150ms; 3ms is
	// under 5ms, 150ms under 200ms.
	for i := range 7 {
		var err error
		if i < 2 {
			err = errDown
		}
		timed(m, clk, "payments", 3*time.Millisecond, err)
	}
	timed(m, clk, "payments", 150*time.Millisecond, nil)
	// One call held in flight: the next is over the concurrency limit.
	held, err := m.Enter("payments")
	require.NoError(t, err)
	call(m, "payments", succeed)
	held.Exit()

	// inventory, second 2: 3 failures trip it, then 2 rejections.
	clk.Set(start.Add(2*time.Second + 100*time.Millisecond))
	for range 5 {
		call(m, "inventory", fail)
	}
	// legacy is forced open: 4 rejections.
	for range 4 {
		call(m, "legacy", succeed)
	}

	st := readStatus(t, h)
	pay := callsOf(t, st, "payments")
	wantPerSecond := make([]uint64, 60)
	wantPerSecond[57] = 10
	assert.Equal(t, callsJSON{
		Calls: 10, Rejected: rejected(map[string]uint64{"concurrency_limit": 1}), Ran: 9, Failures: 2, Slow: 1,
		ErrorPercent: 22.2, SlowPercent: 11.1, RTMax: "150ms",
		PerSecond: wantPerSecond,
		Last10s:   lastJSON{Calls: 10, Ran: 9, Failures: 2, Slow: 1, ErrorPercent: 22.2, SlowPercent: 11.1},
	}, pay)

	inv := callsOf(t, st, "inventory")
	assert.Equal(t, uint64(5), inv.Calls)
	assert.Equal(t, uint64(2), inv.Rejected["open"])
	assert.Equal(t, uint64(3), inv.Failures)
	assert.Equal(t, 100.0, inv.ErrorPercent)
	assert.Equal(t, uint64(5), inv.PerSecond[59])

	leg := callsOf(t, st, "legacy")
	assert.Equal(t, uint64(4), leg.Rejected["forced_open"])
	assert.Equal(t, uint64(0), leg.Ran)
	assert.Empty(t, leg.RTMax, "no call ran")

	// 58 seconds later payments' second 0 is still in the minute; 59, and it is gone.
	clk.Set(start.Add(59*time.Second + 900*time.Millisecond))
	assert.Equal(t, uint64(10), callsOf(t, readStatus(t, h), "payments").PerSecond[0])
	clk.Set(start.Add(60 * time.Second))
	pay = callsOf(t, readStatus(t, h), "payments")
	assert.Equal(t, uint64(0), pay.Calls)
	assert.Equal(t, uint64(5), callsOf(t, readStatus(t, h), "inventory").PerSecond[1])

	// A call in the reused bucket counts alone, not on top of the minute-old second.
	timed(m, clk, "payments", 3*time.Millisecond, nil)
	pay = callsOf(t, readStatus(t, h), "payments")
	assert.Equal(t, uint64(1), pay.Calls)
	assert.Equal(t, uint64(1), pay.PerSecond[59])
}

// Given a breaker that paces and holds calls back, when the status is read, then the calls held
// back count as rejected by pacing, not by an OPEN breaker (ErrPacing is not ErrOpen), and not
// as calls that ran.
func TestRecorderCountsPacedCalls(t *testing.T) {
	m, _, h := newRecorded(t, nil, paceRule)
	for _, fn := range []func(context.Context) error{succeed, succeed, fail, fail, succeed, succeed, succeed} {
		call(m, "svc", fn) // the fourth starts pacing; the last three are held back in its bucket
	}

	svc := callsOf(t, readStatus(t, h), "svc")
	assert.Equal(t, uint64(7), svc.Calls)
	assert.Equal(t, rejected(map[string]uint64{"pacing": 3}), svc.Rejected)
	assert.Equal(t, uint64(4), svc.Ran)
	assert.Equal(t, uint64(2), svc.Failures)
}

// Given calls to names without rules, past the Recorder's limit of names, when the status is
// read, then the names it keeps are listed as unruled, the most called first, up to
// WithUnruled, and the calls of the names past the limit are counted under Overflow.
func TestRecorderUnruledAndOverflow(t *testing.T) {
	clk := breakertest.NewClock()
	rec := breakerdebug.NewRecorder(breakerdebug.RecorderLimits(breakerview.Limits{Names: 3}))
	m := breaker.NewManager(breaker.WithClock(clk), breaker.WithCallObserver(rec.OnCall))
	require.NoError(t, m.LoadRules([]breaker.Rule{inventoryRule}))
	h := breakerdebug.Handler(m, breakerdebug.WithRecorder(rec), breakerdebug.WithUnruled(2))

	call(m, "inventory", succeed) // name 1, has a rule
	for range 3 {
		call(m, "inventroy", succeed) // name 2: misspelt
	}
	call(m, "a", succeed) // name 3
	for i := range 5 {
		call(m, fmt.Sprintf("n%d", i), succeed) // past the limit
	}

	st := readStatus(t, h)
	assert.Equal(t, uint64(1), callsOf(t, st, "inventory").Calls)
	var got []string
	for _, u := range st.Unruled {
		got = append(got, fmt.Sprintf("%s=%d %v", u.Resource, u.Calls.Calls, u.Overflow))
	}
	assert.Equal(t, []string{"_other=5 true", "inventroy=3 false"}, got)
}

// Given many goroutines calling, when the status is read, then every call is counted.
func TestRecorderConcurrent(t *testing.T) {
	m, _, h := newRecorded(t, nil, paymentsErrors)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 1000 {
				call(m, "payments", succeed)
				call(m, "other", fail)
			}
		})
	}
	wg.Wait()
	st := readStatus(t, h)
	assert.Equal(t, uint64(8000), callsOf(t, st, "payments").Calls)
	require.Len(t, st.Unruled, 1)
	assert.Equal(t, uint64(8000), st.Unruled[0].Calls.Failures)
}

func BenchmarkRecorderOnCall(b *testing.B) {
	rec := breakerdebug.NewRecorder()
	c := breaker.CallInfo{Resource: "payments", RT: 3 * time.Millisecond, Outcome: breaker.Failure, At: breakertest.Start}
	rec.OnCall(c)
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			rec.OnCall(c)
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				rec.OnCall(c)
			}
		})
	})
}

// Given calls of known response times, when the status is read, then "rtMax" is the longest
// of those that ran, to the microsecond, and a rejected call, which takes no time, is not one.
func TestRecorderRTMax(t *testing.T) {
	m, clk, h := newRecorded(t, nil, paymentsErrors)
	for _, rt := range []time.Duration{3 * time.Millisecond, 153*time.Millisecond + 271*time.Nanosecond, time.Millisecond} {
		timed(m, clk, "payments", rt, nil)
	}
	assert.Equal(t, "153ms", callsOf(t, readStatus(t, h), "payments").RTMax)
}

// Given a minute of calls that passed and then, over the last seconds, calls that all fail,
// when the status is read, then "last10s" counts the 10 seconds up to the current one, where
// every call failed, beside the minute's share of failures, which the old calls dilute.
func TestRecorderLast10s(t *testing.T) {
	m, clk, h := newRecorded(t, nil, paymentsSlow)
	start := clk.Now().Truncate(time.Second)
	clk.Set(start)
	for range 40 {
		timed(m, clk, "payments", time.Millisecond, nil)
	}
	clk.Set(start.Add(49 * time.Second)) // 10 seconds before the read: out of the last 10
	for range 10 {
		timed(m, clk, "payments", time.Millisecond, nil)
	}
	clk.Set(start.Add(50 * time.Second)) // 9 seconds before: in
	timed(m, clk, "payments", 150*time.Millisecond, errDown)
	clk.Set(start.Add(60*time.Second - 100*time.Millisecond)) // second 59, the current one
	for range 3 {
		timed(m, clk, "payments", time.Millisecond, errDown)
	}

	c := callsOf(t, readStatus(t, h), "payments")
	assert.Equal(t, uint64(54), c.Calls)
	assert.Equal(t, 7.4, c.ErrorPercent, "4 of 54")
	assert.Equal(t, lastJSON{Calls: 4, Ran: 4, Failures: 4, Slow: 1, ErrorPercent: 100, SlowPercent: 25}, c.Last10s)

	// Ten seconds on, those calls are out of it, and it is empty.
	clk.Set(start.Add(69 * time.Second))
	c = callsOf(t, readStatus(t, h), "payments")
	assert.Equal(t, uint64(14), c.Calls, "the minute still has seconds 49 to 59")
	assert.Equal(t, lastJSON{}, c.Last10s)
}

// unruledCounts returns the unruled resources of the status of rec, read on clk, as
// "name=calls".
func unruledCounts(t *testing.T, rec *breakerdebug.Recorder, clk *breakertest.Clock) []string {
	t.Helper()
	m := breaker.NewManager(breaker.WithClock(clk))
	h := breakerdebug.Handler(m, breakerdebug.WithRecorder(rec), breakerdebug.WithUnruled(100))
	var got []string
	for _, u := range readStatus(t, h).Unruled {
		got = append(got, fmt.Sprintf("%s=%d", u.Resource, u.Calls.Calls))
	}
	return got
}

// Given a Manager on a clock far from the system's, and a Recorder given nothing but the
// Manager, when calls are made, then the page counts them in its minute: the Recorder reads
// the Manager's clock, the time each call reports, not a clock of its own.
func TestRecorderCountsByTheManagersClock(t *testing.T) {
	clk := breakertest.NewClock()
	clk.Set(time.Date(1999, 12, 31, 23, 59, 59, 0, time.UTC))
	rec := breakerdebug.NewRecorder()
	m := breaker.NewManager(breaker.WithClock(clk), rec.Option())
	require.NoError(t, m.LoadRules([]breaker.Rule{paymentsErrors}))
	h := breakerdebug.Handler(m, breakerdebug.WithRecorder(rec))
	for range 3 {
		timed(m, clk, "payments", 400*time.Millisecond, nil) // the last one ends in 2000
	}
	c := callsOf(t, readStatus(t, h), "payments")
	assert.Equal(t, uint64(3), c.Calls)
	assert.Equal(t, []uint64{2, 1}, c.PerSecond[58:], "two in the last second of 1999, one in the first of 2000")
}
