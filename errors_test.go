package breaker_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
)

// A breaker's rejection matches ErrBlocked and ErrOpen, also wrapped, and its message names
// the rule, by its ID when it has one.
func TestBlockErrorMatching(t *testing.T) {
	h := newHarness(t, errorCount(1, 1))
	h.completeN("svc", 1, errDown)
	err := h.m.Do(t.Context(), "svc", func(context.Context) error { return nil })
	assert.ErrorIs(t, err, breaker.ErrBlocked)
	assert.ErrorIs(t, err, breaker.ErrOpen)
	assert.NotErrorIs(t, err, errDown)
	var be *breaker.BlockError
	require.ErrorAs(t, err, &be)
	assert.Nil(t, be.Cause)
	assert.Equal(t, `breaker: call to "svc" rejected: circuit OPEN by rule ErrorCount`, be.Error())
	wrapped := fmt.Errorf("get order: %w", err)
	assert.ErrorIs(t, wrapped, breaker.ErrOpen)

	named := errorCount(1, 1)
	named.ID = "orders-errors"
	require.NoError(t, h.m.LoadRules([]breaker.Rule{named})) // same rule, new ID: still OPEN
	err = h.m.Do(t.Context(), "svc", func(context.Context) error { return nil })
	assert.EqualError(t, err, `breaker: call to "svc" rejected: circuit OPEN by rule "orders-errors" (ErrorCount)`)
	assert.False(t, errors.Is(errDown, breaker.ErrBlocked))
}

// A caller changing the BlockError it was handed changes no rule.
func TestBlockErrorRuleIsACopy(t *testing.T) {
	h := newHarness(t, errorCount(1, 1))
	h.completeN("svc", 1, errDown)
	var be *breaker.BlockError
	require.ErrorAs(t, h.complete("svc", 0, nil), &be)
	be.Rule.Resource = "changed"
	be.Rule.Threshold = 42
	assert.Equal(t, errorCount(1, 1), h.m.Breakers("svc")[0].Rule())
	h.at(5 * time.Second)
	h.completeN("svc", 1, errDown) // the probe fails: the next report names the rule as loaded
	assert.Equal(t, errorCount(1, 1), h.events.last().Rule)
}

// Each BlockKind prints as the metrics label it (TestQuickStartFallbackServesEveryRejection
// drives each kind), and a value past the kinds prints its number.
func TestBlockKindNames(t *testing.T) {
	names := []string{}
	for _, k := range []breaker.BlockKind{breaker.BlockedByBreaker, breaker.BlockedByForce, breaker.BlockedByLimit,
		breaker.BlockedBySlot, breaker.BlockedByName, breaker.BlockedByRampUp, breaker.BlockedByPacing, 9} {
		names = append(names, k.String())
	}
	assert.Equal(t, []string{"open", "forced_open", "concurrency_limit", "slot", "name_too_long", "ramping_up",
		"pacing", "BlockKind(9)"}, names)
}

// blockingSlot blocks every call.
type blockingSlot struct{}

func (blockingSlot) OnEntry(*breaker.Entry) error { return errors.New("no") }
func (blockingSlot) OnExit(*breaker.Entry)        {}
