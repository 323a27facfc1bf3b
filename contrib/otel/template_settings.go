package breakerotel

import (
	"go.opentelemetry.io/otel/metric"

	"github.com/halfopen/breaker"
)

// observeTemplateInFlight reports breaker.in_flight for each resource that holds settings from
// a template setting: it counts its own calls in flight against the template's MaxConcurrency.
// Callers choose those names, so they take names of the bound, as calls do: the calls in
// flight of the names past it are added up as OverflowResource. A name that settings of their
// own reported keeps its series.
func (ins *Instruments) observeTemplateInFlight(o metric.Observer, m *breaker.Manager, v *collection) {
	inFlight := make(map[string]int64)
	for _, name := range m.TemplateSettingsResources() {
		resource := ins.resourceSets(name).resource.Value.AsString()
		if _, own := v.loaded[resource]; !own {
			inFlight[resource] += m.InFlight(name)
		}
	}
	for resource, n := range inFlight {
		o.ObserveInt64(ins.inFlight, n, metric.WithAttributeSet(ins.set(ResourceKey.String(resource))))
	}
}
