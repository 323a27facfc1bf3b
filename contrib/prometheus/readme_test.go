package breakerprom_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
)

var (
	promqlBlock  = regexp.MustCompile("(?s)```promql\n(.*?)```")
	labelMatcher = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)\s*"`)
	byClause     = regexp.MustCompile(`\b(?:by|without)\s*\(([^)]*)\)`)
)

// targetLabels are the labels Prometheus adds to every scraped series.
var targetLabels = []string{"job", "instance"}

// Given the README, then it has queries, and each names only metrics the collector exports (a
// histogram's buckets by its _bucket series) and, in its matchers and its by clauses, only labels
// that those metrics have or that Prometheus adds to every target.
func TestReadmeQueries(t *testing.T) {
	data, err := os.ReadFile("README.md")
	require.NoError(t, err)
	blocks := promqlBlock.FindAllStringSubmatch(string(data), -1)
	require.NotEmpty(t, blocks, "no promql block in the README")

	labels := exportedLabels(t)
	for _, block := range blocks {
		query := strings.TrimSpace(block[1])
		names := metricName.FindAllString(query, -1)
		require.NotEmpty(t, names, "%s queries no breaker metric", query)
		known := slices.Clone(targetLabels)
		for _, name := range names {
			have, ok := labels[name]
			if bucket := strings.TrimSuffix(name, "_bucket"); !ok && bucket != name {
				have, ok = labels[bucket]
				have = append(slices.Clone(have), "le") // the bucket's bound
			}
			if assert.True(t, ok, "%s queries %s, which the collector does not export", query, name) {
				known = append(known, have...)
			}
		}
		var used []string
		for _, m := range labelMatcher.FindAllStringSubmatch(query, -1) {
			used = append(used, m[1])
		}
		for _, m := range byClause.FindAllStringSubmatch(query, -1) {
			for label := range strings.SplitSeq(m[1], ",") {
				used = append(used, strings.TrimSpace(label))
			}
		}
		for _, label := range used {
			assert.Contains(t, known, label, "%s uses the label %s, which none of its metrics has", query, label)
		}
	}
}

// exportedLabels returns the label names of each family the collector exports, once every
// family has a series.
func exportedLabels(t *testing.T) map[string][]string {
	t.Helper()
	f := newFixtureWith(t, nil, []breaker.Option{quiet}, errorCount("svc", 1))
	require.NoError(t, f.m.LoadResources(map[string]breaker.ResourceConfig{"svc": {MaxConcurrency: 2},
		"svd": {MaxConcurrency: 1}})) // never called: breaker_uncalled, once a minute has passed
	f.clock.Advance(time.Minute)
	assert.ErrorIs(t, f.call("svc", time.Millisecond, errDown), errDown) // trips
	assert.ErrorIs(t, f.call("svc", time.Millisecond, nil), breaker.ErrOpen)
	_, err := f.m.Override("svc", breaker.ForceClosed, time.Hour, "")
	require.NoError(t, err)

	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(f.c))
	families, err := reg.Gather()
	require.NoError(t, err)
	out := make(map[string][]string)
	for _, family := range families {
		var names []string
		for _, m := range family.GetMetric() {
			for _, l := range m.GetLabel() {
				if !slices.Contains(names, l.GetName()) {
					names = append(names, l.GetName())
				}
			}
		}
		out[family.GetName()] = names
	}
	return out
}
