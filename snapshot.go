package breaker

import (
	"runtime"
	"slices"
	"strings"
	"time"
)

// Snapshot is one consistent read of a Manager, under one rule set: every resource it holds
// something for, with its breakers, the settings that apply to it and where they come from, its
// calls in flight and its override; the settings loaded; what the template rules made; and when
// it was read. The exporters and the status page show it, and only it.
type Snapshot struct {
	// At is when it was read, by the Manager's clock.
	At time.Time
	// Resources are the resources with rules of their own, with breakers that a template made,
	// with settings of their own or from a template setting, or with an override in force;
	// sorted by name. The names that templates made are bounded as the template breakers are
	// (WithMaxTemplateBreakers).
	Resources []ResourceStatus
	// Rules are the rules loaded (LoadRules), in the order given, template rules included.
	Rules []Rule
	// Settings are the settings loaded (LoadResources), by key, template settings included.
	Settings map[string]ResourceConfig
	// Templates is what the template rules made (TemplateStats).
	Templates TemplateStats
}

// ResourceStatus is what a Snapshot holds of one resource.
type ResourceStatus struct {
	// Name is the resource's name.
	Name string
	// Template is the Resource (ending in "*") of the template rules that made its breakers;
	// "" for a resource with rules of its own, or with none.
	Template string
	// Breakers are the Stats of its breakers, in rule order, each with its Rule.
	Breakers []Stats
	// Settings are the settings that apply to its calls: its own, or else those of the template
	// setting with the longest prefix of its name, with the Force of an operator's override in
	// force over them.
	Settings ResourceConfig
	// SettingsFrom is the key the settings come from: Name, a template key such as "GET *", or
	// "" when neither applies (the zero ResourceConfig, with an override's Force, if any).
	SettingsFrom string
	// Override is the operator's override in force, or nil.
	Override *OverrideInfo
	// InFlight is its calls admitted and not yet exited; they are counted for a resource with
	// settings, its own or a template's.
	InFlight int64
}

// Snapshot reads everything the Manager holds, at one rule set; see Snapshot. It is only a
// read: it reads the clock once, takes no lock that a call, a reload or an override takes, and
// changes nothing (an override whose end has come is left out, and the next change removes
// it). A read that meets a change being made reads again once it is made. It allocates in
// proportion to the resources it lists.
func (m *Manager) Snapshot() Snapshot {
	now := m.now()
	for {
		if snap, ok := m.snapshotAt(now); ok {
			return snap
		}
		runtime.Gosched() // a change was being made: read again once it is
	}
}

// snapshotAt is Snapshot at now; false when a change was being made while it read, which may
// have tuned breakers or rebound template entries for a rule set not yet published.
func (m *Manager) snapshotAt(now int64) (Snapshot, bool) {
	begun := m.changing.Load()
	if begun%2 == 1 {
		return Snapshot{}, false
	}
	rs := m.rules.Load()
	entries := map[string]*resource{} // what templates made, by name
	m.tmpl.entries.Range(func(_, v any) bool {
		if e := v.(*templateEntry); !e.dropped.Load() {
			entries[e.name] = e.res.Load()
		}
		return true
	})
	snap := Snapshot{At: m.timeAt(now), Rules: slices.Clone(rs.rules), Settings: rs.configs(), Templates: m.templateStats(rs)}
	for name, res := range rs.resources {
		if entries[name] == nil || len(res.breakers) > 0 { // else its entry, below, has its breakers too
			snap.Resources = append(snap.Resources, statusOf(rs, name, res, "", now))
		}
	}
	for name, res := range entries {
		if own := rs.resources[name]; own != nil && len(own.breakers) > 0 {
			continue // rules of its own: listed above
		}
		template := ""
		if t := rs.match(name); t != nil && len(res.breakers) > 0 {
			template = t.prefix + "*"
		}
		snap.Resources = append(snap.Resources, statusOf(rs, name, res, template, now))
	}
	slices.SortFunc(snap.Resources, func(a, b ResourceStatus) int { return strings.Compare(a.Name, b.Name) })
	return snap, m.changing.Load() == begun
}

// statusOf reads the resource name, whose breakers and settings under rs are res, at now.
func statusOf(rs *ruleSet, name string, res *resource, template string, now int64) ResourceStatus {
	st := ResourceStatus{Name: name, Template: template}
	for _, c := range res.breakers {
		st.Breakers = append(st.Breakers, c.statsAt(now))
	}
	if s := res.set.at(now); s != nil {
		st.Settings = s.ResourceConfig
		st.InFlight = s.inflight.Load()
	}
	switch {
	case rs.settings[name] != nil:
		st.SettingsFrom = name
	case res.set != nil && (res.set.template || res.set.plain != nil && res.set.plain.template):
		st.SettingsFrom = rs.matchSettings(name).prefix + "*"
	}
	if o := rs.overrides[name]; o != nil && !o.over(now) {
		info := o.OverrideInfo
		st.Override = &info
	}
	return st
}

// Resource returns what s holds of the resource name, or nil when it holds nothing of it.
func (s *Snapshot) Resource(name string) *ResourceStatus {
	i, ok := slices.BinarySearchFunc(s.Resources, name, func(r ResourceStatus, name string) int {
		return strings.Compare(r.Name, name)
	})
	if !ok {
		return nil
	}
	return &s.Resources[i]
}
