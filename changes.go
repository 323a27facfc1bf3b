package breaker

import (
	"fmt"
	"maps"
	"math"
	"runtime"
	"slices"
	"strings"
	"time"
)

// This file is where the Manager's changes are made: every change (LoadRules, LoadResources,
// LoadDocument, Override, EndOverride) is described as a change, built into the next rule set by
// one function, next, from what it replaces, and published by one, apply, which holds the only
// store of a rule set.

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
// RampUp, Pace, ID): an OPEN breaker stays OPEN until its retry time, a probe in flight stays
// the probe, the new values apply from the next call, and observers hear nothing. Reset closes a breaker at once. The breakers of
// other changed rules, and of removed ones, are dropped; observers hear of each one that was
// not CLOSED as a change to CLOSED with Reason RuleChanged. Calls in flight exit without
// error; their outcomes no longer count for dropped breakers. Each rule of a template is
// judged the same way, for the breakers it made for every resource.
func (m *Manager) LoadRules(rules []Rule) error {
	_, err := m.apply(change{doc: Document{Rules: rules, HasRules: true}})
	return err
}

// LoadDocument installs what d holds: its rules as LoadRules would, its resource settings as
// LoadResources would, or both. With both, both are validated before either is installed, and
// they are installed together; on any error nothing changes.
func (m *Manager) LoadDocument(d Document) error {
	_, err := m.apply(change{doc: d})
	return err
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

// A change is one change of what a Manager enforces: the rules and resource settings it
// replaces (its Document, where that has them), an operator's override it puts in force, or
// the resource whose override it ends. Every change also removes the overrides whose end has
// come.
type change struct {
	doc      Document
	override *override     // put in force for lasts from the change on, replacing any of its resource's; nil: none
	lasts    time.Duration // how long override lasts: its times are set when the change is made
	end      string        // the resource whose override the change ends; "": none
}

// apply makes the change c, the one place that takes the load lock and publishes a rule set.
// Under the lock it takes the overrides whose end has come out of the rule set in force, builds
// the next rule set (next), publishes it, rebinding the template breakers to it, and retires the
// breakers it dropped. Every StateChange of the change is made there, so that Seq numbers them
// in the order the change made them and changes in the order they were published: the
// overrides that ended, the template breakers the new rule set dropped, the override's own start
// or end, the breakers it retired. With no lock held it then logs them and tells the observers,
// in that order. It reports the override that c ended, if one was in force; an error changes
// nothing.
func (m *Manager) apply(c change) (ended *override, err error) {
	m.loadMu.Lock()
	m.tmpl.mu.Lock() // the counts of calls in flight are given out under it
	m.changing.Inc() // a read from now on may meet breakers the change has tuned, and entries it rebound
	cur, now := m.rules.Load(), m.now()
	old, expired := m.withoutExpired(cur, now)
	var heard []StateChange
	for _, o := range expired {
		heard = append(heard, m.overrideChanges(old, o.Resource, "expired", now)...)
	}
	next, dropped, ended, err := m.next(old, c, now)
	if err == nil && next != cur {
		heard = append(heard, m.publish(next, now)...) // the template breakers it dropped
		switch {
		case c.override != nil:
			heard = append(heard, m.overrideChanges(next, c.override.Resource, c.override.Note, now)...)
		case ended != nil:
			heard = append(heard, m.overrideChanges(next, ended.Resource, "ended", now)...)
		}
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
		return nil, err
	}
	for _, o := range expired {
		m.logger.Info("breaker: override over", "resource", o.Resource, "force", o.Force.String(), "why", "expired")
	}
	switch o := c.override; {
	case o != nil:
		m.logger.Info("breaker: override", "resource", o.Resource, "force", o.Force.String(), "until", o.Until,
			"note", o.Note)
	case ended != nil:
		m.logger.Info("breaker: override over", "resource", ended.Resource, "force", ended.Force.String(), "why", "ended")
	}
	for _, sc := range heard {
		m.notify(sc)
	}
	return ended, nil
}

// next builds the rule set that follows old, the rule set in force without the overrides whose
// end has come, for the change c at now: it validates what c replaces (the rules, their memory
// against the budget, the settings, the count of overrides), keeps old's rules, settings and
// overrides where c leaves them, and lists the breakers of old that the next set no longer has,
// to retire once it is published. It returns old itself when c changes nothing, and the
// override c ended, if one was in force. It requires loadMu and the template breakers' mu held.
func (m *Manager) next(old *ruleSet, c change, now int64) (next *ruleSet, dropped []*circuit, ended *override, err error) {
	rules, cfg, procs := old.rules, map[string]ResourceConfig(nil), old.procs
	if c.doc.HasRules {
		if err := m.checkRules(c.doc.Rules); err != nil {
			return nil, nil, nil, err
		}
		rules, procs = c.doc.Rules, runtime.GOMAXPROCS(0) // a change of settings keeps the breakers striped as counted
	}
	if c.doc.HasResources {
		if err := m.checkResources(c.doc.Resources); err != nil {
			return nil, nil, nil, err
		}
		cfg = c.doc.Resources
	}
	overrides := old.overrides
	switch o := c.override; {
	case o != nil:
		if _, replaced := old.overrides[o.Resource]; !replaced && len(old.overrides) >= maxOverrides {
			return nil, nil, nil, invalidOverride(o.Resource, "Resource",
				fmt.Sprintf("would be one override too many: at most %d resources may be overridden at once", maxOverrides))
		}
		o.from, o.until = now, after(now, int64(c.lasts))
		o.At, o.Until = m.timeAt(o.from), m.timeAt(o.until)
		overrides = maps.Clone(old.overrides)
		if overrides == nil {
			overrides = map[string]*override{}
		}
		overrides[o.Resource] = o
	case c.end != "":
		if ended = old.overrides[c.end]; ended == nil {
			return old, nil, nil, nil // none in force: one that had expired is told as such
		}
		overrides = maps.Clone(old.overrides)
		delete(overrides, c.end)
	}
	set := settingsSet{named: old.settings, templates: old.settingTemplates, overrides: overrides}
	nameBudget := old.nameBudget
	if c.doc.HasRules || c.doc.HasResources {
		kept := cfg
		if kept == nil {
			kept = old.configs()
		}
		used, err := m.checkBudget(rules, kept, procs)
		if err != nil {
			return nil, nil, nil, err
		}
		nameBudget = m.nameBudget(used)
	}
	if c.doc.HasResources {
		named, templates := splitSettings(cfg)
		set.named, set.templates = newSettings(named, &m.counts), templates
	}
	if c.doc.HasRules {
		next, dropped = m.installRules(old, rules, set, nameBudget, procs)
	} else {
		next = m.withSettings(old, set)
		next.nameBudget = nameBudget
	}
	return next, dropped, ended, nil
}

// publish installs next, the rule set a change built: it is indexed, the template entries are
// rebound to it (which may drop some), it is stored, and the template entries made room for
// within the bounds it leaves. Every rule set a change builds is indexed here, whichever way it
// was built. It returns the transitions to report of the breakers that went. It requires loadMu
// and the template breakers' mu held.
func (m *Manager) publish(next *ruleSet, now int64) []StateChange {
	next.index = newResourceIndex(next.resources)
	next.hasTemplates = len(next.templates.all) > 0 || len(next.settingTemplates.all) > 0
	heard := m.tmpl.rebind(next, now, m.templateResource)
	m.rules.Store(next)
	m.tmpl.maxBytes = next.nameBudget
	m.releaseCounts(next)
	return append(heard, m.evict(0, 0, now)...)
}

// startRules publishes the empty rule set of a new Manager, its breakers to be striped for the
// processors there are now.
func (m *Manager) startRules() { m.rules.Store(&ruleSet{procs: runtime.GOMAXPROCS(0)}) }

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

// withoutExpired returns rs without the overrides whose end has come at now, and those, by
// resource name; rs itself when there are none. It requires loadMu and the template breakers' mu.
func (m *Manager) withoutExpired(rs *ruleSet, now int64) (*ruleSet, []*override) {
	var expired []*override
	for _, o := range rs.overrides {
		if o.over(now) {
			expired = append(expired, o)
		}
	}
	if expired == nil {
		return rs, nil
	}
	slices.SortFunc(expired, func(a, b *override) int { return strings.Compare(a.Resource, b.Resource) })
	live := maps.Clone(rs.overrides)
	for _, o := range expired {
		delete(live, o.Resource)
	}
	return m.withOverrides(rs, live), expired
}

// withOverrides returns a copy of rs, with the same rules, breakers and settings, and the
// overrides given. It requires loadMu and the template breakers' mu held.
func (m *Manager) withOverrides(rs *ruleSet, overrides map[string]*override) *ruleSet {
	return m.withSettings(rs, settingsSet{named: rs.settings, templates: rs.settingTemplates, overrides: overrides})
}

// applyOverrides gives each overridden resource of rs settings with the override's Force, on top
// of those it has (its own, a template setting's, or none), adding an entry for a resource
// that has neither rules nor settings. It requires the template breakers' mu held, and rs not
// yet published.
func (m *Manager) applyOverrides(rs *ruleSet, overrides map[string]*override) {
	rs.overrides = overrides
	for name, o := range overrides {
		res := rs.resources[name]
		if res == nil {
			res = &resource{set: rs.templateSettingsOf(name, &m.counts)}
			rs.resources[name] = res
		}
		var cfg ResourceConfig
		if res.set != nil {
			cfg = res.set.ResourceConfig
		}
		cfg.Force = o.Force
		s := newNameSettings(name, cfg, m.counts.of(name))
		s.override, s.plain = o, res.set
		res.set = s
	}
}

// checkBudget returns the bytes that the rules and resource settings cfg take, their breakers'
// counters striped for procs, counting every template's breakers at the bound, or the error
// for the rule or settings that take the Manager past its budget. Every sum saturates, so no
// bound can overflow it.
func (m *Manager) checkBudget(rules []Rule, cfg map[string]ResourceConfig, procs int) (int64, error) {
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
