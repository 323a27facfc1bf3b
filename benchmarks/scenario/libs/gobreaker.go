package libs

import (
	"context"
	"errors"

	"github.com/sony/gobreaker/v2"

	"github.com/halfopen/breaker/benchmarks/scenario"
)

// Gobreaker is sony/gobreaker with the common error rule as its ReadyToTrip over a rolling
// window (Interval with BucketPeriod), one request in half-open (MaxRequests 1), and Timeout as
// the open period. It has no call timeout and no notion of a slow call, so the caller's context
// carries the common timeout and a timed-out call fails. Every error is a failure to it (its
// default IsSuccessful), a refusal included.
func Gobreaker(c Common) scenario.Library {
	return scenario.Library{Name: "gobreaker", New: func(name string, changed func(scenario.State)) scenario.Guard {
		cb := gobreaker.NewCircuitBreaker[struct{}](gobreaker.Settings{
			Name:         name,
			MaxRequests:  1,
			Interval:     c.Window,
			BucketPeriod: c.Window / 10,
			Timeout:      c.RetryTimeout,
			ReadyToTrip: func(n gobreaker.Counts) bool {
				return n.Requests >= uint32(c.MinCalls) && float64(n.TotalFailures) >= c.ErrorRatio*float64(n.Requests)
			},
			OnStateChange: func(_ string, _, to gobreaker.State) { changed(fromGobreaker(to)) },
		})
		return &gobreakerGuard{cb: cb, c: c}
	}}
}

type gobreakerGuard struct {
	cb *gobreaker.CircuitBreaker[struct{}]
	c  Common
}

func (g *gobreakerGuard) Call(ctx context.Context, fn func(context.Context) error) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, g.c.Timeout)
	defer cancel()
	_, err := g.cb.Execute(func() (struct{}, error) { return struct{}{}, fn(ctx) })
	rejected := errors.Is(err, gobreaker.ErrOpenState) || errors.Is(err, gobreaker.ErrTooManyRequests)
	return !rejected, err
}

func (g *gobreakerGuard) Close() {}

func fromGobreaker(s gobreaker.State) scenario.State {
	switch s {
	case gobreaker.StateOpen:
		return scenario.Open
	case gobreaker.StateHalfOpen:
		return scenario.HalfOpen
	}
	return scenario.Closed
}
