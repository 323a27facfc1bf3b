package breakerotel

import (
	"context"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/halfopen/breaker"
)

// observeStates reports the state of every breaker of m to the state gauge, as
// breaker.State's value (0 CLOSED, 1 OPEN, 2 HALF_OPEN), and to breaker.status, with its
// resource, rule and whether it is dry run: its rule is DryRun, or an override or its settings
// force its resource closed. The breakers that template rules made are reported for the names
// within the bound, not for those measured as OverflowResource: callers choose those names.
// Of names that share a breaker.resource, those of the one claim picks are reported.
func (ins *Instruments) observeStates(o metric.Observer, m *breaker.Manager, v *collection) {
	names := make(map[string]string, len(v.ruled)+len(v.templated))
	for _, name := range v.ruled {
		claim(names, resourceValue(name), name)
	}
	for _, name := range v.templated {
		if s := ins.resourceSets(name); s != ins.overflow {
			claim(names, s.resource.Value.AsString(), name)
		}
	}
	for resource, name := range names {
		ins.observeResource(o, m, name, resource, v.force(name))
	}
}

// observeResource reports, as breaker.resource resource, the state of each breaker of the
// resource name, whose Force is force, and whether it ramps up.
func (ins *Instruments) observeResource(o metric.Observer, m *breaker.Manager, name, resource string,
	force breaker.Force) {
	forcedClosed := force == breaker.ForceClosed
	// One Breakers call reads one rule set, so the indexes agree with the rules even if
	// LoadRules runs meanwhile.
	breakers := m.Breakers(name)
	rules := make([]breaker.Rule, len(breakers))
	for i, b := range breakers {
		rules[i] = b.Rule()
	}
	for i, label := range ruleNames(rules) {
		if label == "" {
			continue // a rule whose name another rule of the resource has: see ruleNames
		}
		b, rule := breakers[i], rules[i]
		kvs := []attribute.KeyValue{ResourceKey.String(resource), RuleKey.String(label),
			DryRunKey.Bool(rule.DryRun || forcedClosed)}
		set := ins.set(kvs...)
		st := b.Stats()
		o.ObserveInt64(ins.state, int64(st.State), metric.WithAttributeSet(set))
		ins.observeStatus(o, kvs, st.State)
		if rule.RampUp > 0 {
			ramping := int64(0)
			if st.RampingUp {
				ramping = 1
			}
			o.ObserveInt64(ins.rampingUp, ramping, metric.WithAttributeSet(set))
		}
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
// resource of m with settings; of names that share a breaker.resource, those of the one claim
// picks. A template setting reports its force, limit and timeout under its key, and the calls
// in flight of the names that hold its settings under their own (observeTemplateInFlight):
// the key itself has none.
func (ins *Instruments) observeSettings(o metric.Observer, m *breaker.Manager, v *collection) {
	own := make(map[string]string, len(v.loaded))
	for name := range v.loaded {
		claim(own, resourceValue(name), name)
	}
	for resource, name := range own {
		cfg := v.loaded[name]
		opt := metric.WithAttributeSet(ins.set(ResourceKey.String(resource)))
		o.ObserveInt64(ins.force, int64(cfg.Force), opt)
		if !isTemplate(name) {
			o.ObserveInt64(ins.inFlight, m.InFlight(name), opt)
		}
		o.ObserveInt64(ins.limit, int64(cfg.MaxConcurrency), opt)
		o.ObserveFloat64(ins.timeout, cfg.Timeout.Seconds(), opt)
	}
	ins.observeTemplateInFlight(o, m, own)
}

// observeTemplates reports how many breakers m's template rules made, how many resources hold
// settings from its template settings, their bound and the drops, while m has a template rule
// or a template setting.
func (ins *Instruments) observeTemplates(o metric.Observer, m *breaker.Manager, v *collection) {
	d := m.TemplateStats()
	if d.Templates == 0 && !v.templates {
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

// ruleNames returns the breaker.rule value of each of the rules of one resource, in order, as
// RuleName says; "" for a rule left out.
func ruleNames(rules []breaker.Rule) []string {
	names := make([]string, len(rules))
	taken := make(map[string]bool, len(rules))
	for i, r := range rules {
		name := RuleName(r, i)
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
