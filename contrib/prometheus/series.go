package breakerprom

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakerview"
)

// collectView sends the gauges of v: for each of its Series, under its resource label, its
// side, the state and window of each breaker, the settings and calls in flight, the overrides,
// the longest call of the minute and the names not called; and the template counts while a
// template rule or setting is loaded.
func (c *Collector) collectView(v *breakerview.View, ch chan<- prometheus.Metric) {
	for i := range v.Series {
		s := &v.Series[i]
		gauge(ch, c.info, 1, s.Label, s.Side.String())
		for _, b := range s.Breakers {
			if b.Label != "" { // a rule whose label another rule of the resource has
				c.sendBreaker(ch, &b, s.Label)
			}
		}
		for _, set := range s.Settings {
			gauge(ch, c.force, float64(set.Config.Force), s.Label, set.From)
			gauge(ch, c.maxConc, float64(set.Config.MaxConcurrency), s.Label, set.From)
			gauge(ch, c.timeout, set.Config.Timeout.Seconds(), s.Label, set.From)
		}
		if s.HasInFlight {
			gauge(ch, c.inFlight, float64(s.InFlight), s.Label)
		}
		for _, o := range s.Overrides {
			gauge(ch, c.override, float64(o.Count), s.Label, o.Force.String())
			gauge(ch, c.overrideEnd, unixSeconds(o.Until), s.Label, o.Force.String())
		}
		if s.Ran {
			gauge(ch, c.callMax, s.Longest.Seconds(), s.Label)
		}
		for _, nearest := range s.Uncalled {
			gauge(ch, c.uncalled, 1, s.Label, nearest)
		}
	}
	if d := v.Templates; v.TemplatesLoaded {
		gauge(ch, c.templates, float64(d.Breakers))
		gauge(ch, c.tmplSettings, float64(d.Settings))
		gauge(ch, c.dynLimit, float64(d.Limit))
		ch <- prometheus.MustNewConstMetric(c.dynDropped, prometheus.CounterValue, float64(d.Dropped))
	}
}

// sendBreaker sends breaker_state, breaker_ramping_up for a rule with RampUp, breaker_pacing
// for one with Pace, and the window gauges of the breaker b of the resource label resource:
// breaker_window_calls, breaker_window_bad and breaker_window_refused, and
// breaker_window_ratio but for a ConsecutiveErrors rule, whose Bad is a run of failures and not
// a share of a window.
func (c *Collector) sendBreaker(ch chan<- prometheus.Metric, b *breakerview.Breaker, resource string) {
	gauge(ch, c.state, stateValue(b.State), resource, b.Label, strconv.FormatBool(b.DryRun))
	if b.Rule.RampUp > 0 {
		gauge(ch, c.rampingUp, flag(b.RampingUp), resource, b.Label)
	}
	if b.Rule.Pace {
		gauge(ch, c.pacing, flag(b.Pacing), resource, b.Label)
	}
	gauge(ch, c.windowCalls, float64(b.Total), resource, b.Label)
	gauge(ch, c.windowBad, float64(b.Bad), resource, b.Label)
	gauge(ch, c.windowRefused, float64(b.Refused), resource, b.Label)
	if b.Windowed {
		gauge(ch, c.windowRatio, b.Ratio(), resource, b.Label)
	}
}

// gauge sends the gauge desc with value v and the label values.
func gauge(ch chan<- prometheus.Metric, desc *prometheus.Desc, v float64, labels ...string) {
	ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, v, labels...)
}

// flag is 1 for true, 0 for false.
func flag(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// stateValue is the value of breaker_state for s.
func stateValue(s breaker.State) float64 {
	switch s {
	case breaker.Closed:
		return 0
	case breaker.Open:
		return 1
	case breaker.HalfOpen:
		return 2
	}
	return float64(s)
}

// unixSeconds is t in seconds since the Unix epoch, as Prometheus timestamps are.
func unixSeconds(t time.Time) float64 {
	return float64(t.Unix()) + float64(t.Nanosecond())/1e9
}
