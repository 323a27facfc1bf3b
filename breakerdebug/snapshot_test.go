package breakerdebug_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
)

// snapshotDoc is what the status document holds that the Manager's Snapshot says: its time,
// resources, overrides and template counts.
type snapshotDoc struct {
	Now       string             `json:"now"`
	Resources []snapshotResource `json:"resources"`
	Overrides []snapshotOverride `json:"overrides"`
	Templates *snapshotTemplates `json:"templates"`
}

type snapshotResource struct {
	Resource string            `json:"resource"`
	Settings *snapshotSettings `json:"settings"`
	InFlight *int64            `json:"inFlight"`
	Breakers []snapshotBreaker `json:"breakers"`
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
	RetryAt       string          `json:"retryAt"`
	ProbeDeadline string          `json:"probeDeadline"`
	RampingUp     bool            `json:"rampingUp"`
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

// docOf is the status document that snap makes: every resource with breakers, an override or
// settings of its own, and each template setting's key, by name; a resource's "settings" are
// those loaded under its name, with its calls in flight unless it is a template's key; its
// breakers are dry run when their rule is DryRun or the settings that apply force it closed.
func docOf(t *testing.T, snap breaker.Snapshot) snapshotDoc {
	t.Helper()
	doc := snapshotDoc{Now: stampOf(snap.At), Resources: []snapshotResource{}, Overrides: []snapshotOverride{}}
	byName := map[string]breaker.ResourceStatus{}
	var names []string
	for _, r := range snap.Resources {
		byName[r.Name] = r
		if _, own := snap.Settings[r.Name]; len(r.Breakers) > 0 || r.Override != nil || own {
			names = append(names, r.Name)
		}
		if o := r.Override; o != nil {
			doc.Overrides = append(doc.Overrides, snapshotOverride{Resource: o.Resource, Force: o.Force.String(),
				At: stampOf(o.At), Until: stampOf(o.Until), Note: o.Note})
		}
	}
	for key := range snap.Settings {
		if _, listed := byName[key]; !listed {
			names = append(names, key) // a template setting's key
		}
	}
	slices.Sort(names)
	for _, name := range names {
		r := byName[name]
		res := snapshotResource{Resource: name, Breakers: []snapshotBreaker{}}
		if cfg, ok := snap.Settings[name]; ok {
			res.Settings = &snapshotSettings{Force: cfg.Force.String(), Timeout: cfg.Timeout.String(),
				MaxConcurrency: cfg.MaxConcurrency}
			if _, isResource := byName[name]; isResource {
				res.InFlight = &r.InFlight
			}
		}
		for _, b := range r.Breakers {
			rule, err := json.Marshal(b.Rule)
			require.NoError(t, err)
			res.Breakers = append(res.Breakers, snapshotBreaker{Rule: rule, State: b.State.String(),
				DryRun: b.Rule.DryRun || r.Settings.Force == breaker.ForceClosed, Generation: b.Generation,
				Total: b.Total, Bad: b.Bad, RetryAt: stampOf(b.RetryAt), ProbeDeadline: stampOf(b.ProbeDeadline),
				RampingUp: b.RampingUp})
		}
		doc.Resources = append(doc.Resources, res)
	}
	if d := snap.Templates; d.Templates > 0 {
		doc.Templates = &snapshotTemplates{Resources: d.Resources, Breakers: d.Breakers, Limit: d.Limit,
			Dropped: d.Dropped}
	}
	return doc
}

// Given a rule and settings of its own, a template rule and a template setting, a template
// setting with no template rule, overrides of a template's name and of a resource without
// rules, calls in flight and a tripped template breaker, then the JSON's time, resources
// (settings, calls in flight, breakers and dry run), overrides and template counts are what
// one Manager.Snapshot, taken at the same instant of the fake clock, says.
func TestJSONIsOneSnapshot(t *testing.T) {
	api := breaker.Rule{ID: "api-errors", Resource: "api/*", Strategy: breaker.ErrorCount, Threshold: 1,
		MinRequestAmount: 1, RetryTimeout: time.Minute}
	w := newWritable(t, nil, inventoryRule, api)
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

	rec := get(w.h, http.MethodGet, path+"?format=json", nil)
	require.Equal(t, http.StatusOK, rec.Code)
	var got snapshotDoc
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &got), rec.Body.String())
	snap := w.m.Snapshot()
	assert.Equal(t, docOf(t, snap), got)

	var names []string
	for _, r := range got.Resources {
		names = append(names, r.Resource)
	}
	assert.Equal(t, []string{"GET *", "api/*", "api/down", "api/held", "inventory", "legacy"}, names,
		"GET x, which only takes a template setting, is not listed")
	apiHeld := got.Resources[3]
	require.NotEmpty(t, apiHeld.Breakers)
	assert.True(t, apiHeld.Breakers[0].DryRun, "api/held is forced closed by its override")
	assert.Nil(t, apiHeld.Settings, "api/held has no settings of its own")
	assert.Equal(t, "OPEN", got.Resources[2].Breakers[0].State)
	require.NotNil(t, got.Resources[4].InFlight)
	assert.Equal(t, int64(1), *got.Resources[4].InFlight)
	assert.Len(t, got.Overrides, 2)
}
