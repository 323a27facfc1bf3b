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
	// Worst first: the forced resources (legacy, search), then the rest (inventory, and payments,
	// whose OPEN breaker is a dry run), each by name.
	want := []string{
		`{"resource": "legacy", "side": "client", "worst": "FORCED",
		  "settings": {"force": "open", "timeout": "0s", "maxConcurrency": 0}, "settingsFrom": "legacy",
		  "inFlight": 0, "breakers": []}`,
		`{"resource": "search", "side": "client", "worst": "FORCED",
		  "settings": {"force": "closed", "timeout": "0s", "maxConcurrency": 0}, "settingsFrom": "search",
		  "inFlight": 0, "breakers": [{"rule": ` + string(ruleJSON(t, search)) + `,
		  "ruleText": "errors ≥ 1 · min 1 call in 1s · retry 1m0s", "state": "OPEN",
		  "dryRun": true, "generation": 1, "total": 0, "bad": 0, "refused": 0, "retryAt": "` + stamp(61*time.Second) + `"}]}`,
		`{"resource": "inventory", "side": "client", "worst": "CLOSED",
		  "settings": {"force": "auto", "timeout": "2s", "maxConcurrency": 20}, "settingsFrom": "inventory",
		  "inFlight": 1, "breakers": [{"rule": ` + string(ruleJSON(t, inventoryRule)) + `,
		  "ruleText": "errors ≥ 3 · min 1 call in 1s · retry 5s", "state": "CLOSED",
		  "dryRun": false, "generation": 0, "total": 0, "bad": 0, "refused": 0}]}`,
		`{"resource": "payments", "side": "client", "worst": "DRY_RUN", "breakers": [{"rule": ` + string(ruleJSON(t, shadow)) + `,
		  "ruleText": "errors ≥ 2 · min 1 call in 1s · retry 1m0s", "state": "OPEN",
		  "dryRun": true, "generation": 1, "total": 0, "bad": 0, "refused": 0, "retryAt": "` + stamp(61*time.Second) + `"}]}`,
	}
	for i, w := range want {
		assert.JSONEq(t, w, string(got.Resources[i]), "resource %d", i)
	}
	require.Len(t, got.Transitions, 2)
	assert.JSONEq(t, `{"seq": 2, "resource": "search", "side": "client", "rule": `+string(ruleJSON(t, search))+`,
		"ruleText": "errors ≥ 1 · min 1 call in 1s · retry 1m0s", "from": "CLOSED",
		"to": "OPEN", "reason": "ThresholdExceeded", "snapshot": 1, "at": "`+stamp(time.Second)+`",
		"generation": 1, "dryRun": true}`, string(got.Transitions[0]))
	assert.JSONEq(t, `{"seq": 1, "resource": "payments", "side": "client", "rule": `+string(ruleJSON(t, shadow))+`,
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

// Given a "*" template setting written for catalog hosts, a resource with rules and no settings
// of its own (payments), and one with settings of its own, when the status is read, then
// payments carries the "*" setting under its own name, with the key it comes from and its calls
// in flight; the other its own, from its own name; and "*" is a key, listed apart, not a
// resource.
func TestJSONShowsTemplateSettingUnderTheName(t *testing.T) {
	m, _, h := newManager(t, paymentsErrors, inventoryRule)
	require.NoError(t, m.LoadResources(map[string]breaker.ResourceConfig{
		"*":         {Timeout: 500 * time.Millisecond, MaxConcurrency: 20},
		"inventory": {Timeout: 2 * time.Second},
	}))
	held, err := m.Enter("payments")
	require.NoError(t, err)
	defer held.Exit()
	call(m, "catalog-1", succeed)

	var got struct {
		Resources []struct {
			Resource     string          `json:"resource"`
			Settings     json.RawMessage `json:"settings"`
			SettingsFrom string          `json:"settingsFrom"`
			InFlight     *int64          `json:"inFlight"`
		} `json:"resources"`
		TemplateSettings []struct {
			Key   string `json:"key"`
			Names int    `json:"names"`
		} `json:"templateSettings"`
	}
	require.NoError(t, json.Unmarshal(get(h, http.MethodGet, path+"?format=json", nil).Body.Bytes(), &got))
	require.Len(t, got.Resources, 2, "inventory and payments; neither * nor catalog-1, which has no rules")
	inventory, payments := got.Resources[0], got.Resources[1] // both CLOSED with empty windows: by name
	require.Equal(t, "inventory", inventory.Resource)
	require.Equal(t, "payments", payments.Resource)
	assert.JSONEq(t, `{"force": "auto", "timeout": "500ms", "maxConcurrency": 20}`, string(payments.Settings))
	assert.Equal(t, "*", payments.SettingsFrom, "the template setting's key")
	require.NotNil(t, payments.InFlight)
	assert.Equal(t, int64(1), *payments.InFlight)
	assert.JSONEq(t, `{"force": "auto", "timeout": "2s", "maxConcurrency": 0}`, string(inventory.Settings))
	assert.Equal(t, "inventory", inventory.SettingsFrom, "its own")
	require.Len(t, got.TemplateSettings, 1)
	assert.Equal(t, "*", got.TemplateSettings[0].Key)
	assert.Equal(t, 2, got.TemplateSettings[0].Names, "payments and catalog-1: the names it applies to")
}
