// Package breakerprom exports the calls, states and transitions of a breaker.Manager, the
// settings of its resources and the operators' overrides in force, as Prometheus metrics.
//
// A Collector learns of calls through a breaker.CallObserver, which a Manager takes only when
// it is created, and of states, transitions and settings from the Manager it watches. So it is
// set up in three steps, before traffic:
//
//	c := breakerprom.New()
//	m := breaker.NewManager(c.Option()) // counts every call of m
//	c.Watch(m)                          // reports the states and transitions of m's breakers
//	prometheus.MustRegister(c)
//
// Its metrics are:
//
//	breaker_calls_total{resource,outcome}                       counter
//	breaker_rejected_total{resource,cause}                      counter
//	breaker_would_reject_total{resource,mode}                   counter
//	breaker_rt_seconds{resource}                                histogram
//	breaker_call_duration_max_seconds{resource}                 gauge (last minute)
//	breaker_state{resource,rule,dry_run}                        gauge
//	breaker_ramping_up{resource,rule}                           gauge (rules with RampUp)
//	breaker_pacing{resource,rule}                               gauge (rules with Pace)
//	breaker_window_calls{resource,rule}                         gauge
//	breaker_window_bad{resource,rule}                           gauge
//	breaker_window_ratio{resource,rule}                         gauge (not ConsecutiveErrors)
//	breaker_transitions_total{resource,from,to,reason,dry_run}  counter
//	breaker_force{resource,settings_from}                       gauge
//	breaker_in_flight{resource}                                 gauge
//	breaker_max_concurrency{resource,settings_from}             gauge
//	breaker_timeout_seconds{resource,settings_from}             gauge
//	breaker_override{resource,force}                            gauge
//	breaker_override_end_timestamp_seconds{resource,force}      gauge
//	breaker_template_breakers                                    gauge
//	breaker_template_settings                                    gauge
//	breaker_template_limit                                       gauge
//	breaker_template_dropped_total                               counter
//	breaker_uncalled{resource,nearest}                          gauge (last minute)
//
// Every call that ran counts once as outcome "passed"; those of them that failed count also as
// "failed", and those that a SlowRequestRatio rule found slow also as "slow" (a call may be both).
// A call that was not let through counts as "blocked", and once in breaker_rejected_total by its
// cause: "open" (a breaker), "forced_open" (the resource is ForceOpen), "concurrency_limit",
// "slot", "name_too_long", "ramping_up" or "pacing" (a breaker ramping up after recovery, or
// pacing a dependency that fails part of its calls, held it back). breaker_ramping_up and
// breaker_pacing are 1 while such a breaker, CLOSED, paces its calls. A call that ran although
// a breaker would have rejected it counts in breaker_would_reject_total, by mode: "dry_run" (the
// rule is DryRun) or "force_closed".
// breaker_state and breaker_transitions_total say dry_run="true" for a breaker that rejects
// nothing, so a DryRun or ForceClosed breaker that trips is not mistaken for one that rejects
// calls. breaker_window_calls and breaker_window_bad are each breaker's window as its Stats read
// it: its calls, and the slow ones (SlowRequestRatio) or the failed ones (ErrorRatio, ErrorCount)
// among them; for ConsecutiveErrors, which keeps no window, both are its current run of failures.
// breaker_window_ratio is bad over calls (Stats.Ratio): the window's slow-call rate or failure
// rate, which a ratio rule compares with its Threshold, 0 while the window is empty; a
// ConsecutiveErrors breaker, whose count is a run, has none. All three are 0 unless the breaker is
// CLOSED: its window starts empty after each recovery.
//
// breaker_force, breaker_max_concurrency and breaker_timeout_seconds are the settings that apply to
// each resource (Manager.LoadResources), unless they are all zero, with settings_from the key they
// come from: "own" (SettingsOwn) for the resource's own settings, or the template setting's key,
// such as "*" or "GET *", for a resource that takes a template setting's. A template key is never a
// resource label. breaker_in_flight is the calls in flight of each resource with settings, its own
// or a template's. breaker_override is 1 for each resource an operator's override
// (Manager.Override) forces now, with its force ("open", "closed" or "auto"), and
// breaker_override_end_timestamp_seconds when the override ends; while it lasts, breaker_state's
// dry_run follows its force. An override beginning or ending moves no breaker, so
// breaker_transitions_total does not count it. The breaker_template metrics, sent while a template
// rule or a template setting is loaded, are the breakers template rules made, the names that hold
// template settings, their bound (WithMaxTemplateBreakers) and the resources dropped to stay within
// it.
//
// breaker_call_duration_max_seconds is the longest response time of the resource's calls that
// ran in the last minute, which the histogram's sum and count cannot tell (a Micrometer timer's
// max): kept in a ring of 10-second steps per resource, so a spike counts for 60 to 70 seconds,
// then ages out; no series while no call ran in it. breaker_uncalled is 1 for each resource
// with rules, settings or an override of its own that had no call in the last minute, most
// often a misspelt name, which protects nothing, with nearest the called name nearest to it by
// edit distance, "" when none is near (breakerdebug.Uncalled, as the status page lists them);
// nothing in the first minute after Watch, nor while calls counted under "_other" in the
// minute, which may be any name's. A call counts in the minute at the time the Manager heard it
// (breaker.CallInfo.At), and a scrape reads the minute at its Snapshot's time, by the watched
// Manager's clock; the Collector reads no clock of its own. See the README for every metric.
//
// The metrics that calls grow are bounded: the first 1,000 resource names (WithMaxResources)
// get series of their own, as long as each is at most 1 KiB (WithMaxNameLength) and together
// they take at most 128 KiB (WithMaxNameBytes); every other name is counted under
// resource="_other" (OverflowResource). The Collector keeps its own copy of each name. The
// gauges are read from one Manager.Snapshot at each scrape, so that they agree with each other:
// the Manager's rules and settings, which its operators, not its callers, decide. The breakers
// a template rule made are named by callers: breaker_state and the window gauges have a series
// for those of the names with series of their own, and none for the names counted under
// "_other". The last minute of calls is kept with each name's series, and so bounded with
// them. The names that hold
// template settings take names of the bound too: past it, their settings are reported under
// "_other", once for each template key, and their calls in flight added up there. An override
// may name any resource, so the override gauges take names of the bound too: those past it are
// counted together under "_other", by force, with the latest end. Resource names that are not
// UTF-8 have the bad bytes replaced by U+FFFD; names that then share a label have one series
// for each label set: a gauge reports the first of them in byte order, and their calls,
// transitions and overrides add up.
//
// The package starts no goroutines.
package breakerprom

import (
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/atomic"

	"github.com/halfopen/breaker"
)

// SettingsOwn is the settings_from label of the settings gauges of a resource whose settings
// are its own: a template key, the other value, always ends in "*".
const SettingsOwn = "own"

// Label values of breaker_calls_total's outcome label.
const (
	OutcomePassed  = "passed"
	OutcomeBlocked = "blocked"
	OutcomeFailed  = "failed"
	OutcomeSlow    = "slow"
)

// Collector is a prometheus.Collector of the metrics of one breaker.Manager: the calls from
// the CallObserver that Option adds to the Manager, the states, transitions and settings of the
// Manager given to Watch. Create it with New; the zero value is not usable.
//
// Its methods are safe for concurrent use.
type Collector struct {
	calls        *prometheus.CounterVec
	rejected     *prometheus.CounterVec
	wouldReject  *prometheus.CounterVec
	rt           *prometheus.HistogramVec
	transitions  *prometheus.CounterVec
	state        *prometheus.Desc
	rampingUp    *prometheus.Desc
	pacing       *prometheus.Desc
	windowCalls  *prometheus.Desc
	windowBad    *prometheus.Desc
	windowRatio  *prometheus.Desc
	force        *prometheus.Desc
	inFlight     *prometheus.Desc
	maxConc      *prometheus.Desc
	timeout      *prometheus.Desc
	override     *prometheus.Desc
	overrideEnd  *prometheus.Desc
	templates    *prometheus.Desc
	tmplSettings *prometheus.Desc
	dynLimit     *prometheus.Desc
	dynDropped   *prometheus.Desc
	callMax      *prometheus.Desc
	uncalled     *prometheus.Desc

	// The resource names with series of their own: at most maxResources of them, none longer
	// than maxNameLength, maxNameBytes of them in all.
	resources     sync.Map    // resource name → *resourceEntry
	full          atomic.Bool // set once a new name found no room
	namesMu       sync.Mutex  // serialises adding names
	named         int         // entries in resources; requires namesMu
	nameBytes     int         // what the names of those entries take; requires namesMu
	maxResources  int
	maxNameLength int
	maxNameBytes  int
	overflow      *resourceEntry // the entry of every name past the bounds; its series come at its first call

	mu      sync.Mutex
	watched *breaker.Manager // nil until Watch
	since   time.Time        // when watched was watched, by its clock: breaker_uncalled waits a minute from it
	remove  func()           // unregisters the observer from watched
}

var _ prometheus.Collector = (*Collector)(nil)

// New returns a Collector that has counted no call and watches no Manager.
func New(opts ...Option) *Collector {
	cfg := config{buckets: slices.Clone(DefaultBuckets), maxResources: DefaultMaxResources,
		maxNameLength: DefaultMaxNameLength, maxNameBytes: DefaultMaxNameBytes}
	for _, o := range opts {
		o.apply(&cfg)
	}
	return &Collector{
		maxResources:  cfg.maxResources,
		maxNameLength: cfg.maxNameLength,
		maxNameBytes:  cfg.maxNameBytes,
		overflow:      &resourceEntry{label: OverflowResource},
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "breaker_calls_total",
			Help: "Calls by outcome: passed (every call that ran), failed and slow (of those), blocked (rejected).",
		}, []string{"resource", "outcome"}),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "breaker_rejected_total",
			Help: "Blocked calls by cause: open (a breaker), forced_open, concurrency_limit, slot, name_too_long, ramping_up, pacing.",
		}, []string{"resource", "cause"}),
		wouldReject: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "breaker_would_reject_total",
			Help: "Calls that ran although a breaker would have rejected them, by mode: dry_run (DryRun rule) or force_closed.",
		}, []string{"resource", "mode"}),
		rt: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "breaker_rt_seconds",
			Help:    "Response time of the calls that ran, from Enter to Exit.",
			Buckets: cfg.buckets,
		}, []string{"resource"}),
		transitions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "breaker_transitions_total",
			Help: "State changes of the breakers; dry_run=\"true\" for a breaker that rejects no call.",
		}, []string{"resource", "from", "to", "reason", "dry_run"}),
		state: prometheus.NewDesc("breaker_state",
			"State of the breaker of each loaded rule: 0 CLOSED, 1 OPEN, 2 HALF_OPEN; dry_run=\"true\" when it rejects no call (DryRun rule or ForceClosed resource).",
			[]string{"resource", "rule", "dry_run"}, nil),
		rampingUp: prometheus.NewDesc("breaker_ramping_up",
			"1 while the breaker of a rule with RampUp, closed on a probe, paces its calls; else 0.",
			[]string{"resource", "rule"}, nil),
		pacing: prometheus.NewDesc("breaker_pacing",
			"1 while the breaker of a rule with Pace, CLOSED where it would have opened, paces its calls; else 0.",
			[]string{"resource", "rule"}, nil),
		windowCalls: prometheus.NewDesc("breaker_window_calls",
			"Calls in the window of the breaker of each loaded rule; for ConsecutiveErrors, its current run of failures. 0 unless CLOSED.",
			[]string{"resource", "rule"}, nil),
		windowBad: prometheus.NewDesc("breaker_window_bad",
			"Of the calls in the window of the breaker of each loaded rule, the slow ones (SlowRequestRatio) or the failed ones (ErrorRatio, ErrorCount); for ConsecutiveErrors, its current run of failures. 0 unless CLOSED.",
			[]string{"resource", "rule"}, nil),
		windowRatio: prometheus.NewDesc("breaker_window_ratio",
			"breaker_window_bad over breaker_window_calls, from 0 to 1: the slow-call rate (SlowRequestRatio) or the failure rate (ErrorRatio, ErrorCount) of the window of each breaker; 0 while the window is empty, as it is unless CLOSED. None for ConsecutiveErrors.",
			[]string{"resource", "rule"}, nil),
		force: prometheus.NewDesc("breaker_force",
			"Force of each resource with settings, as loaded, by the key they come from (settings_from: own, or a template key such as *): 0 auto, 1 forced open (every call rejected), 2 forced closed (no call rejected by the breakers).",
			[]string{"resource", "settings_from"}, nil),
		inFlight: prometheus.NewDesc("breaker_in_flight",
			"Calls admitted and not yet exited, of each resource with settings, its own or a template's.",
			[]string{"resource"}, nil),
		maxConc: prometheus.NewDesc("breaker_max_concurrency",
			"MaxConcurrency of each resource with settings, by the key they come from (settings_from: own, or a template key such as *); 0 means no limit.",
			[]string{"resource", "settings_from"}, nil),
		timeout: prometheus.NewDesc("breaker_timeout_seconds",
			"Timeout of each resource with settings, by the key they come from (settings_from: own, or a template key such as *); 0 means none.",
			[]string{"resource", "settings_from"}, nil),
		override: prometheus.NewDesc("breaker_override",
			"1 for each resource that an operator's override (Manager.Override) forces now, by force: open, closed or auto; under resource=\"_other\", how many of the names past the bound.",
			[]string{"resource", "force"}, nil),
		overrideEnd: prometheus.NewDesc("breaker_override_end_timestamp_seconds",
			"When each override in force ends, in seconds since the Unix epoch by the Manager's clock; under resource=\"_other\", the latest end of those counted there.",
			[]string{"resource", "force"}, nil),
		templates: prometheus.NewDesc("breaker_template_breakers",
			"Breakers that template rules (Resource ending in *) made and the Manager holds.", nil, nil),
		tmplSettings: prometheus.NewDesc("breaker_template_settings",
			"Resources that hold settings from a template setting (a key ending in *), each with its own calls in flight.", nil, nil),
		dynLimit: prometheus.NewDesc("breaker_template_limit",
			"The most template breakers and template settings the Manager may hold together (WithMaxTemplateBreakers).", nil, nil),
		dynDropped: prometheus.NewDesc("breaker_template_dropped_total",
			"Resources whose template breakers were dropped to stay within the limit.", nil, nil),
		callMax: prometheus.NewDesc("breaker_call_duration_max_seconds",
			"The longest response time of the calls of each resource that ran in the last minute, in 10-second steps (a call counts for 60 to 70 seconds); none while no call ran.",
			[]string{"resource"}, nil),
		uncalled: prometheus.NewDesc("breaker_uncalled",
			"1 for each resource with rules, settings or an override of its own and no call in the last minute, most often a misspelt name, with the called name nearest to it by edit distance (nearest, empty when none is near). None in the first minute after Watch, nor while resource=\"_other\" had calls in it.",
			[]string{"resource", "nearest"}, nil),
	}
}

// Option returns the breaker.Option that makes a Manager report its calls to c. Give it to
// breaker.NewManager, for one Manager only: the calls of two Managers would add up.
func (c *Collector) Option() breaker.Option {
	return breaker.WithCallObserver(callObserver{c})
}

// Watch makes c report the state of every breaker of m at each scrape, and count m's
// transitions from now on, in place of the Manager watched before; a nil m stops watching.
// Call it before traffic, so that no transition is missed. The transitions already counted
// stay counted.
//
// A Manager watched but not created with c.Option() reports states and transitions only:
// breaker.Default(), for example.
func (c *Collector) Watch(m *breaker.Manager) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if m == c.watched {
		return
	}
	if c.remove != nil {
		c.remove()
		c.remove = nil
	}
	c.watched = m
	if m != nil {
		c.since = m.Now()
		c.remove = m.AddObserver(breaker.ObserverFunc(c.onStateChange))
	}
}

// onStateChange counts s. Its resource takes a name of the bound, as a call does. An
// override beginning or ending moves no breaker (From is To): breaker_override shows it, and
// breaker_transitions_total does not count it.
func (c *Collector) onStateChange(s breaker.StateChange) {
	if s.Reason == breaker.Override {
		return
	}
	c.transitions.WithLabelValues(c.entryOf(s.Resource).label, s.From.String(), s.To.String(),
		s.Reason.String(), strconv.FormatBool(s.DryRun)).Inc()
}

// watching returns the Manager c watches and when it began to watch it, by its clock.
func (c *Collector) watching() (*breaker.Manager, time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.watched, c.since
}

// Describe sends the descriptions of c's metrics; see prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	c.calls.Describe(ch)
	c.rejected.Describe(ch)
	c.wouldReject.Describe(ch)
	c.rt.Describe(ch)
	c.transitions.Describe(ch)
	ch <- c.state
	ch <- c.rampingUp
	ch <- c.pacing
	ch <- c.windowCalls
	ch <- c.windowBad
	ch <- c.windowRatio
	ch <- c.force
	ch <- c.inFlight
	ch <- c.maxConc
	ch <- c.timeout
	ch <- c.override
	ch <- c.overrideEnd
	ch <- c.templates
	ch <- c.tmplSettings
	ch <- c.dynLimit
	ch <- c.dynDropped
	ch <- c.callMax
	ch <- c.uncalled
}

// Collect sends c's metrics; see prometheus.Collector. Its gauges are read from one
// Manager.Snapshot of the watched Manager, taken now: the states of the breakers, the settings
// of the resources, their calls in flight, the overrides, the template counts and the names
// configured and not called all come from one rule set.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	var snap *breaker.Snapshot // nil while c watches no Manager
	m, since := c.watching()
	if m != nil {
		s := m.Snapshot()
		snap = &s
		c.collectStates(snap, ch)
		c.collectSettings(snap, ch)
		c.collectOverrides(snap, ch)
		c.collectTemplates(snap, ch)
	}
	c.collectLastMinute(snap, since, ch)
	c.calls.Collect(ch)
	c.rejected.Collect(ch)
	c.wouldReject.Collect(ch)
	c.rt.Collect(ch)
	c.transitions.Collect(ch)
}

// isTemplate reports whether a resource name or a settings key is a template's.
func isTemplate(key string) bool { return strings.HasSuffix(key, "*") }

// inFlight returns the calls in flight of the resource name in snap.
func inFlight(snap *breaker.Snapshot, name string) int64 {
	if r := snap.Resource(name); r != nil {
		return r.InFlight
	}
	return 0
}

// collectStates sends breaker_state, and the window gauges, for every breaker in snap: those of
// rules of their own, and those templates made for names with series of their own; of names that
// share a resource label, those of the one claim picks. The names templates made take names of the
// bound, in name order. dry_run says whether the breaker's rule is DryRun or its resource
// ForceClosed now, by an override or by its settings.
func (c *Collector) collectStates(snap *breaker.Snapshot, ch chan<- prometheus.Metric) {
	names := make(map[string]string, len(snap.Resources))
	for i := range snap.Resources {
		switch r := &snap.Resources[i]; {
		case r.Template != "": // breakers a template made, for a name callers chose
			if e := c.entryOf(r.Name); e != c.overflow {
				claim(names, e.label, r.Name)
			}
		case len(r.Breakers) > 0:
			claim(names, labelValue(r.Name), r.Name)
		}
	}
	for label, name := range names {
		r := snap.Resource(name)
		c.sendStates(ch, r.Breakers, label, r.Settings.Force)
	}
}

// collectTemplates sends the breaker_template metrics while snap has a template rule or a
// template setting.
func (c *Collector) collectTemplates(snap *breaker.Snapshot, ch chan<- prometheus.Metric) {
	d := snap.Templates
	templates := d.Templates > 0
	for key := range snap.Settings {
		templates = templates || isTemplate(key)
	}
	if !templates {
		return
	}
	ch <- prometheus.MustNewConstMetric(c.templates, prometheus.GaugeValue, float64(d.Breakers))
	ch <- prometheus.MustNewConstMetric(c.tmplSettings, prometheus.GaugeValue, float64(d.Settings))
	ch <- prometheus.MustNewConstMetric(c.dynLimit, prometheus.GaugeValue, float64(d.Limit))
	ch <- prometheus.MustNewConstMetric(c.dynDropped, prometheus.CounterValue, float64(d.Dropped))
}

// sendStates sends breaker_state, breaker_ramping_up for a rule with RampUp, breaker_pacing for
// one with Pace, and the window gauges (sendWindow) for the breakers of one resource, whose
// Force is force.
func (c *Collector) sendStates(ch chan<- prometheus.Metric, breakers []breaker.Stats, resource string,
	force breaker.Force) {
	forcedClosed := force == breaker.ForceClosed
	for i, label := range ruleLabels(breakers) {
		if label == "" {
			continue
		}
		st := &breakers[i]
		ch <- prometheus.MustNewConstMetric(c.state, prometheus.GaugeValue,
			stateValue(st.State), resource, label, strconv.FormatBool(st.Rule.DryRun || forcedClosed))
		if st.Rule.RampUp > 0 {
			ramping := 0.0
			if st.RampingUp {
				ramping = 1
			}
			ch <- prometheus.MustNewConstMetric(c.rampingUp, prometheus.GaugeValue, ramping, resource, label)
		}
		if st.Rule.Pace {
			pacing := 0.0
			if st.Pacing {
				pacing = 1
			}
			ch <- prometheus.MustNewConstMetric(c.pacing, prometheus.GaugeValue, pacing, resource, label)
		}
		c.sendWindow(ch, st, resource, label)
	}
}

// sendWindow sends the window of the breaker st, under the labels of its breaker_state:
// breaker_window_calls and breaker_window_bad, and breaker_window_ratio but for a
// ConsecutiveErrors rule, whose Bad is a run of failures and not a share of a window.
func (c *Collector) sendWindow(ch chan<- prometheus.Metric, st *breaker.Stats, resource, rule string) {
	ch <- prometheus.MustNewConstMetric(c.windowCalls, prometheus.GaugeValue, float64(st.Total), resource, rule)
	ch <- prometheus.MustNewConstMetric(c.windowBad, prometheus.GaugeValue, float64(st.Bad), resource, rule)
	if st.Rule.Strategy != breaker.ConsecutiveErrors {
		ch <- prometheus.MustNewConstMetric(c.windowRatio, prometheus.GaugeValue, st.Ratio(), resource, rule)
	}
}

// collectSettings sends the force, calls in flight, limit and timeout of every resource with
// settings in snap, by resource name: a template setting's key is no resource, and has none.
// A resource with settings of its own sends them with settings_from SettingsOwn, and its calls
// in flight; of names that share a resource label, those of the one claim picks. The force is
// the settings' as loaded: breaker_override shows an override's. The names that hold a template
// setting's settings send theirs with its key (collectTemplateSettings) and their calls in
// flight (collectTemplateInFlight). Settings that are all zero send no force, limit or timeout.
func (c *Collector) collectSettings(snap *breaker.Snapshot, ch chan<- prometheus.Metric) {
	own := make(map[string]string, len(snap.Settings))
	for name := range snap.Settings {
		if !isTemplate(name) {
			claim(own, labelValue(name), name)
		}
	}
	for resource, name := range own {
		ch <- prometheus.MustNewConstMetric(c.inFlight, prometheus.GaugeValue, float64(inFlight(snap, name)), resource)
		c.sendSettings(ch, snap.Settings[name], settingsSeries{resource: resource, from: SettingsOwn})
	}
	c.collectTemplateSettings(snap, own, ch)
	c.collectTemplateInFlight(snap, own, ch)
}

// settingsSeries is the labels of the settings gauges of one resource: its resource label and
// the key its settings come from, SettingsOwn or a template key.
type settingsSeries struct{ resource, from string }

// sendSettings sends the force, limit and timeout cfg under the labels s, unless cfg is zero.
func (c *Collector) sendSettings(ch chan<- prometheus.Metric, cfg breaker.ResourceConfig, s settingsSeries) {
	if cfg == (breaker.ResourceConfig{}) {
		return
	}
	ch <- prometheus.MustNewConstMetric(c.force, prometheus.GaugeValue, float64(cfg.Force), s.resource, s.from)
	ch <- prometheus.MustNewConstMetric(c.maxConc, prometheus.GaugeValue, float64(cfg.MaxConcurrency), s.resource, s.from)
	ch <- prometheus.MustNewConstMetric(c.timeout, prometheus.GaugeValue, cfg.Timeout.Seconds(), s.resource, s.from)
}

// stateValue is the value of breaker_state for s.
func stateValue(s breaker.State) float64 {
	switch s {
	case breaker.Closed:
		return 0
	case breaker.Open:
		return 1
	case breaker.HalfOpen:
		return 2
	}
	return float64(s)
}

// ruleLabels returns the rule label of each of the breakers of one resource, in rule order: the
// rule's ID, or, when the ID is empty or an earlier rule has that label, its strategy and its
// index among the rules, such as "ErrorRatio#1". The label of a rule whose label is still taken
// is empty, and the rule is left out of the scrape rather than failing it.
func ruleLabels(breakers []breaker.Stats) []string {
	labels := make([]string, len(breakers))
	taken := make(map[string]bool, len(breakers))
	for i := range breakers {
		r := &breakers[i].Rule
		label := labelValue(r.ID)
		if label == "" || taken[label] {
			label = r.Strategy.String() + "#" + strconv.Itoa(i)
		}
		if !taken[label] {
			labels[i] = label
			taken[label] = true
		}
	}
	return labels
}
