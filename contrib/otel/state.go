package breakerotel

import (
	"context"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/halfopen/breaker"
)

// isTemplate reports whether a resource name or a settings key is a template's.
func isTemplate(key string) bool { return strings.HasSuffix(key, "*") }

// inFlight returns the calls in flight of the resource name in snap.
func inFlight(snap *breaker.Snapshot, name string) int64 {
	if r := snap.Resource(name); r != nil {
		return r.InFlight
	}
	return 0
}

// observeStates reports the state of every breaker in snap to the state gauge, as
// breaker.State's value (0 CLOSED, 1 OPEN, 2 HALF_OPEN), and to breaker.status, with its
// resource, rule and whether it is dry run: its rule is DryRun, or an override or its settings
// force its resource closed. The breakers that template rules made are reported for the names
// within the bound, not for those measured as OverflowResource: callers choose those names.
// Of names that share a breaker.resource, those of the one claim picks are reported.
func (ins *Instruments) observeStates(o metric.Observer, snap *breaker.Snapshot) {
	names := make(map[string]string, len(snap.Resources))
	for i := range snap.Resources {
		switch r := &snap.Resources[i]; {
		case r.Template != "": // breakers a template made, for a name callers chose
			if s := ins.resourceSets(r.Name); s != ins.overflow {
				claim(names, s.resource.Value.AsString(), r.Name)
			}
		case len(r.Breakers) > 0:
			claim(names, resourceValue(r.Name), r.Name)
		}
	}
	for resource, name := range names {
		r := snap.Resource(name)
		ins.observeResource(o, r.Breakers, resource, r.Settings.Force)
	}
}

// observeResource reports, as breaker.resource resource, the state of each of the breakers of
// one resource, whose Force is force, whether it ramps up or paces, and its window
// (observeWindow).
func (ins *Instruments) observeResource(o metric.Observer, breakers []breaker.Stats, resource string,
	force breaker.Force) {
	forcedClosed := force == breaker.ForceClosed
	for i, label := range ruleNames(breakers) {
		if label == "" {
			continue // a rule whose name another rule of the resource has: see ruleNames
		}
		st := &breakers[i]
		kvs := []attribute.KeyValue{ResourceKey.String(resource), RuleKey.String(label),
			DryRunKey.Bool(st.Rule.DryRun || forcedClosed)}
		set := ins.set(kvs...)
		o.ObserveInt64(ins.state, int64(st.State), metric.WithAttributeSet(set))
		ins.observeStatus(o, kvs, st.State)
		if st.Rule.RampUp > 0 {
			ramping := int64(0)
			if st.RampingUp {
				ramping = 1
			}
			o.ObserveInt64(ins.rampingUp, ramping, metric.WithAttributeSet(set))
		}
		if st.Rule.Pace {
			pacing := int64(0)
			if st.Pacing {
				pacing = 1
			}
			o.ObserveInt64(ins.pacing, pacing, metric.WithAttributeSet(set))
		}
		ins.observeWindow(o, st, resource, label)
	}
}

// observeWindow reports the window of the breaker st, as breaker.resource resource and
// breaker.rule rule: its calls and bad calls, and their ratio but for a ConsecutiveErrors rule,
// whose Bad is a run of failures and not a share of a window.
func (ins *Instruments) observeWindow(o metric.Observer, st *breaker.Stats, resource, rule string) {
	opt := metric.WithAttributeSet(ins.set(ResourceKey.String(resource), RuleKey.String(rule)))
	o.ObserveInt64(ins.windowCalls, int64(st.Total), opt)
	o.ObserveInt64(ins.windowBad, int64(st.Bad), opt)
	if st.Rule.Strategy != breaker.ConsecutiveErrors {
		o.ObserveFloat64(ins.windowRatio, st.Ratio(), opt)
	}
}

// statusStates are the values of StateKey, indexed by breaker.State.
var statusStates = [...]string{breaker.Closed: StateClosed, breaker.Open: StateOpen, breaker.HalfOpen: StateHalfOpen}

// observeStatus reports the breaker whose attributes are kvs, in state s, to breaker.status: 1
// in the series of s and 0 in the two others, so that every breaker always has all three and
// a sum by state over breakers counts them. A ramp in progress is CLOSED here.
func (ins *Instruments) observeStatus(o metric.Observer, kvs []attribute.KeyValue, s breaker.State) {
	kvs = kvs[:len(kvs):len(kvs)] // so that each append below copies
	for state, name := range statusStates {
		in := int64(0)
		if breaker.State(state) == s {
			in = 1
		}
		o.ObserveInt64(ins.status, in, metric.WithAttributeSet(ins.set(append(kvs, StateKey.String(name))...)))
	}
}

// observeSettings reports the force, calls in flight, concurrency limit and timeout of every
// resource with settings in snap, by resource name: a template setting's key is no resource,
// and has none. A resource with settings of its own reports them with SettingsFromKey
// SettingsOwn, and its calls in flight; of names that share a breaker.resource, those of the
// one claim picks. The force is the settings' as loaded: breaker.override reports an
// override's. The names that hold a template setting's settings report theirs with its key
// (observeTemplateSettings) and their calls in flight (observeTemplateInFlight). Settings that
// are all zero report no force, limit or timeout.
func (ins *Instruments) observeSettings(o metric.Observer, snap *breaker.Snapshot) {
	own := make(map[string]string, len(snap.Settings))
	for name := range snap.Settings {
		if !isTemplate(name) {
			claim(own, resourceValue(name), name)
		}
	}
	for resource, name := range own {
		o.ObserveInt64(ins.inFlight, inFlight(snap, name), metric.WithAttributeSet(ins.set(ResourceKey.String(resource))))
		ins.observeConfig(o, snap.Settings[name], settingsPoint{resource: resource, from: SettingsOwn})
	}
	ins.observeTemplateSettings(o, snap, own)
	ins.observeTemplateInFlight(o, snap, own)
}

// settingsPoint is the attributes of the settings gauges of one resource: its
// breaker.resource and the key its settings come from, SettingsOwn or a template key.
type settingsPoint struct{ resource, from string }

// observeConfig reports the force, limit and timeout cfg with the attributes p, unless cfg is
// zero.
func (ins *Instruments) observeConfig(o metric.Observer, cfg breaker.ResourceConfig, p settingsPoint) {
	if cfg == (breaker.ResourceConfig{}) {
		return
	}
	opt := metric.WithAttributeSet(ins.set(ResourceKey.String(p.resource), SettingsFromKey.String(p.from)))
	o.ObserveInt64(ins.force, int64(cfg.Force), opt)
	o.ObserveInt64(ins.limit, int64(cfg.MaxConcurrency), opt)
	o.ObserveFloat64(ins.timeout, cfg.Timeout.Seconds(), opt)
}

// observeTemplates reports how many breakers the template rules in snap made, how many
// resources hold settings from its template settings, their bound and the drops, while it has a
// template rule or a template setting.
func (ins *Instruments) observeTemplates(o metric.Observer, snap *breaker.Snapshot) {
	d := snap.Templates
	templates := d.Templates > 0
	for key := range snap.Settings {
		templates = templates || isTemplate(key)
	}
	if !templates {
		return
	}
	opt := metric.WithAttributeSet(ins.set())
	o.ObserveInt64(ins.tmplBreakers, int64(d.Breakers), opt)
	o.ObserveInt64(ins.tmplSettings, int64(d.Settings), opt)
	o.ObserveInt64(ins.tmplLimit, int64(d.Limit), opt)
	o.ObserveInt64(ins.tmplDropped, int64(d.Dropped), opt)
}

// onStateChange counts c in the transitions counter. Its resource takes a name of the bound,
// as a call does. An override beginning or ending moves no breaker (From is To):
// breaker.override shows it, and the transitions counter does not count it.
func (ins *Instruments) onStateChange(c breaker.StateChange) {
	if ins.closed.Load() || c.Reason == breaker.Override {
		return // a change that raced with Close, or no change of state
	}
	set := ins.set(
		ins.resourceSets(c.Resource).resource,
		StateFromKey.String(c.From.String()),
		StateToKey.String(c.To.String()),
		ReasonKey.String(c.Reason.String()),
		DryRunKey.Bool(c.DryRun),
	)
	ins.transitions.Add(context.Background(), 1, metric.WithAttributeSet(set))
}

// RuleName is the value of the breaker.rule attribute for r, the i-th rule of its resource
// (counting from 0): r.ID made valid UTF-8 if it is set, else the strategy's name, "#" and i,
// as "ErrorRatio#0". When an earlier rule of the resource has that name, the rule is named by
// its strategy and index instead, and left out if that is taken too, so that two breakers
// never share a series.
func RuleName(r breaker.Rule, i int) string {
	if r.ID != "" {
		return resourceValue(r.ID)
	}
	return r.Strategy.String() + "#" + strconv.Itoa(i)
}

// ruleNames returns the breaker.rule value of the rule of each of the breakers of one
// resource, in rule order, as RuleName says; "" for a rule left out.
func ruleNames(breakers []breaker.Stats) []string {
	names := make([]string, len(breakers))
	taken := make(map[string]bool, len(breakers))
	for i := range breakers {
		r := &breakers[i].Rule
		name := RuleName(*r, i)
		if taken[name] {
			name = r.Strategy.String() + "#" + strconv.Itoa(i)
		}
		if !taken[name] {
			names[i] = name
			taken[name] = true
		}
	}
	return names
}
