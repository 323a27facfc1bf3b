package breaker

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"go.uber.org/atomic"
)

// TemplateStats is what a Manager holds of the breakers its template rules made.
type TemplateStats struct {
	// Patterns is how many template patterns the loaded rules have: distinct Resources
	// ending in "*". While it is 0, the Manager holds no template breakers.
	Patterns int
	// Resources is how many resources have breakers or settings from a template, Breakers how
	// many breakers that is, and Settings how many of them have settings from a template setting,
	// each with its own count of calls in flight.
	Resources, Breakers, Settings int
	// Limit is the bound on Breakers + Settings (WithMaxTemplateBreakers).
	Limit int
	// Dropped counts the resources whose template breakers were dropped to stay within Limit.
	Dropped uint64
}

// templateStats is TemplateStats for the rule set rs.
func (m *Manager) templateStats(rs *ruleSet) TemplateStats {
	return TemplateStats{Patterns: len(rs.templates.all), Resources: int(m.tmpl.names.Load()),
		Breakers: int(m.tmpl.count.Load()), Settings: int(m.tmpl.settings.Load()), Limit: m.tmpl.limit,
		Dropped: m.tmpl.dropped.Load()}
}

// templateBreakers is a Manager's breakers made from template rules, and settings made from
// template settings, by resource name. Lookups take no lock and write nothing, so parallel
// callers of one name share its entry's cache lines read-only; creating, dropping and
// rebinding entries take mu.
type templateBreakers struct {
	mu       sync.Mutex
	limit    int
	count    atomic.Int64 // breakers held; written under mu
	settings atomic.Int64 // entries with settings from a template setting; written under mu
	names    atomic.Int64 // resources held; written under mu
	dropped  atomic.Uint64
	made     uint64   // entries made so far; written under mu
	bytes    int64    // the length of the names held; written under mu
	maxBytes int64    // what the memory budget leaves for those names; written under mu
	entries  sync.Map // name to *templateEntry; stored and deleted under mu
}

func (d *templateBreakers) init() {
	d.limit = defaultMaxTemplateBreakers
	d.maxBytes = math.MaxInt64
}

// find returns the entry of name, or nil.
func (d *templateBreakers) find(name string) *templateEntry {
	if e, ok := d.entries.Load(name); ok {
		return e.(*templateEntry)
	}
	return nil
}

// each calls f for every entry. It requires mu held, which keeps the entries from changing.
func (d *templateBreakers) each(f func(*templateEntry)) {
	d.entries.Range(func(_, e any) bool {
		f(e.(*templateEntry))
		return true
	})
}

// lookup returns the breakers and settings of name under rs, which has template rules or
// settings: its own, or else those templates made for it, made now if this is its first call.
// own is rs's entry for name, which may hold only settings.
func (m *Manager) lookup(rs *ruleSet, name string, own *resource) *resource {
	if !rs.templated(name, own) {
		return own // and no entry: a reload drops those of names no template matches
	}
	if e := m.tmpl.find(name); e != nil {
		return e.res.Load()
	}
	if len(name) > m.maxName {
		return refused(name)
	}
	res, changes := m.makeTemplateBreakers(name)
	for _, c := range changes {
		m.notify(c)
	}
	return res
}

// refused is the resource of a call to a name the Manager will not keep: ForceOpen, with an
// error whose Cause is ErrNameTooLong.
func refused(name string) *resource {
	s := &settings{ResourceConfig: ResourceConfig{Force: ForceOpen},
		forcedOpen: &BlockError{Resource: name, Cause: ErrNameTooLong}}
	return &resource{set: s}
}

// templated reports whether name, whose entry in rs is own, takes breakers from a template
// rule or settings from a template setting: it has no rules of its own, and a template rule
// matches it, or a template setting does and it has no settings of its own either.
func (rs *ruleSet) templated(name string, own *resource) bool {
	if own != nil && own.breakers != nil {
		return false
	}
	return rs.match(name) != nil || own == nil && rs.matchSettings(name) != nil
}

// makeTemplateBreakers makes the breakers and settings of name from its templates under the
// rules and settings loaded now, unless another call made them first or a reload gave name
// rules of its own. It returns them, and the transitions to report of the breakers it dropped
// to make room. It keeps a copy of name: the caller's string may be part of a much longer one,
// which its length would not count.
func (m *Manager) makeTemplateBreakers(name string) (*resource, []StateChange) {
	m.tmpl.mu.Lock()
	defer m.tmpl.mu.Unlock()
	rs := m.rules.Load()
	own := rs.resources[name]
	if !rs.templated(name, own) {
		return own, nil
	}
	now := m.now()
	if e := m.tmpl.find(name); e != nil {
		return e.res.Load(), nil
	}
	t, fromTemplate := rs.match(name), own == nil && rs.matchSettings(name) != nil
	units := boolInt(fromTemplate)
	if t != nil {
		units += len(t.rules)
	}
	changes := m.evict(units, int64(len(name)), now)
	if m.tmpl.bytes+int64(len(name)) > m.tmpl.maxBytes {
		return refused(name), changes // the name alone is past what the budget leaves for names
	}
	m.tmpl.made++
	name = strings.Clone(name)
	e := &templateEntry{name: name, made: m.tmpl.made}
	res := m.templateResource(rs, e, t, own, nil, nil)
	e.res.Store(res)
	e.used.Store(now >> 20)
	m.tmpl.entries.Store(name, e)
	m.tmpl.count.Add(int64(len(res.breakers)))
	m.tmpl.settings.Add(int64(res.templateSettings()))
	m.tmpl.names.Inc()
	m.tmpl.bytes += int64(len(name))
	return res, changes
}

// templateResource builds the resource of the entry e under rs: the breakers of the template
// rules t (nil: none), each either kept from old at its index in keep (see pairRules) or new,
// and the settings of own (rs's entry for the name) or else of the template setting that
// matches it. It requires mu held.
func (m *Manager) templateResource(rs *ruleSet, e *templateEntry, t *template, own, old *resource, keep []int) *resource {
	res := &resource{owner: e}
	if own != nil {
		res.set = own.set
	} else {
		res.set = rs.templateSettingsOf(e.name, &m.counts)
	}
	if t == nil {
		return res
	}
	res.timed = t.timed
	for j, r := range t.rules {
		var c *circuit
		if keep != nil && keep[j] >= 0 {
			c = old.breakers[keep[j]]
			c.reload(r, rs.procs)
		} else {
			c = m.newBreaker(r, e.name, rs.procs)
		}
		res.breakers = append(res.breakers, c)
	}
	res.set.force(res.breakers)
	return res
}

// templateSettings is 1 when res has settings from a template setting, with a count of calls in
// flight of its own, and 0 otherwise: what they count towards WithMaxTemplateBreakers.
func (res *resource) templateSettings() int { return boolInt(res.set != nil && res.set.template) }

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// evict makes room for n more units and a name of nameLen bytes (templateBreakers.makeRoom),
// and returns the transitions to report. Where there was no room, every count that is 0 and
// unused goes too, not only those of the names dropped now: a name dropped while its calls were
// in flight keeps its count until they exit, and only a later drop finds it 0. It requires mu
// held.
func (m *Manager) evict(n int, nameLen int64, now int64) []StateChange {
	changes, full := m.tmpl.makeRoom(n, nameLen, now)
	if full {
		m.releaseCounts(m.rules.Load())
	}
	return changes
}

// releaseCounts lets go of the counts of calls in flight of names that are 0 and that neither
// rs nor an entry uses. It requires mu held, and rs published or about to be.
func (m *Manager) releaseCounts(rs *ruleSet) {
	inUse := func(name string) bool {
		if res := rs.resources[name]; res != nil && res.set != nil {
			return true
		}
		e := m.tmpl.find(name)
		return e != nil && e.res.Load().set != nil
	}
	m.counts.prune(inUse)
}

// drop removes e and retires its breakers, returning the transitions to report for those that
// were not CLOSED. It requires mu held.
func (d *templateBreakers) drop(e *templateEntry, reason Reason, now int64) []StateChange {
	d.entries.Delete(e.name)
	e.dropped.Store(true)
	res := e.res.Load()
	d.count.Sub(int64(len(res.breakers)))
	d.settings.Sub(int64(res.templateSettings()))
	d.names.Dec()
	d.bytes -= int64(len(e.name))
	var changes []StateChange
	for _, c := range res.breakers {
		if change, report := c.retire(now, reason); report {
			changes = append(changes, change)
		}
	}
	return changes
}

// A resourceOf builds the resource of the entry e under the rule set rs: the breakers of the
// template rules t (nil: none), each kept from old at its index in keep (see pairRules) or new,
// and the settings of own (rs's entry for the name) or else of the template setting that matches
// it (Manager.templateResource).
type resourceOf func(rs *ruleSet, e *templateEntry, t *template, own, old *resource, keep []int) *resource

// rebind rebinds the template entries to next, a rule set about to be published: an entry whose
// resource now has rules of its own, or that neither a template rule nor (without settings of its
// own) a template setting matches, is dropped (Reason RuleChanged); so is one none of whose
// breakers its template keeps, unless it holds template settings. The others keep each breaker
// whose template rule keeps its window's shape (see pairRules), with next's settings, as build
// makes their resource; a breaker whose rule went or changed shape is retired (RuleChanged), and
// a new rule gets a new breaker. It returns the transitions to report, in the order of the
// names. It requires mu held.
func (d *templateBreakers) rebind(next *ruleSet, now int64, build resourceOf) []StateChange {
	// Decide for every entry first, then act in the order of the names, so that the
	// transitions are numbered in the order they are reported.
	type rebound struct {
		e      *templateEntry
		res    *resource  // nil: the entry is dropped
		retire []*circuit // its breakers not kept
	}
	var all []rebound
	// The entries of one old template that one new template matches share a plan: keyed by
	// both, since a narrower new template can take some of an old template's entries.
	type planKey struct {
		first *Rule
		to    *template
	}
	plans := map[planKey][]int{}
	d.each(func(e *templateEntry) {
		own := next.resources[e.name]
		if !next.templated(e.name, own) {
			all = append(all, rebound{e: e})
			return
		}
		old, t := e.res.Load(), next.match(e.name)
		var keep []int
		if t != nil && len(old.breakers) > 0 {
			key := planKey{old.breakers[0].tune.Load().rule, t}
			var planned bool
			if keep, planned = plans[key]; !planned {
				keep = pairRules(old.breakers, t.rules)
				plans[key] = keep
			}
		}
		templateSet := own == nil && next.matchSettings(e.name) != nil
		if len(old.breakers) > 0 && !slices.ContainsFunc(keep, func(k int) bool { return k >= 0 }) && !templateSet {
			all = append(all, rebound{e: e}) // the template changed whole: its next call makes new breakers
			return
		}
		r := rebound{e: e, res: build(next, e, t, own, old, keep)}
		kept := make([]bool, len(old.breakers))
		for _, k := range keep {
			if k >= 0 {
				kept[k] = true
			}
		}
		for k, c := range old.breakers {
			if !kept[k] {
				r.retire = append(r.retire, c)
			}
		}
		all = append(all, r)
	})
	slices.SortFunc(all, func(a, b rebound) int { return cmp.Compare(a.e.name, b.e.name) })
	var changes []StateChange
	for _, r := range all {
		if r.res == nil {
			changes = append(changes, d.drop(r.e, RuleChanged, now)...)
			continue
		}
		for _, c := range r.retire {
			if change, report := c.retire(now, RuleChanged); report {
				changes = append(changes, change)
			}
		}
		old := r.e.res.Load()
		d.count.Add(int64(len(r.res.breakers) - len(old.breakers)))
		d.settings.Add(int64(r.res.templateSettings() - old.templateSettings()))
		r.e.res.Store(r.res)
	}
	return changes
}

// checkTemplates refuses a template with more rules than the Manager may hold template breakers
// (no resource could ever get its breakers), and more than maxTemplates patterns.
func (m *Manager) checkTemplates(rules []Rule) error {
	perTemplate := map[string]int{}
	for i, r := range rules {
		if !isTemplate(r.Resource) {
			continue
		}
		if _, seen := perTemplate[r.Resource]; !seen && len(perTemplate) == maxTemplates {
			return &RuleError{Index: i, Resource: r.Resource, Field: "Resource",
				Reason: fmt.Sprintf("is one template too many: at most %d patterns, which every call to a name "+
					"without rules is matched against", maxTemplates)}
		}
		if perTemplate[r.Resource]++; perTemplate[r.Resource] > m.tmpl.limit {
			return &RuleError{Index: i, Resource: r.Resource, Field: "Resource",
				Reason: fmt.Sprintf("is a template with %d rules, more than the %d template breakers this "+
					"Manager may hold (WithMaxTemplateBreakers)", perTemplate[r.Resource], m.tmpl.limit)}
		}
	}
	return nil
}
