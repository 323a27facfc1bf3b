package breakerview_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakerview"
)

// Every kind of rejection the core has is among the Causes, in its own place.
func TestCausesAreEveryBlockKind(t *testing.T) {
	for i, kind := range breakerview.Causes {
		assert.Equal(t, breaker.BlockKind(i), kind)
		assert.NotContains(t, kind.String(), "BlockKind(")
	}
	assert.Contains(t, breaker.BlockKind(len(breakerview.Causes)).String(), "BlockKind(",
		"a kind past the Causes: add it to them")
}

// A call a DryRun rule would have rejected is dry by its rule; one a breaker of a resource
// forced closed would have, by the force.
func TestDryModeOf(t *testing.T) {
	assert.Equal(t, breakerview.DryByRule, breakerview.DryModeOf(&breaker.BlockError{Rule: &breaker.Rule{DryRun: true}}))
	assert.Equal(t, breakerview.DryByForce, breakerview.DryModeOf(&breaker.BlockError{Rule: &breaker.Rule{}}))
	assert.Equal(t, []string{"dry_run", "force_closed"},
		[]string{breakerview.DryModes[0].String(), breakerview.DryModes[1].String()})
}
