package breakerprom

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/halfopen/breaker"
)

// resourceMetrics is the series of one resource, taken from the vectors once so that a call
// only adds to them.
type resourceMetrics struct {
	passed, blocked, failed, slow prometheus.Counter
	rt                            prometheus.Observer
}

// callObserver counts a Manager's calls into its Collector.
type callObserver struct{ c *Collector }

// OnCall counts one call. In steady state it allocates nothing: a map load and a few atomic
// adds.
func (o callObserver) OnCall(info breaker.CallInfo) {
	r := o.c.metricsOf(info.Resource)
	if info.Blocked != nil {
		r.blocked.Inc()
		return
	}
	r.passed.Inc()
	if info.Outcome == breaker.Failure {
		r.failed.Inc()
	}
	if info.Slow {
		r.slow.Inc()
	}
	r.rt.Observe(info.RT.Seconds())
}

// metricsOf returns the series of resource, creating them on its first call.
func (c *Collector) metricsOf(resource string) *resourceMetrics {
	if r, ok := c.resources.Load(resource); ok {
		return r.(*resourceMetrics)
	}
	return c.newMetrics(resource)
}

// newMetrics creates the series of resource, all of its outcomes at once, so that each shows
// as zero until it happens. Two calls racing to create them get the same series.
func (c *Collector) newMetrics(resource string) *resourceMetrics {
	label := labelValue(resource)
	r := &resourceMetrics{
		passed:  c.calls.WithLabelValues(label, OutcomePassed),
		blocked: c.calls.WithLabelValues(label, OutcomeBlocked),
		failed:  c.calls.WithLabelValues(label, OutcomeFailed),
		slow:    c.calls.WithLabelValues(label, OutcomeSlow),
		rt:      c.rt.WithLabelValues(label),
	}
	actual, _ := c.resources.LoadOrStore(resource, r)
	return actual.(*resourceMetrics)
}
