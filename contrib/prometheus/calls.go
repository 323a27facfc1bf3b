package breakerprom

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakerview"
)

// resourceSeries is the series of the calls of one resource label, made at its first call so
// that a name the Collector only labels (one a scrape found) has none.
type resourceSeries struct {
	label string
	once  sync.Once
	calls *callSeries // set by once
}

// callSeries is the series of one resource's calls, taken from the vectors once so that a call
// only adds to them.
type callSeries struct {
	passed, blocked, failed, refused, slow prometheus.Counter
	rejected                               [len(breakerview.Causes)]prometheus.Counter
	wouldReject                            [len(breakerview.DryModes)]prometheus.Counter
	rt                                     prometheus.Observer
}

// callObserver counts a Manager's calls into its Collector.
type callObserver struct{ c *Collector }

// OnCall counts one call, in its resource's series and its last minute. In steady state it
// allocates nothing: a map load and a few atomic adds; the call's time is the Manager's reading
// (CallInfo.At).
func (o callObserver) OnCall(info breaker.CallInfo) {
	e := o.c.calls.Record(info)
	if e == nil {
		return // not a call: its context was done before it was admitted
	}
	r := o.c.seriesOf(e.Value())
	if info.Blocked != nil {
		r.blocked.Inc()
		if k := info.Blocked.Kind(); int(k) < len(r.rejected) {
			r.rejected[k].Inc()
		}
		return
	}
	r.passed.Inc()
	switch info.Outcome {
	case breaker.Failure:
		r.failed.Inc()
	case breaker.Refused:
		r.refused.Inc()
	}
	if info.Slow {
		r.slow.Inc()
	}
	if info.DryRun != nil {
		r.wouldReject[breakerview.DryModeOf(info.DryRun)].Inc()
	}
	r.rt.Observe(info.RT.Seconds())
}

// seriesOf returns the call series of s, creating them at its first call.
func (c *Collector) seriesOf(s *resourceSeries) *callSeries {
	s.once.Do(func() { s.calls = c.newCallSeries(s.label) })
	return s.calls
}

// newCallSeries creates the call series of the resource label, every outcome, cause and mode
// at once, so that each shows as zero until it happens.
func (c *Collector) newCallSeries(label string) *callSeries {
	s := &callSeries{
		passed:  c.callsTotal.WithLabelValues(label, OutcomePassed),
		blocked: c.callsTotal.WithLabelValues(label, OutcomeBlocked),
		failed:  c.callsTotal.WithLabelValues(label, OutcomeFailed),
		refused: c.callsTotal.WithLabelValues(label, OutcomeRefused),
		slow:    c.callsTotal.WithLabelValues(label, OutcomeSlow),
		rt:      c.rt.WithLabelValues(label),
	}
	for i, cause := range breakerview.Causes {
		s.rejected[i] = c.rejected.WithLabelValues(label, cause.String())
	}
	for i, mode := range breakerview.DryModes {
		s.wouldReject[i] = c.wouldReject.WithLabelValues(label, mode.String())
	}
	return s
}
