package breaker_test

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
)

// fullRule sets every field of a Rule.
var fullRule = breaker.Rule{
	ID:               "slow-orders",
	Resource:         "GET:/order",
	Strategy:         breaker.SlowRequestRatio,
	Threshold:        0.6,
	MaxAllowedRT:     300 * time.Millisecond,
	MinRequestAmount: 10,
	StatInterval:     10 * time.Second,
	BucketCount:      20,
	StatCalls:        50, // not valid beside StatInterval: fullRule is for the JSON form
	RetryTimeout:     10 * time.Second,
	ProbeTimeout:     time.Second,
	ProbeNum:         2,
	MaxRetryTimeout:  time.Minute,
	RetryJitter:      0.25,
	DryRun:           true,
	FastBuckets:      4,
	FastThreshold:    0.9,
	RampUp:           3 * time.Second,
	Pace:             true,
}

const fullRuleJSON = `{"id":"slow-orders","resource":"GET:/order","strategy":"SlowRequestRatio",` +
	`"threshold":0.6,"maxAllowedRT":"300ms","minRequestAmount":10,"statInterval":"10s",` +
	`"bucketCount":20,"statCalls":50,"retryTimeout":"10s","probeTimeout":"1s","probeNum":2,"maxRetryTimeout":"1m0s",` +
	`"retryJitter":0.25,"dryRun":true,"fastBuckets":4,"fastThreshold":0.9,"rampUp":"3s","pace":true}`

// Given fullRule, then it sets every field of a Rule: a field added to Rule must be added to
// it, and so to the JSON tests that use it.
func TestFullRuleSetsEveryField(t *testing.T) {
	v := reflect.ValueOf(fullRule)
	for i := range v.NumField() {
		if v.Type().Field(i).Name == "Strategy" {
			continue // SlowRequestRatio, the zero Strategy, is the one that reads every field
		}
		assert.False(t, v.Field(i).IsZero(), "fullRule leaves %s zero", v.Type().Field(i).Name)
	}
}

func TestRuleMarshalJSON(t *testing.T) {
	tests := []struct {
		name string
		give breaker.Rule
		want string
	}{
		{name: "every field", give: fullRule, want: fullRuleJSON},
		{
			name: "defaults left out",
			give: breaker.Rule{Resource: "orders", Strategy: breaker.ErrorCount, Threshold: 3, RetryTimeout: 5 * time.Second},
			want: `{"resource":"orders","strategy":"ErrorCount","threshold":3,"retryTimeout":"5s"}`,
		},
		{
			name: "the zero rule still writes resource, strategy, threshold and retryTimeout",
			give: breaker.Rule{},
			want: `{"resource":"","strategy":"SlowRequestRatio","threshold":0,"retryTimeout":"0s"}`,
		},
		{
			name: "durations as time.Duration.String writes them",
			give: breaker.Rule{Resource: "r", Strategy: breaker.ErrorRatio, Threshold: 0.25,
				MaxAllowedRT: 1500 * time.Microsecond, RetryTimeout: 90 * time.Second, ProbeTimeout: 2 * time.Hour},
			want: `{"resource":"r","strategy":"ErrorRatio","threshold":0.25,"maxAllowedRT":"1.5ms",` +
				`"retryTimeout":"1m30s","probeTimeout":"2h0m0s"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.Marshal(tt.give)
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(got))
		})
	}
}

func TestRuleMarshalJSONRefusesWhatJSONCannotHold(t *testing.T) {
	tests := []struct {
		name     string
		give     breaker.Rule
		wantText string
	}{
		{name: "unknown strategy", give: breaker.Rule{Resource: "r", Strategy: 7}, wantText: "unknown strategy 7"},
		{name: "NaN threshold", give: breaker.Rule{Resource: "r", Threshold: math.NaN()}, wantText: "threshold NaN"},
		{name: "infinite threshold", give: breaker.Rule{Resource: "r", Threshold: math.Inf(1)}, wantText: "threshold +Inf"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.give.MarshalJSON()
			require.Error(t, err)
			assert.True(t, strings.HasPrefix(err.Error(), "breaker: "), err.Error())
			assert.Contains(t, err.Error(), tt.wantText)
		})
	}
}

func TestRuleJSONRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		give breaker.Rule
	}{
		{name: "every field", give: fullRule},
		{name: "zero", give: breaker.Rule{}},
		{name: "error count", give: breaker.Rule{Resource: "db", Strategy: breaker.ErrorCount, Threshold: 1e9, RetryTimeout: time.Minute}},
		{name: "error ratio with an odd threshold", give: breaker.Rule{Resource: "db", Strategy: breaker.ErrorRatio, Threshold: 1.0 / 3, RetryTimeout: time.Second}},
		{name: "nanoseconds", give: breaker.Rule{Resource: "r", MaxAllowedRT: 1, StatInterval: 999_999_999, RetryTimeout: 1, ProbeTimeout: 3}},
		{name: "largest values", give: breaker.Rule{Resource: "r", MaxAllowedRT: math.MaxInt64, MinRequestAmount: math.MaxUint64,
			StatInterval: math.MaxInt64, BucketCount: math.MaxUint32, RetryTimeout: math.MaxInt64, ProbeTimeout: math.MaxInt64}},
		{name: "negative durations (UnmarshalJSON does not validate)", give: breaker.Rule{Resource: "r", MaxAllowedRT: -time.Second,
			RetryTimeout: math.MinInt64, ProbeTimeout: -1}},
		{name: "a resource JSON must escape", give: breaker.Rule{ID: "\x00", Resource: "GET </a?b=\"c\"&d> 接口 \u2028", Strategy: breaker.ErrorRatio, Threshold: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.give)
			require.NoError(t, err)
			var got breaker.Rule
			require.NoError(t, json.Unmarshal(b, &got), string(b))
			assert.Equal(t, tt.give, got, string(b))
		})
	}
}

func TestRuleUnmarshalJSON(t *testing.T) {
	tests := []struct {
		name string
		give string
		want breaker.Rule
	}{
		{name: "every field", give: fullRuleJSON, want: fullRule},
		{
			name: "fields left out or null keep their zero values; nothing is validated",
			give: `{"resource":"r","maxAllowedRT":null,"threshold":7}`,
			want: breaker.Rule{Resource: "r", Threshold: 7},
		},
		{
			name: "any duration time.ParseDuration reads",
			give: `{"resource":"r","strategy":"ErrorCount","maxAllowedRT":"0","retryTimeout":"1h2m3.5s","probeTimeout":"1500us"}`,
			want: breaker.Rule{Resource: "r", Strategy: breaker.ErrorCount,
				RetryTimeout: time.Hour + 2*time.Minute + 3500*time.Millisecond, ProbeTimeout: 1500 * time.Microsecond},
		},
		{
			name: "white space around the object",
			give: " \n{\"resource\":\"r\",\"strategy\":\"ErrorRatio\"}\t\n",
			want: breaker.Rule{Resource: "r", Strategy: breaker.ErrorRatio},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got breaker.Rule
			require.NoError(t, json.Unmarshal([]byte(tt.give), &got))
			assert.Equal(t, tt.want, got)
		})
	}

	t.Run("null leaves the rule as it was", func(t *testing.T) {
		got := fullRule
		require.NoError(t, got.UnmarshalJSON([]byte("null")))
		assert.Equal(t, fullRule, got)
	})
}

func TestRuleUnmarshalJSONErrors(t *testing.T) {
	tests := []struct {
		name      string
		give      string
		wantField string // the *RuleError's Field; "" for an error that is not a *RuleError
		wantText  []string
	}{
		{
			name:      "unknown field",
			give:      `{"resource":"r","strategy":"ErrorCount","retry":"5s"}`,
			wantField: "retry",
			wantText:  []string{`retry is not a rule field`, "retryTimeout"},
		},
		{
			name:      "a Sentinel field",
			give:      `{"resource":"r","retryTimeoutMs":5000}`,
			wantField: "retryTimeoutMs",
			wantText:  []string{`retryTimeoutMs is not a rule field`},
		},
		{
			name:      "duration without a unit",
			give:      `{"resource":"r","retryTimeout":"5"}`,
			wantField: "retryTimeout",
			wantText:  []string{`Go duration string`, `got "5"`},
		},
		{
			name:      "duration as a number",
			give:      `{"resource":"r","maxAllowedRT":5}`,
			wantField: "maxAllowedRT",
			wantText:  []string{`Go duration string`, `got number`},
		},
		{
			name:      "duration in parsecs",
			give:      `{"resource":"r","statInterval":"5 parsecs"}`,
			wantField: "statInterval",
			wantText:  []string{`got "5 parsecs"`},
		},
		{
			name:      "empty duration",
			give:      `{"resource":"r","probeTimeout":""}`,
			wantField: "probeTimeout",
			wantText:  []string{`got ""`},
		},
		{
			name:      "duration that overflows",
			give:      `{"resource":"r","retryTimeout":"300y"}`,
			wantField: "retryTimeout",
			wantText:  []string{`got "300y"`},
		},
		{
			name:      "unknown strategy",
			give:      `{"resource":"r","strategy":"SlowRatio"}`,
			wantField: "strategy",
			wantText:  []string{`SlowRequestRatio, ErrorRatio, ErrorCount or ConsecutiveErrors`, `got "SlowRatio"`},
		},
		{
			name:      "strategy as a number",
			give:      `{"resource":"r","strategy":1}`,
			wantField: "strategy",
			wantText:  []string{`SlowRequestRatio, ErrorRatio, ErrorCount or ConsecutiveErrors`, `got number`},
		},
		{
			name:      "threshold as a string",
			give:      `{"resource":"r","threshold":"0.5"}`,
			wantField: "threshold",
			wantText:  []string{`must be a finite number, got string`},
		},
		{
			name:      "threshold too large for a float64",
			give:      `{"resource":"r","threshold":1e400}`,
			wantField: "threshold",
			wantText:  []string{`got number 1e400`},
		},
		{
			name:      "negative minRequestAmount",
			give:      `{"resource":"r","minRequestAmount":-1}`,
			wantField: "minRequestAmount",
			wantText:  []string{`whole number in [0, 18446744073709551615]`, `got number -1`},
		},
		{
			name:      "bucketCount beyond uint32",
			give:      `{"resource":"r","bucketCount":4294967296}`,
			wantField: "bucketCount",
			wantText:  []string{`whole number in [0, 4294967295]`},
		},
		{
			name:      "fractional bucketCount",
			give:      `{"resource":"r","bucketCount":2.5}`,
			wantField: "bucketCount",
			wantText:  []string{`got number 2.5`},
		},
		{
			name:      "resource as a number",
			give:      `{"resource":5}`,
			wantField: "resource",
			wantText:  []string{`must be a string, got number`},
		},
		{
			name:      "id as a bool",
			give:      `{"resource":"r","id":true}`,
			wantField: "id",
			wantText:  []string{`must be a string, got bool`},
		},
		{
			name:     "an array, not an object",
			give:     `[{"resource":"r"}]`,
			wantText: []string{`must be a JSON object, got array`},
		},
		{
			name:     "trailing data",
			give:     `{"resource":"r"} {"resource":"s"}`,
			wantText: []string{`data after the rule's object`},
		},
		{
			name:     "trailing bracket",
			give:     `{"resource":"r"}]`,
			wantText: []string{`data after the rule's object`},
		},
		{
			name:     "malformed",
			give:     `{"resource":"r",}`,
			wantText: []string{`not valid JSON`},
		},
		{
			name:     "cut short",
			give:     `{"resource":"r"`,
			wantText: []string{`not valid JSON`},
		},
		{
			name:     "empty",
			give:     ``,
			wantText: []string{`not valid JSON`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := fullRule
			err := got.UnmarshalJSON([]byte(tt.give))
			require.Error(t, err)
			assert.True(t, strings.HasPrefix(err.Error(), "breaker: "), err.Error())
			for _, want := range tt.wantText {
				assert.Contains(t, err.Error(), want)
			}
			assert.Equal(t, fullRule, got, "a failed UnmarshalJSON leaves the rule alone")

			var re *breaker.RuleError
			if tt.wantField == "" {
				return
			}
			require.ErrorAs(t, err, &re)
			assert.ErrorIs(t, err, breaker.ErrInvalidRule)
			assert.Equal(t, tt.wantField, re.Field)
			assert.Equal(t, -1, re.Index)
			assert.Contains(t, err.Error(), tt.wantField)
		})
	}
}

func TestStrategyText(t *testing.T) {
	for _, s := range []breaker.Strategy{breaker.SlowRequestRatio, breaker.ErrorRatio, breaker.ErrorCount} {
		text, err := s.MarshalText()
		require.NoError(t, err)
		assert.Equal(t, s.String(), string(text))
		var back breaker.Strategy = 7
		require.NoError(t, back.UnmarshalText(text))
		assert.Equal(t, s, back)
	}

	_, err := breaker.Strategy(7).MarshalText()
	assert.ErrorContains(t, err, "unknown strategy 7")

	got := breaker.ErrorCount
	err = got.UnmarshalText([]byte("errorratio"))
	assert.ErrorContains(t, err, `unknown strategy "errorratio": want SlowRequestRatio, ErrorRatio, ErrorCount or ConsecutiveErrors`)
	assert.Equal(t, breaker.ErrorCount, got, "a failed UnmarshalText leaves the strategy alone")

	// Given a Strategy anywhere in a JSON document, then it reads as its name.
	b, err := json.Marshal(map[string]breaker.Strategy{"s": breaker.ErrorRatio})
	require.NoError(t, err)
	assert.Equal(t, `{"s":"ErrorRatio"}`, string(b))
}

func TestParseRules(t *testing.T) {
	const give = `[
		{"id":"slow","resource":"GET:/order","strategy":"SlowRequestRatio","threshold":0.6,"maxAllowedRT":"300ms","retryTimeout":"10s"},
		{"resource":"GET:/order","strategy":"ErrorRatio","threshold":0.5,"minRequestAmount":20,"statInterval":"10s","bucketCount":10,"retryTimeout":"30s"},
		{"resource":"db","strategy":"ErrorCount","threshold":5,"retryTimeout":"5s","probeTimeout":"1s"}
	]`
	got, err := breaker.ParseRules([]byte(give))
	require.NoError(t, err)
	assert.Equal(t, []breaker.Rule{
		{ID: "slow", Resource: "GET:/order", Strategy: breaker.SlowRequestRatio, Threshold: 0.6,
			MaxAllowedRT: 300 * time.Millisecond, RetryTimeout: 10 * time.Second},
		{Resource: "GET:/order", Strategy: breaker.ErrorRatio, Threshold: 0.5, MinRequestAmount: 20,
			StatInterval: 10 * time.Second, BucketCount: 10, RetryTimeout: 30 * time.Second},
		{Resource: "db", Strategy: breaker.ErrorCount, Threshold: 5, RetryTimeout: 5 * time.Second, ProbeTimeout: time.Second},
	}, got)

	// Then what ParseRules reads, a Manager loads.
	require.NoError(t, breaker.NewManager().LoadRules(got))
}

func TestParseRulesEmpty(t *testing.T) {
	for _, give := range []string{`null`, `[]`, " [ ] \n", "\tnull\n"} {
		got, err := breaker.ParseRules([]byte(give))
		require.NoError(t, err, give)
		assert.Empty(t, got, give)
	}
}

func TestParseRulesErrors(t *testing.T) {
	const ok = `{"resource":"r","strategy":"ErrorCount","threshold":3,"retryTimeout":"5s"}`
	tests := []struct {
		name        string
		give        string
		wantIndex   int // -1: not a *RuleError
		wantField   string
		wantText    string
		wantInvalid bool
	}{
		{
			name:      "an invalid rule at index 2",
			give:      `[` + ok + `,` + ok + `,{"resource":"r","strategy":"ErrorRatio","threshold":1.5,"retryTimeout":"5s"}]`,
			wantIndex: 2, wantField: "Threshold", wantText: `invalid rule 2 (resource "r"): Threshold must be in (0, 1]`,
		},
		{
			name:      "a rule without its required retryTimeout",
			give:      `[{"resource":"r","strategy":"ErrorCount","threshold":3}]`,
			wantIndex: 0, wantField: "RetryTimeout", wantText: "RetryTimeout must be > 0",
		},
		{
			name:      "a rule that does not name its strategy",
			give:      `[` + ok + `,{"resource":"r","threshold":0.5,"maxAllowedRT":"1s","retryTimeout":"5s"}]`,
			wantIndex: 1, wantField: "strategy", wantText: "invalid rule 1 (resource \"r\"): strategy is required",
		},
		{
			name:      "an unknown field at index 1",
			give:      `[` + ok + `,{"resource":"r","strategy":"ErrorCount","threshold":3,"retryTimeout":"5s","limitApp":"default"}]`,
			wantIndex: 1, wantField: "limitApp", wantText: "invalid rule 1 (resource \"r\"): limitApp is not a rule field",
		},
		{
			name:      "a bad duration at index 0",
			give:      `[{"resource":"r","strategy":"ErrorCount","threshold":3,"retryTimeout":5}]`,
			wantIndex: 0, wantField: "retryTimeout", wantText: "invalid rule 0",
		},
		{
			name:      "null in the array",
			give:      `[` + ok + `,null]`,
			wantIndex: 1, wantText: "invalid rule 1",
		},
		{
			name:      "a number in the array",
			give:      `[` + ok + `,` + ok + `,3]`,
			wantIndex: 2, wantText: "must be a JSON object, got number",
		},
		{name: "an object, not an array", give: ok, wantIndex: -1, wantText: "breaker: rules must be a JSON array, got object"},
		{name: "a string", give: `"[]"`, wantIndex: -1, wantText: "must be a JSON array, got string"},
		{name: "malformed", give: `[` + ok + `,]`, wantIndex: -1, wantText: "breaker: rules are not valid JSON"},
		{name: "trailing data", give: `[` + ok + `] []`, wantIndex: -1, wantText: "breaker: rules are not valid JSON"},
		{name: "empty input", give: ``, wantIndex: -1, wantText: "breaker: rules are not valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := breaker.ParseRules([]byte(tt.give))
			require.Error(t, err)
			assert.Nil(t, got)
			assert.True(t, strings.HasPrefix(err.Error(), "breaker: "), err.Error())
			assert.Contains(t, err.Error(), tt.wantText)

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

// ParseRules checks each rule alone; rules that clash are LoadRules's to refuse.
func TestParseRulesLeavesDuplicatesToLoadRules(t *testing.T) {
	const r = `{"resource":"r","strategy":"ErrorCount","threshold":3,"retryTimeout":"5s"}`
	rules, err := breaker.ParseRules([]byte(`[` + r + `,` + r + `]`))
	require.NoError(t, err)
	require.Len(t, rules, 2)

	err = breaker.NewManager().LoadRules(rules)
	assert.ErrorIs(t, err, breaker.ErrInvalidRule)
	assert.ErrorContains(t, err, "identical to rule 0")
}

func FuzzParseRules(f *testing.F) {
	for _, seed := range []string{
		`[` + fullRuleJSON + `]`,
		`[{"resource":"r","strategy":"ErrorCount","threshold":3,"retryTimeout":"5s"},` +
			`{"resource":"r","strategy":"ErrorRatio","threshold":0.5,"statInterval":"10s","bucketCount":10,"retryTimeout":"1m"}]`,
		`[{"resource":"r","strategy":"SlowRequestRatio","threshold":1,"maxAllowedRT":"1.5ms","retryTimeout":"2562047h47m16.854775807s"}]`,
		`[{"resource":"r","strategy":"ErrorRatio","threshold":0.5,"statCalls":100,"minRequestAmount":20,"retryTimeout":"5s"}]`,
		`null`, `[]`, ``, `[null]`, `{}`, `[{}]`, `[1,"a",true]`,
		`[{"resource":"r","strategy":"ErrorCount","threshold":3,"retryTimeout":"5"}]`,
		`[{"resource":"r","strategy":"Nope","threshold":3,"retryTimeout":"5s"}]`,
		`[{"resource":"r","strategy":"ErrorCount","threshold":3.5,"retryTimeout":"5s","x":1}]`,
		`[{"resource":"\u00e9\ud800","strategy":"ErrorRatio","threshold":1e-300,"retryTimeout":"1ns"}]`,
		`[{"resource":"r","strategy":"ErrorCount","threshold":3,"retryTimeout":"5s"}] x`,
		`[{"resource":"r","strategy":"ErrorCount","threshold":3,"retryTimeout":"5s","threshold":4}]`,
		`[{"resource":"r","strategy":"ErrorCount","threshold":3,"retrytimeout":"5s"}]`,
		"[\n {\"resource\":\"r\",\n  \"strategy\":}]",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkParsed(t, breaker.ParseRules, data) })
}

// checkParsed runs parse on data: it returns an error, or valid rules that ParseRules reads
// back, the same, from MarshalJSON's output.
func checkParsed(t *testing.T, parse func([]byte) ([]breaker.Rule, error), data []byte) {
	rules, err := parse(data)
	if err != nil {
		require.True(t, strings.HasPrefix(err.Error(), "breaker: "), err.Error())
		require.Nil(t, rules)
		return
	}
	for i, r := range rules {
		require.NoError(t, r.Validate(), "rule %d", i)
	}
	out, err := json.Marshal(rules)
	require.NoError(t, err)
	again, err := breaker.ParseRules(out)
	require.NoError(t, err, string(out))
	require.Equal(t, rules, again, string(out))
}

// Given keys that encoding/json would take in silence (a key written twice, the last winning;
// a key that matches a field only when case is ignored), then ParseRules and UnmarshalJSON
// refuse them with a *RuleError that names the rule's index and the key.
func TestParseRulesRefusesDuplicateAndCaseFoldedKeys(t *testing.T) {
	const ok = `{"resource":"r","strategy":"ErrorCount","threshold":3,"retryTimeout":"5s"}`
	tests := []struct {
		name      string
		give      string // the second rule of the array
		wantField string
		wantText  string
	}{
		{
			name:      "a key written twice",
			give:      `{"resource":"r","strategy":"ErrorCount","threshold":3,"retryTimeout":"5s","threshold":4}`,
			wantField: "threshold", wantText: `invalid rule 1 (resource "r"): threshold is written twice`,
		},
		{
			name:      "a key written twice with the same value",
			give:      `{"resource":"r","resource":"r","strategy":"ErrorCount","threshold":3,"retryTimeout":"5s"}`,
			wantField: "resource", wantText: `resource is written twice`,
		},
		{
			name:      "a key written twice, once with an escape",
			give:      `{"resource":"r","strategy":"ErrorCount","threshold":3,"retryTimeout":"5s","retryTimeou\u0074":"1s"}`,
			wantField: "retryTimeout", wantText: `retryTimeout is written twice`,
		},
		{
			name:      "a key in lower case",
			give:      `{"resource":"r","strategy":"ErrorCount","threshold":3,"retrytimeout":"5s"}`,
			wantField: "retrytimeout", wantText: `retrytimeout matches the field "retryTimeout" only when case is ignored`,
		},
		{
			name:      "a key in upper case before the resource",
			give:      `{"RESOURCE":"x","resource":"r","strategy":"ErrorCount","threshold":3,"retryTimeout":"5s"}`,
			wantField: "RESOURCE", wantText: `invalid rule 1 (resource "r"): RESOURCE matches the field "resource"`,
		},
		{
			name:      "a key that folds to a field through Unicode (the Kelvin sign)",
			give:      `{"resource":"r","strategy":"ErrorCount","threshold":3,"retryTimeout":"5s","buc\u212aetCount":2}`,
			wantField: "buc\u212aetCount", wantText: `matches the field "bucketCount" only when case is ignored`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := breaker.ParseRules([]byte(`[` + ok + `,` + tt.give + `]`))
			assert.Nil(t, got)
			assert.ErrorIs(t, err, breaker.ErrInvalidRule)
			var re *breaker.RuleError
			require.ErrorAs(t, err, &re)
			assert.Equal(t, 1, re.Index)
			assert.Equal(t, tt.wantField, re.Field)
			assert.ErrorContains(t, err, tt.wantText)

			r := fullRule
			err = json.Unmarshal([]byte(tt.give), &r)
			require.ErrorAs(t, err, &re)
			assert.Equal(t, -1, re.Index)
			assert.Equal(t, tt.wantField, re.Field)
			assert.Equal(t, fullRule, r, "a refused rule leaves the Rule alone")
		})
	}
}

// Given malformed JSON, then the error says on which line and in which column (both from 1)
// the decoder stopped, as well as the byte offset.
func TestParseRulesSyntaxErrorPosition(t *testing.T) {
	tests := []struct {
		name string
		give string
		want string
	}{
		{name: "on the first line", give: `[{"resource":"r",}]`, want: "(at line 1, column 18, byte offset 18)"},
		{
			name: "on the third line",
			give: "[\n  {\"resource\":\"r\"},\n  {\"resource\" \"s\"}\n]",
			want: "line 3, column 15, byte offset 37",
		},
		{name: "columns count characters", give: "[\n{\"resource\":\"é\"\"x\"}]", want: "line 2, column 16"},
		{name: "at the end of the input", give: "[\n{\"resource\":", want: "line 2, column 13"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := breaker.ParseRules([]byte(tt.give))
			assert.ErrorContains(t, err, "breaker: rules are not valid JSON")
			assert.ErrorContains(t, err, tt.want)
		})
	}

	var r breaker.Rule
	err := r.UnmarshalJSON([]byte("{\"resource\":\"r\",\n\"threshold\":1x}"))
	assert.ErrorContains(t, err, "breaker: rule is not valid JSON")
	assert.ErrorContains(t, err, "line 2, column 14")
}
