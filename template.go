package breaker

import (
	"slices"
	"strings"
)

// A rule whose Resource ends in "*" is a template: each resource whose name starts with what
// comes before the "*", and that has no rule of its own, gets its own breakers from the
// template's rules when its first call arrives. The longest prefix wins; "*" alone matches
// every name. See WithMaxTemplateBreakers for the bound on how many a Manager holds.

// template is the rules of one Resource pattern ending in "*".
type template struct {
	prefix string
	rules  []*Rule // into the rule set, in rule order
	timed  bool    // a rule needs each call's response time
}

// isTemplate reports whether a rule's Resource or a settings key is a template's: it ends in "*".
func isTemplate(resource string) bool { return strings.HasSuffix(resource, "*") }

// buildTemplates gathers the template rules of rs.rules, by prefix.
func (rs *ruleSet) buildTemplates() {
	byPattern := map[string]*template{}
	var all []*template
	for i := range rs.rules {
		r := &rs.rules[i]
		if !isTemplate(r.Resource) {
			continue
		}
		t := byPattern[r.Resource]
		if t == nil {
			t = &template{prefix: strings.TrimSuffix(r.Resource, "*")}
			byPattern[r.Resource] = t
			all = append(all, t)
		}
		t.rules = append(t.rules, r)
		t.timed = t.timed || r.Strategy == SlowRequestRatio
	}
	rs.templates = newTemplates(all)
}

// match returns the template with the longest prefix of name, or nil.
func (rs *ruleSet) match(name string) *template {
	if i := rs.templates.index.longest(name); i >= 0 {
		return rs.templates.all[i]
	}
	return nil
}

// templates are the templates of a rule set, with their prefixes indexed.
type templates struct {
	all   []*template
	index prefixes
}

// newTemplates indexes all, which it sorts longest prefix first.
func newTemplates(all []*template) templates {
	slices.SortFunc(all, func(a, b *template) int { return len(b.prefix) - len(a.prefix) })
	keys := make([]string, len(all))
	for i, t := range all {
		keys[i] = t.prefix
	}
	return templates{all: all, index: newPrefixes(keys)}
}

// maxTemplates bounds the distinct patterns of template rules, and those of template settings.
const maxTemplates = 1000
