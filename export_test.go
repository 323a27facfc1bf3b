package breaker

import (
	"runtime"
	"slices"
	"strings"
	"time"
)

// Rival is a call of its own, for tests that race a call of another resource with the calls
// of a breaker's resource for its probe: it passes one breaker through its door, as the
// admission path does.
type Rival struct {
	m      *Manager
	t      Ticket
	stripe uint8 // of the counters its calls write, plus 1; 0: the processor's
}

// NewRival returns a call on m's clock that no breaker has let through yet.
func NewRival(m *Manager) *Rival { return &Rival{m: m} }

// NewRivalOn is NewRival for calls that write stripe of the breakers' counters, whatever
// processor they run on.
func NewRivalOn(m *Manager, stripe uint8) *Rival { return &Rival{m: m, stripe: stripe + 1} }

// Pass lets the call through b, making it b's probe if b is due for one, and reports whether b
// let it through.
func (r *Rival) Pass(b CircuitBreaker) bool {
	r.t = newTicket()
	r.t.stripe = r.stripe
	return b.TryPass(&r.t) && r.t.takeProbes() == nil
}

// Complete ends the call now, with err, and has b count it.
func (r *Rival) Complete(b CircuitBreaker, err error) {
	r.t.end = r.m.now()
	r.t.res = result{rt: r.t.end - r.t.start, o: r.m.classify(err)}
	b.OnRequestComplete(&r.t)
}

// Veto makes TryPass of the breaker b reject every call with a *BlockError of its own (State
// Open, RetryAt an hour after now), until the returned function is called: a test's way to
// change what the door says of one breaker, and see every entry point follow it. b must be
// CLOSED: its period is swapped for a copy that the common case of TryPass leaves to pass.
func Veto(b CircuitBreaker) (lift func()) {
	c := circuitOf(b)
	p := c.cur.Load()
	diverted := p.withFlight(p.flight, p.oldFlight)
	diverted.ramp = &ramp{length: 1, span: 1}
	c.veto.Store(c.blockError(Open, c.tl.now()+int64(time.Hour)))
	c.cur.Store(diverted)
	return func() {
		c.veto.Store(nil)
		c.cur.CompareAndSwap(diverted, p)
	}
}

// RetryAfterOf returns the hint that RetryAfter attached to err or an error it wraps.
var RetryAfterOf = retryAfterOf

// circuitOf returns the machine of the breaker b.
func circuitOf(b CircuitBreaker) *circuit {
	switch b := b.(type) {
	case *ResponseTimeBreaker:
		return &b.circuit
	case *ExceptionBreaker:
		return &b.circuit
	}
	panic("not a breaker of this package")
}

// BreakerMemory is what the memory budget counts for the breaker of r loaded now, its counters'
// stripes included.
func BreakerMemory(r Rule) int64 { return r.breakerMemory(runtime.GOMAXPROCS(0)) }

// ResourceBytes is what the memory budget counts for a named resource with rules beside its
// breakers and its name.
const ResourceBytes = resourceBytes

// WithStripes makes the breakers' counters have stripes stripes, written from the first call
// rather than once calls contend for them, and has pick choose the stripe each call writes, for
// tests that put calls on stripes of their choice.
func WithStripes(stripes int, pick func() uint8) Option {
	return optionFunc(func(m *Manager) { m.stripes, m.stripe = stripes, pick })
}

// The bounds and defaults tests check, which the package documents rather than exports.
const (
	DefaultFastThreshold       = defaultFastThreshold
	DefaultMaxTemplateBreakers = defaultMaxTemplateBreakers
	MaxBucketCount             = maxBucketCount
	MaxOverrides               = maxOverrides
	MaxProbeNum                = maxProbeNum
	MaxRulesPerResource        = maxRulesPerResource
	MaxStatCalls               = maxStatCalls
	MaxStatInterval            = maxStatInterval
	MaxTemplates               = maxTemplates
)

// The reads that Manager.Snapshot replaced for users, kept for the tests that check one thing
// at a time through them.

// AppliedSettings is what applies to the calls of one resource now; see Manager.SettingsOf.
type AppliedSettings struct {
	ResourceConfig
	// Template is the key of the template setting it takes, such as "GET *"; "" when it has
	// settings of its own, or none.
	Template string
	// Overridden says that Force is that of an operator's override (Manager.Override).
	Overridden bool
}

// SettingsOf returns the settings that apply to calls to resource now: its own, or else those
// of the template setting with the longest prefix of it, with the Force of an operator's
// override in force over them; the zero AppliedSettings when it has none of these. Exporters
// and status pages read a resource's force through it.
func (m *Manager) SettingsOf(resource string) AppliedSettings {
	rs := m.rules.Load()
	var a AppliedSettings
	if s := rs.settings[resource]; s != nil {
		a.ResourceConfig = s.ResourceConfig
	} else if t := rs.matchSettings(resource); t != nil {
		a.ResourceConfig, a.Template = t.cfg, t.prefix+"*"
	}
	if o := rs.overrides[resource]; o != nil && !o.over(m.now()) {
		a.Force, a.Overridden = o.Force, true
	}
	return a
}

// InFlight returns how many calls to resource are admitted and not yet exited. It is counted
// only for a resource that has settings, its own or a template's; for any other it is 0.
func (m *Manager) InFlight(resource string) int64 {
	if n := m.counts.get(resource); n != nil {
		return n.Load()
	}
	return 0
}

// TemplateSettingsResources returns, sorted, the resources whose settings come from a template
// setting now (SettingsOf(name).Template is not ""): those with rules of their own or an
// operator's override and no settings of their own, and those that templates made entries
// for. Each counts its own calls in flight (InFlight) against the template's MaxConcurrency.
// The names come from the rules and overrides loaded and from the template entries, so the
// list is bounded as they are.
func (m *Manager) TemplateSettingsResources() []string {
	rs := m.rules.Load()
	if len(rs.settingTemplates.all) == 0 {
		return nil
	}
	names := m.TemplateResources()
	for name := range rs.resources {
		names = append(names, name)
	}
	slices.Sort(names)
	return slices.DeleteFunc(slices.Compact(names), func(name string) bool { return m.SettingsOf(name).Template == "" })
}

// Overrides returns the overrides in force, by resource name; not those whose end has come.
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

// TemplateStats returns how many template breakers the Manager holds, and how many it dropped.
// It takes no lock: counts that change while it reads may be read a change apart.
func (m *Manager) TemplateStats() TemplateStats { return m.templateStats(m.rules.Load()) }

// TemplateResources returns, sorted, the names of the resources that have breakers made from a
// template now. Breakers(name) returns them. It takes no lock.
func (m *Manager) TemplateResources() []string {
	var names []string
	m.tmpl.entries.Range(func(_, e any) bool {
		if !e.(*templateEntry).dropped.Load() {
			names = append(names, e.(*templateEntry).name)
		}
		return true
	})
	slices.Sort(names)
	return names
}

// Settings returns the settings loaded by LoadResources, a copy, template settings included.
func (m *Manager) Settings() map[string]ResourceConfig { return m.rules.Load().configs() }
