package breaker_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
)

// ErrorRatio still ignores a canceled call, however slow.
func TestErrorStrategiesIgnoreCanceled(t *testing.T) {
	h := newHarness(t, errorRatio(0.5, 1))
	require.NoError(t, h.complete("svc", time.Hour, context.Canceled))
	assert.Equal(t, uint64(0), h.m.Breakers("svc")[0].Stats().Total)
}

// ConsecutiveErrors 3: a success ends the run, an ignored call changes nothing, and the
// third failure in a row trips it with Snapshot 3.
func TestConsecutiveErrors(t *testing.T) {
	rule := breaker.Rule{Resource: "svc", Strategy: breaker.ConsecutiveErrors, Threshold: 3,
		RetryTimeout: 5 * time.Second}
	h := newHarness(t, rule)
	h.completeN("svc", 2, errDown)
	h.completeN("svc", 1, nil)
	h.completeN("svc", 2, errDown)
	require.NoError(t, h.complete("svc", 0, context.Canceled))
	st := h.m.Breakers("svc")[0].Stats()
	assert.Equal(t, uint64(2), st.Bad, "a run of two")
	assert.Equal(t, breaker.Closed, st.State)
	h.completeN("svc", 1, errDown)
	assert.Equal(t, []string{tripped}, h.events.transitions())
	assert.Equal(t, 3.0, h.events.last().Snapshot)
	h.clock.Advance(5 * time.Second)
	require.NoError(t, h.complete("svc", 0, nil))
	assert.Equal(t, breaker.Closed, h.state("svc", 0))
	assert.Zero(t, h.m.Breakers("svc")[0].Stats().Bad, "the run starts again")
}

// The window fields do not apply to ConsecutiveErrors: they are not part of its identity,
// and its JSON name is "ConsecutiveErrors".
func TestConsecutiveErrorsIdentityAndJSON(t *testing.T) {
	rule := breaker.Rule{Resource: "svc", Strategy: breaker.ConsecutiveErrors, Threshold: 3,
		RetryTimeout: 5 * time.Second}
	h := newHarness(t, rule)
	before := h.m.Breakers("svc")[0]
	spelled := rule
	spelled.MinRequestAmount, spelled.StatInterval, spelled.BucketCount = 9, 2*time.Second, 4
	require.NoError(t, h.m.LoadRules([]breaker.Rule{spelled}))
	assert.Same(t, before, h.m.Breakers("svc")[0])

	rules, err := breaker.ParseRules([]byte(`[{"resource":"svc","strategy":"ConsecutiveErrors","threshold":5,
		"retryTimeout":"1s","probeNum":2,"maxRetryTimeout":"1m","retryJitter":0.25}]`))
	require.NoError(t, err)
	assert.Equal(t, breaker.Rule{Resource: "svc", Strategy: breaker.ConsecutiveErrors, Threshold: 5,
		RetryTimeout: time.Second, ProbeNum: 2, MaxRetryTimeout: time.Minute, RetryJitter: 0.25}, rules[0])
}
