package breakerdebug_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
)

// Given a rule, when the status is read, then its "ruleText" says what the rule trips on with
// the minimum of calls the library really uses, no window for ConsecutiveErrors, and the
// recovery fields that shape the retry time.
func TestRuleText(t *testing.T) {
	tests := []struct {
		name string
		give breaker.Rule
		want string
	}{
		{
			name: "consecutive errors keep no window",
			give: breaker.Rule{Strategy: breaker.ConsecutiveErrors, Threshold: 5, RetryTimeout: time.Second},
			want: "5 failures in a row · retry 1s",
		},
		{
			name: "an error count under the default minimum needs only its threshold",
			give: breaker.Rule{Strategy: breaker.ErrorCount, Threshold: 3, RetryTimeout: 5 * time.Second},
			want: "errors ≥ 3 · min 3 calls in 1s · retry 5s",
		},
		{
			name: "an error count of one",
			give: breaker.Rule{Strategy: breaker.ErrorCount, Threshold: 1, RetryTimeout: 5 * time.Second},
			want: "errors ≥ 1 · min 1 call in 1s · retry 5s",
		},
		{
			name: "an error count over the default minimum",
			give: breaker.Rule{Strategy: breaker.ErrorCount, Threshold: 10, RetryTimeout: 5 * time.Second},
			want: "errors ≥ 10 · min 5 calls in 1s · retry 5s",
		},
		{
			name: "a minimum set is the minimum",
			give: breaker.Rule{Strategy: breaker.ErrorCount, Threshold: 3, MinRequestAmount: 8,
				StatInterval: 10 * time.Second, RetryTimeout: 5 * time.Second},
			want: "errors ≥ 3 · min 8 calls in 10s · retry 5s",
		},
		{
			name: "slow calls",
			give: breaker.Rule{Strategy: breaker.SlowRequestRatio, Threshold: 0.5, MaxAllowedRT: 100 * time.Millisecond,
				RetryTimeout: 10 * time.Second},
			want: "slow ≥ 50% (RT > 100ms) · min 5 calls in 1s · retry 10s",
		},
		{
			name: "backoff, jitter, probes",
			give: breaker.Rule{Strategy: breaker.ErrorRatio, Threshold: 0.125, MinRequestAmount: 20,
				RetryTimeout: 3 * time.Second, MaxRetryTimeout: 30 * time.Second, RetryJitter: 0.1,
				ProbeTimeout: 2 * time.Second, ProbeNum: 3},
			want: "errors ≥ 12.5% · min 20 calls in 1s · retry 3s, doubling per failed probe up to 30s, " +
				"up to 10% sooner (jitter) · probe timeout 2s · 3 probes in a row to close",
		},
		{
			name: "the newest buckets judged on their own, at the default ratio",
			give: breaker.Rule{Strategy: breaker.ErrorRatio, Threshold: 0.5, FastBuckets: 2, RetryTimeout: 5 * time.Second},
			want: "errors ≥ 50% · min 5 calls in 1s · or ≥ 80% in the last 200ms · retry 5s",
		},
		{
			name: "a ramp after recovery",
			give: breaker.Rule{Strategy: breaker.ErrorRatio, Threshold: 0.5, RetryTimeout: 5 * time.Second, RampUp: 30 * time.Second},
			want: "errors ≥ 50% · min 5 calls in 1s · retry 5s · ramp up for 30s after recovery",
		},
		{
			name: "pacing instead of opening",
			give: breaker.Rule{Strategy: breaker.SlowRequestRatio, Threshold: 0.5, MaxAllowedRT: time.Second,
				RetryTimeout: 5 * time.Second, Pace: true},
			want: "slow ≥ 50% (RT > 1s) · min 5 calls in 1s · retry 5s · pace instead of opening while calls still succeed",
		},
		{
			name: "a window of calls",
			give: breaker.Rule{Strategy: breaker.ErrorRatio, Threshold: 0.5, StatCalls: 100, RetryTimeout: 5 * time.Second},
			want: "errors ≥ 50% · of the last 100 calls, min 100 · retry 5s",
		},
		{
			name: "one probe is the default, not shown",
			give: breaker.Rule{Strategy: breaker.ConsecutiveErrors, Threshold: 2, RetryTimeout: time.Second, ProbeNum: 1},
			want: "2 failures in a row · retry 1s",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rule := tt.give
			rule.Resource = "r"
			m, _, h := newManager(t, rule)
			call(m, "r", fail) // trips the count rules: a transition to read too
			var got struct {
				Resources []struct {
					Breakers []struct {
						RuleText string `json:"ruleText"`
					} `json:"breakers"`
				} `json:"resources"`
				Transitions []struct {
					RuleText string `json:"ruleText"`
				} `json:"transitions"`
			}
			require.NoError(t, json.Unmarshal(get(h, http.MethodGet, path+"?format=json", nil).Body.Bytes(), &got))
			require.Len(t, got.Resources, 1)
			require.Len(t, got.Resources[0].Breakers, 1)
			assert.Equal(t, tt.want, got.Resources[0].Breakers[0].RuleText)
			for _, c := range got.Transitions {
				assert.Equal(t, tt.want, c.RuleText, "a transition describes its rule too")
			}
		})
	}
}
