package breakerdebug

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakerview"
)

// row is a resource with one breaker per state given, under the template t ("" for none).
func row(name, t string, states ...breaker.State) *breakerview.Resource {
	r := &breakerview.Resource{Name: name, Template: t}
	for _, s := range states {
		r.Breakers = append(r.Breakers, breakerview.Breaker{Stats: breaker.Stats{State: s}})
	}
	return r
}

// busy gives r's first breaker total calls in its window.
func busy(r *breakerview.Resource, total uint64) *breakerview.Resource {
	r.Breakers[0].Total = total
	return r
}

func names(rows []*breakerview.Resource) []string {
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
	forced.Force = breaker.ForceOpen
	overridden := row("overridden", "") // no rules; an override lifting its settings' force
	overridden.Override = &breaker.OverrideInfo{Resource: "overridden", Force: breaker.Auto}
	forcedClosed := row("forced-closed", "", breaker.Open) // its breaker rejects nothing
	forcedClosed.Force, forcedClosed.Breakers[0].DryRun = breaker.ForceClosed, true
	dry := row("dry", "", breaker.Open)
	dry.Breakers[0].DryRun = true
	settingsOnly := row("settings-only", "")
	settingsOnly.Settings, settingsOnly.SettingsFrom = breaker.ResourceConfig{MaxConcurrency: 20}, "*"

	rows := []*breakerview.Resource{
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
	rows := []*breakerview.Resource{
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
	assert.Equal(t, []string{"api/a"}, names(worstFirst([]*breakerview.Resource{row("api/a", "api/*", breaker.Closed)})))
}
