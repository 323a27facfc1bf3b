package breaker

import (
	"slices"
	"strings"
	"sync"

	"go.uber.org/atomic"
)

// A ResourceConfig whose key ends in "*" is a template setting: every resource whose name starts
// with what comes before the "*", and that has no settings of its own, takes its Timeout and
// its Force, and a MaxConcurrency counted for each name on its own. The longest prefix wins;
// "*" alone matches every name. So one key protects every host a gateway calls, as one template
// rule gives each of them breakers.
//
// A name that a template setting matches and that has rules of its own gets its settings when
// the rules or settings are loaded. Any other gets them on its first call, in the entry that
// template rules keep for it: those entries are bounded by WithMaxTemplateBreakers, where each
// name holding template settings counts as one more, and their memory is in the budget.

// settingTemplate is a ResourceConfig whose key ends in "*".
type settingTemplate struct {
	prefix string
	cfg    ResourceConfig
}

// splitSettings returns the settings of cfg keyed by a full name, and its template settings.
func splitSettings(cfg map[string]ResourceConfig) (map[string]ResourceConfig, settingTemplates) {
	named := make(map[string]ResourceConfig, len(cfg))
	var templates []*settingTemplate
	for name, c := range cfg {
		if isTemplate(name) {
			templates = append(templates, &settingTemplate{prefix: strings.TrimSuffix(name, "*"), cfg: c})
		} else {
			named[name] = c
		}
	}
	slices.SortFunc(templates, func(a, b *settingTemplate) int { return len(b.prefix) - len(a.prefix) })
	keys := make([]string, len(templates))
	for i, t := range templates {
		keys[i] = t.prefix
	}
	return named, settingTemplates{all: templates, index: newPrefixes(keys)}
}

// settingTemplates are the template settings of a rule set, with their prefixes indexed.
type settingTemplates struct {
	all   []*settingTemplate
	index prefixes
}

// matchSettings returns the template setting with the longest prefix of name, or nil.
func (rs *ruleSet) matchSettings(name string) *settingTemplate {
	if i := rs.settingTemplates.index.longest(name); i >= 0 {
		return rs.settingTemplates.all[i]
	}
	return nil
}

// templateSettingsOf returns the settings that the template settings of rs give name, with its
// count of calls in flight from counts, or nil when none matches.
func (rs *ruleSet) templateSettingsOf(name string, counts *flightCounts) *settings {
	t := rs.matchSettings(name)
	if t == nil {
		return nil
	}
	s := newNameSettings(name, t.cfg, counts.of(name))
	s.template = true
	return s
}

// flightCounts is a Manager's counts of calls in flight by resource name, for MaxConcurrency.
// A count belongs to the name, not to the settings that limit it, so that settings that are
// reloaded, removed and loaded again, or that move between a name's own and a template's, go on
// counting the calls still in flight. A count is let go once it is 0 and no settings use it.
// Counts are made and let go with the template breakers' mu held, so that a count a load is
// giving to new settings is not let go before they are published; mu is for InFlight.
type flightCounts struct {
	mu sync.Mutex
	m  map[string]*atomic.Int64
}

// of returns the count of name, made now if it has none.
func (f *flightCounts) of(name string) *atomic.Int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	if n := f.m[name]; n != nil {
		return n
	}
	if f.m == nil {
		f.m = map[string]*atomic.Int64{}
	}
	n := new(atomic.Int64)
	f.m[strings.Clone(name)] = n
	return n
}

// get returns the count of name, or nil.
func (f *flightCounts) get(name string) *atomic.Int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.m[name]
}

// prune lets go of the counts that are 0 and that inUse does not claim.
func (f *flightCounts) prune(inUse func(name string) bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for name, n := range f.m {
		if n.Load() == 0 && !inUse(name) {
			delete(f.m, name)
		}
	}
}
