package breaker_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakertest"
)

// Sentinel for Java: each grade, its defaults, and the fields it writes that breaker ignores.
func TestParseSentinelRulesJava(t *testing.T) {
	tests := []struct {
		name string
		give string
		want breaker.Rule
	}{
		{
			name: "grade 0 with Java's defaults",
			give: `{"resource":"a","grade":0,"count":100,"timeWindow":10}`,
			want: breaker.Rule{Resource: "a", Strategy: breaker.SlowRequestRatio, Threshold: 1, MaxAllowedRT: 100 * time.Millisecond,
				MinRequestAmount: 5, StatInterval: time.Second, BucketCount: 1, RetryTimeout: 10 * time.Second},
		},
		{
			name: "grade 0 with slowRatioThreshold, minRequestAmount and statIntervalMs",
			give: `{"resource":"a","grade":0,"count":300,"slowRatioThreshold":0.6,"timeWindow":10,"minRequestAmount":10,"statIntervalMs":10000}`,
			want: breaker.Rule{Resource: "a", Strategy: breaker.SlowRequestRatio, Threshold: 0.6, MaxAllowedRT: 300 * time.Millisecond,
				MinRequestAmount: 10, StatInterval: 10 * time.Second, BucketCount: 1, RetryTimeout: 10 * time.Second},
		},
		{
			name: "grade 0 rounds count to whole milliseconds as Java's Math.round does",
			give: `{"resource":"a","grade":0,"count":50.5,"timeWindow":1}`,
			want: breaker.Rule{Resource: "a", Strategy: breaker.SlowRequestRatio, Threshold: 1, MaxAllowedRT: 51 * time.Millisecond,
				MinRequestAmount: 5, StatInterval: time.Second, BucketCount: 1, RetryTimeout: time.Second},
		},
		{
			name: "grade 1 keeps count as the ratio",
			give: `{"resource":"a","grade":1,"count":0.5,"timeWindow":30,"minRequestAmount":20}`,
			want: breaker.Rule{Resource: "a", Strategy: breaker.ErrorRatio, Threshold: 0.5,
				MinRequestAmount: 20, StatInterval: time.Second, BucketCount: 1, RetryTimeout: 30 * time.Second},
		},
		{
			name: "grade 2 count 5 opens on the 6th error",
			give: `{"resource":"a","grade":2,"count":5,"timeWindow":5}`,
			want: breaker.Rule{Resource: "a", Strategy: breaker.ErrorCount, Threshold: 6,
				MinRequestAmount: 5, StatInterval: time.Second, BucketCount: 1, RetryTimeout: 5 * time.Second},
		},
		{
			name: "grade 2 count 5.5 also opens on the 6th error",
			give: `{"resource":"a","grade":2,"count":5.5,"timeWindow":5}`,
			want: breaker.Rule{Resource: "a", Strategy: breaker.ErrorCount, Threshold: 6,
				MinRequestAmount: 5, StatInterval: time.Second, BucketCount: 1, RetryTimeout: 5 * time.Second},
		},
		{
			name: "grade 2 count 0 opens on the first error",
			give: `{"resource":"a","grade":2,"count":0,"timeWindow":5,"minRequestAmount":1}`,
			want: breaker.Rule{Resource: "a", Strategy: breaker.ErrorCount, Threshold: 1,
				MinRequestAmount: 1, StatInterval: time.Second, BucketCount: 1, RetryTimeout: 5 * time.Second},
		},
		{
			name: "slowRatioThreshold is ignored but for grade 0",
			give: `{"resource":"a","grade":1,"count":0.2,"slowRatioThreshold":0.9,"timeWindow":5}`,
			want: breaker.Rule{Resource: "a", Strategy: breaker.ErrorRatio, Threshold: 0.2,
				MinRequestAmount: 5, StatInterval: time.Second, BucketCount: 1, RetryTimeout: 5 * time.Second},
		},
		{
			name: "the fields the dashboard writes are ignored; a numeric id becomes the ID",
			give: `{"id":7,"app":"order-service","ip":"10.0.0.12","port":8720,"resource":"a","limitApp":"default",` +
				`"grade":2,"count":5,"timeWindow":5,"clusterMode":false,"clusterConfig":{"fallbackToLocalWhenFail":true},` +
				`"gmtCreate":1700000000000,"gmtModified":null,"probeNum":3}`,
			want: breaker.Rule{ID: "7", Resource: "a", Strategy: breaker.ErrorCount, Threshold: 6,
				MinRequestAmount: 5, StatInterval: time.Second, BucketCount: 1, RetryTimeout: 5 * time.Second},
		},
		{
			name: "strategy: null does not count as the Go form",
			give: `{"resource":"a","grade":1,"count":0.5,"timeWindow":5,"strategy":null}`,
			want: breaker.Rule{Resource: "a", Strategy: breaker.ErrorRatio, Threshold: 0.5,
				MinRequestAmount: 5, StatInterval: time.Second, BucketCount: 1, RetryTimeout: 5 * time.Second},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := breaker.ParseSentinelRules([]byte(`[` + tt.give + `]`))
			require.NoError(t, err)
			assert.Equal(t, []breaker.Rule{tt.want}, got)
		})
	}
}

// sentinel-golang: each strategy, the bucket count, the ErrorCount threshold.
func TestParseSentinelRulesGo(t *testing.T) {
	tests := []struct {
		name string
		give string
		want breaker.Rule
	}{
		{
			name: "strategy 0 with every field",
			give: `{"id":"slow","resource":"a","strategy":0,"retryTimeoutMs":3000,"minRequestAmount":10,"statIntervalMs":5000,` +
				`"statSlidingWindowBucketCount":10,"maxAllowedRtMs":50,"threshold":0.5}`,
			want: breaker.Rule{ID: "slow", Resource: "a", Strategy: breaker.SlowRequestRatio, Threshold: 0.5, MaxAllowedRT: 50 * time.Millisecond,
				MinRequestAmount: 10, StatInterval: 5 * time.Second, BucketCount: 10, RetryTimeout: 3 * time.Second},
		},
		{
			name: "strategy 1 with bucket count 0 gets one bucket",
			give: `{"resource":"a","strategy":1,"retryTimeoutMs":30000,"minRequestAmount":20,"statIntervalMs":1000,` +
				`"statSlidingWindowBucketCount":0,"threshold":0.5}`,
			want: breaker.Rule{Resource: "a", Strategy: breaker.ErrorRatio, Threshold: 0.5,
				MinRequestAmount: 20, StatInterval: time.Second, BucketCount: 1, RetryTimeout: 30 * time.Second},
		},
		{
			name: "strategy 2 truncates threshold 3.7 to 3",
			give: `{"resource":"a","strategy":2,"retryTimeoutMs":5000,"minRequestAmount":5,"statIntervalMs":1000,"threshold":3.7}`,
			want: breaker.Rule{Resource: "a", Strategy: breaker.ErrorCount, Threshold: 3,
				MinRequestAmount: 5, StatInterval: time.Second, BucketCount: 1, RetryTimeout: 5 * time.Second},
		},
		{
			name: "a bucket count that does not divide the interval gets one bucket",
			give: `{"resource":"a","strategy":2,"retryTimeoutMs":5000,"minRequestAmount":5,"statIntervalMs":1000,` +
				`"statSlidingWindowBucketCount":3,"threshold":3}`,
			want: breaker.Rule{Resource: "a", Strategy: breaker.ErrorCount, Threshold: 3,
				MinRequestAmount: 5, StatInterval: time.Second, BucketCount: 1, RetryTimeout: 5 * time.Second},
		},
		{
			name: "minRequestAmount 0 lets the first call trip, as 1 does",
			give: `{"resource":"a","strategy":2,"retryTimeoutMs":5000,"statIntervalMs":1000,"threshold":1}`,
			want: breaker.Rule{Resource: "a", Strategy: breaker.ErrorCount, Threshold: 1,
				MinRequestAmount: 1, StatInterval: time.Second, BucketCount: 1, RetryTimeout: 5 * time.Second},
		},
		{
			name: "maxAllowedRtMs is dropped but for strategy 0; probeNum is kept, unknown fields ignored",
			give: `{"resource":"a","strategy":1,"retryTimeoutMs":5000,"minRequestAmount":5,"statIntervalMs":1000,` +
				`"maxAllowedRtMs":200,"threshold":0.1,"probeNum":3,"enable":true}`,
			want: breaker.Rule{Resource: "a", Strategy: breaker.ErrorRatio, Threshold: 0.1,
				MinRequestAmount: 5, StatInterval: time.Second, BucketCount: 1, RetryTimeout: 5 * time.Second,
				ProbeNum: 3},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := breaker.ParseSentinelRules([]byte(`[` + tt.give + `]`))
			require.NoError(t, err)
			assert.Equal(t, []breaker.Rule{tt.want}, got)
		})
	}
}

// Given rule files as Sentinel's dashboard (Java) and sentinel-golang write them, then they
// convert in order and load into a Manager unchanged.
func TestParseSentinelRulesFiles(t *testing.T) {
	tests := []struct {
		give string
		want []breaker.Rule
	}{
		{
			give: "degrade-java.json",
			want: []breaker.Rule{
				{Resource: "GET:/api/orders", Strategy: breaker.SlowRequestRatio, Threshold: 0.6, MaxAllowedRT: 300 * time.Millisecond,
					MinRequestAmount: 10, StatInterval: 10 * time.Second, BucketCount: 1, RetryTimeout: 10 * time.Second},
				{Resource: "GET:/api/orders", Strategy: breaker.ErrorRatio, Threshold: 0.5,
					MinRequestAmount: 20, StatInterval: time.Second, BucketCount: 1, RetryTimeout: 30 * time.Second},
				{ID: "7", Resource: "mysql:orders", Strategy: breaker.ErrorCount, Threshold: 6,
					MinRequestAmount: 5, StatInterval: time.Second, BucketCount: 1, RetryTimeout: 5 * time.Second},
			},
		},
		{
			give: "degrade-go.json",
			want: []breaker.Rule{
				{ID: "slow-orders", Resource: "GET:/api/orders", Strategy: breaker.SlowRequestRatio, Threshold: 0.6, MaxAllowedRT: 300 * time.Millisecond,
					MinRequestAmount: 10, StatInterval: 10 * time.Second, BucketCount: 10, RetryTimeout: 10 * time.Second},
				{Resource: "GET:/api/orders", Strategy: breaker.ErrorRatio, Threshold: 0.5,
					MinRequestAmount: 20, StatInterval: time.Second, BucketCount: 1, RetryTimeout: 30 * time.Second},
				{Resource: "mysql:orders", Strategy: breaker.ErrorCount, Threshold: 6,
					MinRequestAmount: 5, StatInterval: time.Second, BucketCount: 1, RetryTimeout: 5 * time.Second},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", "sentinel", tt.give))
			require.NoError(t, err)
			got, err := breaker.ParseSentinelRules(data)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			assert.NoError(t, breaker.NewManager().LoadRules(got))
		})
	}
}

func TestParseSentinelRulesMixesForms(t *testing.T) {
	got, err := breaker.ParseSentinelRules([]byte(`[
		{"resource":"a","grade":2,"count":2,"timeWindow":1},
		{"resource":"b","strategy":2,"retryTimeoutMs":1000,"statIntervalMs":1000,"threshold":2}
	]`))
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.Equal(t, "a", got[0].Resource)
	assert.Equal(t, 3.0, got[0].Threshold)
	assert.Equal(t, "b", got[1].Resource)
	assert.Equal(t, 2.0, got[1].Threshold)
}

func TestParseSentinelRulesEmpty(t *testing.T) {
	for _, give := range []string{`null`, `[]`, " [ ]\n"} {
		got, err := breaker.ParseSentinelRules([]byte(give))
		require.NoError(t, err, give)
		assert.Empty(t, got, give)
	}
}

func TestParseSentinelRulesErrors(t *testing.T) {
	const java = `{"resource":"a","grade":2,"count":5,"timeWindow":5}`
	const golang = `{"resource":"a","strategy":2,"retryTimeoutMs":5000,"statIntervalMs":1000,"threshold":5}`
	tests := []struct {
		name      string
		give      string
		wantIndex int // -1: not a *RuleError
		wantField string
		wantText  []string
	}{
		{
			name:      "neither grade nor strategy",
			give:      `[` + java + `,{"resource":"b","count":5,"timeWindow":5}]`,
			wantIndex: 1,
			wantText:  []string{`invalid rule 1 (resource "b")`, `neither "grade"`, `nor "strategy"`},
		},
		{
			name:      "both grade and strategy",
			give:      `[` + golang + `,` + java + `,{"resource":"b","grade":2,"strategy":2}]`,
			wantIndex: 2,
			wantText:  []string{`invalid rule 2 (resource "b")`, `both "grade"`},
		},
		{
			name:      "negative timeWindow",
			give:      `[{"resource":"a","grade":2,"count":5,"timeWindow":-1}]`,
			wantIndex: 0, wantField: "timeWindow",
			wantText: []string{`invalid rule 0 (resource "a"): timeWindow must not be negative, got -1`},
		},
		{
			name:      "timeWindow 0 converts to RetryTimeout 0",
			give:      `[` + java + `,` + java + `,{"resource":"b","grade":1,"count":0.5,"timeWindow":0}]`,
			wantIndex: 2, wantField: "RetryTimeout",
			wantText: []string{`invalid rule 2 (resource "b"): RetryTimeout must be > 0`, `from Sentinel's "timeWindow"`},
		},
		{
			name:      "retryTimeoutMs 0 converts to RetryTimeout 0",
			give:      `[{"resource":"a","strategy":2,"statIntervalMs":1000,"threshold":5}]`,
			wantIndex: 0, wantField: "RetryTimeout",
			wantText: []string{`RetryTimeout must be > 0`, `from Sentinel's "retryTimeoutMs"`},
		},
		{
			name:      "unknown grade",
			give:      `[{"resource":"a","grade":3,"count":5,"timeWindow":5}]`,
			wantIndex: 0, wantField: "grade",
			wantText: []string{`grade must be 0 (slow call ratio), 1 (error ratio) or 2 (error count), got 3`},
		},
		{
			name:      "negative grade",
			give:      `[{"resource":"a","grade":-1,"count":5,"timeWindow":5}]`,
			wantIndex: 0, wantField: "grade",
			wantText: []string{`got -1`},
		},
		{
			name:      "unknown strategy",
			give:      `[` + java + `,{"resource":"a","strategy":3,"retryTimeoutMs":5000,"statIntervalMs":1000,"threshold":5}]`,
			wantIndex: 1, wantField: "strategy",
			wantText: []string{`strategy must be 0 (SlowRequestRatio), 1 (ErrorRatio) or 2 (ErrorCount), got 3`},
		},
		{
			name:      "negative count",
			give:      `[{"resource":"a","grade":2,"count":-1,"timeWindow":5}]`,
			wantIndex: 0, wantField: "count",
			wantText: []string{`count must not be negative`},
		},
		{
			name:      "Java minRequestAmount 0, which Sentinel refuses",
			give:      `[{"resource":"a","grade":2,"count":5,"timeWindow":5,"minRequestAmount":0}]`,
			wantIndex: 0, wantField: "minRequestAmount",
			wantText: []string{`minRequestAmount must be > 0, got 0`},
		},
		{
			name:      "Java statIntervalMs -1",
			give:      `[{"resource":"a","grade":2,"count":5,"timeWindow":5,"statIntervalMs":-1}]`,
			wantIndex: 0, wantField: "statIntervalMs",
			wantText: []string{`statIntervalMs must be > 0, got -1`},
		},
		{
			name:      "Go statIntervalMs left out, which sentinel-golang refuses",
			give:      `[{"resource":"a","strategy":2,"retryTimeoutMs":5000,"threshold":5}]`,
			wantIndex: 0, wantField: "statIntervalMs",
			wantText: []string{`statIntervalMs must be > 0, got 0`},
		},
		{
			name:      "an error ratio above 1",
			give:      `[{"resource":"a","grade":1,"count":1.5,"timeWindow":5}]`,
			wantIndex: 0, wantField: "Threshold",
			wantText: []string{`Threshold must be in (0, 1]`, `from Sentinel's "count"`},
		},
		{
			name:      "a slow-call RT of 0 ms",
			give:      `[{"resource":"a","grade":0,"count":0,"timeWindow":5}]`,
			wantIndex: 0, wantField: "MaxAllowedRT",
			wantText: []string{`MaxAllowedRT is required`, `from Sentinel's "count"`},
		},
		{
			name:      "a slow-call RT too long for a time.Duration",
			give:      `[{"resource":"a","strategy":0,"retryTimeoutMs":5000,"statIntervalMs":1000,"maxAllowedRtMs":18446744073709551615,"threshold":0.5}]`,
			wantIndex: 0, wantField: "maxAllowedRtMs",
			wantText: []string{`maxAllowedRtMs must be at most 9223372036854`},
		},
		{
			name:      "an ErrorCount threshold below 1",
			give:      `[{"resource":"a","strategy":2,"retryTimeoutMs":5000,"statIntervalMs":1000,"threshold":0.9}]`,
			wantIndex: 0, wantField: "Threshold",
			wantText: []string{`Threshold must be a whole number >= 1`, `from Sentinel's "threshold"`},
		},
		{
			name:      "a bucket too short",
			give:      `[{"resource":"a","strategy":2,"retryTimeoutMs":5000,"statIntervalMs":2000,"statSlidingWindowBucketCount":2000,"threshold":3}]`,
			wantIndex: 0, wantField: "BucketCount",
			wantText: []string{`BucketCount must be at most 1000`, `from Sentinel's "statSlidingWindowBucketCount"`},
		},
		{
			name:      "no resource",
			give:      `[{"grade":2,"count":5,"timeWindow":5}]`,
			wantIndex: 0, wantField: "Resource",
			wantText: []string{`Resource is required`},
		},
		{
			name:      "timeWindow as a string",
			give:      `[{"resource":"a","grade":2,"count":5,"timeWindow":"5"}]`,
			wantIndex: 0, wantField: "timeWindow",
			wantText: []string{`timeWindow must be a whole number in [0, 2147483647], got string`},
		},
		{
			name:      "a fractional timeWindow",
			give:      `[{"resource":"a","grade":2,"count":5,"timeWindow":1.5}]`,
			wantIndex: 0, wantField: "timeWindow",
			wantText: []string{`got number 1.5`},
		},
		{
			name:      "a negative retryTimeoutMs",
			give:      `[{"resource":"a","strategy":2,"retryTimeoutMs":-5,"statIntervalMs":1000,"threshold":5}]`,
			wantIndex: 0, wantField: "retryTimeoutMs",
			wantText: []string{`retryTimeoutMs must be a whole number in [0, 4294967295], got number -5`},
		},
		{
			name:      "strategy as a name",
			give:      `[{"resource":"a","strategy":"ErrorCount","retryTimeoutMs":5000,"statIntervalMs":1000,"threshold":5}]`,
			wantIndex: 0, wantField: "strategy",
			wantText: []string{`got string`},
		},
		{
			name:      "resource as a number",
			give:      `[{"resource":1,"grade":2,"count":5,"timeWindow":5}]`,
			wantIndex: 0, wantField: "resource",
			wantText: []string{`resource must be a string, got number`},
		},
		{
			name:      "a number in the array",
			give:      `[` + java + `,7]`,
			wantIndex: 1,
			wantText:  []string{`invalid rule 1`, `must be a JSON object, got number`},
		},
		{
			name:      "null in the array",
			give:      `[null]`,
			wantIndex: 0,
			wantText:  []string{`invalid rule 0`, `must be a JSON object, got null`},
		},
		{name: "an object, not an array", give: java, wantIndex: -1, wantText: []string{`breaker: Sentinel rules must be a JSON array, got object`}},
		{name: "malformed", give: `[` + java, wantIndex: -1, wantText: []string{`breaker: Sentinel rules are not valid JSON`}},
		{name: "empty input", give: ``, wantIndex: -1, wantText: []string{`breaker: Sentinel rules are not valid JSON`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := breaker.ParseSentinelRules([]byte(tt.give))
			require.Error(t, err)
			assert.Nil(t, got)
			assert.True(t, strings.HasPrefix(err.Error(), "breaker: "), err.Error())
			for _, want := range tt.wantText {
				assert.Contains(t, err.Error(), want)
			}

			var re *breaker.RuleError
			if tt.wantIndex < 0 {
				assert.False(t, errors.As(err, &re), "not a *RuleError")
				return
			}
			assert.ErrorIs(t, err, breaker.ErrInvalidRule)
			require.ErrorAs(t, err, &re)
			assert.Equal(t, tt.wantIndex, re.Index)
			assert.Equal(t, tt.wantField, re.Field)
		})
	}
}

// What matters to a user who migrates: a Java rule "open when errors exceed 5" opens on the
// 6th error, not on the 5th.
func TestSentinelJavaErrorCountTripsOnTheSameCall(t *testing.T) {
	rules, err := breaker.ParseSentinelRules([]byte(`[{"resource":"mysql:orders","grade":2,"count":5,"timeWindow":10}]`))
	require.NoError(t, err)
	m := breaker.NewManager(breaker.WithClock(breakertest.NewClock()))
	require.NoError(t, m.LoadRules(rules))
	errQuery := errors.New("query failed")
	fail := func() error {
		e, blocked := m.Enter("mysql:orders")
		if blocked != nil {
			return blocked
		}
		e.SetError(errQuery)
		e.Exit()
		return nil
	}

	for i := 1; i <= 5; i++ {
		require.NoError(t, fail(), "call %d", i)
	}
	assert.Equal(t, breaker.Closed, m.Breakers("mysql:orders")[0].State(), "5 errors do not exceed count 5")

	require.NoError(t, fail(), "call 6")
	assert.Equal(t, breaker.Open, m.Breakers("mysql:orders")[0].State(), "the 6th error exceeds count 5")
	assert.ErrorIs(t, fail(), breaker.ErrOpen)
}

func FuzzParseSentinelRules(f *testing.F) {
	for _, name := range []string{"degrade-java.json", "degrade-go.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", "sentinel", name))
		require.NoError(f, err)
		f.Add(data)
	}
	for _, seed := range []string{
		`[{"resource":"a","grade":0,"count":50.5,"timeWindow":1,"slowRatioThreshold":0.5}]`,
		`[{"resource":"a","grade":2,"count":1e300,"timeWindow":2147483647,"statIntervalMs":86400000}]`,
		`[{"resource":"a","strategy":0,"retryTimeoutMs":4294967295,"statIntervalMs":60000,"statSlidingWindowBucketCount":7,"maxAllowedRtMs":9223372036854,"threshold":1}]`,
		`[{"resource":"a","strategy":2,"retryTimeoutMs":1,"statIntervalMs":1,"threshold":3.7,"minRequestAmount":0}]`,
		`null`, `[]`, ``, `[null]`, `[{}]`, `{}`, `[{"grade":null,"strategy":null}]`,
		`[{"resource":"a","grade":2,"strategy":2}]`,
		`[{"resource":"a","grade":9,"count":-1,"timeWindow":-1}]`,
		`[{"resource":"a","grade":"0","count":"5"}]`,
		`[{"id":"x","resource":"a","grade":1,"count":0,"timeWindow":1}]`,
		`[{"resource":"a","grade":2,"count":5,"timeWindow":5,"count":50}]`,
		`[{"resource":"a","Strategy":2,"retryTimeoutMs":1,"statIntervalMs":1,"threshold":3}]`,
	} {
		f.Add([]byte(seed))
	}
	// The converted rules are rules like any other: they read back the same.
	f.Fuzz(func(t *testing.T, data []byte) { checkParsed(t, breaker.ParseSentinelRules, data) })
}

// Given a Sentinel rule with a key written twice, or a key that matches a field of its form only
// when case is ignored, then ParseSentinelRules refuses it, naming the index and the key, where
// encoding/json would keep the last value or take the key for the field.
func TestParseSentinelRulesRefusesDuplicateAndCaseFoldedKeys(t *testing.T) {
	const java = `{"resource":"a","grade":2,"count":5,"timeWindow":5}`
	tests := []struct {
		name      string
		give      string // the second rule of the array
		wantField string
		wantText  string
	}{
		{
			name:      "Java: a key written twice",
			give:      `{"resource":"b","grade":2,"count":5,"timeWindow":5,"count":50}`,
			wantField: "count", wantText: `invalid rule 1 (resource "b"): count is written twice`,
		},
		{
			name:      "Java: a key in the wrong case",
			give:      `{"resource":"b","grade":2,"count":5,"timewindow":5}`,
			wantField: "timewindow", wantText: `timewindow matches the field "timeWindow" only when case is ignored`,
		},
		{
			name:      "Java: grade in the wrong case",
			give:      `{"resource":"b","Grade":2,"count":5,"timeWindow":5}`,
			wantField: "Grade", wantText: `Grade matches the field "grade"`,
		},
		{
			name:      "Go: a key in the wrong case",
			give:      `{"resource":"b","strategy":2,"retryTimeoutMs":5000,"statIntervalMs":1000,"threshold":5,"MinRequestAmount":10}`,
			wantField: "MinRequestAmount", wantText: `MinRequestAmount matches the field "minRequestAmount"`,
		},
		{
			name:      "Go: a key written twice",
			give:      `{"resource":"b","strategy":2,"retryTimeoutMs":5000,"statIntervalMs":1000,"threshold":5,"strategy":1}`,
			wantField: "strategy", wantText: `strategy is written twice`,
		},
		{
			name:      "an ignored key written twice",
			give:      `{"resource":"b","grade":2,"count":5,"timeWindow":5,"limitApp":"default","limitApp":"other"}`,
			wantField: "limitApp", wantText: `limitApp is written twice`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := breaker.ParseSentinelRules([]byte(`[` + java + `,` + tt.give + `]`))
			assert.Nil(t, got)
			assert.ErrorIs(t, err, breaker.ErrInvalidRule)
			var re *breaker.RuleError
			require.ErrorAs(t, err, &re)
			assert.Equal(t, 1, re.Index)
			assert.Equal(t, tt.wantField, re.Field)
			assert.ErrorContains(t, err, tt.wantText)
		})
	}

	// A key of the other form, or of neither, in any case, is not one of this form's: ignored.
	got, err := breaker.ParseSentinelRules([]byte(`[{"resource":"a","grade":2,"count":5,"timeWindow":5,` +
		`"Threshold":3,"LIMITAPP":"default","clusterConfig":{"a":1,"a":2}}]`))
	require.NoError(t, err)
	assert.Len(t, got, 1)
}

// A Rule's MinRequestAmount 0 means the default, which for ErrorCount is no more calls
// than Threshold. So ParseSentinelRules never leaves it 0: it writes Sentinel's own default,
// and a converted rule trips on the same call whatever a Rule's 0 means.
func TestParseSentinelRulesWritesMinRequestAmount(t *testing.T) {
	tests := []struct {
		name string
		give string
		want uint64
	}{
		{name: "Java, left out: Java's default 5", give: `{"resource":"a","grade":2,"count":0,"timeWindow":5}`, want: 5},
		{name: "Java, null: Java's default 5", give: `{"resource":"a","grade":2,"count":0,"timeWindow":5,"minRequestAmount":null}`, want: 5},
		{name: "Java, ratio, left out", give: `{"resource":"a","grade":1,"count":0.5,"timeWindow":5}`, want: 5},
		{name: "Java, set", give: `{"resource":"a","grade":2,"count":3,"timeWindow":5,"minRequestAmount":2}`, want: 2},
		{
			name: "Go, left out: no minimum, as 1",
			give: `{"resource":"a","strategy":2,"retryTimeoutMs":5000,"statIntervalMs":1000,"threshold":3}`, want: 1,
		},
		{
			name: "Go, 0: no minimum, as 1",
			give: `{"resource":"a","strategy":2,"retryTimeoutMs":5000,"statIntervalMs":1000,"threshold":3,"minRequestAmount":0}`, want: 1,
		},
		{
			name: "Go, set",
			give: `{"resource":"a","strategy":2,"retryTimeoutMs":5000,"statIntervalMs":1000,"threshold":3,"minRequestAmount":7}`, want: 7,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := breaker.ParseSentinelRules([]byte(`[` + tt.give + `]`))
			require.NoError(t, err)
			require.Len(t, got, 1)
			assert.Equal(t, tt.want, got[0].MinRequestAmount)
		})
	}

	// Java "open when errors exceed 0" with the default minRequestAmount: the window must hold
	// 5 calls, so the 1st to 4th errors do not trip and the 5th does.
	rules, err := breaker.ParseSentinelRules([]byte(`[{"resource":"db","grade":2,"count":0,"timeWindow":10}]`))
	require.NoError(t, err)
	m := breaker.NewManager(breaker.WithClock(breakertest.NewClock()))
	require.NoError(t, m.LoadRules(rules))
	for i := 1; i <= 5; i++ {
		e, blocked := m.Enter("db")
		require.NoError(t, blocked, "call %d", i)
		e.SetError(errors.New("down"))
		e.Exit()
		want := breaker.Closed
		if i == 5 {
			want = breaker.Open
		}
		assert.Equal(t, want, m.Breakers("db")[0].State(), "after error %d", i)
	}
}
