package breakerprom

import (
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/atomic"

	"github.com/halfopen/breaker"
)

// resource is what a Collector keeps for one resource label: a resource name, or the overflow.
type resource struct {
	label string                          // the name as a label value, or OverflowResource
	calls atomic.Pointer[resourceMetrics] // nil until the first call counted under label
}

// resourceMetrics is the series of one resource, taken from the vectors once so that a call
// only adds to them.
type resourceMetrics struct {
	passed, blocked, failed, slow prometheus.Counter
	rt                            prometheus.Observer
}

// callObserver counts a Manager's calls into its Collector.
type callObserver struct{ c *Collector }

// OnCall counts one call. In steady state it allocates nothing: a map load, an atomic load and
// a few atomic adds.
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

// metricsOf returns the call series of the resource name, creating them on its first call.
func (c *Collector) metricsOf(name string) *resourceMetrics {
	r := c.resourceOf(name)
	if m := r.calls.Load(); m != nil {
		return m
	}
	return c.newMetrics(r)
}

// newMetrics creates the call series of r, all of its outcomes at once, so that each shows as
// zero until it happens. Two calls racing to create them get the same series.
func (c *Collector) newMetrics(r *resource) *resourceMetrics {
	r.calls.CompareAndSwap(nil, &resourceMetrics{
		passed:  c.calls.WithLabelValues(r.label, OutcomePassed),
		blocked: c.calls.WithLabelValues(r.label, OutcomeBlocked),
		failed:  c.calls.WithLabelValues(r.label, OutcomeFailed),
		slow:    c.calls.WithLabelValues(r.label, OutcomeSlow),
		rt:      c.rt.WithLabelValues(r.label),
	})
	return r.calls.Load()
}

// resourceOf returns the resource of name: its own while fewer than c.maxResources names have
// one, else the overflow.
func (c *Collector) resourceOf(name string) *resource {
	if r, ok := c.resources.Load(name); ok {
		return r.(*resource)
	}
	if r := c.overflow.Load(); r != nil {
		return r
	}
	return c.addResource(name)
}

// addResource is the slow path of resourceOf. The count and the map change together under
// c.resourcesMu, so the bound is exact however many goroutines race here.
func (c *Collector) addResource(name string) *resource {
	c.resourcesMu.Lock()
	defer c.resourcesMu.Unlock()
	if r, ok := c.resources.Load(name); ok {
		return r.(*resource)
	}
	if r := c.overflow.Load(); r != nil {
		return r
	}
	if c.named == c.maxResources {
		r := &resource{label: OverflowResource}
		c.overflow.Store(r)
		return r
	}
	r := &resource{label: labelValue(name)}
	c.resources.Store(name, r)
	c.named++
	return r
}
