package breakerview

import (
	"strconv"
	"strings"

	"github.com/halfopen/breaker"
)

// Overflow is the label of the calls of every name past a Calls' Limits, and of its other
// readings (template breakers, template settings, overrides) that take names of the bound.
// No name's label is Overflow: see Label.
const Overflow = "_other"

// SettingsOwn is the source of a resource's settings when they are its own; a template key, the
// other source, always ends in "*".
const SettingsOwn = "own"

// Label returns the label of the resource name on the exporters: name with its bytes that are
// not UTF-8 replaced by U+FFFD, as Prometheus and OTLP take only UTF-8 and refuse a whole
// scrape for one bad string; and, for a name whose label would be Overflow itself, that with a
// U+FFFD added, so that no resource is counted as the overflow. Names that differ only in
// bytes that are not UTF-8 share a label: of those, a gauge reports the first in byte order
// (see Series), and counts add up.
func Label(name string) string {
	l := strings.ToValidUTF8(name, "\uFFFD")
	if l == Overflow {
		l += "\uFFFD"
	}
	return l
}

// keyLabel is the label of a settings key: the key made valid UTF-8.
func keyLabel(key string) string { return strings.ToValidUTF8(key, "\uFFFD") }

// RuleLabel is the label of r, the i-th rule of its resource (counting from 0), on the
// exporters: r.ID made valid UTF-8 if it is set, else the strategy's name, "#" and i, as
// "ErrorRatio#0". Breaker.Label gives each breaker of a resource a label of its own.
func RuleLabel(r breaker.Rule, i int) string {
	if r.ID != "" {
		return keyLabel(r.ID)
	}
	return indexLabel(r, i)
}

func indexLabel(r breaker.Rule, i int) string { return r.Strategy.String() + "#" + strconv.Itoa(i) }

// ruleLabels returns the label of each of the breakers of one resource, in rule order, as
// RuleLabel says; when an earlier rule has that label, the rule's strategy and index, and ""
// (the rule is left out rather than failing a scrape) when that is taken too.
func ruleLabels(breakers []breaker.Stats) []string {
	labels := make([]string, len(breakers))
	taken := make(map[string]bool, len(breakers))
	for i := range breakers {
		r := breakers[i].Rule
		l := RuleLabel(r, i)
		if taken[l] {
			l = indexLabel(r, i)
		}
		if !taken[l] {
			labels[i] = l
			taken[l] = true
		}
	}
	return labels
}

// claim records in names (a label set → the name whose readings it reports) that name reports
// under key, unless a name before it in byte order does: so that neither the order of calls
// nor the breakers' states can move a label set from one name to another between reads.
func claim[K comparable](names map[K]string, key K, name string) {
	if held, ok := names[key]; !ok || name < held {
		names[key] = name
	}
}
