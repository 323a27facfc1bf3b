package breakerprom

import "strings"

// labelValue makes s a valid label value: Prometheus takes only UTF-8.
func labelValue(s string) string {
	return strings.ToValidUTF8(s, "\uFFFD")
}

// claim records in names (a series' labels, such as its resource label → the name whose
// readings it reports) that name reports under label, unless a name before it in byte order
// does. Names that differ only in bytes that are not UTF-8 share a label, and two series with
// one label set fail the whole scrape, so a gauge reports one name per label set: the first in
// byte order, which neither the order of calls nor the breakers' states can move between
// scrapes. Counts do not need it: the calls, transitions and overrides of such names add up in
// their one series.
func claim[L comparable](names map[L]string, label L, name string) {
	if held, ok := names[label]; !ok || name < held {
		names[label] = name
	}
}
