package libs

import (
	"context"
	"errors"
	"sync"

	"github.com/zeromicro/go-zero/core/breaker"
	"github.com/zeromicro/go-zero/core/stat"

	"github.com/halfopen/breaker/benchmarks/scenario"
)

// GoZero is go-zero's breaker (core/breaker), Google SRE adaptive throttling, with the
// library's defaults, which it does not let a user change: a rolling window of 10 s in 40
// buckets of 250 ms; K 1.5, lowered towards 1.1 by each of the newest buckets in a row that
// saw failures and no success; a protection of 5 calls. It drops with probability
// (total − 5 − K·accepts)/(total + 1), where total counts its own drops too, times the share
// of the window outside the newest run of buckets that saw successes and no failure; and it
// lets a call through whenever none passed for a second. It has no minimum of calls beyond
// the protection, and no states, so it is a throttler to the harness.
//
// It is called as go-zero's gRPC client interceptor calls it: DoWithAcceptableCtx, with an
// Acceptable that says which errors count as failures (the interceptor's counts deadline
// exceeded, unavailable, internal, resource exhausted and the like; here every error is a
// failure, the dependency answering nothing else: a refusal is RESOURCE_EXHAUSTED to it). Its
// HTTP middleware's Allow, then promise Accept or Reject, is the same bookkeeping. Its HTTP
// client (rest/httpc) would differ on refusals: it accepts every status below 500, a 429
// included. It has no call timeout: the caller's context carries the common one, and a
// timed-out call fails. A rejection is ErrServiceUnavailable, which the breaker counts as a
// drop in its window.
//
// Importing the package starts what go-zero's core starts in every process: automaxprocs, a
// CPU sampler every 250 ms, and a handler of SIGINT and SIGTERM for a graceful stop. Its
// alert on rejections and its usage log are turned off here, as they log to stdout.
func GoZero(c Common) scenario.Library {
	goZeroQuiet.Do(func() {
		stat.SetReporter(nil)
		stat.DisableLog()
	})
	return scenario.Library{Name: "go-zero", Throttler: true, New: func(name string, _ func(scenario.State)) scenario.Guard {
		return &goZeroGuard{b: breaker.NewBreaker(breaker.WithName(name)), c: c}
	}}
}

var goZeroQuiet sync.Once

type goZeroGuard struct {
	b breaker.Breaker
	c Common
}

// goZeroAcceptable is the Acceptable the guard passes: a call succeeded only if it returned
// no error.
func goZeroAcceptable(err error) bool { return err == nil }

func (g *goZeroGuard) Call(ctx context.Context, fn func(context.Context) error) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, g.c.Timeout)
	defer cancel()
	err := g.b.DoWithAcceptableCtx(ctx, func() error { return fn(ctx) }, goZeroAcceptable)
	return !errors.Is(err, breaker.ErrServiceUnavailable), err
}

func (g *goZeroGuard) Close() {}
