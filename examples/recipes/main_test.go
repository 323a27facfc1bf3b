package recipes_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakertest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// newManager returns a Manager on a fake clock with rules and settings loaded, as a service
// loads every recipe's at start-up.
func newManager(t *testing.T, rules []breaker.Rule, settings map[string]breaker.ResourceConfig,
	opts ...breaker.Option) (*breaker.Manager, *breakertest.Clock) {
	t.Helper()
	clock := breakertest.NewClock()
	m := breaker.NewManager(append([]breaker.Option{breaker.WithClock(clock)}, opts...)...)
	require.NoError(t, m.LoadRules(rules))
	require.NoError(t, m.LoadResources(settings))
	return m, clock
}

// states returns the state of each breaker of resource, in rule order.
func states(m *breaker.Manager, resource string) []breaker.State {
	var out []breaker.State
	for _, b := range m.Breakers(resource) {
		out = append(out, b.State())
	}
	return out
}
