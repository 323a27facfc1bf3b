package breakerotel

import (
	"strings"

	"github.com/halfopen/breaker"
)

// collection is what the Instruments read of a Manager at one collection besides its
// breakers: the resources with rules and those templates made entries for, the settings
// loaded, the template settings among them, and the operators' overrides in force.
type collection struct {
	ruled     []string                          // the resources with rules of their own, in rule order
	templated []string                          // Manager.TemplateResources, sorted
	loaded    map[string]breaker.ResourceConfig // Manager.Resources: template settings keyed "prefix*"
	overrides []breaker.OverrideInfo            // Manager.Overrides, by resource name
	templates bool                              // a template setting is among the settings loaded
	m         *breaker.Manager
}

// read reads what a collection reports of m.
func read(m *breaker.Manager) *collection {
	v := &collection{templated: m.TemplateResources(), loaded: m.Resources(), overrides: m.Overrides(), m: m}
	seen := make(map[string]bool)
	for _, r := range m.Rules() {
		if !seen[r.Resource] {
			seen[r.Resource] = true
			v.ruled = append(v.ruled, r.Resource)
		}
	}
	for key := range v.loaded {
		v.templates = v.templates || isTemplate(key)
	}
	return v
}

// isTemplate reports whether a resource name or a settings key is a template's.
func isTemplate(key string) bool { return strings.HasSuffix(key, "*") }

// force returns the Force of the resource name now: its override's, else that of its own
// settings, else that of the template setting it takes.
func (v *collection) force(name string) breaker.Force { return v.m.SettingsOf(name).Force }
