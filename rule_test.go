package breaker_test

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakertest"
)

// validRule is a valid ErrorRatio rule that each case changes in one field.
func validRule() breaker.Rule {
	return breaker.Rule{
		Resource:     "GET /orders",
		Strategy:     breaker.ErrorRatio,
		Threshold:    0.5,
		RetryTimeout: 5 * time.Second,
	}
}

// slowRule is a valid SlowRequestRatio rule.
func slowRule() breaker.Rule {
	r := validRule()
	r.Strategy = breaker.SlowRequestRatio
	r.MaxAllowedRT = 100 * time.Millisecond
	return r
}

// countRule is a valid ErrorCount rule.
func countRule() breaker.Rule {
	r := validRule()
	r.Strategy = breaker.ErrorCount
	r.Threshold = 3
	return r
}

// with returns r changed by edit.
func with(r breaker.Rule, edit func(*breaker.Rule)) breaker.Rule {
	edit(&r)
	return r
}

// Given a rule invalid in one field, Validate returns a *RuleError for that field that wraps
// ErrInvalidRule and says what is allowed.
func TestRuleValidateRejects(t *testing.T) {
	tests := []struct {
		name      string
		give      breaker.Rule
		wantField string
		wantText  string
	}{
		{
			name:      "empty resource",
			give:      with(validRule(), func(r *breaker.Rule) { r.Resource = "" }),
			wantField: "Resource",
			wantText:  "is required",
		},
		{
			name:      "fast buckets as many as the window's",
			give:      with(validRule(), func(r *breaker.Rule) { r.FastBuckets = 10 }),
			wantField: "FastBuckets",
			wantText:  "must be less than BucketCount (10)",
		},
		{
			name:      "fast buckets more than the window's",
			give:      with(validRule(), func(r *breaker.Rule) { r.BucketCount, r.FastBuckets = 4, 5 }),
			wantField: "FastBuckets",
			wantText:  "must be less than BucketCount (4)",
		},
		{
			name:      "fast threshold below threshold",
			give:      with(validRule(), func(r *breaker.Rule) { r.FastBuckets, r.FastThreshold = 2, 0.4 }),
			wantField: "FastThreshold",
			wantText:  "in [Threshold, 1] = [0.5, 1], got 0.4",
		},
		{
			name:      "fast threshold above 1",
			give:      with(slowRule(), func(r *breaker.Rule) { r.FastBuckets, r.FastThreshold = 2, 1.5 }),
			wantField: "FastThreshold",
			wantText:  "got 1.5",
		},
		{
			name:      "fast threshold NaN",
			give:      with(validRule(), func(r *breaker.Rule) { r.FastBuckets, r.FastThreshold = 2, math.NaN() }),
			wantField: "FastThreshold",
			wantText:  "got NaN",
		},
		{
			name:      "fast buckets on a count strategy",
			give:      with(countRule(), func(r *breaker.Rule) { r.FastBuckets = 2 }),
			wantField: "FastBuckets",
			wantText:  "must be 0 for ErrorCount",
		},
		{
			name:      "fast threshold on consecutive errors",
			give:      with(countRule(), func(r *breaker.Rule) { r.Strategy, r.FastThreshold = breaker.ConsecutiveErrors, 0.9 }),
			wantField: "FastThreshold",
			wantText:  "must be 0 for ConsecutiveErrors",
		},
		{
			name:      "negative ramp",
			give:      with(validRule(), func(r *breaker.Rule) { r.RampUp = -time.Second }),
			wantField: "RampUp",
			wantText:  "must not be negative (0 turns the ramp off), got -1s",
		},
		{
			name:      "ramp without a window",
			give:      with(countRule(), func(r *breaker.Rule) { r.Strategy, r.RampUp = breaker.ConsecutiveErrors, time.Second }),
			wantField: "RampUp",
			wantText:  "must be 0 for ConsecutiveErrors",
		},
		{
			name:      "unknown strategy 7",
			give:      with(validRule(), func(r *breaker.Rule) { r.Strategy = 7 }),
			wantField: "Strategy",
			wantText:  "SlowRequestRatio, ErrorRatio, ErrorCount or ConsecutiveErrors",
		},
		{
			name:      "unknown strategy -1",
			give:      with(validRule(), func(r *breaker.Rule) { r.Strategy = -1 }),
			wantField: "Strategy",
			wantText:  "got -1",
		},
		{
			name:      "threshold NaN",
			give:      with(validRule(), func(r *breaker.Rule) { r.Threshold = math.NaN() }),
			wantField: "Threshold",
			wantText:  "finite",
		},
		{
			name:      "threshold +Inf",
			give:      with(validRule(), func(r *breaker.Rule) { r.Threshold = math.Inf(1) }),
			wantField: "Threshold",
			wantText:  "finite",
		},
		{
			name:      "threshold -Inf",
			give:      with(validRule(), func(r *breaker.Rule) { r.Threshold = math.Inf(-1) }),
			wantField: "Threshold",
			wantText:  "finite",
		},
		{
			name:      "error count threshold NaN",
			give:      with(countRule(), func(r *breaker.Rule) { r.Threshold = math.NaN() }),
			wantField: "Threshold",
			wantText:  "finite",
		},
		{
			name:      "error count threshold +Inf",
			give:      with(countRule(), func(r *breaker.Rule) { r.Threshold = math.Inf(1) }),
			wantField: "Threshold",
			wantText:  "finite",
		},
		{
			name:      "slow ratio threshold 0",
			give:      with(slowRule(), func(r *breaker.Rule) { r.Threshold = 0 }),
			wantField: "Threshold",
			wantText:  "(0, 1]",
		},
		{
			name:      "slow ratio threshold negative",
			give:      with(slowRule(), func(r *breaker.Rule) { r.Threshold = -0.5 }),
			wantField: "Threshold",
			wantText:  "(0, 1]",
		},
		{
			name:      "slow ratio threshold above 1",
			give:      with(slowRule(), func(r *breaker.Rule) { r.Threshold = 1.0000001 }),
			wantField: "Threshold",
			wantText:  "(0, 1]",
		},
		{
			name:      "error ratio threshold 0",
			give:      with(validRule(), func(r *breaker.Rule) { r.Threshold = 0 }),
			wantField: "Threshold",
			wantText:  "(0, 1]",
		},
		{
			name:      "error ratio threshold negative",
			give:      with(validRule(), func(r *breaker.Rule) { r.Threshold = -1 }),
			wantField: "Threshold",
			wantText:  "(0, 1]",
		},
		{
			name:      "error ratio threshold above 1",
			give:      with(validRule(), func(r *breaker.Rule) { r.Threshold = 2 }),
			wantField: "Threshold",
			wantText:  "(0, 1]",
		},
		{
			name:      "error count threshold 1.5",
			give:      with(countRule(), func(r *breaker.Rule) { r.Threshold = 1.5 }),
			wantField: "Threshold",
			wantText:  "whole number >= 1",
		},
		{
			name:      "error count threshold 0.5",
			give:      with(countRule(), func(r *breaker.Rule) { r.Threshold = 0.5 }),
			wantField: "Threshold",
			wantText:  "whole number >= 1",
		},
		{
			name:      "error count threshold 0",
			give:      with(countRule(), func(r *breaker.Rule) { r.Threshold = 0 }),
			wantField: "Threshold",
			wantText:  "whole number >= 1",
		},
		{
			name:      "error count threshold negative",
			give:      with(countRule(), func(r *breaker.Rule) { r.Threshold = -3 }),
			wantField: "Threshold",
			wantText:  "whole number >= 1",
		},
		{
			name:      "slow ratio without max RT",
			give:      with(slowRule(), func(r *breaker.Rule) { r.MaxAllowedRT = 0 }),
			wantField: "MaxAllowedRT",
			wantText:  "> 0",
		},
		{
			name:      "slow ratio negative max RT",
			give:      with(slowRule(), func(r *breaker.Rule) { r.MaxAllowedRT = -time.Millisecond }),
			wantField: "MaxAllowedRT",
			wantText:  "must not be negative",
		},
		{
			name:      "error ratio negative max RT",
			give:      with(validRule(), func(r *breaker.Rule) { r.MaxAllowedRT = -time.Second }),
			wantField: "MaxAllowedRT",
			wantText:  "must not be negative",
		},
		{
			name:      "negative stat interval",
			give:      with(validRule(), func(r *breaker.Rule) { r.StatInterval = -time.Second }),
			wantField: "StatInterval",
			wantText:  "must be in [0, 24h0m0s]",
		},
		{
			name:      "stat interval above max",
			give:      with(validRule(), func(r *breaker.Rule) { r.StatInterval = breaker.MaxStatInterval + time.Nanosecond }),
			wantField: "StatInterval",
			wantText:  "must be in [0, 24h0m0s]",
		},
		{
			name:      "bucket count above max",
			give:      with(validRule(), func(r *breaker.Rule) { r.BucketCount = breaker.MaxBucketCount + 1 }),
			wantField: "BucketCount",
			wantText:  "must be at most 1000",
		},
		{
			name:      "stat interval not divisible by bucket count",
			give:      with(validRule(), func(r *breaker.Rule) { r.StatInterval, r.BucketCount = time.Second, 3 }),
			wantField: "StatInterval",
			wantText:  "must divide into 3 equal buckets of at least 1ms",
		},
		{
			name:      "default stat interval not divisible by bucket count",
			give:      with(validRule(), func(r *breaker.Rule) { r.BucketCount = 7 }),
			wantField: "StatInterval",
			wantText:  "must divide into 7 equal buckets",
		},
		{
			name:      "buckets shorter than 1ms",
			give:      with(validRule(), func(r *breaker.Rule) { r.StatInterval, r.BucketCount = 10*time.Millisecond, 20 }),
			wantField: "StatInterval",
			wantText:  "at least 1ms",
		},
		{
			name:      "retry timeout zero",
			give:      with(validRule(), func(r *breaker.Rule) { r.RetryTimeout = 0 }),
			wantField: "RetryTimeout",
			wantText:  "must be > 0",
		},
		{
			name:      "retry timeout negative",
			give:      with(validRule(), func(r *breaker.Rule) { r.RetryTimeout = -time.Second }),
			wantField: "RetryTimeout",
			wantText:  "must be > 0",
		},
		{
			name:      "probe timeout negative",
			give:      with(validRule(), func(r *breaker.Rule) { r.ProbeTimeout = -time.Nanosecond }),
			wantField: "ProbeTimeout",
			wantText:  "must not be negative",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.give.Validate()

			require.Error(t, err)
			assert.ErrorIs(t, err, breaker.ErrInvalidRule)
			var re *breaker.RuleError
			require.True(t, errors.As(err, &re), "want a *breaker.RuleError, got %T", err)
			assert.Equal(t, tt.wantField, re.Field)
			assert.Equal(t, -1, re.Index)
			assert.Equal(t, tt.give.Resource, re.Resource)
			assert.Contains(t, err.Error(), tt.wantField)
			assert.Contains(t, err.Error(), tt.wantText)
			assert.NotContains(t, err.Error(), "rule -1", "Validate's error names no index")
		})
	}
}

// Given a rule at the edge of what is allowed, Validate accepts it.
func TestRuleValidateAccepts(t *testing.T) {
	tests := []struct {
		name string
		give breaker.Rule
	}{
		{
			name: "error ratio threshold exactly 1",
			give: with(validRule(), func(r *breaker.Rule) { r.Threshold = 1 }),
		},
		{
			name: "error ratio threshold tiny",
			give: with(validRule(), func(r *breaker.Rule) { r.Threshold = 1e-9 }),
		},
		{
			name: "slow ratio threshold exactly 1",
			give: with(slowRule(), func(r *breaker.Rule) { r.Threshold = 1 }),
		},
		{
			name: "slow ratio threshold tiny",
			give: with(slowRule(), func(r *breaker.Rule) { r.Threshold = 1e-9 }),
		},
		{
			name: "slow ratio max RT 1ns",
			give: with(slowRule(), func(r *breaker.Rule) { r.MaxAllowedRT = time.Nanosecond }),
		},
		{
			name: "error count threshold 1",
			give: with(countRule(), func(r *breaker.Rule) { r.Threshold = 1 }),
		},
		{
			name: "error count threshold 1e6",
			give: with(countRule(), func(r *breaker.Rule) { r.Threshold = 1e6 }),
		},
		{
			name: "error ratio with max RT set",
			give: with(validRule(), func(r *breaker.Rule) { r.MaxAllowedRT = time.Second }),
		},
		{
			name: "error ratio without max RT",
			give: with(validRule(), func(r *breaker.Rule) { r.MaxAllowedRT = 0 }),
		},
		{
			name: "error count with max RT set",
			give: with(countRule(), func(r *breaker.Rule) { r.MaxAllowedRT = time.Second }),
		},
		{
			name: "error count without max RT",
			give: with(countRule(), func(r *breaker.Rule) { r.MaxAllowedRT = 0 }),
		},
		{
			name: "optional fields zero",
			give: breaker.Rule{Resource: "r", Strategy: breaker.ErrorCount, Threshold: 1, RetryTimeout: time.Second},
		},
		{
			name: "1ms buckets",
			give: with(validRule(), func(r *breaker.Rule) { r.StatInterval, r.BucketCount = 10*time.Millisecond, 10 }),
		},
		{
			name: "max bucket count",
			give: with(validRule(), func(r *breaker.Rule) { r.StatInterval, r.BucketCount = 10*time.Second, breaker.MaxBucketCount }),
		},
		{
			name: "max bucket count over default stat interval",
			give: with(validRule(), func(r *breaker.Rule) { r.BucketCount = breaker.MaxBucketCount }),
		},
		{
			name: "max stat interval",
			give: with(validRule(), func(r *breaker.Rule) { r.StatInterval = breaker.MaxStatInterval }),
		},
		{
			name: "one bucket",
			give: with(validRule(), func(r *breaker.Rule) { r.StatInterval, r.BucketCount = time.Millisecond, 1 }),
		},
		{
			name: "retry timeout 1ns",
			give: with(validRule(), func(r *breaker.Rule) { r.RetryTimeout = time.Nanosecond }),
		},
		{
			name: "huge retry and probe timeouts",
			give: with(validRule(), func(r *breaker.Rule) {
				r.RetryTimeout = time.Duration(math.MaxInt64)
				r.ProbeTimeout = time.Duration(math.MaxInt64)
			}),
		},
		{
			name: "huge min request amount",
			give: with(validRule(), func(r *breaker.Rule) { r.MinRequestAmount = math.MaxUint64 }),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.NoError(t, tt.give.Validate())
		})
	}
}

// Given two loaded rules, one of them OPEN, when LoadRules gets a set whose third rule is
// invalid, then it returns an error naming that rule and nothing changes: rules, breakers,
// states, and no observer hears of anything.
func TestLoadRulesRejectsInvalidAndKeepsOldRules(t *testing.T) {
	m := breaker.NewManager(breaker.WithClock(breakertest.NewClock()))
	first := []breaker.Rule{
		{ID: "orders-errors", Resource: "orders", Strategy: breaker.ErrorCount, Threshold: 1,
			MinRequestAmount: 1, RetryTimeout: time.Hour},
		{ID: "payments-slow", Resource: "payments", Strategy: breaker.SlowRequestRatio, Threshold: 0.5,
			MaxAllowedRT: 100 * time.Millisecond, RetryTimeout: 10 * time.Second},
	}
	require.NoError(t, m.LoadRules(first))
	e, err := m.Enter("orders")
	require.NoError(t, err)
	e.SetError(errors.New("boom"))
	e.Exit()
	ordersBefore, paymentsBefore := m.Breakers("orders"), m.Breakers("payments")
	require.Len(t, ordersBefore, 1)
	require.Len(t, paymentsBefore, 1)
	require.Equal(t, breaker.Open, ordersBefore[0].State())
	var changes []breaker.StateChange
	defer m.AddObserver(breaker.ObserverFunc(func(c breaker.StateChange) { changes = append(changes, c) }))()

	second := []breaker.Rule{
		with(first[0], func(r *breaker.Rule) { r.Threshold = 2 }),
		{Resource: "users", Strategy: breaker.ErrorRatio, Threshold: 0.5, RetryTimeout: time.Second},
		{Resource: "inventory", Strategy: breaker.ErrorRatio, Threshold: 1.5, RetryTimeout: time.Second},
	}
	err = m.LoadRules(second)

	require.Error(t, err)
	assert.ErrorIs(t, err, breaker.ErrInvalidRule)
	var re *breaker.RuleError
	require.True(t, errors.As(err, &re), "want a *breaker.RuleError, got %T", err)
	assert.Equal(t, 2, re.Index)
	assert.Equal(t, "inventory", re.Resource)
	assert.Equal(t, "Threshold", re.Field)
	assert.Contains(t, err.Error(), "rule 2")
	assert.Contains(t, err.Error(), `"inventory"`)
	assert.Contains(t, err.Error(), "Threshold")
	assert.Contains(t, err.Error(), "(0, 1]")

	assert.Equal(t, first, m.Rules())
	ordersAfter, paymentsAfter := m.Breakers("orders"), m.Breakers("payments")
	require.Len(t, ordersAfter, 1)
	require.Len(t, paymentsAfter, 1)
	assert.Same(t, ordersBefore[0], ordersAfter[0])
	assert.Same(t, paymentsBefore[0], paymentsAfter[0])
	assert.Equal(t, first[0], ordersAfter[0].Rule())
	assert.Equal(t, breaker.Open, ordersAfter[0].State())
	assert.Empty(t, m.Breakers("users"))
	assert.Empty(t, m.Breakers("inventory"))
	assert.Empty(t, changes)
	_, err = m.Enter("orders")
	assert.ErrorIs(t, err, breaker.ErrOpen)
}

// A resource may not have the same rule twice (ID aside); the same rule for two resources, or
// two rules of a resource that differ in a field, are fine.
func TestLoadRulesRejectsDuplicates(t *testing.T) {
	t.Run("identical but for ID", func(t *testing.T) {
		m := breaker.NewManager()
		a := with(validRule(), func(r *breaker.Rule) { r.ID = "a" })
		b := with(validRule(), func(r *breaker.Rule) { r.ID = "b" })

		err := m.LoadRules([]breaker.Rule{a, b})

		require.Error(t, err)
		assert.ErrorIs(t, err, breaker.ErrInvalidRule)
		var re *breaker.RuleError
		require.True(t, errors.As(err, &re), "want a *breaker.RuleError, got %T", err)
		assert.Equal(t, 1, re.Index)
		assert.Equal(t, a.Resource, re.Resource)
		assert.Contains(t, err.Error(), "rule 1")
		assert.Contains(t, err.Error(), "rule 0")
		assert.Empty(t, m.Rules())
		assert.Empty(t, m.Breakers(a.Resource))
	})
	t.Run("identical after another rule", func(t *testing.T) {
		m := breaker.NewManager()
		r := validRule()

		err := m.LoadRules([]breaker.Rule{r, countRule(), r})

		var re *breaker.RuleError
		require.True(t, errors.As(err, &re), "want a *breaker.RuleError, got %T", err)
		assert.Equal(t, 2, re.Index)
		assert.Contains(t, err.Error(), "rule 0")
	})
	t.Run("same rule for two resources", func(t *testing.T) {
		m := breaker.NewManager()
		a := validRule()
		b := with(a, func(r *breaker.Rule) { r.Resource = "GET /users" })

		require.NoError(t, m.LoadRules([]breaker.Rule{a, b}))

		assert.Len(t, m.Breakers(a.Resource), 1)
		assert.Len(t, m.Breakers(b.Resource), 1)
	})
	t.Run("differing only in threshold", func(t *testing.T) {
		m := breaker.NewManager()
		a := validRule()
		b := with(a, func(r *breaker.Rule) { r.Threshold = 0.9 })

		require.NoError(t, m.LoadRules([]breaker.Rule{a, b}))

		got := m.Breakers(a.Resource)
		require.Len(t, got, 2)
		assert.Equal(t, a, got[0].Rule())
		assert.Equal(t, b, got[1].Rule())
	})
}

// Given loaded rules, LoadRules(nil) removes them all and their breakers.
func TestLoadRulesNilClears(t *testing.T) {
	m := breaker.NewManager()
	require.NoError(t, m.LoadRules([]breaker.Rule{validRule(), slowRule(), countRule()}))
	require.Len(t, m.Breakers(validRule().Resource), 3)

	require.NoError(t, m.LoadRules(nil))

	assert.Empty(t, m.Rules())
	assert.Empty(t, m.Breakers(validRule().Resource))
	e, err := m.Enter(validRule().Resource)
	require.NoError(t, err, "a resource with no rules passes")
	e.Exit()
}

func TestStrategyAndStateStrings(t *testing.T) {
	tests := []struct {
		name string
		give interface{ String() string }
		want string
	}{
		{"strategy slow ratio", breaker.SlowRequestRatio, "SlowRequestRatio"},
		{"strategy error ratio", breaker.ErrorRatio, "ErrorRatio"},
		{"strategy error count", breaker.ErrorCount, "ErrorCount"},
		{"strategy out of range", breaker.Strategy(7), "Strategy(7)"},
		{"strategy negative", breaker.Strategy(-1), "Strategy(-1)"},
		{"state closed", breaker.Closed, "CLOSED"},
		{"state open", breaker.Open, "OPEN"},
		{"state half open", breaker.HalfOpen, "HALF_OPEN"},
		{"state out of range", breaker.State(9), "State(9)"},
		{"state negative", breaker.State(-1), "State(-1)"},
		{"reason threshold exceeded", breaker.ThresholdExceeded, "ThresholdExceeded"},
		{"reason retry timeout elapsed", breaker.RetryTimeoutElapsed, "RetryTimeoutElapsed"},
		{"reason probe succeeded", breaker.ProbeSucceeded, "ProbeSucceeded"},
		{"reason probe failed", breaker.ProbeFailed, "ProbeFailed"},
		{"reason probe blocked", breaker.ProbeBlocked, "ProbeBlocked"},
		{"reason probe timed out", breaker.ProbeTimedOut, "ProbeTimedOut"},
		{"reason rule changed", breaker.RuleChanged, "RuleChanged"},
		{"reason probe ignored", breaker.ProbeIgnored, "ProbeIgnored"},
		{"reason reset", breaker.Reset, "Reset"},
		{"reason evicted", breaker.Evicted, "Evicted"},
		{"reason fast trip", breaker.FastTrip, "FastTrip"},
		{"reason override", breaker.Override, "Override"},
		{"reason pacing started", breaker.PacingStarted, "PacingStarted"},
		{"reason pacing ended", breaker.PacingEnded, "PacingEnded"},
		{"reason out of range", breaker.PacingEnded + 1, "Reason(14)"},
		{"force auto", breaker.Auto, "auto"},
		{"force open", breaker.ForceOpen, "open"},
		{"force closed", breaker.ForceClosed, "closed"},
		{"force out of range", breaker.Force(3), "Force(3)"},
		{"reason negative", breaker.Reason(-1), "Reason(-1)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.give.String())
		})
	}
}

// Validate never panics, returns nil or a *RuleError wrapping ErrInvalidRule, and agrees with
// LoadRules: a rule it accepts loads into one breaker; a rule it rejects fails LoadRules on the
// same field, at index 0, and leaves the manager empty.
func FuzzRuleValidate(f *testing.F) {
	second, ms := int64(time.Second), int64(time.Millisecond)
	// resource, strategy, threshold, maxRT, statInterval, buckets, minReq, retry, probe,
	// probeNum, maxRetry, jitter
	f.Add("GET /orders", int32(breaker.ErrorRatio), 0.5, int64(0), int64(0), uint32(0), uint64(0), 5*second, int64(0), uint32(0), int64(0), 0.0)
	f.Add("db", int32(breaker.SlowRequestRatio), 1.0, 50*ms, 10*ms, uint32(10), uint64(3), second, 2*second, uint32(0), int64(0), 0.0)
	f.Add("db", int32(breaker.ErrorCount), 1e6, int64(-1), second, uint32(1000), uint64(1), int64(1), int64(math.MaxInt64), uint32(0), int64(0), 0.0)
	f.Add("db", int32(breaker.ErrorCount), 1.5, int64(0), second, uint32(3), uint64(0), second, int64(0), uint32(0), int64(0), 0.0)
	f.Add("", int32(7), math.NaN(), int64(0), int64(-1), uint32(1001), uint64(0), int64(0), int64(-1), uint32(0), int64(0), 0.0)
	f.Add("x", int32(breaker.SlowRequestRatio), 1e-9, int64(0), 10*ms, uint32(20), uint64(0), second, int64(0), uint32(0), int64(0), 0.0)
	f.Add("x", int32(breaker.ErrorRatio), 1.0, int64(0), int64(breaker.MaxStatInterval), uint32(1000), uint64(math.MaxUint64), int64(math.MaxInt64), int64(-1), uint32(0), int64(0), 0.0)

	f.Add("run", int32(breaker.ConsecutiveErrors), 3.0, int64(0), int64(0), uint32(0), uint64(0), second, int64(0),
		uint32(3), 8*second, 0.5)
	f.Add("run", int32(breaker.ConsecutiveErrors), 3.0, int64(0), int64(0), uint32(0), uint64(0), second, int64(0),
		uint32(1001), ms, math.NaN())
	f.Fuzz(func(t *testing.T, resource string, strategy int32, threshold float64, maxRT, statInterval int64,
		buckets uint32, minReq uint64, retry, probe int64, probeNum uint32, maxRetry int64, jitter float64) {
		r := breaker.Rule{
			ID:               "fuzz",
			Resource:         resource,
			Strategy:         breaker.Strategy(strategy),
			Threshold:        threshold,
			MaxAllowedRT:     time.Duration(maxRT),
			MinRequestAmount: minReq,
			StatInterval:     time.Duration(statInterval),
			BucketCount:      buckets,
			RetryTimeout:     time.Duration(retry),
			ProbeTimeout:     time.Duration(probe),
			ProbeNum:         probeNum,
			MaxRetryTimeout:  time.Duration(maxRetry),
			RetryJitter:      jitter,
		}
		m := breaker.NewManager()

		verr := r.Validate()
		lerr := m.LoadRules([]breaker.Rule{r})

		if verr == nil && len(resource) > breaker.DefaultMaxNameLength {
			// A rule may be valid alone, but a Manager keeps no name past its bound.
			var re *breaker.RuleError
			require.ErrorAs(t, lerr, &re)
			assert.Equal(t, "Resource", re.Field)
			assert.Empty(t, m.Rules())
			return
		}
		if verr == nil && strings.HasSuffix(r.Resource, "*") {
			// A template makes breakers for the names it matches, none for itself.
			require.NoError(t, lerr, "Validate accepted %+v", r)
			assert.Empty(t, m.Breakers(r.Resource))
			assert.Equal(t, []breaker.Rule{r}, m.Rules())
			return
		}
		if verr == nil {
			require.NoError(t, lerr, "Validate accepted %+v", r)
			require.Len(t, m.Breakers(r.Resource), 1)
			assert.Equal(t, r, m.Breakers(r.Resource)[0].Rule())
			assert.Equal(t, breaker.Closed, m.Breakers(r.Resource)[0].State())
			assert.Equal(t, []breaker.Rule{r}, m.Rules())
			return
		}
		assert.ErrorIs(t, verr, breaker.ErrInvalidRule)
		var vre, lre *breaker.RuleError
		require.True(t, errors.As(verr, &vre), "Validate: want a *breaker.RuleError, got %T", verr)
		assert.Equal(t, -1, vre.Index)
		assert.Equal(t, resource, vre.Resource)
		assert.NotEmpty(t, vre.Field)
		assert.True(t, strings.Contains(verr.Error(), vre.Field), "%q does not name %s", verr.Error(), vre.Field)

		require.Error(t, lerr, "Validate rejected %+v: %v", r, verr)
		assert.ErrorIs(t, lerr, breaker.ErrInvalidRule)
		require.True(t, errors.As(lerr, &lre), "LoadRules: want a *breaker.RuleError, got %T", lerr)
		assert.Equal(t, 0, lre.Index)
		assert.Equal(t, vre.Field, lre.Field)
		assert.Equal(t, vre.Resource, lre.Resource)
		assert.Empty(t, m.Rules())
		assert.Empty(t, m.Breakers(r.Resource))
	})
}

// {ErrorCount, Threshold 3} with the default MinRequestAmount trips on the third failure in a
// row: the default needs no more calls than Threshold. An explicit MinRequestAmount keeps its
// meaning.
func TestErrorCountDefaultMinRequestAmount(t *testing.T) {
	tests := []struct {
		give      breaker.Rule
		wantTrips int // the failure that trips
	}{
		{give: errorCount(1, 0), wantTrips: 1},
		{give: errorCount(3, 0), wantTrips: 3},
		{give: errorCount(5, 0), wantTrips: 5},
		{give: errorCount(7, 0), wantTrips: 7},
		{give: errorCount(3, 5), wantTrips: 5}, // an explicit MinRequestAmount keeps its meaning
	}
	for _, tt := range tests {
		h := newHarness(t, tt.give)
		h.completeN("svc", tt.wantTrips-1, errDown)
		assert.Equal(t, breaker.Closed, h.state("svc", 0), "%+v after %d failures", tt.give, tt.wantTrips-1)
		h.completeN("svc", 1, errDown)
		assert.Equal(t, breaker.Open, h.state("svc", 0), "%+v after %d failures", tt.give, tt.wantTrips)
	}
}

// MaxRetryTimeout, RetryJitter, ProbeNum and a ConsecutiveErrors threshold are validated.
func TestRecoveryFieldsValidation(t *testing.T) {
	tests := []struct {
		name      string
		give      func(*breaker.Rule)
		wantField string
	}{
		{"max retry below retry", func(r *breaker.Rule) { r.MaxRetryTimeout = time.Second }, "MaxRetryTimeout"},
		{"jitter 1", func(r *breaker.Rule) { r.RetryJitter = 1 }, "RetryJitter"},
		{"jitter negative", func(r *breaker.Rule) { r.RetryJitter = -0.1 }, "RetryJitter"},
		{"probes too many", func(r *breaker.Rule) { r.ProbeNum = breaker.MaxProbeNum + 1 }, "ProbeNum"},
		{"consecutive not whole", func(r *breaker.Rule) { r.Strategy, r.Threshold = breaker.ConsecutiveErrors, 2.5 }, "Threshold"},
	}
	for _, tt := range tests {
		r := errorCount(1, 1)
		tt.give(&r)
		var re *breaker.RuleError
		require.ErrorAs(t, r.Validate(), &re, tt.name)
		assert.Equal(t, tt.wantField, re.Field, tt.name)
	}
}

// WithDefaults spells out the values a breaker uses for the optional fields left at zero, and
// keeps every field that is set.
func TestRuleWithDefaults(t *testing.T) {
	tests := []struct {
		name string
		give breaker.Rule
		want breaker.Rule
	}{
		{"error ratio", breaker.Rule{ID: "r", Resource: "db", Strategy: breaker.ErrorRatio, Threshold: 0.5,
			RetryTimeout: 3 * time.Second},
			breaker.Rule{ID: "r", Resource: "db", Strategy: breaker.ErrorRatio, Threshold: 0.5, MinRequestAmount: 5,
				StatInterval: time.Second, BucketCount: 10, RetryTimeout: 3 * time.Second, ProbeTimeout: 3 * time.Second,
				ProbeNum: 1}},
		{"error count below five needs only its threshold", breaker.Rule{Resource: "db", Strategy: breaker.ErrorCount,
			Threshold: 3, RetryTimeout: time.Second},
			breaker.Rule{Resource: "db", Strategy: breaker.ErrorCount, Threshold: 3, MinRequestAmount: 3,
				StatInterval: time.Second, BucketCount: 10, RetryTimeout: time.Second, ProbeTimeout: time.Second, ProbeNum: 1}},
		{"set fields stay", breaker.Rule{Resource: "db", Strategy: breaker.ErrorRatio, Threshold: 0.5, MinRequestAmount: 9,
			StatInterval: 2 * time.Second, BucketCount: 4, RetryTimeout: time.Second, ProbeTimeout: 10 * time.Millisecond,
			ProbeNum: 3},
			breaker.Rule{Resource: "db", Strategy: breaker.ErrorRatio, Threshold: 0.5, MinRequestAmount: 9,
				StatInterval: 2 * time.Second, BucketCount: 4, RetryTimeout: time.Second, ProbeTimeout: 10 * time.Millisecond,
				ProbeNum: 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.give.WithDefaults())
		})
	}
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
