package libs

import (
	"context"
	"errors"

	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/circuitbreaker"
	"github.com/failsafe-go/failsafe-go/timeout"

	"github.com/halfopen/breaker/benchmarks/scenario"
)

// Failsafe is failsafe-go's time-based failure-rate breaker (rate, minimum executions, period),
// a fixed delay in open, one trial execution in half-open (success threshold 1; by default it
// would allow as many as the minimum executions at once), and its own Timeout policy inside the
// breaker, so a timeout counts as a failure. Every error is a failure to it (no HandleErrors
// is set), a refusal included. It has no notion of a slow call.
func Failsafe(c Common) scenario.Library {
	return scenario.Library{Name: "failsafe", New: func(_ string, changed func(scenario.State)) scenario.Guard {
		cb := circuitbreaker.NewBuilder[any]().
			WithFailureRateThreshold(c.ErrorRatio, uint(c.MinCalls), c.Window).
			WithDelay(c.RetryTimeout).
			WithSuccessThreshold(1).
			OnStateChanged(func(e circuitbreaker.StateChangedEvent) { changed(fromFailsafe(e.NewState)) }).
			Build()
		return &failsafeGuard{ex: failsafe.With[any](cb, timeout.New[any](c.Timeout))}
	}}
}

type failsafeGuard struct{ ex failsafe.Executor[any] }

func (g *failsafeGuard) Call(ctx context.Context, fn func(context.Context) error) (bool, error) {
	err := g.ex.WithContext(ctx).RunWithExecution(func(e failsafe.Execution[any]) error {
		return fn(e.Context())
	})
	return !errors.Is(err, circuitbreaker.ErrOpen), err
}

func (g *failsafeGuard) Close() {}

func fromFailsafe(s circuitbreaker.State) scenario.State {
	switch s {
	case circuitbreaker.OpenState:
		return scenario.Open
	case circuitbreaker.HalfOpenState:
		return scenario.HalfOpen
	}
	return scenario.Closed
}
