// Package breakerprom exports the calls, states and transitions of a breaker.Manager, the
// settings of its resources, the operators' overrides in force and the names configured and
// not called, as Prometheus metrics. It formats the rows of package breakerview, as the status
// page (breakerdebug) and contrib/otel do, so the three agree. A Collector learns of calls
// through a call observer (breaker.WithCallObserver), which a Manager takes only when it is
// created, and of the rest from the Manager it watches; set it up before traffic:
//
//	c := breakerprom.New()
//	m := breaker.NewManager(c.Option()) // counts every call of m
//	c.Watch(m)                          // reports the states and transitions of m's breakers
//	prometheus.MustRegister(c)
//
// The README lists every metric and label. The Collector's methods are safe for concurrent
// use; the package starts no goroutines.
package breakerprom

import (
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakerview"
)

// Label values of breaker_calls_total's outcome label.
const (
	OutcomePassed  = "passed"
	OutcomeBlocked = "blocked"
	OutcomeFailed  = "failed"
	OutcomeRefused = "refused"
	OutcomeSlow    = "slow"
)

// Collector is a prometheus.Collector of the metrics of one breaker.Manager: the calls from
// the call observer that Option adds to the Manager, the states, transitions and settings of the
// Manager given to Watch. Create it with New; the zero value is not usable.
//
// Its methods are safe for concurrent use.
type Collector struct {
	callsTotal    *prometheus.CounterVec
	rejected      *prometheus.CounterVec
	wouldReject   *prometheus.CounterVec
	rt            *prometheus.HistogramVec
	transitions   *prometheus.CounterVec
	state         *prometheus.Desc
	rampingUp     *prometheus.Desc
	pacing        *prometheus.Desc
	windowCalls   *prometheus.Desc
	windowBad     *prometheus.Desc
	windowRefused *prometheus.Desc
	windowRatio   *prometheus.Desc
	force         *prometheus.Desc
	inFlight      *prometheus.Desc
	maxConc       *prometheus.Desc
	timeout       *prometheus.Desc
	override      *prometheus.Desc
	overrideEnd   *prometheus.Desc
	templates     *prometheus.Desc
	tmplSettings  *prometheus.Desc
	dynLimit      *prometheus.Desc
	dynDropped    *prometheus.Desc
	callMax       *prometheus.Desc
	uncalled      *prometheus.Desc
	info          *prometheus.Desc

	// calls keeps the resource names with series of their own, within the Limits, each with
	// its last minute.
	calls *breakerview.Calls[*resourceSeries]

	mu      sync.Mutex
	watched *breaker.Manager // nil until Watch
	since   time.Time        // when watched was watched, by its clock: breaker_uncalled waits a minute from it
	remove  func()           // unregisters the observer from watched
}

var _ prometheus.Collector = (*Collector)(nil)

// New returns a Collector that has counted no call and watches no Manager.
func New(opts ...Option) *Collector {
	cfg := config{buckets: slices.Clone(DefaultBuckets)}
	for _, o := range opts {
		o.apply(&cfg)
	}
	return &Collector{
		calls: breakerview.NewCalls(cfg.limits, func(label string) *resourceSeries {
			return &resourceSeries{label: label}
		}),
		callsTotal: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "breaker_calls_total",
			Help: "Calls by outcome: passed (every call that ran), failed, refused (by the dependency, apart from failed) and slow (of those), blocked (rejected).",
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
		windowRefused: prometheus.NewDesc("breaker_window_refused",
			"Of breaker_window_bad, the calls the dependency refused (Outcome Refused) rather than failed: ErrorRatio and ErrorCount count them apart; 0 for SlowRequestRatio and ConsecutiveErrors, and unless CLOSED.",
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
			"The longest response time of the calls of each resource that ran in the last minute (60 one-second steps: a call counts for 59 to 60 seconds); none while no call ran.",
			[]string{"resource"}, nil),
		uncalled: prometheus.NewDesc("breaker_uncalled",
			"1 for each resource with rules, settings or an override of its own and no call in the last minute, most often a misspelt name, with the called name nearest to it by edit distance (nearest, empty when none is near). None in the first minute after Watch, nor while resource=\"_other\" had calls in it.",
			[]string{"resource", "nearest"}, nil),
		info: prometheus.NewDesc("breaker_resource_info",
			"1 for each resource the Collector reports, with its side: server for a route breakerhttp.Middleware serves (a name beginning with breakerhttp.ServerPrefix), client for a call the program makes; no side for resource=\"_other\", whose names may be of either. Join on resource for it.",
			[]string{"resource", "side"}, nil),
	}
}

// Option returns the breaker.Option that makes a Manager report its calls to c. Give it to
// breaker.NewManager, for one Manager only: the calls of two Managers would add up.
func (c *Collector) Option() breaker.Option {
	return breaker.WithCallObserver(callObserver{c}.OnCall)
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
	c.transitions.WithLabelValues(c.calls.Entry(s.Resource).Label(), s.From.String(), s.To.String(),
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
	c.callsTotal.Describe(ch)
	c.rejected.Describe(ch)
	c.wouldReject.Describe(ch)
	c.rt.Describe(ch)
	c.transitions.Describe(ch)
	ch <- c.state
	ch <- c.rampingUp
	ch <- c.pacing
	ch <- c.windowCalls
	ch <- c.windowBad
	ch <- c.windowRefused
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
	ch <- c.info
}

// Collect sends c's metrics; see prometheus.Collector. Its gauges are read from one
// breakerview.View of one Manager.Snapshot of the watched Manager, taken now: the states of the
// breakers, the settings of the resources, their calls in flight, the overrides, the template
// counts, the longest calls and the names configured and not called all come from one rule
// set, at one instant of the Manager's clock. While c watches no Manager, it sends the counters
// alone.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	if m, since := c.watching(); m != nil {
		snap := m.Snapshot()
		c.collectView(c.calls.View(&snap, since), ch)
	}
	c.callsTotal.Collect(ch)
	c.rejected.Collect(ch)
	c.wouldReject.Collect(ch)
	c.rt.Collect(ch)
	c.transitions.Collect(ch)
}
