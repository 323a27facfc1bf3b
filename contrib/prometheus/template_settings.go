package breakerprom

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/halfopen/breaker"
)

// collectTemplateSettings sends breaker_force, breaker_max_concurrency and
// breaker_timeout_seconds for each resource in snap that holds settings from a template
// setting, under its own name with settings_from the template's key, so that the settings that
// apply to a name with none of its own show on that name; the key itself is no resource. Callers
// choose those names, so they take names of the bound, as calls do: the names past it report
// under OverflowResource, once for each template key, whose settings they all hold. Of names
// that share both labels, the one claim picks reports. own holds the resource labels that
// settings of their own sent, which keep theirs.
func (c *Collector) collectTemplateSettings(snap *breaker.Snapshot, own map[string]string,
	ch chan<- prometheus.Metric) {
	names := make(map[settingsSeries]string)
	for i := range snap.Resources {
		r := &snap.Resources[i]
		if !isTemplate(r.SettingsFrom) || snap.Settings[r.SettingsFrom] == (breaker.ResourceConfig{}) {
			continue
		}
		e := c.entryOf(r.Name)
		if _, ok := own[e.label]; ok {
			continue
		}
		claim(names, settingsSeries{resource: e.label, from: labelValue(r.SettingsFrom)}, r.Name)
	}
	for s, name := range names {
		c.sendSettings(ch, snap.Settings[snap.Resource(name).SettingsFrom], s)
	}
}

// collectTemplateInFlight sends breaker_in_flight for each resource in snap that holds settings
// from a template setting: it counts its own calls in flight against the template's
// MaxConcurrency. Callers choose those names, so they take names of the bound, as calls do: the
// calls in flight of the names past it are added up under OverflowResource. Of names that share
// a resource label, the one claim picks reports. own holds the resource labels that settings of
// their own sent, which keep theirs.
func (c *Collector) collectTemplateInFlight(snap *breaker.Snapshot, own map[string]string,
	ch chan<- prometheus.Metric) {
	counts := make(map[string]int64)
	names := make(map[string]string)
	for i := range snap.Resources {
		r := &snap.Resources[i]
		if !isTemplate(r.SettingsFrom) {
			continue
		}
		e := c.entryOf(r.Name)
		if _, ok := own[e.label]; ok {
			continue
		}
		if e == c.overflow {
			counts[e.label] += r.InFlight
		} else {
			claim(names, e.label, r.Name)
		}
	}
	for label, name := range names {
		counts[label] += inFlight(snap, name) // a name really called OverflowResource shares its series
	}
	for label, n := range counts {
		ch <- prometheus.MustNewConstMetric(c.inFlight, prometheus.GaugeValue, float64(n), label)
	}
}
