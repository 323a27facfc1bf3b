package breaker

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"runtime"
	"slices"
	"sync"
	"time"

	"go.uber.org/atomic"
)

// Manager holds the rules and breakers of a set of resources and checks every call made
// through it. Create one with NewManager, or use Default.
//
// Every method is safe for concurrent use. A Manager starts no goroutines and no timers: its
// breakers change state only when calls arrive or complete.
type Manager struct {
	timeline   // the clock, as the breakers read it, and the sequence of transitions
	slots      []Slot
	logger     *slog.Logger
	classifier Classifier // nil: DefaultClassifier
	calls      []CallObserver
	budget     int64  // bytes the breakers may take; <= 0: no bound
	maxName    int    // the longest resource name kept, in bytes
	instance   string // this process's name, for the jitter of retry times

	rules     atomic.Pointer[ruleSet]
	changing  atomic.Uint64    // counts changes begun and ended: odd while apply makes one, for Snapshot
	tmpl      templateBreakers // the breakers template rules made, and the settings of template settings
	counts    flightCounts     // calls in flight by name, for MaxConcurrency
	loadMu    sync.Mutex       // serialises LoadRules
	observers observers
}

// ruleSet is what LoadRules and LoadResources installed. It is never changed after it is
// published; each breaker's rule points into rules.
type ruleSet struct {
	rules     []Rule
	resources map[string]*resource // every resource with rules or settings
	index     resourceIndex        // resources, for find; built as the set is published
	settings  map[string]*settings // by full name; the template settings are in settingTemplates
	templates templates

	settingTemplates settingTemplates
	overrides        map[string]*override // operators' overrides, by resource name
	nameBudget       int64                // what the memory budget leaves for template resources' names
	procs            int                  // GOMAXPROCS when its rules were loaded: its breakers' counters are striped for it, as the budget counted
	hasTemplates     bool                 // template rules or settings: find looks further than the index
}

// resource is the breakers of one resource, in rule order, and its settings.
type resource struct {
	breakers []*circuit
	timed    bool           // a breaker needs each call's response time
	set      *settings      // nil: the zero ResourceConfig
	owner    *templateEntry // the entry of a resource made from templates, which its calls mark used; else nil
}

// NewManager returns a Manager with no rules: every call passes until LoadRules.
func NewManager(opts ...Option) *Manager {
	m := &Manager{timeline: timeline{clock: systemClock{}, system: true}, logger: slog.Default(),
		budget: defaultMemoryBudget, maxName: DefaultMaxNameLength, instance: defaultInstance()}
	m.tmpl.init()
	for _, o := range opts {
		o.apply(m)
	}
	m.startClock()
	m.rules.Store(&ruleSet{procs: runtime.GOMAXPROCS(0)})
	return m
}

// LoadRules replaces every rule of the Manager with rules; a nil or empty slice removes them
// all. It validates every rule first: if one is invalid, two rules of a resource are
// identical, a resource has more than 100 rules, or the rules' breakers would
// take more memory than the budget (WithMemoryBudget), it returns a *RuleError (wrapping
// ErrInvalidRule) that names the rule's index, resource and field, and changes nothing.
//
// A rule whose window keeps its shape (the same Resource, Strategy, StatInterval, BucketCount
// and StatCalls) keeps its breaker, with its state and window, also when it moves in the list
// or changes in anything else (Threshold, MinRequestAmount, MaxAllowedRT, RetryTimeout,
// ProbeTimeout, ProbeNum, MaxRetryTimeout, RetryJitter, DryRun, FastBuckets, FastThreshold,
// RampUp, ID): an OPEN breaker stays
// OPEN until its retry time, a probe in flight stays the probe, the new values apply from the
// next call, and observers hear nothing. Reset closes a breaker at once. The breakers of
// other changed rules, and of removed ones, are dropped; observers hear of each one that was
// not CLOSED as a change to CLOSED with Reason RuleChanged. Calls in flight exit without
// error; their outcomes no longer count for dropped breakers. Each rule of a template is
// judged the same way, for the breakers it made for every resource.
func (m *Manager) LoadRules(rules []Rule) error { return m.load(rules, true, nil, false) }

// load installs rules when withRules, and the resource settings cfg when withSettings, each
// after validating both.
func (m *Manager) load(rules []Rule, withRules bool, cfg map[string]ResourceConfig, withSettings bool) error {
	return m.apply(change{plan: func(old *ruleSet, _ int64) (*ruleSet, []*circuit, error) {
		if withRules {
			if err := m.checkRules(rules); err != nil {
				return nil, nil, err
			}
		}
		if withSettings {
			if err := m.checkResources(cfg); err != nil {
				return nil, nil, err
			}
		}
		procs := old.procs // a change of settings keeps the breakers, striped as they were counted
		if withRules {
			procs = runtime.GOMAXPROCS(0)
		}
		used, err := m.checkBudget(old, rules, withRules, cfg, withSettings, procs)
		if err != nil {
			return nil, nil, err
		}
		set := settingsSet{named: old.settings, templates: old.settingTemplates, overrides: old.overrides}
		if withSettings {
			named, templates := splitSettings(cfg)
			set.named, set.templates = newSettings(named, &m.counts), templates
		}
		if withRules {
			next, dropped := m.installRules(old, rules, set, m.nameBudget(used), procs)
			return next, dropped, nil
		}
		next := m.withSettings(old, set)
		next.nameBudget = m.nameBudget(used)
		return next, nil, nil
	}})
}

// A plan is one change of what a Manager enforces: from old, the rule set in force without the
// overrides whose end has come, at now, it builds the next rule set, and lists the breakers of
// old that the next one no longer has, to retire once it is published; or it says why it
// cannot. A nil next changes nothing of its own.
type plan func(old *ruleSet, now int64) (next *ruleSet, dropped []*circuit, err error)

// A change is what apply makes: its plan (nil: only the removal of the overrides whose end has
// come), what observers hear of the change itself beside the breakers it moves (an override's
// start or end: heard builds it from the next rule set once it is published, under the change,
// so that its Seq is the change's), and what the logger says of it.
type change struct {
	plan   plan
	heard  func(next *ruleSet, now int64) []StateChange
	logged func()
}

// apply makes the change c, the one place that takes the load lock and stores a rule set:
// loading rules, settings or a document, and setting or ending an override. Under the lock it
// takes the overrides whose end has come out of the rule set, runs c's plan, publishes the rule
// set it built, rebinding the template breakers to it, and retires the breakers it dropped;
// every StateChange of the change is made there, so that Seq numbers them in the order the
// change made them and changes in the order they were published: the overrides that ended,
// the template breakers the new rule set dropped, the change itself, the breakers it retired. With no lock held it then logs them and tells the
// observers, in that order. An error from the plan changes nothing.
func (m *Manager) apply(c change) error {
	m.loadMu.Lock()
	m.tmpl.mu.Lock() // the counts of calls in flight are given out under it
	m.changing.Inc() // a read from now on may meet breakers the change has tuned, and entries it rebound
	cur, now := m.rules.Load(), m.now()
	old, expired := m.withoutExpired(cur, now)
	var heard []StateChange
	for _, o := range expired {
		heard = append(heard, m.overrideChanges(old, o.Resource, "expired", now)...)
	}
	var next *ruleSet
	var dropped []*circuit
	var err error
	if c.plan != nil {
		next, dropped, err = c.plan(old, now)
	}
	if next == nil {
		next = old
	}
	if err == nil && next != cur {
		heard = append(heard, m.publish(next, now)...) // the template breakers it dropped
	}
	if err == nil && c.heard != nil {
		heard = append(heard, c.heard(next, now)...) // from the breakers as the change left them
	}
	if err == nil && next != cur {
		for _, b := range dropped {
			if change, report := b.retire(now, RuleChanged); report {
				heard = append(heard, change)
			}
		}
	}
	m.changing.Inc()
	m.tmpl.mu.Unlock()
	m.loadMu.Unlock()
	if err != nil {
		return err
	}
	for _, o := range expired {
		m.logger.Info("breaker: override over", "resource", o.Resource, "force", o.Force.String(), "why", "expired")
	}
	if c.logged != nil {
		c.logged()
	}
	for _, sc := range heard {
		m.notify(sc)
	}
	return nil
}

// checkRules validates a rule set for LoadRules.
func (m *Manager) checkRules(rules []Rule) error {
	if err := m.checkTemplates(rules); err != nil {
		return err
	}
	seen := make(map[Rule]int, min(len(rules), 1<<16)) // a huge bad input fails before it fills
	perResource := make(map[string]int)
	for i, r := range rules {
		if reason, field := r.check(); reason != "" {
			return &RuleError{Index: i, Resource: r.Resource, Field: field, Reason: reason}
		}
		if err := m.checkName(r.Resource); err != nil {
			err.Index = i
			return err
		}
		if perResource[r.Resource]++; perResource[r.Resource] > maxRulesPerResource {
			return &RuleError{Index: i, Resource: r.Resource,
				Reason: fmt.Sprintf("is one rule too many: a resource may have at most %d", maxRulesPerResource)}
		}
		key := r.identity()
		if j, dup := seen[key]; dup {
			return &RuleError{Index: i, Resource: r.Resource,
				Reason: fmt.Sprintf("is identical to rule %d: a resource may not have the same rule twice", j)}
		}
		seen[key] = i
	}
	return nil
}

// checkName refuses a name longer than the Manager keeps.
func (m *Manager) checkName(name string) *RuleError {
	if len(name) <= m.maxName {
		return nil
	}
	return &RuleError{Index: -1, Resource: name[:min(len(name), 64)], Field: "Resource",
		Reason: fmt.Sprintf("is %d bytes long, more than the %d a Manager keeps (WithMaxNameLength)", len(name), m.maxName)}
}

// installRules builds the rule set of rules, valid, with settings, keeping the breakers of rules
// whose window keeps its shape (see pairRules), their counters striped for procs, and returns it
// with the breakers of old it drops, in the order of the old rules. It requires loadMu held.
func (m *Manager) installRules(old *ruleSet, rules []Rule, set settingsSet, nameBudget int64, procs int) (*ruleSet, []*circuit) {
	next := &ruleSet{rules: slices.Clone(rules), resources: make(map[string]*resource), nameBudget: nameBudget,
		procs: procs}
	var names []string
	byName := map[string][]*Rule{}
	for i := range next.rules {
		if r := &next.rules[i]; !isTemplate(r.Resource) {
			if byName[r.Resource] == nil {
				names = append(names, r.Resource)
			}
			byName[r.Resource] = append(byName[r.Resource], r)
		}
	}
	kept := map[*circuit]bool{}
	for _, name := range names {
		res := &resource{}
		var prev resource
		if p := old.resources[name]; p != nil {
			prev = *p
		}
		for j, k := range pairRules(prev.breakers, byName[name]) {
			r := byName[name][j]
			if k >= 0 {
				c := prev.breakers[k]
				c.reload(r, procs)
				kept[c] = true
				res.breakers = append(res.breakers, c)
			} else {
				res.breakers = append(res.breakers, m.newBreaker(r, name, procs))
			}
			res.timed = res.timed || r.Strategy == SlowRequestRatio
		}
		next.resources[name] = res
	}
	m.attach(next, set)
	next.buildTemplates()

	var dropped []*circuit
	seen := map[string]int{}
	for _, r := range old.rules {
		if isTemplate(r.Resource) {
			continue
		}
		c := old.resources[r.Resource].breakers[seen[r.Resource]]
		seen[r.Resource]++
		if !kept[c] {
			dropped = append(dropped, c)
		}
	}
	return next, dropped
}

// pairRules matches the rules of one resource or template, as reloaded, with the breakers it
// had. A rule keeps the breaker of an identical rule (but perhaps for its ID or a default
// spelled out), or else the first one left whose rule gives its window the same shape: the
// same strategy, StatInterval, BucketCount and StatCalls, so that only its tuning differs. It returns,
// for each rule, the index in breakers of the one it keeps, or -1 for a new breaker.
func pairRules(breakers []*circuit, rules []*Rule) []int {
	keep := make([]int, len(rules))
	taken := make([]bool, len(breakers))
	pair := func(j int, same func(a, b Rule) bool) {
		for k, c := range breakers {
			if !taken[k] && same(c.Rule(), *rules[j]) {
				keep[j], taken[k] = k, true
				return
			}
		}
	}
	for j := range rules {
		keep[j] = -1
		pair(j, func(a, b Rule) bool { return a.identity() == b.identity() })
	}
	for j := range rules {
		if keep[j] < 0 {
			pair(j, func(a, b Rule) bool { return a.shape() == b.shape() })
		}
	}
	return keep
}

// settingsSet is the settings a load installs: those keyed by a full name, the template
// settings, longest prefix first, and the operators' overrides, kept across loads.
type settingsSet struct {
	named     map[string]*settings
	templates settingTemplates
	overrides map[string]*override
}

// attach gives the resources of rs their settings, adding an entry for each resource that has
// settings and no rules, gives a resource with rules and no settings of its own those of a
// template setting that matches it, applies the overrides, and tells each breaker whether its
// resource is ForceClosed. It requires loadMu and the template breakers' mu held, and rs not
// yet published.
func (m *Manager) attach(rs *ruleSet, set settingsSet) {
	rs.settings, rs.settingTemplates = set.named, set.templates
	for name, s := range set.named {
		res := rs.resources[name]
		if res == nil {
			res = &resource{}
			rs.resources[name] = res
		}
		res.set = s
	}
	for name, res := range rs.resources {
		if res.set == nil {
			res.set = rs.templateSettingsOf(name, &m.counts)
		}
	}
	m.applyOverrides(rs, set.overrides)
	for _, res := range rs.resources {
		res.set.force(res.breakers)
	}
}

// withSettings returns a copy of rs, with the same rules and breakers, for new settings.
func (m *Manager) withSettings(rs *ruleSet, set settingsSet) *ruleSet {
	next := &ruleSet{rules: rs.rules, resources: make(map[string]*resource, len(rs.resources)),
		templates: rs.templates, nameBudget: rs.nameBudget, procs: rs.procs}
	for name, res := range rs.resources {
		if len(res.breakers) > 0 {
			copied := *res
			copied.set = nil
			next.resources[name] = &copied
		}
	}
	m.attach(next, set)
	return next
}

// newBreaker makes the breaker of r for the calls to resource name, its counters striped for
// procs, and returns the machine it shares with the other kind.
func (m *Manager) newBreaker(r *Rule, name string, procs int) *circuit {
	if r.Strategy == SlowRequestRatio {
		b := &ResponseTimeBreaker{}
		b.init(b, &m.timeline, m.notify, m.instance, r, name, procs)
		return &b.circuit
	}
	b := &ExceptionBreaker{strategy: r.Strategy}
	b.init(b, &m.timeline, m.notify, m.instance, r, name, procs)
	return &b.circuit
}

// Rules returns the loaded rules, in the order given to LoadRules.
func (m *Manager) Rules() []Rule {
	return slices.Clone(m.rules.Load().rules)
}

// Breakers returns the breakers of resource, in rule order: those of its own rules, or else
// those a template made for it (none before its first call); none when it has neither.
func (m *Manager) Breakers(resource string) []CircuitBreaker {
	if res := m.existing(resource); res != nil {
		out := make([]CircuitBreaker, len(res.breakers))
		for i, c := range res.breakers {
			out[i] = c.kind
		}
		return out
	}
	return nil
}

// existing returns the breakers resource has now, its own or a template's, without making any.
func (m *Manager) existing(resource string) *resource {
	if res := m.rules.Load().resources[resource]; res != nil && res.breakers != nil {
		return res
	}
	if e := m.tmpl.find(resource); e != nil {
		return e.res.Load()
	}
	return nil
}

var defaultManager = NewManager()

// Default returns the process-wide Manager that the package-level functions use.
func Default() *Manager { return defaultManager }

// LoadRules replaces the rules of the default Manager; see Manager.LoadRules.
func LoadRules(rules []Rule) error { return defaultManager.LoadRules(rules) }

// Enter checks a call with the default Manager; see Manager.Enter.
func Enter(resource string) (*Entry, error) { return defaultManager.Enter(resource) }

// Do runs fn through the default Manager; see Manager.Do.
func Do(ctx context.Context, resource string, fn func(context.Context) error) error {
	return defaultManager.Do(ctx, resource, fn)
}

// AddObserver registers o with the default Manager; see Manager.AddObserver.
func AddObserver(o Observer) (remove func()) { return defaultManager.AddObserver(o) }

// Now returns the time by the Manager's clock, the one BlockError.RetryAt and StateChange.At
// are read from: for example, to turn RetryAt into a Retry-After header.
func (m *Manager) Now() time.Time { return m.timeAt(m.now()) }

// Reset moves every breaker of resource to a fresh CLOSED period with an empty window, as if
// its rules had just been loaded, for an operator who knows the dependency is back. Observers
// hear Reason Reset from each breaker that was not CLOSED. A resource without rules is left as
// it is; its settings (Force) are not changed.
func (m *Manager) Reset(resource string) {
	res := m.existing(resource)
	if res == nil {
		return
	}
	now := m.now()
	for _, c := range res.breakers {
		c.reset(now)
	}
}

// checkBudget returns the bytes that the rules and resource settings take, their breakers'
// counters striped for procs, counting every template's breakers at the bound, or the error
// for the rule or settings that take the Manager past its budget. What a load does not replace
// is counted as loaded now. Every sum saturates, so no bound can overflow it.
func (m *Manager) checkBudget(old *ruleSet, rules []Rule, withRules bool, cfg map[string]ResourceConfig, withSettings bool, procs int) (int64, error) {
	if !withRules {
		rules = old.rules
	}
	if !withSettings {
		cfg = old.configs()
	}
	var sum int64
	for name := range cfg {
		sum = satSum(sum, settingsBytes+int64(len(name)))
	}
	named, templates := splitSettings(cfg)
	if len(templates.all) > 0 {
		// A resource with rules and no settings of its own has a template setting's, if one matches.
		rs := &ruleSet{settingTemplates: templates}
		for i := range rules {
			if name := rules[i].Resource; !isTemplate(name) && rs.matchSettings(name) != nil {
				if _, own := named[name]; !own {
					sum = satSum(sum, settingsBytes)
				}
			}
		}
	}
	if over(m.budget, sum) {
		return sum, &RuleError{Index: -1, Field: "Resources",
			Reason: fmt.Sprintf("%d resources with settings take %s, past the memory budget of %s (WithMemoryBudget)",
				len(cfg), formatBytes(sum), formatBytes(m.budget))}
	}
	// Templates make breakers and settings on demand, at most WithMaxTemplateBreakers of them:
	// count them all at the size of the largest.
	largest := -1
	for i := range rules {
		if isTemplate(rules[i].Resource) && (largest < 0 || rules[i].breakerMemory(procs) > rules[largest].breakerMemory(procs)) {
			largest = i
		}
	}
	if largest < 0 && len(templates.all) > 0 {
		if sum = satSum(sum, satMul(int64(m.tmpl.limit), settingsBytes+templateEntryBytes)); over(m.budget, sum) {
			return sum, &RuleError{Index: -1, Field: "Resources",
				Reason: fmt.Sprintf("template settings for %d resources (WithMaxTemplateBreakers) could take %s, "+
					"past the memory budget of %s (WithMemoryBudget)", m.tmpl.limit, formatBytes(sum), formatBytes(m.budget))}
		}
	}
	if largest >= 0 {
		unit := rules[largest].breakerMemory(procs)
		if len(templates.all) > 0 {
			unit = max(unit, settingsBytes)
		}
		if sum = satSum(sum, satMul(int64(m.tmpl.limit), unit+templateEntryBytes)); over(m.budget, sum) {
			return sum, &RuleError{Index: largest, Resource: rules[largest].Resource, Field: "BucketCount",
				Reason: fmt.Sprintf("is a template whose %d template breakers (WithMaxTemplateBreakers) could take "+
					"%s, past the memory budget of %s (WithMemoryBudget)", m.tmpl.limit, formatBytes(sum),
					formatBytes(m.budget))}
		}
	}
	counted := make(map[string]bool, min(len(rules), 1<<16))
	for i := range rules {
		if isTemplate(rules[i].Resource) {
			continue
		}
		mem := rules[i].ruleMemory(procs)
		if !counted[rules[i].Resource] {
			counted[rules[i].Resource] = true
			mem += resourceBytes
		}
		if sum = satSum(sum, mem); over(m.budget, sum) {
			return sum, &RuleError{Index: i, Resource: rules[i].Resource, Field: "BucketCount",
				Reason: fmt.Sprintf("takes the rules past the memory budget of %s (WithMemoryBudget): "+
					"rules 0 to %d need %s", formatBytes(m.budget), i, formatBytes(sum))}
		}
	}
	return sum, nil
}

// nameBudget is what the budget leaves for the names of template resources once the rules
// and settings take used.
func (m *Manager) nameBudget(used int64) int64 {
	if m.budget <= 0 {
		return math.MaxInt64
	}
	return max(m.budget-used, 0)
}

// LoadDocument installs what d holds: its rules as LoadRules would, its resource settings as
// LoadResources would, or both. With both, both are validated before either is installed, and
// they are installed together; on any error nothing changes.
func (m *Manager) LoadDocument(d Document) error {
	return m.load(d.Rules, d.HasRules, d.Resources, d.HasResources)
}

// Handle returns a handle on the resource name. It may be taken before any rule for it is
// loaded.
func (m *Manager) Handle(name string) *Handle {
	return &Handle{m: m, name: name}
}
