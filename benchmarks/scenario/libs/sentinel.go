package libs

import (
	"context"
	"os"
	"sync"

	"github.com/alibaba/sentinel-golang/api"
	"github.com/alibaba/sentinel-golang/core/circuitbreaker"
	"github.com/alibaba/sentinel-golang/core/config"

	"github.com/halfopen/breaker/benchmarks/scenario"
)

// Sentinel is sentinel-golang with the same two rules as breaker (ErrorRatio and
// SlowRequestRatio, the same window, minimum and retry timeout). It has no call timeout, so the
// caller's context carries the common timeout; a timed-out call is traced as an error.
// sentinel-golang keeps its rules and listeners process-wide: each run has its own resource
// name, its rules are cleared at Close, and one listener hands changes to the run's guard.
func Sentinel(c Common) scenario.Library {
	return scenario.Library{Name: "sentinel", New: func(res string, changed func(scenario.State)) scenario.Guard {
		initSentinel()
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
		_, err := circuitbreaker.LoadRulesOfResource(res, []*circuitbreaker.Rule{&errRule, &slowRule})
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
	sentinelOnce      sync.Once
	sentinelListeners sync.Map // resource name → *combined
	// SentinelLogDir is the temp directory sentinel-golang was pointed at; the program removes it.
	SentinelLogDir string
)

// initSentinel initializes sentinel-golang once, quiet and offline, as the peer benchmarks do:
// no log output, no metric log, no system collectors, logs under a temp dir.
func initSentinel() {
	sentinelOnce.Do(func() {
		dir, err := os.MkdirTemp("", "sentinel-scenarios-")
		must(err)
		SentinelLogDir = dir
		conf := config.NewDefaultConfig()
		conf.Sentinel.Log.Logger = quietSentinel{}
		conf.Sentinel.Log.Dir = dir
		conf.Sentinel.Log.Metric.FlushIntervalSec = 0
		conf.Sentinel.Stat.System.CollectIntervalMs = 0
		conf.Sentinel.Stat.System.CollectLoadIntervalMs = 0
		conf.Sentinel.Stat.System.CollectCpuIntervalMs = 0
		conf.Sentinel.Stat.System.CollectMemoryIntervalMs = 0
		must(api.InitWithConfig(conf))
		circuitbreaker.RegisterStateChangeListeners(sentinelListener{})
	})
}

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

type quietSentinel struct{}

func (quietSentinel) Debug(string, ...any)        {}
func (quietSentinel) DebugEnabled() bool          { return false }
func (quietSentinel) Info(string, ...any)         {}
func (quietSentinel) InfoEnabled() bool           { return false }
func (quietSentinel) Warn(string, ...any)         {}
func (quietSentinel) WarnEnabled() bool           { return false }
func (quietSentinel) Error(error, string, ...any) {}
func (quietSentinel) ErrorEnabled() bool          { return false }
