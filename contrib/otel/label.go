package breakerotel

import "strings"

// resourceValue makes name a valid breaker.resource: OTLP and Prometheus take only UTF-8 and
// refuse a whole export for one bad string, so the bad bytes become U+FFFD.
func resourceValue(name string) string {
	return strings.ToValidUTF8(name, "\uFFFD")
}

// claim records in names (a data point's attributes, such as its breaker.resource → the name
// whose readings it reports) that name reports as resource, unless a name before it in byte
// order does. Names that differ only in bytes that are not UTF-8 share a breaker.resource, and a
// gauge observed twice with one attribute set keeps either observation, so a gauge reports one
// name per attribute set: the first in byte order, which neither the order of calls nor the
// breakers' states can move between collections. Counts do not need it: the calls,
// transitions and overrides of such names add up in their one data point.
func claim[K comparable](names map[K]string, resource K, name string) {
	if held, ok := names[resource]; !ok || name < held {
		names[resource] = name
	}
}
