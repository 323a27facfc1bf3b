package breakerprom_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakerview"
	breakerprom "github.com/halfopen/breaker/contrib/prometheus"
)

// Once a resource has its series, a call allocates nothing in the Collector, whether it
// succeeded, failed or was refused; nor does a call
// to a name too long to keep, or to a new name once the Collector is full.
func TestCallAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	c := breakerprom.New(breakerprom.WithLimits(breakerview.Limits{Names: 2}))
	m := breaker.NewManager(c.Option())
	require.NoError(t, m.LoadRules([]breaker.Rule{{Resource: "open", Strategy: breaker.ErrorCount,
		Threshold: 1, MinRequestAmount: 1, RetryTimeout: time.Hour}}))
	ctx := context.Background()
	ok := func(context.Context) error { return nil }
	fail := func(context.Context) error { return errDown }
	refused := breaker.CountAs(errDown, breaker.Refused) // made once: the function allocates nothing
	refuse := func(context.Context) error { return refused }
	_ = m.Do(ctx, "open", fail)
	require.ErrorIs(t, m.Do(ctx, "open", ok), breaker.ErrOpen)

	tests := []struct {
		give string
		fn   func(context.Context) error
	}{
		{give: "pass", fn: ok},
		{give: "pass", fn: fail},
		{give: "pass", fn: refuse},
		{give: "open", fn: ok},
		{give: strings.Repeat("x", breakerview.DefaultLimits().NameLength+1), fn: ok},
		{give: "new name past the bound", fn: ok},
	}
	for _, tt := range tests {
		_ = m.Do(ctx, tt.give, tt.fn) // the first call makes the resource's series
		allocs := testing.AllocsPerRun(100, func() { _ = m.Do(ctx, tt.give, tt.fn) })
		assert.Zero(t, allocs, "%.40s", tt.give)
	}
}
