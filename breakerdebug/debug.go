// Package breakerdebug serves a status page for the breakers of a [breaker.Manager], as
// net/http/pprof serves profiles: each resource's breakers worst first, with their states,
// windows and retry times, the settings and overrides that apply to each resource, and the
// state changes as they happen. A browser gets a self-contained HTML page that updates itself
// from a stream of server-sent events (the path followed by "/events"); ?format=json gets the
// same as JSON. With a [Recorder], it also shows each resource's last minute of calls, the
// names called without rules and the names configured and not called. It formats the rows of
// package breakerview, as contrib/prometheus and contrib/otel do, so the three agree.
//
//	rec := breakerdebug.NewRecorder()
//	m := breaker.NewManager(rec.Option())
//	mux.Handle("/debug/breakers/", breakerdebug.Handler(m, breakerdebug.WithRecorder(rec)))
//
// Mount it on an internal port or behind authentication. docs/operations.md describes the page,
// its JSON and its event stream. The handler is safe for concurrent use; the package starts no
// goroutines.
package breakerdebug

import (
	"cmp"
	"encoding/json"
	"log/slog"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakerview"
)

// Handler returns an http.Handler that serves the status of m's breakers, as an HTML page or
// as JSON, and the event stream of their state changes (see the package documentation). It
// answers GET and HEAD; any other method gets 405 Method Not Allowed. A path ending in
// "/events" (or ?format=events) serves the stream; a path ending in "/override" takes
// operators' writes instead, if the program allows them (WithOverrides), and POST alone.
//
// Each call of Handler registers one observer on m, for the Manager's lifetime, which keeps the
// last 100 state changes and hands each to the stream's subscribers: call it once per Manager,
// before traffic, and reuse the handler. Changes before the call are not shown. The observer
// only copies each change into a ring of fixed size, and into each subscriber's buffer without
// waiting, so its memory does not grow with the number of resources and no subscriber slows a
// call. A nil m means breaker.Default(). The options add call counts (WithRecorder).
func Handler(m *breaker.Manager, opts ...Option) http.Handler {
	if m == nil {
		m = breaker.Default()
	}
	h := &handler{m: m, changes: &changes{limit: defaultSubscribers}, unruled: defaultUnruled,
		templates: defaultTemplates, logger: slog.Default()}
	for _, o := range opts {
		o.apply(h)
	}
	h.since = m.Now()
	m.AddObserver(h.changes)
	return h
}

// defaultUnruled is how many resources without rules, settings or a matching template the
// status lists by default.
const defaultUnruled = 10

// defaultTemplates is how many resources with breakers from templates the status lists by
// default.
const defaultTemplates = 100

// Option configures a Handler.
type Option interface {
	apply(*handler)
}

type optionFunc func(*handler)

func (f optionFunc) apply(h *handler) { f(h) }

// WithRecorder shows, beside each resource, its calls over the last minute as r counted them;
// r must also be given to the Manager (r.Option()). Resources that had calls and have neither
// rules, settings nor an override of their own, and whose name no template rule matches, are
// listed too, the most called first (see WithUnruled), so that a rule under a misspelt name
// shows; and, once the handler has watched for a minute, the names configured and not called.
func WithRecorder(r *Recorder) Option {
	return optionFunc(func(h *handler) { h.rec = r })
}

// WithTemplates sets how many resources whose breakers a template rule made the status lists
// (100 by default; 0 lists none): those with a breaker not CLOSED first, then, with
// WithRecorder, the most called in the last minute, then by name. "templates.unlisted" counts
// the others, so that a Manager holding thousands of them does not make a page of thousands.
func WithTemplates(n int) Option {
	return optionFunc(func(h *handler) { h.templates = max(n, 0) })
}

// WithUnruled sets how many resources without rules, settings or a matching template, the most
// called in the last minute first, the status lists with WithRecorder (10 by default; 0 lists
// none).
func WithUnruled(n int) Option {
	return optionFunc(func(h *handler) { h.unruled = max(n, 0) })
}

// WithSubscribers sets how many subscribers the event stream serves at once (16 by default; at
// least 1): one more gets 503 Service Unavailable. Each is one open connection, and a
// goroutine of the server's, for as long as it reads.
func WithSubscribers(n int) Option {
	return optionFunc(func(h *handler) { h.changes.limit = max(n, 1) })
}

type handler struct {
	m         *breaker.Manager
	changes   *changes
	rec       *Recorder // nil: no call counts
	since     time.Time // when the handler began to watch m, by its clock
	unruled   int
	templates int
	// authorize admits a write and names its operator; nil: read-only.
	authorize func(*http.Request) (string, error)
	logger    *slog.Logger
	// uncalledLog is the names logged as configured and not called.
	uncalledLog uncalledLog
}

// status is the JSON document, and the data the HTML page starts from.
type status struct {
	Now       time.Time        `json:"now"`
	Resources []resourceStatus `json:"resources"`
	Overrides []overrideStatus `json:"overrides"`
	// Transitions are the last state changes, newest first; left out of the event stream's
	// status, which sends them one by one.
	Transitions []transition `json:"transitions,omitzero"`
	// Events is the event stream's subscribers.
	Events eventsStatus `json:"events"`
	// Unruled are the resources with calls in the last minute, neither rules, settings nor an
	// override of their own, and no template rule matching their name, the most called first;
	// set with a Recorder.
	Unruled []unruledStatus `json:"unruled,omitzero"` // [] with a Recorder and none
	// Uncalled are the names with rules, settings or an override of their own and no call in
	// the last minute; set with a Recorder once the handler has watched for a minute, while no
	// call was counted under breakerview.Overflow.
	Uncalled []uncalledStatus `json:"uncalled,omitzero"` // [] with none
	// Templates counts the breakers template rules made; set while a template is loaded.
	Templates *templateStatus `json:"templates,omitempty"`
	// TemplateSettings are the settings loaded under keys ending in "*", which are not
	// resources: each name they apply to is listed under its own name with them.
	TemplateSettings []templateSettingStatus `json:"templateSettings,omitempty"`
}

// eventsStatus is the event stream's subscribers now, their bound, and how many were dropped for
// falling behind.
type eventsStatus struct {
	Subscribers int    `json:"subscribers"`
	Limit       int    `json:"limit"`
	Dropped     uint64 `json:"dropped"`
}

type templateSettingStatus struct {
	Key      string         `json:"key"`
	Settings settingsStatus `json:"settings"`
	Names    int            `json:"names"` // the names it applies to now, of those the Manager holds
}

type templateStatus struct {
	Resources int    `json:"resources"`
	Breakers  int    `json:"breakers"`
	Limit     int    `json:"limit"`
	Dropped   uint64 `json:"dropped"`
	Unlisted  int    `json:"unlisted"` // resources past WithTemplates, left out of "resources"
}

type unruledStatus struct {
	Resource string `json:"resource"`
	// Side is the name's side, breakerview.Side.String(): "server" or "client"; "" and left
	// out for the overflow, whose names may be of either side.
	Side     string    `json:"side,omitempty"`
	Overflow bool      `json:"overflow,omitempty"` // the calls of the names past the Recorder's bounds
	Calls    callStats `json:"calls"`
}

type uncalledStatus struct {
	Name       string   `json:"name"`
	Side       string   `json:"side"`
	Configured []string `json:"configured"`
	Nearest    string   `json:"nearest,omitempty"`
}

type resourceStatus struct {
	Resource string `json:"resource"`
	// Side is the name's side, breakerview.Side.String(): "server" for a route
	// breakerhttp.Middleware serves (its name begins with breakerhttp.ServerPrefix), "client"
	// for a call the program makes.
	Side     string `json:"side"`
	Template string `json:"template,omitempty"` // the template rule that made its breakers
	Worst    string `json:"worst"`              // what orders it: see worst
	// Settings are those that apply to its calls, as loaded under SettingsFrom: its own name
	// or a template setting's key.
	Settings     *settingsStatus `json:"settings,omitempty"`
	SettingsFrom string          `json:"settingsFrom,omitempty"`
	InFlight     *int64          `json:"inFlight,omitempty"` // set with Settings
	Breakers     []breakerStatus `json:"breakers"`
	Calls        *callStats      `json:"calls,omitempty"` // set with a Recorder
}

// settingsStatus is a resource's breaker.ResourceConfig, every field spelled out.
type settingsStatus struct {
	Force          string `json:"force"`
	Timeout        string `json:"timeout"`
	MaxConcurrency int    `json:"maxConcurrency"`
}

type breakerStatus struct {
	Rule          breaker.Rule `json:"rule"`
	RuleText      string       `json:"ruleText"`
	State         string       `json:"state"`
	DryRun        bool         `json:"dryRun"`
	Generation    uint64       `json:"generation"`
	Total         uint64       `json:"total"`
	Bad           uint64       `json:"bad"`
	Refused       uint64       `json:"refused"`         // of bad, those the dependency refused (Stats.Refused)
	Ratio         *float64     `json:"ratio,omitempty"` // see ratioOf
	RetryAt       time.Time    `json:"retryAt,omitzero"`
	ProbeDeadline time.Time    `json:"probeDeadline,omitzero"`
	RampingUp     bool         `json:"rampingUp,omitempty"`
	Pacing        bool         `json:"pacing,omitempty"`
}

type transition struct {
	Seq      uint64 `json:"seq"`
	Resource string `json:"resource"`
	Side     string `json:"side"` // the resource's side, as a resource's row says it
	// Rule and RuleText are left out of an Override change of a resource without rules.
	Rule       *breaker.Rule `json:"rule,omitempty"`
	RuleText   string        `json:"ruleText,omitempty"`
	From       string        `json:"from"`
	To         string        `json:"to"`
	Reason     string        `json:"reason"`
	Note       string        `json:"note,omitempty"` // an Override's note
	Snapshot   float64       `json:"snapshot"`
	At         time.Time     `json:"at"`
	Generation uint64        `json:"generation"`
	DryRun     bool          `json:"dryRun"`
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case isOverridePath(r.URL.Path):
		h.serveOverride(w, r)
		return
	case wantsEvents(r):
		h.serveEvents(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "breakerdebug: method not allowed", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Add("Vary", "Accept")
	st := h.status()
	if wantsJSON(r) {
		serveJSON(w, r, st)
	} else {
		serveHTML(w, r, st)
	}
}

// status reads the manager now, as one breakerview.View of one Manager.Snapshot: the resources
// listed, their breakers, settings, calls in flight and overrides, the template counts and the
// last minute of calls all come from one rule set, at one instant. The resources are listed
// worst first (worstFirst), as the page shows them.
func (h *handler) status() *status {
	snap := h.m.Snapshot()
	v := h.rec.view(&snap, h.since)
	st := &status{Now: v.At, Resources: []resourceStatus{}, Overrides: []overrideStatus{}, Events: h.changes.stats()}
	listed := map[string]bool{}
	var made []*breakerview.Resource // the names template rules made, by name
	for i := range v.Resources {
		r := &v.Resources[i]
		if r.Override != nil {
			st.Overrides = append(st.Overrides, overrideStatusOf(*r.Override))
		}
		// A name with only a template setting's settings is not listed: its key is, with the
		// number of names it applies to.
		if r.Override != nil || r.OwnSettings() || r.OwnRules() {
			listed[r.Name] = true
		}
		if r.Template != "" && !r.OwnSettings() { // listed within WithTemplates
			made = append(made, r)
		}
	}
	st.TemplateSettings = templateSettingsOf(v)
	if d := v.Templates; d.Patterns > 0 {
		st.Templates = &templateStatus{Resources: d.Resources, Breakers: d.Breakers, Limit: d.Limit, Dropped: d.Dropped}
	}
	names, unlisted := h.listTemplates(made)
	for _, name := range names {
		listed[name] = true
	}
	if st.Templates != nil {
		st.Templates.Unlisted = unlisted
	}
	var rows []*breakerview.Resource
	for i := range v.Resources {
		if listed[v.Resources[i].Name] {
			rows = append(rows, &v.Resources[i])
		}
	}
	for _, r := range worstFirst(rows) {
		st.Resources = append(st.Resources, h.resourceStatusOf(r))
	}
	if h.rec != nil {
		st.Unruled = []unruledStatus{}
		for _, c := range v.Called {
			if c.Unruled && len(st.Unruled) < h.unruled {
				st.Unruled = append(st.Unruled, unruledStatus{Resource: c.Name, Side: c.Side.String(), Overflow: c.Overflow,
					Calls: callStatsOf(&c.Minute)})
			}
		}
		if v.Uncalled != nil {
			st.Uncalled = []uncalledStatus{}
			for _, u := range v.Uncalled {
				st.Uncalled = append(st.Uncalled, uncalledStatus{Name: u.Name, Side: u.Side.String(), Configured: u.Configured,
					Nearest: u.Nearest})
			}
			h.logUncalled(v.Uncalled)
		}
	}
	changes := h.changes.newestFirst()
	st.Transitions = make([]transition, 0, len(changes))
	for _, c := range changes {
		st.Transitions = append(st.Transitions, transitionOf(c))
	}
	return st
}

// resourceStatusOf is the row of r.
func (h *handler) resourceStatusOf(r *breakerview.Resource) resourceStatus {
	res := resourceStatus{Resource: r.Name, Side: r.Side.String(), Template: r.Template, Worst: worstOf(r).String(),
		Breakers: make([]breakerStatus, 0, len(r.Breakers))}
	if r.SettingsFrom != "" { // its own, or a template setting's
		res.Settings, res.SettingsFrom = settingsStatusOf(r.Settings), r.SettingsFrom
		res.InFlight = &r.InFlight
	}
	for _, b := range r.Breakers {
		res.Breakers = append(res.Breakers, breakerStatus{
			Rule:          b.Rule,
			RuleText:      describe(b.Rule),
			State:         b.State.String(),
			DryRun:        b.DryRun,
			Generation:    b.Generation,
			Total:         b.Total,
			Bad:           b.Bad,
			Refused:       b.Refused,
			Ratio:         ratioOf(b),
			RetryAt:       b.RetryAt,
			ProbeDeadline: b.ProbeDeadline,
			RampingUp:     b.RampingUp,
			Pacing:        b.Pacing,
		})
	}
	if h.rec != nil {
		c := callStatsOf(&r.Calls)
		res.Calls = &c
	}
	return res
}

// transitionOf is the state change c as the status and the event stream show it.
func transitionOf(c breaker.StateChange) transition {
	t := transition{
		Seq:        c.Seq,
		Resource:   c.Resource,
		Side:       breakerview.SideOf(c.Resource).String(),
		From:       c.From.String(),
		To:         c.To.String(),
		Reason:     c.Reason.String(),
		Note:       c.Note,
		Snapshot:   c.Snapshot,
		At:         c.At,
		Generation: c.Generation,
		DryRun:     c.DryRun,
	}
	if c.Rule.Resource != "" { // a zero Rule: an override of a resource without rules
		t.Rule, t.RuleText = &c.Rule, describe(c.Rule)
	}
	return t
}

// ratioOf is the "ratio" of the breaker b, Stats.Ratio: nil, and left out of the JSON, where
// it means nothing: for a ConsecutiveErrors rule, whose Bad is a run of failures and not a
// share of a window, and for a window that holds no call, which includes every breaker not
// CLOSED (0 of nothing would read as healthy while a breaker rejects every call).
func ratioOf(b breakerview.Breaker) *float64 {
	if !b.Windowed || b.Total == 0 {
		return nil
	}
	r := b.Ratio()
	return &r
}

// templateSettingsOf lists the template settings of v (keys ending in "*") in the natural
// order of their keys, each with the number of names it applies to now.
func templateSettingsOf(v *breakerview.View) []templateSettingStatus {
	var out []templateSettingStatus
	for _, t := range v.TemplateSettings {
		out = append(out, templateSettingStatus{Key: t.Key, Settings: *settingsStatusOf(t.Settings), Names: t.Names})
	}
	slices.SortFunc(out, func(a, b templateSettingStatus) int { return breakerview.CompareNames(a.Key, b.Key) })
	return out
}

func settingsStatusOf(cfg breaker.ResourceConfig) *settingsStatus {
	return &settingsStatus{Force: cfg.Force.String(), Timeout: cfg.Timeout.String(), MaxConcurrency: cfg.MaxConcurrency}
}

// wantsJSON reports whether r asks for JSON: with ?format=json, or with an Accept header that
// names application/json (with a q above 0). Browsers never send that for a page.
func wantsJSON(r *http.Request) bool {
	if r.URL.Query().Get("format") == "json" {
		return true
	}
	for _, accept := range r.Header.Values("Accept") {
		for part := range strings.SplitSeq(accept, ",") {
			typ, params, err := mime.ParseMediaType(part)
			if err != nil || typ != "application/json" {
				continue
			}
			if q, set := params["q"]; set {
				if v, err := strconv.ParseFloat(q, 64); err != nil || v <= 0 {
					continue
				}
			}
			return true
		}
	}
	return false
}

func serveJSON(w http.ResponseWriter, r *http.Request, st *status) {
	body, err := json.Marshal(st)
	if err != nil {
		http.Error(w, "breakerdebug: "+err.Error(), http.StatusInternalServerError)
		return
	}
	body = append(body, '\n')
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	write(w, r, body)
}

// write sends body with its length; for HEAD, the headers alone.
func write(w http.ResponseWriter, r *http.Request, body []byte) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body) // an error means the client went away: nothing to do
	}
}

// listTemplates returns the names of made, the resources that templates made, by name, that the
// status lists, at most WithTemplates of them, and how many it leaves out: those with a breaker
// not CLOSED first, then the most called in the last minute, then by name.
func (h *handler) listTemplates(made []*breakerview.Resource) (listed []string, unlisted int) {
	all := slices.Clone(made)
	if len(all) > h.templates {
		open := func(r *breakerview.Resource) bool {
			return slices.ContainsFunc(r.Breakers, func(b breakerview.Breaker) bool { return b.State != breaker.Closed })
		}
		slices.SortFunc(all, func(a, b *breakerview.Resource) int {
			if oa, ob := open(a), open(b); oa != ob {
				if oa {
					return -1
				}
				return 1
			}
			if c := cmp.Compare(b.Calls.Calls, a.Calls.Calls); c != 0 {
				return c
			}
			return cmp.Compare(a.Name, b.Name)
		})
	}
	for i, r := range all {
		if i < h.templates {
			listed = append(listed, r.Name)
		}
	}
	return listed, max(len(all)-h.templates, 0)
}
