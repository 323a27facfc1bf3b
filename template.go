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

// buildTemplates gathers the template rules of rs.rules, longest prefix first.
func (rs *ruleSet) buildTemplates() {
	byPattern := map[string]*template{}
	for i := range rs.rules {
		r := &rs.rules[i]
		if !isTemplate(r.Resource) {
			continue
		}
		t := byPattern[r.Resource]
		if t == nil {
			t = &template{prefix: strings.TrimSuffix(r.Resource, "*")}
			byPattern[r.Resource] = t
			rs.templates = append(rs.templates, t)
		}
		t.rules = append(t.rules, r)
		t.timed = t.timed || r.Strategy == SlowRequestRatio
	}
	slices.SortFunc(rs.templates, func(a, b *template) int { return len(b.prefix) - len(a.prefix) })
}

// match returns the template with the longest prefix of name, or nil.
func (rs *ruleSet) match(name string) *template {
	for _, t := range rs.templates {
		if strings.HasPrefix(name, t.prefix) {
			return t
		}
	}
	return nil
}

// maxTemplates bounds the distinct patterns of template rules, and those of template settings:
// a call to a name without rules of its own is matched against each of them, longest first.
const maxTemplates = 1000
