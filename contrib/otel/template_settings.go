package breakerotel

import (
	"go.opentelemetry.io/otel/metric"

	"github.com/halfopen/breaker"
)

// observeTemplateSettings reports breaker.force, breaker.concurrency.limit and breaker.timeout
// for each resource in snap that holds settings from a template setting, as its own
// breaker.resource with SettingsFromKey the template's key, so that the settings that apply to
// a name with none of its own show on that name; the key itself is no resource. Callers choose
// those names, so they take names of the bound, as calls do: the names past it report as
// OverflowResource, once for each template key, whose settings they all hold. Of names that
// share both attributes, the one claim picks reports. own holds the breaker.resource values
// that settings of their own reported, which keep theirs.
func (ins *Instruments) observeTemplateSettings(o metric.Observer, snap *breaker.Snapshot, own map[string]string) {
	names := make(map[settingsPoint]string)
	for i := range snap.Resources {
		r := &snap.Resources[i]
		if !isTemplate(r.SettingsFrom) || snap.Settings[r.SettingsFrom] == (breaker.ResourceConfig{}) {
			continue
		}
		resource := ins.resourceSets(r.Name).resource.Value.AsString()
		if _, ok := own[resource]; ok {
			continue
		}
		claim(names, settingsPoint{resource: resource, from: resourceValue(r.SettingsFrom)}, r.Name)
	}
	for p, name := range names {
		ins.observeConfig(o, snap.Settings[snap.Resource(name).SettingsFrom], p)
	}
}

// observeTemplateInFlight reports breaker.in_flight for each resource in snap that holds settings
// from a template setting: it counts its own calls in flight against the template's
// MaxConcurrency. Callers choose those names, so they take names of the bound, as calls do: the
// calls in flight of the names past it are added up as OverflowResource. Of names that share a
// breaker.resource, the one claim picks reports. own holds the breaker.resource values that
// settings of their own reported, which keep theirs.
func (ins *Instruments) observeTemplateInFlight(o metric.Observer, snap *breaker.Snapshot, own map[string]string) {
	counts := make(map[string]int64)
	names := make(map[string]string)
	for i := range snap.Resources {
		r := &snap.Resources[i]
		if !isTemplate(r.SettingsFrom) {
			continue
		}
		s := ins.resourceSets(r.Name)
		resource := s.resource.Value.AsString()
		if _, ok := own[resource]; ok {
			continue
		}
		if s == ins.overflow {
			counts[resource] += r.InFlight
		} else {
			claim(names, resource, r.Name)
		}
	}
	for resource, name := range names {
		counts[resource] += inFlight(snap, name) // a name really called OverflowResource shares its series
	}
	for resource, n := range counts {
		o.ObserveInt64(ins.inFlight, n, metric.WithAttributeSet(ins.set(ResourceKey.String(resource))))
	}
}
