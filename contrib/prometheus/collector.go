// Package breakerprom exports the calls, states and transitions of a breaker.Manager as
// Prometheus metrics.
//
// A Collector learns of calls through a breaker.CallObserver, which a Manager takes only when
// it is created, and of states and transitions from the Manager it watches. So it is set up in
// three steps, before traffic:
//
//	c := breakerprom.New()
//	m := breaker.NewManager(c.Option()) // counts every call of m
//	c.Watch(m)                          // reports the states and transitions of m's breakers
//	prometheus.MustRegister(c)
//
// Its metrics are:
//
//	breaker_calls_total{resource,outcome}               counter
//	breaker_rt_seconds{resource}                        histogram
//	breaker_state{resource,rule}                        gauge
//	breaker_transitions_total{resource,from,to,reason}  counter
//
// Every call that ran counts once as outcome "passed"; those of them that failed count also
// as "failed", and those that a SlowRequestRatio rule found slow also as "slow" (a call may be
// both). A call that was not let through counts as "blocked" only. So passed + blocked is
// every call, failed / passed the error ratio, and blocked / (passed + blocked) the share of
// calls rejected. See the README for every metric.
//
// The resource label of the calls, response times and transitions takes at most
// DefaultMaxResources values (WithMaxResources sets another bound) and OverflowResource: the
// first names seen keep series of their own, and every later name is counted under
// OverflowResource, so that callers who make up names cannot grow the series without end.
// breaker_state, read from the loaded rules at each scrape, keeps nothing per name.
//
// The package starts no goroutines.
package breakerprom

import (
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/atomic"

	"github.com/halfopen/breaker"
)

// Label values of breaker_calls_total's outcome label.
const (
	OutcomePassed  = "passed"
	OutcomeBlocked = "blocked"
	OutcomeFailed  = "failed"
	OutcomeSlow    = "slow"
)

// Collector is a prometheus.Collector of the metrics of one breaker.Manager: the calls from
// the CallObserver that Option adds to the Manager, the states and transitions of the
// Manager given to Watch. Create it with New; the zero value is not usable.
//
// Its methods are safe for concurrent use.
type Collector struct {
	calls       *prometheus.CounterVec
	rt          *prometheus.HistogramVec
	transitions *prometheus.CounterVec
	state       *prometheus.Desc

	maxResources int
	resources    sync.Map                 // resource name → *resource; at most maxResources
	overflow     atomic.Pointer[resource] // nil until a name past maxResources is seen
	resourcesMu  sync.Mutex               // serialises adding to resources
	named        int                      // entries of resources; requires resourcesMu

	mu      sync.Mutex
	watched *breaker.Manager // nil until Watch
	remove  func()           // unregisters the observer from watched
}

var _ prometheus.Collector = (*Collector)(nil)

// New returns a Collector that has counted no call and watches no Manager.
func New(opts ...Option) *Collector {
	cfg := config{buckets: slices.Clone(DefaultBuckets), maxResources: DefaultMaxResources}
	for _, o := range opts {
		o.apply(&cfg)
	}
	return &Collector{
		maxResources: cfg.maxResources,
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "breaker_calls_total",
			Help: "Calls by outcome: passed (every call that ran), failed and slow (of those), blocked (rejected).",
		}, []string{"resource", "outcome"}),
		rt: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "breaker_rt_seconds",
			Help:    "Response time of the calls that ran, from Enter to Exit.",
			Buckets: cfg.buckets,
		}, []string{"resource"}),
		transitions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "breaker_transitions_total",
			Help: "State changes of the breakers.",
		}, []string{"resource", "from", "to", "reason"}),
		state: prometheus.NewDesc("breaker_state",
			"State of the breaker of each loaded rule: 0 CLOSED, 1 OPEN, 2 HALF_OPEN.",
			[]string{"resource", "rule"}, nil),
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
		c.remove = m.AddObserver(breaker.ObserverFunc(c.onStateChange))
	}
}

func (c *Collector) onStateChange(s breaker.StateChange) {
	c.transitions.WithLabelValues(c.resourceOf(s.Resource).label, s.From.String(), s.To.String(),
		s.Reason.String()).Inc()
}

func (c *Collector) manager() *breaker.Manager {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.watched
}

// Describe sends the descriptions of c's four metrics; see prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	c.calls.Describe(ch)
	c.rt.Describe(ch)
	c.transitions.Describe(ch)
	ch <- c.state
}

// Collect sends c's metrics; see prometheus.Collector. It reads the state of every breaker of
// the watched Manager now.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	if m := c.manager(); m != nil {
		c.collectStates(m, ch)
	}
	c.calls.Collect(ch)
	c.rt.Collect(ch)
	c.transitions.Collect(ch)
}

// collectStates sends breaker_state for every breaker of m. Each resource's breakers are read
// in one Breakers call, so a concurrent LoadRules cannot mix two rule sets in one resource.
func (c *Collector) collectStates(m *breaker.Manager, ch chan<- prometheus.Metric) {
	seen := make(map[string]bool)
	for _, r := range m.Rules() {
		if seen[r.Resource] {
			continue
		}
		seen[r.Resource] = true
		breakers := m.Breakers(r.Resource)
		rules := make([]breaker.Rule, len(breakers))
		for i, b := range breakers {
			rules[i] = b.Rule()
		}
		resource := labelValue(r.Resource)
		for i, label := range ruleLabels(rules) {
			if label != "" {
				ch <- prometheus.MustNewConstMetric(c.state, prometheus.GaugeValue,
					stateValue(breakers[i].State()), resource, label)
			}
		}
	}
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

// ruleLabels returns the rule label of each of the rules of one resource, in order: the rule's
// ID, or, when the ID is empty or an earlier rule has that label, its strategy and its index
// among the rules, such as "ErrorRatio#1". The label of a rule whose label is still taken is
// empty, and the rule is left out of the scrape rather than failing it.
func ruleLabels(rules []breaker.Rule) []string {
	labels := make([]string, len(rules))
	taken := make(map[string]bool, len(rules))
	for i, r := range rules {
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

// labelValue makes s a valid label value: Prometheus takes only UTF-8.
func labelValue(s string) string {
	return strings.ToValidUTF8(s, "\uFFFD")
}
