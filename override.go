package breaker

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Bounds of an operator's override.
const (
	// MaxOverrideDuration is the longest an override may last: one that outlived the incident
	// it was for would go on forcing a resource no one is watching.
	MaxOverrideDuration = 24 * time.Hour
	// MaxOverrideNote is the longest note an override may carry, in bytes.
	MaxOverrideNote = 256
	// MaxOverrides is how many resources may be overridden at once.
	MaxOverrides = 1000
)

// OverrideInfo is an operator's force of one resource for a while: ForceOpen before a known event,
// ForceClosed during a false alarm, or Auto to lift the Force of its settings. It wins over
// the resource's settings' Force (its own or a template setting's) until Until, and survives
// reloads of rules and settings until then; the settings' Timeout and MaxConcurrency still
// apply. It ends by itself: the first call to the resource at or after Until finds it over.
type OverrideInfo struct {
	Resource string
	Force    Force
	// At is when it was set and Until when it ends, by the Manager's clock.
	At, Until time.Time
	// Note is the operator's, such as a ticket or the reason; observers hear it.
	Note string
}

// override is an OverrideInfo as installed, in ticks.
type override struct {
	OverrideInfo
	from, until int64
}

// over reports whether o has ended at now by the Manager's clock: its end has come, or the
// clock stepped back further than o lasts (or the ticks wrapped), which would hold it in force
// for longer than the step. A shorter step back never ends it early: it lasts until the clock
// reaches its end again, at most the step longer.
func (o *override) over(now int64) bool {
	ahead, lasts := o.until-now, o.until-o.from
	return ahead <= 0 || ahead-lasts > lasts
}

// Override forces resource to force (ForceOpen, ForceClosed or Auto) for d, with the operator's
// note, replacing any override of it, and returns it as installed. Observers hear Reason
// Override from each breaker of the resource (one StateChange with a zero Rule for a resource
// without rules), with the note; the Manager's logger logs it. A d that is not positive or is
// longer than MaxOverrideDuration, an unknown force, a note longer than MaxOverrideNote or not
// UTF-8, a name ending in "*" or one the Manager would not keep, or one more than MaxOverrides
// resources overridden at once is an *OverrideError (wrapping ErrInvalidOverride), and nothing
// changes. Overrides whose end has come are removed then, and observers hear them expire.
func (m *Manager) Override(resource string, force Force, d time.Duration, note string) (OverrideInfo, error) {
	if err := m.checkOverride(resource, force, d, note); err != nil {
		return OverrideInfo{}, err
	}
	m.loadMu.Lock()
	m.tmpl.mu.Lock()
	old, now := m.rules.Load(), m.now()
	overrides := make(map[string]*override, len(old.overrides)+1)
	var expired []string
	for name, o := range old.overrides {
		if o.over(now) {
			expired = append(expired, name)
		} else {
			overrides[name] = o
		}
	}
	if _, replaced := overrides[resource]; !replaced && len(overrides) >= MaxOverrides {
		m.tmpl.mu.Unlock()
		m.loadMu.Unlock()
		return OverrideInfo{}, &OverrideError{Resource: resource, Field: "Resource",
			Reason: fmt.Sprintf("would be one override too many: at most %d resources may be overridden at once", MaxOverrides)}
	}
	o := &override{from: now, until: after(now, int64(d))}
	o.OverrideInfo = OverrideInfo{Resource: strings.Clone(resource), Force: force, At: m.timeAt(now),
		Until: m.timeAt(o.until), Note: strings.Clone(note)}
	overrides[o.Resource] = o
	changes := m.publishOverrides(old, overrides, now)
	m.tmpl.mu.Unlock()
	m.loadMu.Unlock()
	slices.Sort(expired)
	for _, name := range expired {
		if name != resource {
			m.overrideOver(name, old.overrides[name].Force, "expired", now)
		}
	}
	m.logger.Info("breaker: override", "resource", resource, "force", force.String(), "until", o.Until,
		"note", note)
	m.tellOverride(resource, note, now)
	for _, c := range changes {
		m.notify(c)
	}
	return o.OverrideInfo, nil
}

// EndOverride ends the override of resource now, and reports whether one was in force.
// Observers hear Reason Override with the note "ended" (or "expired", for one whose end had come
// before); the Manager's logger logs it.
func (m *Manager) EndOverride(resource string) bool {
	return m.endOverride(resource, nil, "ended")
}

// Overrides returns the overrides in force, by resource name. One whose end has come is not
// listed, though the first call to its resource is what removes it.
func (m *Manager) Overrides() []OverrideInfo {
	rs, now := m.rules.Load(), m.now()
	out := make([]OverrideInfo, 0, len(rs.overrides))
	for _, o := range rs.overrides {
		if !o.over(now) {
			out = append(out, o.OverrideInfo)
		}
	}
	slices.SortFunc(out, func(a, b OverrideInfo) int { return strings.Compare(a.Resource, b.Resource) })
	return out
}

// checkOverride validates an override before anything is locked.
func (m *Manager) checkOverride(resource string, force Force, d time.Duration, note string) error {
	invalid := func(field, reason string) error {
		return &OverrideError{Resource: resource, Field: field, Reason: reason}
	}
	switch {
	case resource == "":
		return invalid("Resource", "is required: an override needs the resource's name")
	case isTemplate(resource):
		return invalid("Resource", "ends in \"*\": an override forces one resource, named in full, not the "+
			"names of a template")
	case force > ForceClosed:
		return invalid("Force", fmt.Sprintf("must be Auto, ForceOpen or ForceClosed, got %d", force))
	case d <= 0:
		return invalid("Duration", fmt.Sprintf("must be positive, got %v: an override ends by itself", d))
	case d > MaxOverrideDuration:
		return invalid("Duration", fmt.Sprintf("must be at most %v, got %v", MaxOverrideDuration, d))
	case len(note) > MaxOverrideNote:
		return invalid("Note", fmt.Sprintf("is %d bytes long, more than %d", len(note), MaxOverrideNote))
	case !utf8.ValidString(note):
		return invalid("Note", "is not UTF-8")
	}
	if len(resource) > m.maxName {
		return invalid("Resource", fmt.Sprintf("is %d bytes long, more than the %d a Manager keeps (WithMaxNameLength)",
			len(resource), m.maxName))
	}
	return nil
}

// endOverride removes the override of resource, if it is o (nil: whichever there is), and tells
// the observers with note, or "expired" for one whose end had come. It reports whether it
// removed one that was still in force.
func (m *Manager) endOverride(resource string, o *override, note string) bool {
	m.loadMu.Lock()
	m.tmpl.mu.Lock()
	old := m.rules.Load()
	cur := old.overrides[resource]
	if cur == nil || o != nil && cur != o {
		m.tmpl.mu.Unlock()
		m.loadMu.Unlock()
		return false // another call ended it first, or an operator replaced it
	}
	overrides := maps.Clone(old.overrides)
	delete(overrides, resource)
	now := m.now()
	inForce := !cur.over(now)
	if !inForce {
		note = "expired"
	}
	changes := m.publishOverrides(old, overrides, now)
	m.tmpl.mu.Unlock()
	m.loadMu.Unlock()
	m.overrideOver(resource, cur.Force, note, now)
	for _, c := range changes {
		m.notify(c)
	}
	return inForce
}

// overrideOver logs and tells the observers that the override of resource, which forced it to
// force, is over at now, for why ("ended" or "expired").
func (m *Manager) overrideOver(resource string, force Force, why string, now int64) {
	m.logger.Info("breaker: override over", "resource", resource, "force", force.String(), "why", why)
	m.tellOverride(resource, why, now)
}

// expire is admit's step for a resource whose override has ended at now: it removes the
// override and returns the resource's breakers and settings without it.
func (m *Manager) expire(resource string, o *override) *resource {
	m.endOverride(resource, o, "expired")
	return m.find(m.rules.Load(), resource)
}

// publishOverrides publishes old with overrides, and returns the transitions to report of the
// template breakers that rebinding dropped. It requires loadMu and the template breakers' mu.
func (m *Manager) publishOverrides(old *ruleSet, overrides map[string]*override, now int64) []StateChange {
	set := settingsSet{named: old.settings, templates: old.settingTemplates, overrides: overrides}
	next := m.withSettings(old, set)
	return m.publish(next, now)
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
		s.override = o
		res.set = s
	}
}

// tellOverride tells the observers that the override of resource began or ended at now: one
// StateChange with Reason Override from each of its breakers, in its state, or one with a zero
// Rule for a resource without rules.
func (m *Manager) tellOverride(resource, note string, now int64) {
	at := m.timeAt(now)
	res := m.existing(resource)
	if res == nil {
		m.notify(StateChange{Resource: resource, Reason: Override, Note: note, At: at, Seq: m.seq.Inc(),
			DryRun: m.forcedClosed(resource)})
		return
	}
	for _, c := range res.breakers {
		p := c.cur.Load()
		m.notify(StateChange{Resource: resource, Rule: c.Rule(), From: p.state, To: p.state, Reason: Override,
			Note: note, At: at, Generation: p.gen, Seq: m.seq.Inc(), DryRun: c.dry()})
	}
}

// forcedClosed reports whether the settings of resource force it closed now.
func (m *Manager) forcedClosed(resource string) bool {
	res := m.rules.Load().resources[resource]
	return res != nil && res.set.forcedClosed()
}
