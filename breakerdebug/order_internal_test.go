package breakerdebug

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/halfopen/breaker"
)

// Runs of digits compare as numbers, the rest byte by byte, and names equal that way still
// have an order.
func TestCompareNames(t *testing.T) {
	tests := []struct {
		give []string
		want []string
	}{
		{give: []string{"shard-10", "shard-2", "shard-1"}, want: []string{"shard-1", "shard-2", "shard-10"}},
		{give: []string{"b", "a10", "a9", "a"}, want: []string{"a", "a9", "a10", "b"}},
		{give: []string{"host-2.pod-10", "host-2.pod-9", "host-10.pod-1"},
			want: []string{"host-2.pod-9", "host-2.pod-10", "host-10.pod-1"}},
		{give: []string{"a1", "a01", "a001"}, want: []string{"a001", "a01", "a1"}}, // equal as numbers: as strings
		{give: []string{"v99999999999999999999999", "v100000000000000000000000"},
			want: []string{"v99999999999999999999999", "v100000000000000000000000"}}, // past uint64
		{give: []string{"x-1", "x1", "x"}, want: []string{"x", "x-1", "x1"}},
		{give: []string{"GET /b", "GET /a/2", "GET /a/10"}, want: []string{"GET /a/2", "GET /a/10", "GET /b"}},
	}
	for _, tt := range tests {
		got := slices.Clone(tt.give)
		slices.SortFunc(got, compareNames)
		assert.Equal(t, tt.want, got, "%q", tt.give)
		for _, a := range tt.give {
			assert.Zero(t, compareNames(a, a), a)
			for _, b := range tt.give {
				assert.Equal(t, compareNames(a, b), -compareNames(b, a), "%q %q", a, b)
			}
		}
	}
}

// row is a resource with one breaker per state given, under the template t ("" for none).
func row(name, t string, states ...breaker.State) *breaker.ResourceStatus {
	r := &breaker.ResourceStatus{Name: name, Template: t}
	for _, s := range states {
		r.Breakers = append(r.Breakers, breaker.Stats{State: s})
	}
	return r
}

// busy gives r's first breaker total calls in its window.
func busy(r *breaker.ResourceStatus, total uint64) *breaker.ResourceStatus {
	r.Breakers[0].Total = total
	return r
}

func names(rows []*breaker.ResourceStatus) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.Name
	}
	return out
}

// Given resources in every condition, when they are ordered, then OPEN comes first, then
// HALF_OPEN, pacing, ramping, forced or overridden, and the rest; within each, the busiest
// first, then by name in natural order. A breaker that rejects nothing orders no row.
func TestWorstFirst(t *testing.T) {
	pacing := row("pacing", "", breaker.Closed)
	pacing.Breakers[0].Pacing = true
	ramping := busy(row("ramping", "", breaker.Closed), 9) // busier, and still after pacing
	ramping.Breakers[0].RampingUp = true
	forced := row("forced", "", breaker.Closed)
	forced.Settings.Force = breaker.ForceOpen
	overridden := row("overridden", "") // no rules; an override lifting its settings' force
	overridden.Override = &breaker.OverrideInfo{Resource: "overridden", Force: breaker.Auto}
	forcedClosed := row("forced-closed", "", breaker.Open) // its breaker rejects nothing
	forcedClosed.Settings.Force = breaker.ForceClosed
	dry := row("dry", "", breaker.Open)
	dry.Breakers[0].Rule.DryRun = true
	settingsOnly := row("settings-only", "")
	settingsOnly.Settings, settingsOnly.SettingsFrom = breaker.ResourceConfig{MaxConcurrency: 20}, "*"

	rows := []*breaker.ResourceStatus{
		busy(row("shard-10", "", breaker.Closed), 5),
		dry,
		row("shard-2", "", breaker.Closed),
		busy(row("busy", "", breaker.Closed), 50),
		forcedClosed,
		overridden,
		settingsOnly,
		ramping,
		pacing,
		row("half", "", breaker.Closed, breaker.HalfOpen),
		forced,
		busy(row("shard-1", "", breaker.Closed), 5),
		row("open-b", "", breaker.Closed, breaker.Open),
		busy(row("open-a", "", breaker.Open, breaker.Closed), 0),
		busy(row("open-c", "", breaker.Closed, breaker.Open), 7),
	}
	got := worstFirst(rows)
	assert.Equal(t, []string{
		"open-c", "open-a", "open-b", // OPEN: busiest, then by name
		"half",
		"pacing",
		"ramping",
		"forced", "forced-closed", "overridden", // forced or overridden, by name
		"busy", "shard-1", "shard-10", // the rest: 50, 5, 5 calls (1 before 10)
		"dry", "settings-only", "shard-2", // no calls, by name
	}, names(got))

	wants := map[string]worst{"open-a": worstOpen, "half": worstHalfOpen, "pacing": worstPacing, "ramping": worstRampingUp,
		"forced": worstForced, "forced-closed": worstForced, "overridden": worstOverridden,
		"dry": worstDryRun, "busy": worstClosed, "settings-only": worstClosed}
	for _, r := range got {
		if w, ok := wants[r.Name]; ok {
			assert.Equal(t, w, worstOf(r), r.Name)
		}
	}
}

// Given the names two template rules made among other resources, when they are ordered, then
// each template's names follow one another, worst first, where the worst of them comes in the
// order of the rest: a group sorts by its worst member.
func TestWorstFirstGroupsTemplates(t *testing.T) {
	rows := []*breaker.ResourceStatus{
		row("api/b", "api/*", breaker.Closed),
		busy(row("host-10", "host-*", breaker.Closed), 3),
		row("payments", "", breaker.Closed),
		row("api/a", "api/*", breaker.Closed),
		row("inventory", "", breaker.HalfOpen),
		row("api/c", "api/*", breaker.Open),
		busy(row("host-2", "host-*", breaker.Closed), 3),
		row("search", "", breaker.Open),
		busy(row("host-1", "host-*", breaker.Closed), 9),
	}
	got := worstFirst(rows)
	assert.Equal(t, []string{
		"api/c", "api/a", "api/b", // its worst, api/c, is OPEN and comes before search by name
		"search",
		"inventory",
		"host-1", "host-2", "host-10", // the busiest of the rest
		"payments",
	}, names(got))
}

// Given no rows, or one, then the order is what it is.
func TestWorstFirstEdges(t *testing.T) {
	assert.Empty(t, worstFirst(nil))
	assert.Equal(t, []string{"api/a"}, names(worstFirst([]*breaker.ResourceStatus{row("api/a", "api/*", breaker.Closed)})))
}
