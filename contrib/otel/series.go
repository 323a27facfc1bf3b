package breakerotel

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakerview"
)

// observeView reports the gauges of v: for each of its Series, as its breaker.resource, its
// side (breaker.resource.info), the state (breaker.state and breaker.status) and window of each
// breaker, the settings and calls in flight, the overrides, the longest call of the minute and
// the names not called; and the template counts while a template rule or setting is loaded.
func (ins *Instruments) observeView(o metric.Observer, v *breakerview.View) {
	for i := range v.Series {
		s := &v.Series[i]
		if s.Side == breakerview.NoSide {
			o.ObserveInt64(ins.resourceInfo, 1, ins.with(ResourceKey.String(s.Label)))
		} else {
			o.ObserveInt64(ins.resourceInfo, 1, ins.with(ResourceKey.String(s.Label), SideKey.String(s.Side.String())))
		}
		for _, b := range s.Breakers {
			if b.Label != "" { // a rule whose label another rule of the resource has
				ins.observeBreaker(o, &b, s.Label)
			}
		}
		for _, set := range s.Settings {
			opt := ins.with(ResourceKey.String(s.Label), SettingsFromKey.String(set.From))
			o.ObserveInt64(ins.force, int64(set.Config.Force), opt)
			o.ObserveInt64(ins.limit, int64(set.Config.MaxConcurrency), opt)
			o.ObserveFloat64(ins.timeout, set.Config.Timeout.Seconds(), opt)
		}
		if s.HasInFlight {
			o.ObserveInt64(ins.inFlight, s.InFlight, ins.with(ResourceKey.String(s.Label)))
		}
		for _, ov := range s.Overrides {
			opt := ins.with(ResourceKey.String(s.Label), ForceKey.String(ov.Force.String()))
			o.ObserveInt64(ins.override, int64(ov.Count), opt)
			o.ObserveFloat64(ins.overrideEnd, unixSeconds(ov.Until), opt)
		}
		if s.Ran {
			o.ObserveFloat64(ins.callMax, s.Longest.Seconds(), ins.with(ResourceKey.String(s.Label)))
		}
		for _, nearest := range s.Uncalled {
			o.ObserveInt64(ins.uncalled, 1, ins.with(ResourceKey.String(s.Label), NearestKey.String(nearest)))
		}
	}
	if d := v.Templates; v.TemplatesLoaded {
		opt := ins.with()
		o.ObserveInt64(ins.tmplBreakers, int64(d.Breakers), opt)
		o.ObserveInt64(ins.tmplSettings, int64(d.Settings), opt)
		o.ObserveInt64(ins.tmplLimit, int64(d.Limit), opt)
		o.ObserveInt64(ins.tmplDropped, int64(d.Dropped), opt)
	}
}

// observeBreaker reports the breaker b of the breaker.resource resource: its state to the
// state gauge, as breaker.State's value (0 CLOSED, 1 OPEN, 2 HALF_OPEN), and to
// breaker.status, with whether it is dry run; whether it ramps up or paces; and its window, its
// calls, bad calls and refused calls, and their ratio but for a ConsecutiveErrors rule, whose
// Bad is a run of failures and not a share of a window.
func (ins *Instruments) observeBreaker(o metric.Observer, b *breakerview.Breaker, resource string) {
	kvs := []attribute.KeyValue{ResourceKey.String(resource), RuleKey.String(b.Label), DryRunKey.Bool(b.DryRun)}
	opt := ins.with(kvs...)
	o.ObserveInt64(ins.state, int64(b.State), opt)
	ins.observeStatus(o, kvs, b.State)
	if b.Rule.RampUp > 0 {
		o.ObserveInt64(ins.rampingUp, flag(b.RampingUp), opt)
	}
	if b.Rule.Pace {
		o.ObserveInt64(ins.pacing, flag(b.Pacing), opt)
	}
	window := ins.with(ResourceKey.String(resource), RuleKey.String(b.Label))
	o.ObserveInt64(ins.windowCalls, int64(b.Total), window)
	o.ObserveInt64(ins.windowBad, int64(b.Bad), window)
	o.ObserveInt64(ins.windowRefused, int64(b.Refused), window)
	if b.Windowed {
		o.ObserveFloat64(ins.windowRatio, b.Ratio(), window)
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
		o.ObserveInt64(ins.status, in, ins.with(append(kvs, StateKey.String(name))...))
	}
}

// onStateChange counts c in the transitions counter. Its resource takes a name of the bound,
// as a call does. An override beginning or ending moves no breaker (From is To):
// breaker.override shows it, and the transitions counter does not count it.
func (ins *Instruments) onStateChange(c breaker.StateChange) {
	if ins.closed.Load() || c.Reason == breaker.Override {
		return // a change that raced with Close, or no change of state
	}
	ins.transitions.Add(context.Background(), 1, ins.with(
		ResourceKey.String(ins.calls.Entry(c.Resource).Label()),
		StateFromKey.String(c.From.String()),
		StateToKey.String(c.To.String()),
		ReasonKey.String(c.Reason.String()),
		DryRunKey.Bool(c.DryRun),
	))
}

// with is the measurement option of the attribute set of kvs after those of WithAttributes.
func (ins *Instruments) with(kvs ...attribute.KeyValue) metric.MeasurementOption {
	return metric.WithAttributeSet(ins.set(kvs...))
}

// flag is 1 for true, 0 for false.
func flag(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// unixSeconds is t in seconds since the Unix epoch.
func unixSeconds(t time.Time) float64 {
	return float64(t.Unix()) + float64(t.Nanosecond())/1e9
}
