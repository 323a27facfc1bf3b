package breaker_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
)

// callsRule is an ErrorRatio rule of "svc" over its last n calls.
func callsRule(threshold float64, n uint32) breaker.Rule {
	return breaker.Rule{Resource: "svc", Strategy: breaker.ErrorRatio, Threshold: threshold, StatCalls: n,
		RetryTimeout: 5 * time.Second}
}

// A window of calls judges the last StatCalls calls however long they took to come: ten
// failures an hour apart trip it on the tenth, where a time window would forget them.
func TestStatCallsIgnoreTime(t *testing.T) {
	h := newHarness(t, callsRule(0.5, 10))
	for i := range 9 {
		require.NoError(t, h.complete("svc", 0, errDown), "call %d", i)
		h.clock.Advance(time.Hour)
	}
	assert.Equal(t, breaker.Stats{Rule: h.m.Breakers("svc")[0].Rule(), State: breaker.Closed, Total: 9, Bad: 9}, h.m.Breakers("svc")[0].Stats(),
		"MinRequestAmount is StatCalls: nine calls are not enough")
	require.NoError(t, h.complete("svc", 0, errDown))
	assert.Equal(t, breaker.Open, h.state("svc", 0))
	assert.Equal(t, 1.0, h.events.last().Snapshot)
}

// The window slides one call at a time: the oldest call leaves as each new one comes.
func TestStatCallsSlide(t *testing.T) {
	r := callsRule(0.5, 4)
	h := newHarness(t, r)
	for _, err := range []error{nil, nil, errDown, nil} {
		require.NoError(t, h.complete("svc", 0, err))
	}
	assert.Equal(t, breaker.Stats{Rule: h.m.Breakers("svc")[0].Rule(), State: breaker.Closed, Total: 4, Bad: 1}, h.m.Breakers("svc")[0].Stats())
	require.NoError(t, h.complete("svc", 0, nil)) // the first good call leaves
	require.NoError(t, h.complete("svc", 0, nil)) // the second
	assert.Equal(t, breaker.Stats{Rule: h.m.Breakers("svc")[0].Rule(), State: breaker.Closed, Total: 4, Bad: 1}, h.m.Breakers("svc")[0].Stats())
	require.NoError(t, h.complete("svc", 0, nil)) // the failure leaves: good, good, good, good
	assert.Equal(t, breaker.Stats{Rule: h.m.Breakers("svc")[0].Rule(), State: breaker.Closed, Total: 4, Bad: 0}, h.m.Breakers("svc")[0].Stats())
	require.NoError(t, h.complete("svc", 0, errDown))
	assert.Equal(t, breaker.Closed, h.state("svc", 0), "1 of 4")
	require.NoError(t, h.complete("svc", 0, errDown))
	assert.Equal(t, breaker.Open, h.state("svc", 0), "2 of 4 trips at 0.5")
	assert.Equal(t, 0.5, h.events.last().Snapshot)
}

// ErrorCount counts the failures among the last StatCalls calls; failures further apart than
// that never add up.
func TestStatCallsErrorCount(t *testing.T) {
	r := breaker.Rule{Resource: "svc", Strategy: breaker.ErrorCount, Threshold: 3, StatCalls: 100,
		MinRequestAmount: 1, RetryTimeout: time.Second}
	h := newHarness(t, r)
	for range 5 {
		require.NoError(t, h.complete("svc", 0, errDown))
		h.completeN("svc", 100, nil) // the failure leaves the window
	}
	assert.Equal(t, breaker.Closed, h.state("svc", 0))
	for range 2 {
		require.NoError(t, h.complete("svc", 0, errDown))
		h.completeN("svc", 48, nil) // three failures in 99 calls
	}
	require.NoError(t, h.complete("svc", 0, errDown))
	assert.Equal(t, breaker.Open, h.state("svc", 0), "three failures within 100 calls")
}

// A slow rule over a window of calls counts a call still in flight past MaxAllowedRT as one of
// its calls, slow, once.
func TestStatCallsCountHungCalls(t *testing.T) {
	r := breaker.Rule{Resource: "svc", Strategy: breaker.SlowRequestRatio, Threshold: 1, MaxAllowedRT: 50 * time.Millisecond,
		StatCalls: 3, RetryTimeout: time.Second}
	h := newHarness(t, r)
	hung, err := enterN(h.m, "svc", 3)
	require.NoError(t, err)
	h.clock.Advance(200 * time.Millisecond) // past MaxAllowedRT and a slot of the ring
	require.NoError(t, h.complete("svc", 0, nil))
	assert.Equal(t, breaker.Open, h.state("svc", 0), "three hung calls, counted as slow while in flight")
	assert.Equal(t, []string{tripped}, h.events.transitions())
	exitAll(hung)
	assert.Equal(t, breaker.Open, h.state("svc", 0))
}

// StatCalls is validated, and the fields about time are refused beside it.
func TestStatCallsValidation(t *testing.T) {
	base := callsRule(0.5, 100)
	tests := []struct {
		name  string
		edit  func(*breaker.Rule)
		field string
	}{
		{"too many", func(r *breaker.Rule) { r.StatCalls = breaker.MaxStatCalls + 1 }, "StatCalls"},
		{"no window to count in", func(r *breaker.Rule) { r.Strategy, r.Threshold = breaker.ConsecutiveErrors, 3 }, "StatCalls"},
		{"beside StatInterval", func(r *breaker.Rule) { r.StatInterval = time.Second }, "StatInterval"},
		{"beside BucketCount", func(r *breaker.Rule) { r.BucketCount = 10 }, "BucketCount"},
		{"beside FastBuckets", func(r *breaker.Rule) { r.FastBuckets = 2 }, "FastBuckets"},
		{"beside FastThreshold", func(r *breaker.Rule) { r.FastThreshold = 0.9 }, "FastThreshold"},
		{"beside RampUp", func(r *breaker.Rule) { r.RampUp = time.Second }, "RampUp"},
		{"more calls needed than held", func(r *breaker.Rule) { r.MinRequestAmount = 101 }, "MinRequestAmount"},
		{"more failures needed than held", func(r *breaker.Rule) { r.Strategy, r.Threshold = breaker.ErrorCount, 101 }, "Threshold"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := base
			tt.edit(&r)
			m := breaker.NewManager()
			err := m.LoadRules([]breaker.Rule{r})
			var re *breaker.RuleError
			require.ErrorAs(t, err, &re)
			assert.Equal(t, tt.field, re.Field)
			assert.Empty(t, m.Rules(), "nothing is loaded")
		})
	}
	r := base
	r.StatCalls, r.MinRequestAmount = breaker.MaxStatCalls, breaker.MaxStatCalls
	assert.NoError(t, r.Validate())
}

// WithDefaults spells out MinRequestAmount as StatCalls and leaves the time window's fields
// at 0, so the rule it returns is valid; JSON carries statCalls.
func TestStatCallsDefaultsAndJSON(t *testing.T) {
	d := callsRule(0.5, 20).WithDefaults()
	assert.Equal(t, uint64(20), d.MinRequestAmount)
	assert.Zero(t, d.StatInterval)
	assert.Zero(t, d.BucketCount)
	require.NoError(t, d.Validate())

	data, err := json.Marshal(callsRule(0.5, 20))
	require.NoError(t, err)
	assert.Contains(t, string(data), `"statCalls":20`)
	rules, err := breaker.ParseRules([]byte("[" + string(data) + "]"))
	require.NoError(t, err)
	assert.Equal(t, []breaker.Rule{callsRule(0.5, 20)}, rules)
}

// A reload that changes StatCalls gives the rule a new breaker; one that changes only its
// threshold keeps the breaker and its window.
func TestStatCallsReload(t *testing.T) {
	h := newHarness(t, callsRule(0.5, 4))
	h.completeN("svc", 4, errDown)
	require.Equal(t, breaker.Open, h.state("svc", 0))
	require.NoError(t, h.m.LoadRules([]breaker.Rule{callsRule(0.75, 4)}))
	assert.Equal(t, breaker.Open, h.state("svc", 0), "tuned: kept")
	require.NoError(t, h.m.LoadRules([]breaker.Rule{callsRule(0.75, 8)}))
	assert.Equal(t, breaker.Closed, h.state("svc", 0), "a new window: a new breaker")
	assert.Equal(t, "OPEN->CLOSED RuleChanged", h.events.transitions()[1])
	assert.Equal(t, breaker.Stats{Rule: h.m.Breakers("svc")[0].Rule(), State: breaker.Closed, Generation: 0}, h.m.Breakers("svc")[0].Stats())
}

// The window takes its ring in the memory budget.
func TestStatCallsInTheBudget(t *testing.T) {
	m := breaker.NewManager(breaker.WithMemoryBudget(64 << 10))
	rules := make([]breaker.Rule, 0, 60)
	for i := range 60 {
		r := callsRule(0.5, breaker.MaxStatCalls) // 1,250 bytes of ring and the breaker
		r.Resource = string(rune('a'+i%26)) + string(rune('a'+i/26))
		rules = append(rules, r)
	}
	err := m.LoadRules(rules)
	var re *breaker.RuleError
	require.ErrorAs(t, err, &re)
	assert.Contains(t, re.Reason, "memory budget")
	require.NoError(t, m.LoadRules(rules[:20]))
}

// Under concurrent calls, every read of the window holds no more bad calls than calls and no
// more calls than StatCalls, and a trip's ratio is never above 1.
func TestStatCallsInvariantsUnderConcurrency(t *testing.T) {
	r := callsRule(0.75, 64)
	r.MinRequestAmount = 1
	h := newHarness(t, r)
	var broken atomic.Int64
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 3000 {
				err := error(nil)
				if (g+i)%4 != 0 { // three in four fail: the window trips now and then
					err = errDown
				}
				if errors.Is(h.m.Do(context.Background(), "svc", func(context.Context) error { return err }), breaker.ErrOpen) && g == 0 {
					h.m.Reset("svc")
				}
				if st := h.m.Breakers("svc")[0].Stats(); st.Bad > st.Total || st.Total > 64 {
					broken.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	assert.Zero(t, broken.Load(), "a read with Bad > Total or Total > StatCalls")
	trips := 0
	for _, c := range h.events.all() {
		if c.Reason == breaker.ThresholdExceeded {
			trips++
			assert.LessOrEqual(t, c.Snapshot, 1.0)
			assert.GreaterOrEqual(t, c.Snapshot, 0.75)
		}
	}
	assert.Positive(t, trips, "the test must trip the breaker to check its snapshots")
}

// A call through a window of calls allocates nothing.
func TestStatCallsAllocateNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	m := breaker.NewManager()
	r := callsRule(0.5, 100)
	require.NoError(t, m.LoadRules([]breaker.Rule{r}))
	ctx := context.Background()
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _ = m.Do(ctx, "svc", succeed) }))
}
