package libs

import (
	"context"
	"sync"

	"github.com/alibaba/sentinel-golang/api"
	"github.com/alibaba/sentinel-golang/core/circuitbreaker"

	"github.com/halfopen/breaker/benchmarks/internal/sentinelinit"
	"github.com/halfopen/breaker/benchmarks/scenario"
)

// Sentinel is sentinel-golang with the same two rules as breaker (ErrorRatio and
// SlowRequestRatio, the same window, minimum and retry timeout). It has no call timeout, so the
// caller's context carries the common timeout; a timed-out call is traced as an error, as is
// every error the call returns, a refusal included (sentinel counts what its user traces).
// sentinel-golang keeps its rules and listeners process-wide: each run has its own resource
// name, its rules are cleared at Close, and one listener hands changes to the run's guard.
func Sentinel(c Common) scenario.Library {
	return scenario.Library{Name: "sentinel", New: func(res string, changed func(scenario.State)) scenario.Guard {
		_, err := InitSentinel()
		must(err)
		listenOnce.Do(func() { circuitbreaker.RegisterStateChangeListeners(sentinelListener{}) })
		sentinelListeners.Store(res, newCombined(changed))
		base := circuitbreaker.Rule{
			Resource: res, MinRequestAmount: uint64(c.MinCalls),
			StatIntervalMs: uint32(c.Window.Milliseconds()), StatSlidingWindowBucketCount: uint32(c.Buckets),
			RetryTimeoutMs: uint32(c.RetryTimeout.Milliseconds()),
		}
		errRule, slowRule := base, base
		errRule.Strategy, errRule.Threshold = circuitbreaker.ErrorRatio, c.ErrorRatio
		slowRule.Strategy, slowRule.Threshold = circuitbreaker.SlowRequestRatio, c.SlowRatio
		slowRule.MaxAllowedRtMs = uint64(c.SlowRT.Milliseconds())
		_, err = circuitbreaker.LoadRulesOfResource(res, []*circuitbreaker.Rule{&errRule, &slowRule})
		must(err)
		return &sentinelGuard{res: res, c: c}
	}}
}

type sentinelGuard struct {
	res string
	c   Common
}

func (g *sentinelGuard) Call(ctx context.Context, fn func(context.Context) error) (bool, error) {
	e, blk := api.Entry(g.res)
	if blk != nil {
		return false, blk
	}
	defer e.Exit()
	ctx, cancel := context.WithTimeout(ctx, g.c.Timeout)
	defer cancel()
	err := fn(ctx)
	if err != nil {
		api.TraceError(e, err)
	}
	return true, err
}

func (g *sentinelGuard) Close() {
	_ = circuitbreaker.ClearRulesOfResource(g.res)
	sentinelListeners.Delete(g.res)
}

var (
	listenOnce        sync.Once
	sentinelListeners sync.Map // resource name → *combined
)

// InitSentinel initializes sentinel-golang once per process, quiet and offline; see
// sentinelinit.Init.
func InitSentinel() (logDir string, err error) { return sentinelinit.Init() }

// CleanupSentinel removes the log directory of InitSentinel; see sentinelinit.Cleanup.
func CleanupSentinel() { sentinelinit.Cleanup() }

// sentinelListener hands each state change to the guard of its resource.
type sentinelListener struct{}

func (sentinelListener) tell(r circuitbreaker.Rule, s scenario.State) {
	if c, ok := sentinelListeners.Load(r.Resource); ok {
		c.(*combined).set(r.Strategy, s)
	}
}

func (l sentinelListener) OnTransformToClosed(_ circuitbreaker.State, r circuitbreaker.Rule) {
	l.tell(r, scenario.Closed)
}

func (l sentinelListener) OnTransformToOpen(_ circuitbreaker.State, r circuitbreaker.Rule, _ interface{}) {
	l.tell(r, scenario.Open)
}

func (l sentinelListener) OnTransformToHalfOpen(_ circuitbreaker.State, r circuitbreaker.Rule) {
	l.tell(r, scenario.HalfOpen)
}
