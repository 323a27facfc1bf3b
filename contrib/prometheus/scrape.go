package breakerprom

import (
	"cmp"
	"maps"
	"slices"
	"strings"

	"github.com/halfopen/breaker"
)

// scrape is what one scrape reads of a Manager besides its breakers: the resources with rules
// and those templates made entries for, the settings loaded, the template settings among them,
// and the operators' overrides in force.
type scrape struct {
	ruled     []string                          // the resources with rules of their own, in rule order
	templated []string                          // Manager.TemplateResources, sorted
	loaded    map[string]breaker.ResourceConfig // Manager.Resources: template settings keyed "prefix*"
	templates []string                          // the keys of the template settings, longest first
	overrides []breaker.OverrideInfo            // Manager.Overrides, by resource name
	forced    map[string]breaker.Force          // the Force of each override, by resource name
}

// read reads what a scrape reports of m.
func read(m *breaker.Manager) *scrape {
	v := &scrape{templated: m.TemplateResources(), loaded: m.Resources(), overrides: m.Overrides()}
	seen := make(map[string]bool)
	for _, r := range m.Rules() {
		if !seen[r.Resource] {
			seen[r.Resource] = true
			v.ruled = append(v.ruled, r.Resource)
		}
	}
	for key := range v.loaded {
		if isTemplate(key) {
			v.templates = append(v.templates, key)
		}
	}
	slices.SortFunc(v.templates, func(a, b string) int { return cmp.Or(len(b)-len(a), strings.Compare(a, b)) })
	v.forced = make(map[string]breaker.Force, len(v.overrides))
	for _, o := range v.overrides {
		v.forced[o.Resource] = o.Force
	}
	return v
}

// isTemplate reports whether a resource name or a settings key is a template's.
func isTemplate(key string) bool { return strings.HasSuffix(key, "*") }

// templateOf returns the key of the template setting whose settings the resource name takes:
// the longest prefix of name, if name has no settings of its own.
func (v *scrape) templateOf(name string) (key string, ok bool) {
	if _, own := v.loaded[name]; own && !isTemplate(name) {
		return "", false
	}
	for _, key := range v.templates {
		if strings.HasPrefix(name, strings.TrimSuffix(key, "*")) {
			return key, true
		}
	}
	return "", false
}

// force returns the Force of the resource name now: its override's, else that of its own
// settings, else that of the template setting it takes.
func (v *scrape) force(name string) breaker.Force {
	if f, ok := v.forced[name]; ok {
		return f
	}
	if cfg, ok := v.loaded[name]; ok && !isTemplate(name) {
		return cfg.Force
	}
	if key, ok := v.templateOf(name); ok {
		return v.loaded[key].Force
	}
	return breaker.Auto
}

// keys returns the keys of the settings loaded, sorted.
func (v *scrape) keys() []string { return slices.Sorted(maps.Keys(v.loaded)) }

// named returns, sorted and once each, the resources that may hold settings from a template
// setting: those with rules of their own, those templates made entries for, and those
// overridden (an override makes an entry for a name that has neither).
func (v *scrape) named() []string {
	names := slices.Concat(v.templated, v.ruled)
	for _, o := range v.overrides {
		names = append(names, o.Resource)
	}
	slices.Sort(names)
	return slices.DeleteFunc(slices.Compact(names), isTemplate)
}
