package libs

import (
	"context"
	"errors"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/benchmarks/scenario"
)

// Breaker is this library with the rules a user would pick for a dependency that may fail or
// slow down: an ErrorRatio rule and a SlowRequestRatio rule on one resource, and the
// resource's own Timeout. With probes, each rule also wants ProbeNum probes in a row and backs
// off up to MaxRetryTimeout. Every variant counts the dependency's answers as breakerhttp's
// NewTransport does by default (countAsTransport): a refusal as breaker.Refused with its hint.
func Breaker(c Common, probes bool) scenario.Library {
	if !probes {
		return breakerLibrary("breaker", c, func(*breaker.Rule) {})
	}
	return breakerLibrary("breaker+probes", c, func(r *breaker.Rule) {
		r.ProbeNum = uint32(c.ProbeNum)
		r.MaxRetryTimeout = c.MaxRetryTimeout
	})
}

// Recommended is the guard "breaker+protect": Breaker with the protection the README
// recommends, each rule also judging its newest two buckets at FastThreshold 0.8, ramping up
// for RampUp after a probe closes it, pacing where its window trips while calls still succeed,
// and shortening each OPEN time by up to a fifth (RetryJitter), so that its probes do not keep
// step with a dependency that flaps on a period of its own.
func Recommended(c Common) scenario.Library {
	return breakerLibrary("breaker+protect", c, func(r *breaker.Rule) {
		r.FastBuckets, r.FastThreshold, r.RampUp, r.Pace, r.RetryJitter = 2, 0.8, c.RampUp, true, 0.2
	})
}

// breakerLibrary is Breaker with each rule changed by tune.
func breakerLibrary(name string, c Common, tune func(*breaker.Rule)) scenario.Library {
	return scenario.Library{Name: name, New: func(res string, changed func(scenario.State)) scenario.Guard {
		m := breaker.NewManager()
		base := breaker.Rule{
			Resource: res, MinRequestAmount: uint64(c.MinCalls), StatInterval: c.Window,
			BucketCount: uint32(c.Buckets), RetryTimeout: c.RetryTimeout,
		}
		tune(&base)
		errRule, slowRule := base, base
		errRule.Strategy, errRule.Threshold = breaker.ErrorRatio, c.ErrorRatio
		slowRule.Strategy, slowRule.Threshold, slowRule.MaxAllowedRT = breaker.SlowRequestRatio, c.SlowRatio, c.SlowRT
		must(m.LoadRules([]breaker.Rule{errRule, slowRule}))
		must(m.LoadResources(map[string]breaker.ResourceConfig{res: {Timeout: c.Timeout}}))
		state := newCombined(changed)
		remove := m.AddObserver(breaker.ObserverFunc(func(sc breaker.StateChange) {
			state.set(sc.Rule.Strategy, fromBreaker(sc.To))
		}))
		return &breakerGuard{r: m.Handle(res), remove: remove}
	}}
}

type breakerGuard struct {
	r      *breaker.Handle
	remove func()
}

func (g *breakerGuard) Call(ctx context.Context, fn func(context.Context) error) (bool, error) {
	err := g.r.Do(ctx, func(ctx context.Context) error { return countAsTransport(fn(ctx)) })
	return !errors.Is(err, breaker.ErrBlocked), err
}

// countAsTransport marks the dependency's answer as breakerhttp's NewTransport marks what it
// records, by default: a refusal (a 429) as breaker.Refused, with its Retry-After as
// breaker.RetryAfter; any other error stays a plain failure, a 503 without a hint included.
func countAsTransport(err error) error {
	hint, refused := scenario.RetryAfterOf(err)
	if !refused {
		return err
	}
	if hint > 0 {
		err = breaker.RetryAfter(err, hint)
	}
	return breaker.CountAs(err, breaker.Refused)
}

func (g *breakerGuard) Close() { g.remove() }

func fromBreaker(s breaker.State) scenario.State {
	switch s {
	case breaker.Open:
		return scenario.Open
	case breaker.HalfOpen:
		return scenario.HalfOpen
	}
	return scenario.Closed
}

// must panics on a configuration error: the configurations are constants of this program.
func must(err error) {
	if err != nil {
		panic(err)
	}
}
