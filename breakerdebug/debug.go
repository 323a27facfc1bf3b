// Package breakerdebug serves a status page for the breakers of a [breaker.Manager]: every
// resource with rules or settings, each loaded rule with its breaker's state, window counts and
// ratio, and retry time, each resource's settings and calls in flight, and the recent state
// changes. Mount it on an internal port or behind authentication, as you would net/http/pprof:
//
//	mux.Handle("/debug/breakers", breakerdebug.Handler(m))
//
// A browser gets a self-contained HTML page (inline CSS and JavaScript, no external assets)
// that refreshes itself every 2 seconds. A request with ?format=json, or an Accept header
// naming application/json, gets the same as JSON:
//
//	{
//	  "now": "2026-01-01T00:00:06.1Z",
//	  "resources": [
//	    {"resource": "inventory", "worst": "OPEN",
//	     "settings": {"force": "auto", "timeout": "2s", "maxConcurrency": 20},
//	     "settingsFrom": "inventory", "inFlight": 3,
//	     "breakers": [
//	      {"rule": RULE, "ruleText": TEXT, "state": "OPEN", "dryRun": false, "generation": 3,
//	       "total": 0, "bad": 0, "retryAt": "2026-01-01T00:00:10.1Z"},
//	      {"rule": RULE, "ruleText": TEXT, "state": "CLOSED", "dryRun": false, "generation": 0,
//	       "total": 40, "bad": 6, "ratio": 0.15}
//	    ]}
//	  ],
//	  "transitions": [
//	    {"seq": 7, "resource": "inventory", "rule": RULE, "ruleText": TEXT, "from": "HALF_OPEN",
//	     "to": "OPEN", "reason": "ProbeFailed", "snapshot": 0, "at": "2026-01-01T00:00:05.1Z",
//	     "generation": 3, "dryRun": false},
//	    ...
//	  ]
//	}
//
// RULE is the [breaker.Rule] as its MarshalJSON writes it, and TEXT the line the page shows for
// it, with the values the library uses for the fields left at zero: what it trips on ("errors
// ≥ 3 · min 3 calls in 1s", or "5 failures in a row" for ConsecutiveErrors, which keeps no
// window), then how it recovers ("retry 3s, doubling per failed probe up to 30s, up to 10%
// sooner (jitter) · probe timeout 2s · 3 probes in a row to close", each part only when its
// field is set). States and reasons are their String forms; times are read from the
// Manager's clock ("now" is when the status was read, [breaker.Snapshot].At). Resources are
// listed worst first, in the order of the page's rows (below), each resource's breakers in rule
// order, and the transitions (the last 100) newest first, by "seq"
// ([breaker.StateChange.Seq], which orders them across the Manager).
//
// The breaker fields are those of [breaker.Stats]. "generation" counts the breaker's
// transitions. "total" and "bad" are the calls in its window and the slow (SlowRequestRatio)
// or failed (ErrorRatio, ErrorCount) ones among them; for ConsecutiveErrors, which keeps no
// window, both are its current run of failures; all are 0 unless CLOSED. "ratio" is "bad" over
// "total" ([breaker.Stats.Ratio]): the window's slow-call rate or failure rate, from 0 to 1. It
// is omitted where it means nothing: for ConsecutiveErrors, whose count is a run and not a
// share, and for a window that holds no call ("total" 0, as for every breaker not CLOSED),
// since 0 of nothing would read as healthy. The page shows the window as "6 failed of 40
// (15%)" ("slow" for a SlowRequestRatio rule), and a ConsecutiveErrors breaker's run as
// "2 failed in a row", with no share. "retryAt" is omitted when CLOSED and "probeDeadline"
// unless HALF_OPEN, and "rampingUp" is true, and only then written, while a breaker that a
// probe closed paces its calls (Rule.RampUp); "pacing" likewise, while a CLOSED breaker whose
// window met its threshold paces the calls of a dependency that still serves part of them,
// where it would have opened (Rule.Pace). A transition's "snapshot" is, for ThresholdExceeded
// and PacingStarted, the ratio or count that met the threshold; for FastTrip, the ratio of the
// newest buckets.
//
// A resource with settings ([breaker.Manager.LoadResources]), of its own or from a template
// setting, has "settings", as loaded under the key "settingsFrom" names: its own name, or the
// template setting's key ending in "*" (the longest prefix of its name) when it has none of its
// own. "force" is "auto", "open" or "closed" ([breaker.Force]), "timeout" a Go duration ("0s":
// none), "maxConcurrency" the limit (0: none); "inFlight" is its calls admitted and not yet
// exited. Other resources have none of the three. A resource with settings of its own and no
// rules is listed with no breakers. A template setting is a key, not a resource: it is listed
// apart, with the number of names it applies to now, each of which counts its own calls in
// flight, and the page lists it among the settings loaded, marked as a template:
//
//	"templateSettings": [{"key": "*", "settings": {"force": "auto", "timeout": "500ms",
//	                      "maxConcurrency": 20}, "names": 41}]
//
// A name that only takes a template setting, with no rules and no override, is not listed
// under "resources".
//
// "worst" is what orders the rows, worst first: "OPEN" (a breaker that rejects calls is OPEN),
// then "HALF_OPEN", then "PACING" (one paces its calls where it would have opened), then
// "RAMPING_UP" (one paces its calls after a probe closed it), then "FORCED" (its override or
// its settings force it open or closed) and "OVERRIDDEN" (an override lifts its settings'
// force), then the rest, "DRY_RUN" (a breaker that rejects nothing is not CLOSED) and "CLOSED";
// within each of those six, the most calls in the breakers' windows ("total") first, then by
// name in natural order, runs of digits as numbers ("shard-2" before "shard-10"). A breaker
// that rejects nothing never makes a row OPEN. The names a template rule made have "template",
// its Resource; they follow one another, worst first, where the worst of them comes, and the
// page shows them as one line per template, which opens on their rows, with the worst one's
// state and their number in each "worst". Each row shows, beside the resource's breakers, the
// settings that apply to it with where they come from ("own", or the template setting's key),
// its calls in flight, and its override.
//
// A breaker's "dryRun", and a transition's, is true when the breaker rejects no call: its rule
// is DryRun, or its resource is forced closed; its OPEN state then only says what it would
// reject. The page marks such breakers "dry run", and shows a forced resource as "FORCED OPEN"
// or "FORCED CLOSED", apart from its breakers' own states, so that neither is taken for a
// tripped breaker.
//
// The operators' overrides in force ([breaker.Manager.Override]) are listed by resource:
//
//	"overrides": [{"resource": "payments", "force": "open", "at": "2026-01-01T00:00:00Z",
//	               "until": "2026-01-01T00:10:00Z", "note": "INC-42"}]
//
// An overridden resource is listed in "resources" too, with no breakers if it has no rules,
// and its breakers' "dryRun" follows the override's force rather than its settings'. A
// transition with reason "Override" has the operator's "note" (when there is one) and, for a
// resource without rules, no "rule". The page shows the overrides in a table of their own, with
// when each ends, and marks an overridden resource "override" beside its breakers. With
// [WithOverrides], operators set them through the handler.
//
// A resource whose breakers a template rule made (Resource ending in "*") is listed under its
// own name, each breaker with the template as its rule: at most 100 such resources
// ([WithTemplates]), those with a breaker not CLOSED first, then the most called. The document
// then has "templates": {"resources": 2, "breakers": 2, "limit": 10000, "dropped": 0,
// "unlisted": 0}, the resources and breakers templates made, their bound
// ([breaker.WithMaxTemplateBreakers]), how many resources were dropped to stay within it, and
// how many the status leaves out; the page adds it to its summary line.
//
// The handler keeps nothing per resource name: the resources are read from one
// [breaker.Manager.Snapshot] at each request, its rules, settings, overrides and template
// breakers (at most WithTemplates of those) under one rule set, and the transitions are a ring
// of the last 100, whichever resources made them, so calls under names without rules, however
// many, add nothing to the page or to memory. With a Recorder, it remembers the names it
// logged as configured and not called, which only the operators' configuration names.
//
// With a [Recorder], the page is also a live dashboard of the last minute. Create the Recorder
// on the Manager's clock, give it to the Manager as a call observer and to the Handler:
//
//	rec := breakerdebug.NewRecorder(breakerdebug.RecorderClock(clock))
//	m := breaker.NewManager(breaker.WithClock(clock), rec.Option())
//	mux.Handle("/debug/breakers", breakerdebug.Handler(m, breakerdebug.WithRecorder(rec)))
//
// Each resource then has "calls", its last 60 seconds up to the current one:
//
//	"calls": {"calls": 22, "rejectedOpen": 0, "rejectedForced": 0, "rejectedConcurrency": 0,
//	          "rejectedOther": 0, "ran": 22, "failures": 4, "slow": 2,
//	          "errorPercent": 18.2, "slowPercent": 9.1, "rtP50": "5ms", "rtP99": "200ms",
//	          "rtMax": "153.2ms",
//	          "perSecond": [0, ..., 12, 10, 0, ...],
//	          "last10s": {"calls": 10, "ran": 10, "failures": 4, "slow": 2,
//	                      "errorPercent": 40, "slowPercent": 20}}
//
// "calls" counts every call heard, "rejectedOpen" those a breaker rejected, "rejectedForced" those
// of a ForceOpen resource, "rejectedConcurrency" those over MaxConcurrency, "rejectedOther" those a
// slot blocked or a breaker ramping up or pacing held back; "ran" the calls let through, and
// "failures" and "slow" among them, of which
// "errorPercent" and "slowPercent" are the shares (rounded to 0.1). "rtP50" and "rtP99" are the
// upper bounds of the RT histogram buckets (1ms, 2ms, 5ms, ... 1m, then ">1m0s") that hold those
// percentiles of the calls that ran, "" when none ran; "rtMax" is the longest response time of
// those calls itself, to the microsecond, "" likewise. "perSecond" holds the calls of each of the
// 60 seconds, the oldest first. "last10s" counts the last 10 of those seconds (the current one
// included) apart, so that a change is not averaged away over the minute: its calls, those that
// ran, failures and slow calls, and the shares. The page shows the counts as rates per second over
// the minute (count / 60) and over the 10 seconds (count / 10), the shares as "—" when no call ran,
// with a sparkline of "perSecond". The document also has "unruled": the resources with calls in the
// minute, neither rules nor settings of their own, and no template rule matching their name (one
// whose breakers were dropped to make room has rules all the same), the most called first, 10 by
// default ([WithUnruled]), so that a rule loaded under a misspelt name shows. The Recorder keeps at
// most 1,000 names ([RecorderLimit]) and 128 KiB of them ([RecorderLimitBytes]), none longer than 1
// KiB ([RecorderMaxNameLength]), and counts the calls of any other name under [Overflow].
//
// The other way round, once the Recorder has recorded for a minute, the document has
// "uncalled", shown above "Called, without rules" as "Configured, not called": each name with
// rules of its own, settings of its own (not a template key) or an operator's override that had
// no call in the minute, with what it is configured with, and the name called in the minute
// nearest to it by edit distance (Levenshtein, within 2 edits, or a quarter of the name's length
// if that is more; of those as near, the most called), which the page shows as "did you mean
// payments":
//
//	"uncalled": [{"name": "paymnets", "configured": ["rules"], "nearest": "payments"}]
//
// "configured" holds "rules", "settings" and "override", in that order, and "nearest" is
// omitted when no called name is near enough; those with one come first, then by name. A name
// that a template rule or a template setting's key covers is not listed: it has no
// configuration of its own to misspell. The candidates are the names the Recorder keeps, at most
// [RecorderLimit]; while [Overflow] counted calls in the minute, any of which could be a
// configured name's, "uncalled" is omitted, as it is before the first minute. The handler logs
// each name when it first shows (Warn, to the logger of [WithLogger]), and again only after it
// was called and went a minute without calls again:
//
//	breakerdebug: configured name has no calls; did you mean another? name=paymnets nearest=payments configured=rules
//
// [Uncalled] makes the same list from a Snapshot and the calls of each name that another
// reporter counted: contrib/prometheus and contrib/otel export it as the gauges
// breaker_uncalled and breaker.uncalled.
//
// The page renders every name as text, never as markup, and is served with a
// Content-Security-Policy that lets it run only its own script and fetch only from its own
// origin. Nothing it keeps grows with the names callers use: the state changes are kept in a
// ring of 100, and resources are read from the Manager's rules and settings, which its
// operators write, in one Snapshot at each request. The handler is safe for concurrent use;
// the package starts no goroutines.
package breakerdebug

import (
	"cmp"
	"encoding/json"
	"log/slog"
	"maps"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/halfopen/breaker"
)

// keep is how many state changes the status shows.
const keep = 100

// Handler returns an http.Handler that serves the status of m's breakers, as an HTML page or
// as JSON (see the package documentation). It answers GET and HEAD; any other method gets
// 405 Method Not Allowed. A path ending in "/override" takes operators' writes instead, if the
// program allows them (WithOverrides), and POST alone.
//
// Each call of Handler registers one observer on m, for the Manager's lifetime, which keeps
// the last 100 state changes: call it once per Manager, before traffic, and reuse the
// handler. Changes before the call are not shown. The observer only copies each change into
// a ring buffer of fixed size under a mutex, so its memory does not grow with the number of
// resources. A nil m means breaker.Default(). The options add call counts (WithRecorder).
func Handler(m *breaker.Manager, opts ...Option) http.Handler {
	if m == nil {
		m = breaker.Default()
	}
	h := &handler{m: m, recent: &recent{}, unruled: defaultUnruled, templates: defaultTemplates,
		logger: slog.Default()}
	for _, o := range opts {
		o.apply(h)
	}
	m.AddObserver(h.recent)
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
// r must also be given to the Manager with breaker.WithCallObserver, and read the Manager's
// clock (RecorderClock). Resources that had calls and have neither rules nor settings, and
// whose name no template matches, are listed too, the most called first (see WithUnruled), so
// that a rule under a misspelt name shows.
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

type handler struct {
	m         *breaker.Manager
	recent    *recent
	rec       *Recorder // nil: no call counts
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
	Now         time.Time        `json:"now"`
	Resources   []resourceStatus `json:"resources"`
	Overrides   []overrideStatus `json:"overrides"`
	Transitions []transition     `json:"transitions"`
	// Unruled are the resources with calls in the last minute, neither rules nor settings, and
	// no template matching their name, the most called first; set with a Recorder.
	Unruled []unruledStatus `json:"unruled,omitzero"` // [] with a Recorder and none
	// Uncalled are the names with rules, settings or an override of their own and no call in
	// the Recorder's minute; set with a Recorder that has recorded a minute, without Overflow.
	Uncalled []UncalledName `json:"uncalled,omitzero"` // [] with none
	// Templates counts the breakers template rules made; set while a template is loaded.
	Templates *templateStatus `json:"templates,omitempty"`
	// TemplateSettings are the settings loaded under keys ending in "*", which are not
	// resources: each name they apply to is listed under its own name with them.
	TemplateSettings []templateSettingStatus `json:"templateSettings,omitempty"`
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
	Resource string    `json:"resource"`
	Calls    callStats `json:"calls"`
}

type resourceStatus struct {
	Resource string `json:"resource"`
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
	Ratio         *float64     `json:"ratio,omitempty"` // see ratioOf
	RetryAt       time.Time    `json:"retryAt,omitzero"`
	ProbeDeadline time.Time    `json:"probeDeadline,omitzero"`
	RampingUp     bool         `json:"rampingUp,omitempty"`
	Pacing        bool         `json:"pacing,omitempty"`
}

type transition struct {
	Seq      uint64 `json:"seq"`
	Resource string `json:"resource"`
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
	if isOverridePath(r.URL.Path) {
		h.serveOverride(w, r)
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

// status reads the manager now, in one Manager.Snapshot: the resources listed, their breakers,
// settings, calls in flight and overrides, and the template counts, all come from one rule set.
// The resources are listed worst first (worstFirst), as the page shows them.
func (h *handler) status() *status {
	snap := h.m.Snapshot()
	st := &status{Now: snap.At, Resources: []resourceStatus{}, Overrides: []overrideStatus{}}
	var names, templates []string
	var made []*breaker.ResourceStatus // the names template rules made, by name
	for i := range snap.Resources {
		r := &snap.Resources[i]
		if r.Override != nil {
			st.Overrides = append(st.Overrides, overrideStatusOf(*r.Override))
			names = append(names, r.Name)
		}
		// A name with only a template setting's settings is not listed: its key is, with the
		// number of names it applies to.
		switch {
		case r.SettingsFrom == r.Name: // settings of its own
			names = append(names, r.Name)
		case r.Template != "": // listed within WithTemplates
			made = append(made, r)
		case len(r.Breakers) > 0: // rules of its own
			names = append(names, r.Name)
		}
	}
	for _, r := range snap.Rules {
		if p, ok := strings.CutSuffix(r.Resource, "*"); ok {
			templates = append(templates, p)
		}
	}
	st.TemplateSettings = templateSettingsOf(snap)
	if d := snap.Templates; d.Templates > 0 {
		st.Templates = &templateStatus{Resources: d.Resources, Breakers: d.Breakers, Limit: d.Limit, Dropped: d.Dropped}
	}
	var calls map[string]callStats
	if h.rec != nil {
		calls = h.rec.read(st.Now)
		st.Uncalled = h.uncalled(&snap, calls, st.Now)
	}
	listed, unlisted := h.listTemplates(made, calls)
	names = append(names, listed...)
	if st.Templates != nil {
		st.Templates.Unlisted = len(unlisted)
	}
	slices.Sort(names)
	names = slices.Compact(names)
	rows := make([]*breaker.ResourceStatus, len(names))
	for i, name := range names {
		rows[i] = snap.Resource(name) // every name is one of snap.Resources
	}
	for _, r := range worstFirst(rows) {
		res := resourceStatus{Resource: r.Name, Template: r.Template, Worst: worstOf(r).String(),
			Breakers: make([]breakerStatus, 0, len(r.Breakers))}
		if cfg, ok := snap.Settings[r.SettingsFrom]; ok { // its own, or a template setting's
			res.Settings, res.SettingsFrom = settingsStatusOf(cfg), r.SettingsFrom
			res.InFlight = &r.InFlight
		}
		forcedClosed := r.Settings.Force == breaker.ForceClosed // its override's, own or template's
		for _, s := range r.Breakers {
			res.Breakers = append(res.Breakers, breakerStatus{
				Rule:          s.Rule,
				RuleText:      describe(s.Rule),
				State:         s.State.String(),
				DryRun:        s.Rule.DryRun || forcedClosed,
				Generation:    s.Generation,
				Total:         s.Total,
				Bad:           s.Bad,
				Ratio:         ratioOf(s),
				RetryAt:       s.RetryAt,
				ProbeDeadline: s.ProbeDeadline,
				RampingUp:     s.RampingUp,
				Pacing:        s.Pacing,
			})
		}
		if h.rec != nil {
			c, ok := calls[r.Name]
			if !ok {
				c = callStats{PerSecond: make([]uint64, seconds)}
			}
			res.Calls = &c
			delete(calls, r.Name)
		}
		st.Resources = append(st.Resources, res)
	}
	if h.rec != nil {
		for _, name := range unlisted {
			delete(calls, name) // it has breakers: not one to list as unruled
		}
		// A name a template matches has rules, whether or not it has breakers now: its
		// breakers may have been dropped to make room for others, or not made yet.
		maps.DeleteFunc(calls, func(name string, _ callStats) bool { return matchesAny(name, templates) })
		st.Unruled = []unruledStatus{}
		for _, rc := range topByCalls(calls, h.unruled) {
			st.Unruled = append(st.Unruled, unruledStatus{Resource: rc.name, Calls: rc.stats})
		}
	}
	if st.Uncalled != nil {
		h.logUncalled(st.Uncalled)
	}
	changes := h.recent.newestFirst()
	st.Transitions = make([]transition, 0, len(changes))
	for _, c := range changes {
		t := transition{
			Seq:        c.Seq,
			Resource:   c.Resource,
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
		st.Transitions = append(st.Transitions, t)
	}
	return st
}

// ratioOf is the "ratio" of the breaker s, Stats.Ratio: nil, and left out of the JSON, where
// it means nothing: for a ConsecutiveErrors rule, whose Bad is a run of failures and not a
// share of a window, and for a window that holds no call, which includes every breaker not
// CLOSED (0 of nothing would read as healthy while a breaker rejects every call).
func ratioOf(s breaker.Stats) *float64 {
	if s.Rule.Strategy == breaker.ConsecutiveErrors || s.Total == 0 {
		return nil
	}
	r := s.Ratio()
	return &r
}

// templateSettingsOf lists the template settings of snap (keys ending in "*") in the natural
// order of their keys, each with the number of names it applies to now.
func templateSettingsOf(snap breaker.Snapshot) []templateSettingStatus {
	names := map[string]int{} // by the key their settings come from
	for _, r := range snap.Resources {
		names[r.SettingsFrom]++
	}
	var out []templateSettingStatus
	for key, cfg := range snap.Settings {
		if isTemplate(key) {
			out = append(out, templateSettingStatus{Key: key, Settings: *settingsStatusOf(cfg), Names: names[key]})
		}
	}
	slices.SortFunc(out, func(a, b templateSettingStatus) int { return compareNames(a.Key, b.Key) })
	return out
}

func settingsStatusOf(cfg breaker.ResourceConfig) *settingsStatus {
	return &settingsStatus{Force: cfg.Force.String(), Timeout: cfg.Timeout.String(), MaxConcurrency: cfg.MaxConcurrency}
}

// isTemplate reports whether a resource name or a settings key is a template's.
func isTemplate(key string) bool { return strings.HasSuffix(key, "*") }

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

// listTemplates splits made, the resources that templates made, by name, into the names the
// status lists, at most WithTemplates of them, and the others: those with a breaker not CLOSED
// first, then the most called in calls, then by name.
func (h *handler) listTemplates(made []*breaker.ResourceStatus, calls map[string]callStats) (listed, unlisted []string) {
	type candidate struct {
		name  string
		open  bool
		calls uint64
	}
	all := make([]candidate, len(made))
	for i, r := range made {
		open := slices.ContainsFunc(r.Breakers, func(s breaker.Stats) bool { return s.State != breaker.Closed })
		all[i] = candidate{r.Name, open, calls[r.Name].Calls}
	}
	if len(all) > h.templates {
		slices.SortFunc(all, func(a, b candidate) int {
			if a.open != b.open {
				if a.open {
					return -1
				}
				return 1
			}
			if c := cmp.Compare(b.calls, a.calls); c != 0 {
				return c
			}
			return cmp.Compare(a.name, b.name)
		})
	}
	for i, c := range all {
		if i < h.templates {
			listed = append(listed, c.name)
		} else {
			unlisted = append(unlisted, c.name)
		}
	}
	return listed, unlisted
}

// matchesAny reports whether name starts with one of prefixes, the templates' Resources without
// their "*".
func matchesAny(name string, prefixes []string) bool {
	return slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(name, p) })
}
