package libs

import (
	"context"
	"errors"

	"github.com/go-kratos/aegis/circuitbreaker"
	"github.com/go-kratos/aegis/circuitbreaker/sre"

	"github.com/halfopen/breaker/benchmarks/scenario"
)

// errKratosRejected is what the guard answers a call the breaker rejected, as Kratos' client
// middleware answers its ErrNotAllowed (a 503).
var errKratosRejected = errors.New("kratos-sre: request failed due to circuit breaker triggered")

// KratosSRE is go-kratos/aegis's SRE breaker (circuitbreaker/sre), Google SRE adaptive
// throttling, with its defaults, as Kratos' client circuit-breaker middleware makes it
// (sre.NewBreaker()): a rolling window of 3 s in 10 buckets of 300 ms, success 0.6 (K = 1/0.6
// ≈ 1.67), and no throttling while the window holds fewer than 100 calls; past that it drops
// with probability (total − K·successes)/(total + 1). It has no states the harness could
// follow (its internal open flag has no hook), so it is a throttler to the harness.
//
// It is called as that middleware calls it: Allow; when Allow rejects, MarkFailed (Kratos marks
// its own rejections, so that the drop ratio rises) and the caller gets an error without a
// call; otherwise the call, then MarkFailed if it failed as the middleware counts failures
// (kratosFailed), else MarkSuccess: a refusal is a 429 to Kratos, which its middleware marks
// a success. It has no call timeout: the caller's context carries the common one, and a
// timed-out call fails (a 504 to Kratos).
func KratosSRE(c Common) scenario.Library {
	return scenario.Library{Name: "kratos-sre", Throttler: true, New: func(string, func(scenario.State)) scenario.Guard {
		return &kratosGuard{b: sre.NewBreaker(), c: c}
	}}
}

type kratosGuard struct {
	b circuitbreaker.CircuitBreaker
	c Common
}

func (g *kratosGuard) Call(ctx context.Context, fn func(context.Context) error) (bool, error) {
	if err := g.b.Allow(); err != nil {
		g.b.MarkFailed()
		return false, errKratosRejected
	}
	ctx, cancel := context.WithTimeout(ctx, g.c.Timeout)
	defer cancel()
	err := fn(ctx)
	if kratosFailed(err) {
		g.b.MarkFailed()
	} else {
		g.b.MarkSuccess()
	}
	return true, err
}

// kratosFailed says whether Kratos' client middleware marks a call that returned err failed: it
// marks only a 500, a 503 and a 504. A plain error is a 500 to Kratos (its errors.FromError
// gives an error it does not know code 500), the dependency's failures are 500s and 503s, a
// timeout a 504 (a 500 over HTTP); a refusal is a 429, over HTTP or as gRPC's
// RESOURCE_EXHAUSTED, which the middleware marks a success like any other code.
func kratosFailed(err error) bool {
	return err != nil && !errors.Is(err, scenario.ErrRefused)
}

func (g *kratosGuard) Close() {}
