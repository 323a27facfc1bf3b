package breaker_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
)

const documentJSON = `{
  "rules": [{"resource": "payments", "strategy": "ErrorCount", "threshold": 3, "retryTimeout": "5s"}],
  "resources": {
    "payments": {"timeout": "2s", "maxConcurrency": 20, "force": "open"},
    "search": {"force": "closed"},
    "ledger": {}
  }
}`

func TestParseDocument(t *testing.T) {
	d, err := breaker.ParseDocument([]byte(documentJSON))
	require.NoError(t, err)
	assert.True(t, d.HasRules)
	assert.True(t, d.HasResources)
	require.Len(t, d.Rules, 1)
	assert.Equal(t, "payments", d.Rules[0].Resource)
	assert.Equal(t, map[string]breaker.ResourceConfig{
		"payments": {Timeout: 2 * time.Second, MaxConcurrency: 20, Force: breaker.ForceOpen},
		"search":   {Force: breaker.ForceClosed},
		"ledger":   {},
	}, d.Resources)
}

// A bare array is a document of rules alone; a document without "rules" holds only settings.
func TestParseDocumentParts(t *testing.T) {
	d, err := breaker.ParseDocument([]byte(`[{"resource":"r","strategy":"ErrorCount","threshold":1,"retryTimeout":"1s"}]`))
	require.NoError(t, err)
	assert.True(t, d.HasRules)
	assert.False(t, d.HasResources)
	assert.Len(t, d.Rules, 1)

	d, err = breaker.ParseDocument([]byte(`{"resources": {"r": {"force": "open"}}}`))
	require.NoError(t, err)
	assert.False(t, d.HasRules)
	assert.True(t, d.HasResources)

	d, err = breaker.ParseDocument([]byte(`{"rules": []}`))
	require.NoError(t, err)
	assert.True(t, d.HasRules)
	assert.Empty(t, d.Rules)
	assert.False(t, d.HasResources)
}

func TestParseDocumentErrors(t *testing.T) {
	tests := []struct {
		name       string
		give       string
		wantRule   bool   // a *RuleError
		wantIn     string // in the message
		wantField  string
		wantTarget string // the RuleError's Resource
	}{
		{name: "unknown top key", give: `{"rule": []}`, wantIn: `"rule" is not a document key`},
		{name: "top key twice", give: `{"rules": [], "rules": []}`, wantIn: `key "rules" is written twice`},
		{name: "top key case", give: `{"Rules": []}`, wantIn: `key "Rules" matches the field "rules" only when case is ignored`},
		{name: "not an object", give: `5`, wantIn: "must be a JSON object"},
		{name: "syntax", give: "{\n\"rules\": [}", wantIn: "line 2, column"},
		{name: "bad rule", give: `{"rules": [{"resource":"r","strategy":"ErrorCount","threshold":0,"retryTimeout":"1s"}]}`,
			wantRule: true, wantField: "Threshold", wantTarget: "r"},
		{name: "negative timeout", give: `{"resources": {"p": {"timeout": "-1s"}}}`,
			wantRule: true, wantField: "timeout", wantTarget: "p"},
		{name: "timeout not a duration", give: `{"resources": {"p": {"timeout": "2"}}}`,
			wantRule: true, wantField: "timeout", wantTarget: "p"},
		{name: "negative limit", give: `{"resources": {"p": {"maxConcurrency": -2}}}`,
			wantRule: true, wantField: "maxConcurrency", wantTarget: "p"},
		{name: "unknown force", give: `{"resources": {"p": {"force": "OPEN"}}}`,
			wantRule: true, wantField: "force", wantTarget: "p", wantIn: `"auto", "open" or "closed"`},
		{name: "unknown setting", give: `{"resources": {"p": {"timeOut": "1s", "x": 1}}}`,
			wantRule: true, wantField: "timeOut", wantTarget: "p"},
		{name: "setting twice", give: `{"resources": {"p": {"force": "open", "force": "auto"}}}`,
			wantRule: true, wantField: "force", wantTarget: "p"},
		{name: "resource twice", give: `{"resources": {"p": {}, "p": {"force": "open"}}}`,
			wantRule: true, wantTarget: "p", wantIn: "has settings twice"},
		{name: "empty name", give: `{"resources": {"": {}}}`, wantRule: true, wantField: "resource"},
		{name: "settings null", give: `{"resources": {"p": null}}`, wantRule: true, wantTarget: "p"},
		{name: "settings not an object", give: `{"resources": {"p": 3}}`, wantRule: true, wantTarget: "p"},
		{name: "resources not an object", give: `{"resources": [1]}`, wantIn: "resources must be a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := breaker.ParseDocument([]byte(tt.give))
			require.Error(t, err)
			assert.True(t, strings.HasPrefix(err.Error(), "breaker: "), err.Error())
			assert.Contains(t, err.Error(), tt.wantIn)
			var re *breaker.RuleError
			assert.Equal(t, tt.wantRule, errors.As(err, &re), err.Error())
			if tt.wantRule {
				assert.ErrorIs(t, err, breaker.ErrInvalidRule)
				assert.Equal(t, tt.wantField, re.Field, err.Error())
				assert.Equal(t, tt.wantTarget, re.Resource, err.Error())
			}
		})
	}
}

// LoadDocument replaces what the document holds and leaves the rest; with both parts, an error
// in either changes nothing.
func TestLoadDocument(t *testing.T) {
	h := newHarness(t, errorCount(1, 1))
	rules := h.m.Rules()
	require.NoError(t, h.m.LoadDocument(breaker.Document{HasResources: true,
		Resources: map[string]breaker.ResourceConfig{"svc": {Force: breaker.ForceOpen}}}))
	assert.Equal(t, rules, h.m.Rules(), "settings alone leave the rules")
	require.NoError(t, h.m.LoadDocument(breaker.Document{HasRules: true, Rules: []breaker.Rule{errorRatio(1, 1)}}))
	assert.Equal(t, breaker.ForceOpen, h.m.Settings()["svc"].Force, "rules alone leave the settings")

	before := h.m.Rules()
	err := h.m.LoadDocument(breaker.Document{
		HasRules: true, Rules: []breaker.Rule{errorCount(2, 1)},
		HasResources: true, Resources: map[string]breaker.ResourceConfig{"svc": {MaxConcurrency: -1}}})
	require.ErrorIs(t, err, breaker.ErrInvalidRule)
	assert.Equal(t, before, h.m.Rules())
	assert.Equal(t, breaker.ForceOpen, h.m.Settings()["svc"].Force)

	err = h.m.LoadDocument(breaker.Document{
		HasRules: true, Rules: []breaker.Rule{{Resource: "svc"}},
		HasResources: true, Resources: map[string]breaker.ResourceConfig{}})
	require.ErrorIs(t, err, breaker.ErrInvalidRule)
	assert.Equal(t, breaker.ForceOpen, h.m.Settings()["svc"].Force)

	require.NoError(t, h.m.LoadDocument(breaker.Document{HasRules: true, HasResources: true}))
	assert.Empty(t, h.m.Rules())
	assert.Empty(t, h.m.Settings())
}

func TestResourceConfigJSON(t *testing.T) {
	out, err := json.Marshal(breaker.ResourceConfig{Timeout: 1500 * time.Millisecond, MaxConcurrency: 3,
		Force: breaker.ForceClosed})
	require.NoError(t, err)
	assert.JSONEq(t, `{"timeout":"1.5s","maxConcurrency":3,"force":"closed"}`, string(out))
	out, err = json.Marshal(breaker.ResourceConfig{})
	require.NoError(t, err)
	assert.Equal(t, `{}`, string(out))
	_, err = json.Marshal(breaker.ResourceConfig{Force: 7})
	assert.Error(t, err)
}

func FuzzParseDocument(f *testing.F) {
	for _, seed := range []string{documentJSON, `[]`, `null`, `{}`, `{"rules":null,"resources":null}`,
		`{"resources":{"a":{"timeout":"1ns","maxConcurrency":1,"force":"auto"}}}`,
		`{"resources":{"a":{"Force":"open"}}}`, `{"rules":[{}]}`, `{"resources":{"a":{},"a":{}}}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := breaker.ParseDocument(data)
		if err != nil {
			require.True(t, strings.HasPrefix(err.Error(), "breaker: "), err.Error())
			return
		}
		// What parses loads, but for rules that are fine alone and not together (duplicates);
		// settings write back to what parses the same.
		if err := breaker.NewManager().LoadDocument(d); err != nil {
			require.ErrorIs(t, err, breaker.ErrInvalidRule)
			require.True(t, d.HasRules, "settings that parse always load: %v", err)
		}
		for name, c := range d.Resources {
			out, err := json.Marshal(c)
			require.NoError(t, err)
			back, err := breaker.ParseDocument([]byte(`{"resources":{"x":` + string(out) + `}}`))
			require.NoError(t, err, "%s", out)
			require.Equal(t, c, back.Resources["x"], "resource %q", name)
		}
	})
}
