package benchmarks

import (
	"os"
	"sync"
	"testing"

	"github.com/alibaba/sentinel-golang/api"
	"github.com/alibaba/sentinel-golang/core/base"
	"github.com/alibaba/sentinel-golang/core/circuitbreaker"
	"github.com/alibaba/sentinel-golang/core/config"
)

// sentinel-golang keeps its rules and breakers in process-wide state, so every benchmark uses
// its own resource name. Reloading identical rules keeps their breakers, so a benchmark that
// runs again (benchmark ramp-up, -count, -cpu) finds its resource as it left it.

// hourMs is the retry window of every sentinel rule: an hour, in milliseconds.
const hourMs = 3600 * 1000

var (
	sentinelOnce   sync.Once
	sentinelErr    error
	sentinelLogDir string
)

// quietLogger discards sentinel-golang's log records.
type quietLogger struct{}

func (quietLogger) Debug(string, ...any)        {}
func (quietLogger) DebugEnabled() bool          { return false }
func (quietLogger) Info(string, ...any)         {}
func (quietLogger) InfoEnabled() bool           { return false }
func (quietLogger) Warn(string, ...any)         {}
func (quietLogger) WarnEnabled() bool           { return false }
func (quietLogger) Error(error, string, ...any) {}
func (quietLogger) ErrorEnabled() bool          { return false }

// initSentinel initializes sentinel-golang once per process, quiet and offline.
//
// api.InitDefault would log to files under ~/logs/csp and start a task flushing metric logs
// there every second, plus three collectors of system load, CPU and memory. Instead the config
// keeps the defaults but logs nowhere, turns the metric log and the system collectors off
// (neither takes part in circuit breaking) and points the log directory at a temp dir, which
// TestMain removes.
func initSentinel(b *testing.B) {
	b.Helper()
	sentinelOnce.Do(func() {
		sentinelLogDir, sentinelErr = os.MkdirTemp("", "sentinel-bench-")
		if sentinelErr != nil {
			return
		}
		conf := config.NewDefaultConfig()
		conf.Sentinel.Log.Logger = quietLogger{}
		conf.Sentinel.Log.Dir = sentinelLogDir
		conf.Sentinel.Log.Metric.FlushIntervalSec = 0
		conf.Sentinel.Stat.System.CollectIntervalMs = 0
		conf.Sentinel.Stat.System.CollectLoadIntervalMs = 0
		conf.Sentinel.Stat.System.CollectCpuIntervalMs = 0
		conf.Sentinel.Stat.System.CollectMemoryIntervalMs = 0
		sentinelErr = api.InitWithConfig(conf)
	})
	if sentinelErr != nil {
		b.Fatal(sentinelErr)
	}
}

// cleanupSentinel removes the temp log directory, if initSentinel made one.
func cleanupSentinel() {
	if sentinelLogDir != "" {
		_ = os.RemoveAll(sentinelLogDir)
	}
}

// loadSentinelRules replaces the rules of one resource, leaving the other benchmarks' alone
// (circuitbreaker.LoadRules would replace the rules of every resource).
func loadSentinelRules(b *testing.B, res string, rules ...*circuitbreaker.Rule) {
	b.Helper()
	if _, err := circuitbreaker.LoadRulesOfResource(res, rules); err != nil {
		b.Fatal(err)
	}
}

// setupSentinelPass gives res the same two rules as breaker's pass benchmark, with breaker's
// defaults spelled out: at least 5 calls in a 1s window of 10 buckets.
func setupSentinelPass(b *testing.B, res string) {
	b.Helper()
	initSentinel(b)
	loadSentinelRules(b, res,
		&circuitbreaker.Rule{
			Resource: res, Strategy: circuitbreaker.SlowRequestRatio, Threshold: 0.5, MaxAllowedRtMs: 1000,
			MinRequestAmount: 5, StatIntervalMs: 1000, StatSlidingWindowBucketCount: 10, RetryTimeoutMs: hourMs,
		},
		&circuitbreaker.Rule{
			Resource: res, Strategy: circuitbreaker.ErrorRatio, Threshold: 0.5,
			MinRequestAmount: 5, StatIntervalMs: 1000, StatSlidingWindowBucketCount: 10, RetryTimeoutMs: hourMs,
		},
	)
}

// setupSentinelReject opens res for an hour with one failing call, unless an earlier run of
// the same benchmark already did.
func setupSentinelReject(b *testing.B, res string) {
	b.Helper()
	initSentinel(b)
	loadSentinelRules(b, res, &circuitbreaker.Rule{
		Resource: res, Strategy: circuitbreaker.ErrorCount, Threshold: 1,
		MinRequestAmount: 1, StatIntervalMs: 1000, RetryTimeoutMs: hourMs,
	})
	if e, blk := api.Entry(res); blk == nil {
		api.TraceError(e, fail())
		e.Exit()
	}
	e, blk := api.Entry(res)
	if blk == nil {
		e.Exit()
		b.Fatal("after tripping: call passed, want it blocked")
	}
	if blk.BlockType() != base.BlockTypeCircuitBreaking {
		b.Fatalf("after tripping: blocked by %v, want circuit breaking", blk.BlockType())
	}
}

// sentinelCall is one call as sentinel-golang's API makes it: Entry, the work, the error if
// any, Exit. It returns the block error, nil if the call passed.
func sentinelCall(res string) *base.BlockError {
	e, blk := api.Entry(res)
	if blk != nil {
		return blk
	}
	if err := succeed(); err != nil {
		api.TraceError(e, err)
	}
	e.Exit()
	return nil
}

func benchSentinelPass(b *testing.B) {
	const res = "sentinel-pass"
	setupSentinelPass(b, res)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if blk := sentinelCall(res); blk != nil {
			b.Fatal(blk)
		}
	}
}

func benchSentinelPassParallel(b *testing.B) {
	const res = "sentinel-pass-parallel"
	setupSentinelPass(b, res)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if blk := sentinelCall(res); blk != nil {
				b.Error(blk)
				return
			}
		}
	})
}

func benchSentinelReject(b *testing.B) {
	const res = "sentinel-reject"
	setupSentinelReject(b, res)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if blk := sentinelCall(res); blk == nil {
			b.Fatal("call passed an open breaker")
		}
	}
}

func benchSentinelRejectParallel(b *testing.B) {
	const res = "sentinel-reject-parallel"
	setupSentinelReject(b, res)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if blk := sentinelCall(res); blk == nil {
				b.Error("call passed an open breaker")
				return
			}
		}
	})
}
