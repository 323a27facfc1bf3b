package breakerdebug_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
)

// snapshotDoc is what the status document holds that the Manager's Snapshot says: its time,
// resources, overrides and template counts.
type snapshotDoc struct {
	Now              string             `json:"now"`
	Resources        []snapshotResource `json:"resources"`
	Overrides        []snapshotOverride `json:"overrides"`
	Templates        *snapshotTemplates `json:"templates"`
	TemplateSettings []snapshotKey      `json:"templateSettings"`
}

type snapshotResource struct {
	Resource     string            `json:"resource"`
	Template     string            `json:"template"`
	Settings     *snapshotSettings `json:"settings"`
	SettingsFrom string            `json:"settingsFrom"`
	InFlight     *int64            `json:"inFlight"`
	Breakers     []snapshotBreaker `json:"breakers"`
}

type snapshotKey struct {
	Key      string           `json:"key"`
	Settings snapshotSettings `json:"settings"`
	Names    int              `json:"names"`
}

type snapshotSettings struct {
	Force          string `json:"force"`
	Timeout        string `json:"timeout"`
	MaxConcurrency int    `json:"maxConcurrency"`
}

type snapshotBreaker struct {
	Rule          json.RawMessage `json:"rule"`
	State         string          `json:"state"`
	DryRun        bool            `json:"dryRun"`
	Generation    uint64          `json:"generation"`
	Total         uint64          `json:"total"`
	Bad           uint64          `json:"bad"`
	Ratio         *float64        `json:"ratio"`
	RetryAt       string          `json:"retryAt"`
	ProbeDeadline string          `json:"probeDeadline"`
	RampingUp     bool            `json:"rampingUp"`
	Pacing        bool            `json:"pacing"`
}

type snapshotOverride struct {
	Resource, Force, At, Until, Note string
}

type snapshotTemplates struct {
	Resources, Breakers, Limit int
	Dropped                    uint64
	Unlisted                   int
}

// stampOf is t as the JSON writes it, "" for the zero time (left out).
func stampOf(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format(time.RFC3339Nano)
}

// ratioOf is the "ratio" of the breaker b: its Stats.Ratio, but none for ConsecutiveErrors,
// whose count is a run, nor for a window that holds no call.
func ratioOf(b breaker.Stats) *float64 {
	if b.Rule.Strategy == breaker.ConsecutiveErrors || b.Total == 0 {
		return nil
	}
	r := b.Ratio()
	return &r
}

// docOf is the status document that snap makes, its resources by name: every resource with
// breakers, an override or settings of its own; a resource's "settings" are those loaded under
// the key its settings come from, its own name or a template setting's, with its calls in
// flight; its breakers are dry run when their rule is DryRun or the settings that apply force
// it closed. Each template setting is listed apart, under its key, with the names it applies to.
func docOf(t *testing.T, snap breaker.Snapshot) snapshotDoc {
	t.Helper()
	doc := snapshotDoc{Now: stampOf(snap.At), Resources: []snapshotResource{}, Overrides: []snapshotOverride{}}
	settingsOf := func(cfg breaker.ResourceConfig) snapshotSettings {
		return snapshotSettings{Force: cfg.Force.String(), Timeout: cfg.Timeout.String(), MaxConcurrency: cfg.MaxConcurrency}
	}
	names := map[string]int{} // by settings key
	for _, r := range snap.Resources {
		names[r.SettingsFrom]++
		if o := r.Override; o != nil {
			doc.Overrides = append(doc.Overrides, snapshotOverride{Resource: o.Resource, Force: o.Force.String(),
				At: stampOf(o.At), Until: stampOf(o.Until), Note: o.Note})
		}
		if len(r.Breakers) == 0 && r.Override == nil && r.SettingsFrom != r.Name {
			continue
		}
		res := snapshotResource{Resource: r.Name, Template: r.Template, Breakers: []snapshotBreaker{}}
		if cfg, ok := snap.Settings[r.SettingsFrom]; ok {
			s := settingsOf(cfg)
			res.Settings, res.SettingsFrom, res.InFlight = &s, r.SettingsFrom, &r.InFlight
		}
		for _, b := range r.Breakers {
			rule, err := json.Marshal(b.Rule)
			require.NoError(t, err)
			res.Breakers = append(res.Breakers, snapshotBreaker{Rule: rule, State: b.State.String(),
				DryRun: b.DryRun, Generation: b.Generation,
				Total: b.Total, Bad: b.Bad, Ratio: ratioOf(b), RetryAt: stampOf(b.RetryAt),
				ProbeDeadline: stampOf(b.ProbeDeadline), RampingUp: b.RampingUp, Pacing: b.Pacing})
		}
		doc.Resources = append(doc.Resources, res)
	}
	for key, cfg := range snap.Settings {
		if strings.HasSuffix(key, "*") {
			doc.TemplateSettings = append(doc.TemplateSettings, snapshotKey{Key: key, Settings: settingsOf(cfg), Names: names[key]})
		}
	}
	slices.SortFunc(doc.TemplateSettings, func(a, b snapshotKey) int { return strings.Compare(a.Key, b.Key) })
	if d := snap.Templates; d.Patterns > 0 {
		doc.Templates = &snapshotTemplates{Resources: d.Resources, Breakers: d.Breakers, Limit: d.Limit,
			Dropped: d.Dropped}
	}
	return doc
}

// Given a rule and settings of its own, a template rule and a template setting, a template
// setting with no template rule, overrides of a template's name and of a resource without
// rules, calls in flight, a tripped template breaker, a pacing breaker and a call in a
// forced-closed one's window, then the JSON's time, resources (settings, calls in flight,
// breakers with their window counts and ratios, dry run and pacing), overrides and template
// counts are what one Manager.Snapshot, taken at the same instant of the fake clock, says.
func TestJSONIsOneSnapshot(t *testing.T) {
	api := breaker.Rule{ID: "api-errors", Resource: "api/*", Strategy: breaker.ErrorCount, Threshold: 1,
		MinRequestAmount: 1, RetryTimeout: time.Minute}
	w := newWritable(t, nil, inventoryRule, api, paceRule)
	require.NoError(t, w.m.LoadResources(map[string]breaker.ResourceConfig{
		"api/*":     {MaxConcurrency: 5, Timeout: 2 * time.Second},
		"GET *":     {MaxConcurrency: 2},
		"inventory": {MaxConcurrency: 3, Force: breaker.ForceClosed},
	}))
	var held []*breaker.Entry
	for _, name := range []string{"api/held", "api/held", "inventory", "GET x"} {
		e, err := w.m.Enter(name)
		require.NoError(t, err, name)
		held = append(held, e)
	}
	defer func() {
		for _, e := range held {
			e.Exit()
		}
	}()
	call(w.m, "api/down", fail) // trips its breaker
	for _, body := range []string{
		`{"resource": "api/held", "action": "closed", "duration": "1h", "note": "INC-7"}`,
		`{"resource": "legacy", "action": "open", "duration": "30m"}`,
	} {
		require.Equal(t, http.StatusOK, post(w.h, body).Code, body)
	}
	w.clk.Advance(1500 * time.Millisecond)
	call(w.m, "api/held", succeed) // a window with a call, and a ratio: 0 failed of 1
	for _, fn := range []func(context.Context) error{succeed, succeed, fail, fail} {
		call(w.m, "svc", fn) // half failed, in one bucket: it paces
	}

	rec := get(w.h, http.MethodGet, path+"?format=json", nil)
	require.Equal(t, http.StatusOK, rec.Code)
	var got snapshotDoc
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &got), rec.Body.String())
	snap := w.m.Snapshot()

	var names []string
	for _, r := range got.Resources {
		names = append(names, r.Resource)
	}
	assert.Equal(t, []string{"api/down", "api/held", "svc", "inventory", "legacy"}, names,
		"worst first: api/down OPEN with api/held, the names of its template, then svc pacing, then the "+
			"other two forced, by name; GET x, which only takes a template setting, and the template "+
			"settings' keys are not resources")
	byName := slices.Clone(got.Resources)
	slices.SortFunc(byName, func(a, b snapshotResource) int { return strings.Compare(a.Resource, b.Resource) })
	want := docOf(t, snap)
	assert.Equal(t, want, snapshotDoc{Now: got.Now, Resources: byName, Overrides: got.Overrides,
		Templates: got.Templates, TemplateSettings: got.TemplateSettings})

	assert.True(t, got.Resources[2].Breakers[0].Pacing, "svc paces")
	apiHeld := got.Resources[1]
	require.NotEmpty(t, apiHeld.Breakers)
	assert.True(t, apiHeld.Breakers[0].DryRun, "api/held is forced closed by its override")
	require.NotNil(t, apiHeld.Settings, "api/held takes the template setting api/*")
	assert.Equal(t, "api/*", apiHeld.SettingsFrom)
	assert.Equal(t, snapshotSettings{Force: "auto", Timeout: "2s", MaxConcurrency: 5}, *apiHeld.Settings,
		"the template setting's, its Force not the override's")
	require.NotNil(t, apiHeld.InFlight)
	assert.Equal(t, int64(2), *apiHeld.InFlight)
	assert.Equal(t, "OPEN", got.Resources[0].Breakers[0].State)
	assert.Nil(t, got.Resources[0].Breakers[0].Ratio, "an OPEN breaker's window is empty: no ratio")
	require.NotNil(t, apiHeld.Breakers[0].Ratio, "api/held's window holds a call")
	assert.Equal(t, 0., *apiHeld.Breakers[0].Ratio)
	require.NotNil(t, got.Resources[3].InFlight)
	assert.Equal(t, int64(1), *got.Resources[3].InFlight)
	assert.Len(t, got.Overrides, 2)
	assert.Equal(t, []snapshotKey{
		{Key: "GET *", Settings: snapshotSettings{Force: "auto", Timeout: "0s", MaxConcurrency: 2}, Names: 1},
		{Key: "api/*", Settings: snapshotSettings{Force: "auto", Timeout: "2s", MaxConcurrency: 5}, Names: 2},
	}, got.TemplateSettings, "GET x; api/down and api/held")
}
