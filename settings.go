package breaker

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"go.uber.org/atomic"
)

// Force overrides the breakers of one resource, for operators: a kill switch, or a way to let
// every call through while a breaker misjudges a dependency.
type Force uint8

const (
	// Auto checks calls with the resource's breakers, as usual.
	Auto Force = iota
	// ForceOpen rejects every call to the resource, whether it has rules or not, with a
	// *BlockError that matches ErrOpen and ErrForcedOpen. The breakers are not moved and count
	// nothing.
	ForceOpen
	// ForceClosed lets through every call the breakers would reject. They still count, trip
	// and report, as if every rule of the resource were DryRun.
	ForceClosed
)

// String returns "auto", "open" or "closed", the names the JSON document uses.
func (f Force) String() string {
	switch f {
	case Auto:
		return "auto"
	case ForceOpen:
		return "open"
	case ForceClosed:
		return "closed"
	}
	return "Force(" + strconv.Itoa(int(f)) + ")"
}

// ResourceConfig is what a resource has besides its rules: a timeout, a concurrency limit and
// a force. The zero value changes nothing.
type ResourceConfig struct {
	// Timeout, when > 0, is the longest a call may run: Do, Execute, handles and the
	// integrations give the call's function a context whose deadline is at most Timeout after
	// admission (never later than the caller's own). A call that returns
	// context.DeadlineExceeded counts as failed, and its RT counts for SlowRequestRatio, so a
	// dependency that hangs trips the breakers. It is real time, as every context deadline
	// is, whatever clock the Manager reads. Entry.WithTimeout applies it for Enter and Exit.
	Timeout time.Duration
	// MaxConcurrency, when > 0, is how many calls to the resource may be in flight (admitted
	// and not exited) at once; one more is rejected with a *BlockError whose Cause is
	// ErrConcurrencyLimit. The breakers do not count it.
	MaxConcurrency int
	// Force overrides the breakers: Auto (the zero value), ForceOpen or ForceClosed.
	Force Force
}

// settings is a resource's ResourceConfig as installed, with what its calls share.
type settings struct {
	ResourceConfig
	inflight   *atomic.Int64 // calls admitted and not exited: the name's count (flightCounts)
	forcedOpen *BlockError   // the error of calls that ForceOpen rejects
	overLimit  *BlockError   // the error of calls past MaxConcurrency
	template   bool          // made from a template setting, for a name without settings of its own
	override   *override     // an operator's override of its Force; else nil
	plain      *settings     // with an override, the settings without it (nil: none), once it has ended
}

// at returns the settings s stand for at now: s, or, when the override of s has ended, the
// settings without it. An override that has ended is removed at the next change, or read of the
// overrides; until then calls go by the settings under it.
func (s *settings) at(now int64) *settings {
	if s != nil && s.override != nil && s.override.over(now) {
		return s.plain
	}
	return s
}

// forceOf returns the Force that applies to calls to name under rs at now: its settings' (with
// an override in force), or else a template setting's.
func (rs *ruleSet) forceOf(name string, now int64) Force {
	if res := rs.resources[name]; res != nil && res.set != nil {
		if s := res.set.at(now); s != nil {
			return s.Force
		}
	}
	if t := rs.matchSettings(name); t != nil {
		return t.cfg.Force
	}
	return Auto
}

// force tells the breakers of a resource with the settings s how s forces them: as the settings
// under an override do, and as the override does until its end.
func (s *settings) force(breakers []*circuit) {
	plain, f := s, (*forcing)(nil)
	if s != nil && s.override != nil {
		plain, f = s.plain, &forcing{dry: s.override.Force == ForceClosed, span: s.override.span}
	}
	for _, c := range breakers {
		c.force(plain.forcedClosed(), f)
	}
}

// LoadResources replaces the settings of every resource with cfg: a resource not in cfg goes
// back to the zero ResourceConfig. A key ending in "*" is a template setting: it applies to
// every resource with that prefix that has no settings of its own (see the package's template
// settings). It validates them all first: an empty name, a negative Timeout or MaxConcurrency,
// or an unknown Force is a *RuleError (wrapping ErrInvalidRule) that names the resource and the
// field, and nothing changes. The rules are not touched; settings survive LoadRules.
//
// Calls in flight stay counted against MaxConcurrency when it changes, and count against the
// new limit; also when a resource's settings are removed and loaded again while its calls
// are in flight, or move between its own and a template's.
func (m *Manager) LoadResources(cfg map[string]ResourceConfig) error {
	_, err := m.apply(change{doc: Document{Resources: cfg, HasResources: true}})
	return err
}

// configs returns the settings loaded into rs, template settings included.
func (rs *ruleSet) configs() map[string]ResourceConfig {
	out := make(map[string]ResourceConfig, len(rs.settings)+len(rs.settingTemplates.all))
	for name, s := range rs.settings {
		out[name] = s.ResourceConfig
	}
	for _, t := range rs.settingTemplates.all {
		out[t.prefix+"*"] = t.cfg
	}
	return out
}

// checkResources validates cfg, in name order so that the error is the same every time.
func (m *Manager) checkResources(cfg map[string]ResourceConfig) error {
	templates := 0
	for _, name := range slices.Sorted(maps.Keys(cfg)) {
		if isTemplate(name) {
			if templates++; templates > maxTemplates {
				return &RuleError{Index: -1, Resource: name, Field: "Resource",
					Reason: fmt.Sprintf("is one template setting too many: at most %d, which every call to a "+
						"name without settings is matched against", maxTemplates)}
			}
		}
		if reason, field := cfg[name].check(name); reason != "" {
			return &RuleError{Index: -1, Resource: name, Field: field, Reason: reason}
		}
		if err := m.checkName(name); err != nil {
			return err
		}
		if isTemplate(name) && m.tmpl.limit < 1 {
			return &RuleError{Index: -1, Resource: name, Field: "Resource",
				Reason: fmt.Sprintf("is a template setting, and this Manager may hold no template resources "+
					"(WithMaxTemplateBreakers(%d))", m.tmpl.limit)}
		}
	}
	return nil
}

// check returns what is wrong with the settings of resource name, and the field at fault.
func (c ResourceConfig) check(name string) (reason, field string) {
	switch {
	case name == "":
		return "is required: a resource's settings need its name", "Resource"
	case c.Timeout < 0:
		return fmt.Sprintf("must not be negative, got %v", c.Timeout), "Timeout"
	case c.MaxConcurrency < 0:
		return fmt.Sprintf("must not be negative, got %d", c.MaxConcurrency), "MaxConcurrency"
	case c.Force > ForceClosed:
		return fmt.Sprintf("must be Auto, ForceOpen or ForceClosed, got %d", c.Force), "Force"
	}
	return "", ""
}

// newSettings builds the installed form of the settings of cfg keyed by a full name, each with
// its name's count of calls in flight. It requires the template breakers' mu held (flightCounts).
func newSettings(cfg map[string]ResourceConfig, counts *flightCounts) map[string]*settings {
	out := make(map[string]*settings, len(cfg))
	for name, c := range cfg {
		out[name] = newNameSettings(name, c, counts.of(name))
	}
	return out
}

// newNameSettings is the installed form of c for the resource name, counting its calls in
// flight in inflight.
func newNameSettings(name string, c ResourceConfig, inflight *atomic.Int64) *settings {
	return &settings{ResourceConfig: c, inflight: inflight,
		forcedOpen: &BlockError{Resource: name, Cause: ErrForcedOpen},
		overLimit:  &BlockError{Resource: name, Cause: ErrConcurrencyLimit}}
}

// forcedClosed reports whether s forces its resource's breakers to let every call through.
func (s *settings) forcedClosed() bool { return s != nil && s.Force == ForceClosed }
