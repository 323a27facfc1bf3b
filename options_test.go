package breaker_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
)

// WithClock(nil) and WithLogger(nil) keep the defaults rather than failing later.
func TestNilOptionsKeepDefaults(t *testing.T) {
	m := breaker.NewManager(breaker.WithClock(nil), breaker.WithLogger(nil))
	require.NoError(t, m.LoadRules([]breaker.Rule{errorCount(1, 1)}))
	err := m.Do(t.Context(), "svc", func(context.Context) error { return errDown })
	assert.Equal(t, errDown, err)
	assert.Equal(t, breaker.Open, m.Breakers("svc")[0].State())
}
