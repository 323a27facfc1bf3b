package benchmarks

import (
	"os"
	"testing"

	"github.com/alibaba/sentinel-golang/api"
	"github.com/alibaba/sentinel-golang/core/base"
	"github.com/alibaba/sentinel-golang/core/circuitbreaker"

	"github.com/halfopen/breaker/benchmarks/internal/sentinelinit"
)

// sentinel-golang keeps its rules and breakers in process-wide state, so every benchmark uses
// its own resource name. Reloading identical rules keeps their breakers, so a benchmark that
// runs again (benchmark ramp-up, -count, -cpu) finds its resource as it left it.

// hourMs is the retry window of every sentinel rule: an hour, in milliseconds.
const hourMs = 3600 * 1000

// initSentinel initializes sentinel-golang once per process, quiet and offline, as the
// scenarios do (sentinelinit.Init); TestMain removes its log directory.
func initSentinel(b *testing.B) {
	b.Helper()
	if _, err := sentinelinit.Init(); err != nil {
		b.Fatal(err)
	}
}

// TestMain removes sentinel-golang's log directory, if a benchmark made one, after the run.
func TestMain(m *testing.M) {
	code := m.Run()
	sentinelinit.Cleanup()
	os.Exit(code)
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
