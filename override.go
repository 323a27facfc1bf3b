package breaker

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Bounds of an operator's override.
const (
	// MaxOverrideDuration is the longest an override may last: one that outlived the incident
	// it was for would go on forcing a resource no one is watching.
	MaxOverrideDuration = 24 * time.Hour
	// maxOverrideNote is the longest note an override may carry, in bytes.
	maxOverrideNote = 256
	// maxOverrides is how many resources may be overridden at once.
	maxOverrides = 1000
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

// override is an OverrideInfo as installed: in force for its span of the Manager's ticks.
type override struct {
	OverrideInfo
	span
}

// Override forces resource to force (ForceOpen, ForceClosed or Auto) for d, with the operator's
// note, replacing any override of it, and returns it as installed. Observers hear Reason
// Override from each breaker of the resource (one StateChange with a zero Rule for a resource
// without rules), with the note; the Manager's logger logs it. A d that is not positive or is
// longer than MaxOverrideDuration, an unknown force, a note longer than 256 bytes or not
// UTF-8, a name ending in "*" or one the Manager would not keep, or one more than 1,000
// resources overridden at once is a *RuleError (wrapping ErrInvalidOverride), and nothing
// changes. Overrides whose end has come are removed then, and observers hear them expire.
func (m *Manager) Override(resource string, force Force, d time.Duration, note string) (OverrideInfo, error) {
	if err := m.checkOverride(resource, force, d, note); err != nil {
		return OverrideInfo{}, err
	}
	o := &override{OverrideInfo: OverrideInfo{Resource: strings.Clone(resource), Force: force, Note: strings.Clone(note)}}
	if _, err := m.apply(change{override: o, lasts: d}); err != nil {
		return OverrideInfo{}, err
	}
	return o.OverrideInfo, nil
}

// EndOverride ends the override of resource now, and reports whether one was in force.
// Observers hear Reason Override with the note "ended" (or "expired", for one whose end had come
// before); the Manager's logger logs it.
func (m *Manager) EndOverride(resource string) bool {
	ended, _ := m.apply(change{end: resource})
	return ended != nil
}

// invalidOverride is the error of an override Manager.Override refuses.
func invalidOverride(resource, field, reason string) error {
	return &RuleError{Index: -1, Resource: resource, Field: field, Reason: reason, of: ErrInvalidOverride}
}

// checkOverride validates an override before anything is locked.
func (m *Manager) checkOverride(resource string, force Force, d time.Duration, note string) error {
	invalid := func(field, reason string) error { return invalidOverride(resource, field, reason) }
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
	case len(note) > maxOverrideNote:
		return invalid("Note", fmt.Sprintf("is %d bytes long, more than %d", len(note), maxOverrideNote))
	case !utf8.ValidString(note):
		return invalid("Note", "is not UTF-8")
	}
	if len(resource) > m.maxName {
		return invalid("Resource", fmt.Sprintf("is %d bytes long, more than the %d a Manager keeps (WithMaxNameLength)",
			len(resource), m.maxName))
	}
	return nil
}

// overrideChanges are what observers hear when the override of resource begins or ends at now
// (note: the operator's, or "ended" or "expired"), under the rule set rs: one StateChange with
// Reason Override from each of its breakers, in its state, or one with a zero Rule for a
// resource without rules. It requires loadMu and the template breakers' mu held: the Seq it
// gives each is the change's.
func (m *Manager) overrideChanges(rs *ruleSet, resource, note string, now int64) []StateChange {
	at := m.timeAt(now)
	res := rs.resources[resource]
	if res == nil || res.breakers == nil {
		if e := m.tmpl.find(resource); e != nil {
			res = e.res.Load()
		}
	}
	if res == nil || len(res.breakers) == 0 {
		return []StateChange{{Resource: resource, Reason: Override, Note: note, At: at, Seq: m.seq.Inc(),
			DryRun: rs.forceOf(resource, now) == ForceClosed}}
	}
	changes := make([]StateChange, 0, len(res.breakers))
	for _, c := range res.breakers {
		p := c.cur.Load()
		changes = append(changes, StateChange{Resource: resource, Rule: c.Rule(), From: p.state, To: p.state,
			Reason: Override, Note: note, At: at, Generation: p.gen, Seq: m.seq.Inc(), DryRun: c.dry(now)})
	}
	return changes
}
