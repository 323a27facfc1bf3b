package breakerdebug_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakerdebug"
)

// Given a Manager's configuration and the names called in a period with their calls, Uncalled
// lists the names configured and not called, with the nearest called name, those with one
// first; none under a template; an empty list when all were called; nil while Overflow counted
// calls.
func TestUncalledNames(t *testing.T) {
	m := breaker.NewManager(breaker.WithLogger(slog.New(slog.DiscardHandler)))
	typo := paymentsErrors
	typo.ID, typo.Resource = "typo", "paymnets"
	tmpl := breaker.Rule{Resource: "GET *", Strategy: breaker.ErrorCount, Threshold: 3,
		MinRequestAmount: 1, RetryTimeout: time.Second}
	require.NoError(t, m.LoadRules([]breaker.Rule{paymentsErrors, typo, tmpl}))
	require.NoError(t, m.LoadResources(map[string]breaker.ResourceConfig{
		"legacy":   {MaxConcurrency: 1},
		"GET /old": {MaxConcurrency: 2}, // under a template rule
		"POST *":   {MaxConcurrency: 3},
	}))
	_, err := m.Override("POST /new", breaker.ForceOpen, time.Hour, "") // under a template setting
	require.NoError(t, err)
	_, err = m.Override("legacy", breaker.ForceOpen, time.Hour, "")
	require.NoError(t, err)
	snap := m.Snapshot()

	tests := []struct {
		name string
		give map[string]uint64
		want []breakerdebug.UncalledName
	}{
		{
			name: "a typo near a called name, and a name near none",
			give: map[string]uint64{"payments": 60, "inventory": 1},
			want: []breakerdebug.UncalledName{
				{Name: "paymnets", Configured: []string{"rules"}, Nearest: "payments"},
				{Name: "legacy", Configured: []string{"settings", "override"}},
			},
		},
		{
			name: "a name with no calls is not called",
			give: map[string]uint64{"payments": 60, "legacy": 0},
			want: []breakerdebug.UncalledName{
				{Name: "paymnets", Configured: []string{"rules"}, Nearest: "payments"},
				{Name: "legacy", Configured: []string{"settings", "override"}},
			},
		},
		{
			name: "every configured name called",
			give: map[string]uint64{"payments": 60, "paymnets": 1, "legacy": 2},
			want: []breakerdebug.UncalledName{},
		},
		{
			name: "calls under Overflow may be any name's",
			give: map[string]uint64{"payments": 60, breakerdebug.Overflow: 1},
			want: nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, breakerdebug.Uncalled(&snap, tt.give))
		})
	}
}
