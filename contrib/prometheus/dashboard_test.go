package breakerprom_test

import (
	"encoding/json"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
)

// dashboard is what the test reads of a Grafana dashboard.
type dashboard struct {
	Panels     []panel `json:"panels"`
	Templating struct {
		List []struct {
			Name       string `json:"name"`
			Definition string `json:"definition"`
		} `json:"list"`
	} `json:"templating"`
}

type panel struct {
	ID      int    `json:"id"`
	Type    string `json:"type"`
	Title   string `json:"title"`
	Targets []struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	} `json:"targets"`
	Panels []panel `json:"panels"` // of a row
}

var metricName = regexp.MustCompile(`breaker_[a-z_]+`)

// Given dashboard.json, then it is valid JSON, every panel queries something, and every metric
// it queries is one the collector exports (a histogram's by its _bucket, _sum or _count
// series); and every metric the collector exports is on the dashboard.
func TestDashboard(t *testing.T) {
	data, err := os.ReadFile("dashboard.json")
	require.NoError(t, err)
	var d dashboard
	require.NoError(t, json.Unmarshal(data, &d))

	exported := exportedFamilies(t)
	used := make(map[string]bool)
	check := func(where, expr string) {
		names := metricName.FindAllString(expr, -1)
		assert.NotEmpty(t, names, "%s queries no breaker metric: %s", where, expr)
		for _, name := range names {
			family := name
			if _, ok := exported[name]; !ok {
				family = strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(name, "_bucket"), "_sum"), "_count")
			}
			typ, ok := exported[family]
			if assert.True(t, ok, "%s queries %s, which the collector does not export", where, name) &&
				family != name {
				assert.Equal(t, dto.MetricType_HISTOGRAM, typ, "%s queries %s, but %s is no histogram", where, name, family)
			}
			used[family] = true
		}
	}

	var types []string
	exprs := make(map[string][]string) // panel type → its queries
	var walk func([]panel)
	walk = func(panels []panel) {
		for _, p := range panels {
			walk(p.Panels)
			if p.Type == "row" {
				continue
			}
			types = append(types, p.Type)
			assert.NotEmpty(t, p.Targets, "panel %d %q has no query", p.ID, p.Title)
			for _, target := range p.Targets {
				check("panel "+p.Title+" query "+target.Expr, target.Expr)
				exprs[p.Type] = append(exprs[p.Type], target.Expr)
			}
		}
	}
	walk(d.Panels)
	for _, v := range d.Templating.List {
		if v.Definition != "" {
			check("variable "+v.Name, v.Definition)
		}
	}

	assert.Contains(t, types, "state-timeline", "the breaker states")
	// A dry-run breaker's OPEN is told apart from an enforcing one's, and forced resources have
	// a timeline of their own, so neither is mistaken for a tripped breaker.
	timelines := strings.Join(exprs["state-timeline"], "\n")
	assert.Contains(t, timelines, `breaker_state{resource=~"$resource", dry_run="false"}`)
	assert.Contains(t, timelines, `breaker_state{resource=~"$resource", dry_run="true"}`)
	assert.Contains(t, timelines, "breaker_force")
	assert.ElementsMatch(t, slices.Collect(maps.Keys(exported)), slices.Collect(maps.Keys(used)),
		"every exported metric is on the dashboard")
}

// exportedFamilies returns the name and type of each family the collector exports, once every
// family has a series.
func exportedFamilies(t *testing.T) map[string]dto.MetricType {
	t.Helper()
	f := newFixture(t, errorCount("svc", 1))
	require.NoError(t, f.m.LoadResources(map[string]breaker.ResourceConfig{"svc": {MaxConcurrency: 2},
		"svd": {MaxConcurrency: 1}})) // never called: breaker_uncalled, once a minute has passed
	f.clock.Advance(time.Minute)
	assert.ErrorIs(t, f.call("svc", time.Millisecond, errDown), errDown) // trips
	assert.ErrorIs(t, f.call("svc", time.Millisecond, nil), breaker.ErrOpen)
	_, err := f.m.Override("svc", breaker.ForceOpen, time.Hour, "on the dashboard") // the override gauges
	require.NoError(t, err)

	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(f.c))
	families, err := reg.Gather()
	require.NoError(t, err)
	exported := make(map[string]dto.MetricType)
	for _, family := range families {
		exported[family.GetName()] = family.GetType()
	}
	require.Len(t, exported, 19)
	return exported
}
