package breaker_test

import (
	"math"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
)

// Hostile rules each get a clear error or work; none panics, hangs or takes memory out of
// proportion.
func TestHostileRules(t *testing.T) {
	const forever = time.Duration(math.MaxInt64)
	tests := []struct {
		name      string
		give      breaker.Rule
		wantField string // "" when the rule must load and work
	}{
		{"NaN threshold", breaker.Rule{Resource: "r", Strategy: breaker.ErrorRatio, Threshold: math.NaN(), RetryTimeout: time.Second}, "Threshold"},
		{"+Inf threshold", breaker.Rule{Resource: "r", Strategy: breaker.ErrorCount, Threshold: math.Inf(1), RetryTimeout: time.Second}, "Threshold"},
		{"-Inf threshold", breaker.Rule{Resource: "r", Strategy: breaker.ErrorRatio, Threshold: math.Inf(-1), RetryTimeout: time.Second}, "Threshold"},
		{"largest float count", breaker.Rule{Resource: "r", Strategy: breaker.ErrorCount, Threshold: math.MaxFloat64, RetryTimeout: time.Second}, ""},
		{"4 billion buckets", breaker.Rule{Resource: "r", Strategy: breaker.ErrorCount, Threshold: 1, BucketCount: math.MaxUint32, StatInterval: 24 * time.Hour, RetryTimeout: time.Second}, "BucketCount"},
		{"window near overflow", breaker.Rule{Resource: "r", Strategy: breaker.ErrorCount, Threshold: 1, StatInterval: forever, RetryTimeout: time.Second}, "StatInterval"},
		{"retry near overflow", breaker.Rule{Resource: "r", Strategy: breaker.ErrorCount, Threshold: 1, MinRequestAmount: 1, RetryTimeout: forever}, ""},
		{"probe timeout near overflow", breaker.Rule{Resource: "r", Strategy: breaker.ErrorCount, Threshold: 1, MinRequestAmount: 1, RetryTimeout: time.Second, ProbeTimeout: forever}, ""},
		{"slowest allowed RT", breaker.Rule{Resource: "r", Strategy: breaker.SlowRequestRatio, Threshold: 1, MaxAllowedRT: forever, MinRequestAmount: 1, RetryTimeout: time.Second}, ""},
		{"negative RT", breaker.Rule{Resource: "r", Strategy: breaker.SlowRequestRatio, Threshold: 1, MaxAllowedRT: math.MinInt64, RetryTimeout: time.Second}, "MaxAllowedRT"},
		{"most requests", breaker.Rule{Resource: "r", Strategy: breaker.ErrorCount, Threshold: 1, MinRequestAmount: math.MaxUint64, RetryTimeout: time.Second}, ""},
		{"huge resource name", breaker.Rule{Resource: string(make([]byte, 1<<20)), Strategy: breaker.ErrorCount, Threshold: 1, RetryTimeout: time.Second}, "Resource"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			err := h.m.LoadRules([]breaker.Rule{tt.give})
			if tt.wantField != "" {
				var re *breaker.RuleError
				require.ErrorAs(t, err, &re)
				assert.Equal(t, tt.wantField, re.Field)
				assert.Empty(t, h.m.Rules())
				return
			}
			require.NoError(t, err)
			// It works: calls pass, fail, and the clock can run to the end of time.
			for _, d := range []time.Duration{0, time.Hour, 100 * 365 * 24 * time.Hour} {
				h.clock.Advance(d)
				assert.NotPanics(t, func() { _ = h.complete(tt.give.Resource, time.Millisecond, errDown) })
			}
		})
	}
}

// The largest durations saturate instead of wrapping: a breaker with a retry time at the end
// of time stays OPEN.
func TestRetryTimeoutSaturates(t *testing.T) {
	h := newHarness(t, breaker.Rule{Resource: "svc", Strategy: breaker.ErrorCount, Threshold: 1,
		MinRequestAmount: 1, RetryTimeout: math.MaxInt64})
	h.completeN("svc", 1, errDown)
	h.clock.Advance(200 * 365 * 24 * time.Hour)
	assert.ErrorIs(t, h.complete("svc", 0, nil), breaker.ErrOpen)
}

// A million rules for one resource is refused at the first rule too many, without first
// taking memory in proportion to the million.
func TestRulesPerResourceBound(t *testing.T) {
	heavyTest(t)
	rules := make([]breaker.Rule, 1_000_000)
	for i := range rules {
		rules[i] = breaker.Rule{Resource: "one", Strategy: breaker.ErrorCount, Threshold: float64(i + 1), RetryTimeout: time.Second}
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	m := breaker.NewManager()
	err := m.LoadRules(rules)
	runtime.ReadMemStats(&after)
	var re *breaker.RuleError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, breaker.MaxRulesPerResource, re.Index)
	assert.Contains(t, err.Error(), "at most 100")
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(64<<20), "no map as large as the input")
	assert.Empty(t, m.Rules())

	require.NoError(t, m.LoadRules(rules[:breaker.MaxRulesPerResource]))
	assert.Len(t, m.Breakers("one"), breaker.MaxRulesPerResource)
}
