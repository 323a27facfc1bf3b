package breakerprom

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/halfopen/breaker"
)

// collectTemplateInFlight sends breaker_in_flight for each resource that holds settings from a
// template setting: it counts its own calls in flight against the template's MaxConcurrency.
// Callers choose those names, so they take names of the bound, as calls do: the calls in
// flight of the names past it are added up under OverflowResource. sent holds the resource
// labels that settings of their own sent, which keep theirs.
func (c *Collector) collectTemplateInFlight(m *breaker.Manager, sent map[string]bool,
	ch chan<- prometheus.Metric) {
	inFlight := make(map[string]int64)
	for _, name := range m.TemplateSettingsResources() {
		if label := c.entryOf(name).label; !sent[label] {
			inFlight[label] += m.InFlight(name)
		}
	}
	for label, n := range inFlight {
		ch <- prometheus.MustNewConstMetric(c.inFlight, prometheus.GaugeValue, float64(n), label)
	}
}
