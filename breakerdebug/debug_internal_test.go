package breakerdebug

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakerhttp"
	"github.com/halfopen/breaker/breakerview"
)

// Given a view's row of a route whose breaker's window holds refused calls among its bad ones
// (Stats.Refused, which the core counts), then the row says its side, and the breaker its
// refused calls beside its bad ones.
func TestRowShowsSideAndRefused(t *testing.T) {
	rule := breaker.Rule{Resource: breakerhttp.ServerPrefix + "POST /orders", Strategy: breaker.ErrorRatio,
		Threshold: 0.5}
	r := &breakerview.Resource{Name: rule.Resource, Side: breakerview.ServerSide, Breakers: []breakerview.Breaker{{
		Stats:    breaker.Stats{Rule: rule, State: breaker.Closed, Total: 10, Bad: 3, Refused: 2},
		Windowed: true,
	}}}
	got := (&handler{}).resourceStatusOf(r)
	assert.Equal(t, "server", got.Side)
	require.Len(t, got.Breakers, 1)
	assert.Equal(t, uint64(3), got.Breakers[0].Bad)
	assert.Equal(t, uint64(2), got.Breakers[0].Refused)
}
