package breakerdebug_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakerdebug"
	"github.com/halfopen/breaker/breakertest"
)

// Given a resource with settings and calls in flight, one forced open without rules, one
// forced closed whose breaker trips, and a DryRun rule that trips, then the JSON lists each
// resource's settings and calls in flight (none for a resource without settings), marks the
// breakers that reject nothing dryRun, and their transitions too.
func TestJSONShowsSettingsForceAndDryRun(t *testing.T) {
	shadow := breaker.Rule{ID: "shadow", Resource: "payments", Strategy: breaker.ErrorCount, Threshold: 2,
		MinRequestAmount: 1, RetryTimeout: time.Minute, DryRun: true}
	search := breaker.Rule{Resource: "search", Strategy: breaker.ErrorCount, Threshold: 1,
		MinRequestAmount: 1, RetryTimeout: time.Minute}
	m, clk, h := newManager(t, inventoryRule, shadow, search)
	require.NoError(t, m.LoadResources(map[string]breaker.ResourceConfig{
		"inventory": {Timeout: 2 * time.Second, MaxConcurrency: 20},
		"legacy":    {Force: breaker.ForceOpen},
		"search":    {Force: breaker.ForceClosed},
	}))
	held, err := m.Enter("inventory")
	require.NoError(t, err)
	defer held.Exit()
	clk.Advance(time.Second)
	call(m, "payments", fail)
	call(m, "payments", fail) // trips the DryRun rule at 1s
	call(m, "search", fail)   // trips search's breaker at 1s, which lets calls through
	call(m, "search", succeed)

	var got struct {
		Resources   []json.RawMessage `json:"resources"`
		Transitions []json.RawMessage `json:"transitions"`
	}
	require.NoError(t, json.Unmarshal(get(h, http.MethodGet, path+"?format=json", nil).Body.Bytes(), &got))
	require.Len(t, got.Resources, 4)
	want := []string{
		`{"resource": "inventory", "settings": {"force": "auto", "timeout": "2s", "maxConcurrency": 20},
		  "inFlight": 1, "breakers": [{"rule": ` + string(ruleJSON(t, inventoryRule)) + `,
		  "ruleText": "errors ≥ 3 · min 1 call in 1s · retry 5s", "state": "CLOSED",
		  "dryRun": false, "generation": 0, "total": 0, "bad": 0}]}`,
		`{"resource": "legacy", "settings": {"force": "open", "timeout": "0s", "maxConcurrency": 0},
		  "inFlight": 0, "breakers": []}`,
		`{"resource": "payments", "breakers": [{"rule": ` + string(ruleJSON(t, shadow)) + `,
		  "ruleText": "errors ≥ 2 · min 1 call in 1s · retry 1m0s", "state": "OPEN",
		  "dryRun": true, "generation": 1, "total": 0, "bad": 0, "retryAt": "` + stamp(61*time.Second) + `"}]}`,
		`{"resource": "search", "settings": {"force": "closed", "timeout": "0s", "maxConcurrency": 0},
		  "inFlight": 0, "breakers": [{"rule": ` + string(ruleJSON(t, search)) + `,
		  "ruleText": "errors ≥ 1 · min 1 call in 1s · retry 1m0s", "state": "OPEN",
		  "dryRun": true, "generation": 1, "total": 0, "bad": 0, "retryAt": "` + stamp(61*time.Second) + `"}]}`,
	}
	for i, w := range want {
		assert.JSONEq(t, w, string(got.Resources[i]), "resource %d", i)
	}
	require.Len(t, got.Transitions, 2)
	assert.JSONEq(t, `{"seq": 2, "resource": "search", "rule": `+string(ruleJSON(t, search))+`,
		"ruleText": "errors ≥ 1 · min 1 call in 1s · retry 1m0s", "from": "CLOSED",
		"to": "OPEN", "reason": "ThresholdExceeded", "snapshot": 1, "at": "`+stamp(time.Second)+`",
		"generation": 1, "dryRun": true}`, string(got.Transitions[0]))
	assert.JSONEq(t, `{"seq": 1, "resource": "payments", "rule": `+string(ruleJSON(t, shadow))+`,
		"ruleText": "errors ≥ 2 · min 1 call in 1s · retry 1m0s", "from": "CLOSED",
		"to": "OPEN", "reason": "ThresholdExceeded", "snapshot": 2, "at": "`+stamp(time.Second)+`",
		"generation": 1, "dryRun": true}`, string(got.Transitions[1]))
}

// Given an observer registered before the handler's that makes a transition of its own while it
// hears one, then the handler hears the later transition first; the JSON still lists them newest
// first by seq.
func TestTransitionsOrderedBySeq(t *testing.T) {
	first := breaker.Rule{Resource: "first", Strategy: breaker.ErrorCount, Threshold: 1,
		MinRequestAmount: 1, RetryTimeout: time.Minute}
	second := first
	second.Resource = "second"
	m := breaker.NewManager(breaker.WithClock(breakertest.NewClock()))
	require.NoError(t, m.LoadRules([]breaker.Rule{first, second}))
	m.AddObserver(breaker.ObserverFunc(func(c breaker.StateChange) {
		if c.Resource == "first" {
			call(m, "second", fail) // trips second inside the report of first's trip
		}
	}))
	h := breakerdebug.Handler(m) // its observer hears second's trip, then first's
	call(m, "first", fail)

	var got struct {
		Transitions []struct {
			Seq      uint64 `json:"seq"`
			Resource string `json:"resource"`
		} `json:"transitions"`
	}
	require.NoError(t, json.Unmarshal(get(h, http.MethodGet, path+"?format=json", nil).Body.Bytes(), &got))
	require.Len(t, got.Transitions, 2)
	assert.Equal(t, uint64(2), got.Transitions[0].Seq)
	assert.Equal(t, "second", got.Transitions[0].Resource)
	assert.Equal(t, uint64(1), got.Transitions[1].Seq)
	assert.Equal(t, "first", got.Transitions[1].Resource)
}

// Given 150 resources that each trip once, then the status keeps 100 transitions, the latest
// by seq, whatever resources they are of: the list does not grow with names.
func TestRecentIsBoundedAcrossResources(t *testing.T) {
	var rules []breaker.Rule
	for i := range 150 {
		rules = append(rules, breaker.Rule{Resource: "r" + strconv.Itoa(i), Strategy: breaker.ErrorCount,
			Threshold: 1, MinRequestAmount: 1, RetryTimeout: time.Minute})
	}
	m, _, h := newManager(t, rules...)
	for _, r := range rules {
		call(m, r.Resource, fail)
	}

	var got struct {
		Transitions []struct {
			Seq      uint64 `json:"seq"`
			Resource string `json:"resource"`
		} `json:"transitions"`
	}
	require.NoError(t, json.Unmarshal(get(h, http.MethodGet, path+"?format=json", nil).Body.Bytes(), &got))
	require.Len(t, got.Transitions, 100)
	for i, c := range got.Transitions {
		assert.Equal(t, uint64(150-i), c.Seq, "transition %d", i)
		assert.Equal(t, "r"+strconv.Itoa(149-i), c.Resource, "transition %d", i)
	}
}
