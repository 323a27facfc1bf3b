package breakerprom

import (
	"cmp"
	"maps"
	"slices"
	"strings"

	"github.com/halfopen/breaker"
)

// settingsView is what one scrape reads of a Manager's settings: those loaded, the template
// settings among them, and the operators' overrides in force.
type settingsView struct {
	loaded    map[string]breaker.ResourceConfig // Manager.Resources: template settings keyed "prefix*"
	templates []string                          // the keys of the template settings, longest first
	overrides []breaker.OverrideInfo            // Manager.Overrides, by resource name
	forced    map[string]breaker.Force          // the Force of each override, by resource name
}

// readSettings reads the settings and overrides of m.
func readSettings(m *breaker.Manager) *settingsView {
	v := &settingsView{loaded: m.Resources(), overrides: m.Overrides()}
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

// isTemplate reports whether a settings key is a template setting's.
func isTemplate(key string) bool { return strings.HasSuffix(key, "*") }

// templateOf returns the key of the template setting whose settings the resource name takes:
// the longest prefix of name, if name has no settings of its own.
func (v *settingsView) templateOf(name string) (key string, ok bool) {
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
func (v *settingsView) force(name string) breaker.Force {
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
func (v *settingsView) keys() []string { return slices.Sorted(maps.Keys(v.loaded)) }
