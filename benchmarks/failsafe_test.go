package benchmarks

import (
	"errors"
	"testing"
	"time"

	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/circuitbreaker"
)

// In failsafe-go v0.9.8 the plain call path is an Executor built with failsafe.With around the
// policy, then Executor.Run. The executor is built once, in setup, as a service would.

// newFailsafePass returns an executor around a CLOSED breaker whose time-based window is like
// breaker's default: it would trip at a failure rate of 0.5 over at least 5 calls in 1s.
func newFailsafePass() failsafe.Executor[any] {
	cb := circuitbreaker.NewBuilder[any]().
		WithFailureRateThreshold(0.5, 5, time.Second).
		WithDelay(time.Hour).
		Build()
	return failsafe.With[any](cb)
}

// newFailsafeReject returns an executor around a breaker that one failure opened for an hour.
func newFailsafeReject(b *testing.B) failsafe.Executor[any] {
	b.Helper()
	// The builder's default failure threshold is one failure.
	cb := circuitbreaker.NewBuilder[any]().WithDelay(time.Hour).Build()
	ex := failsafe.With[any](cb)
	if err := ex.Run(fail); !errors.Is(err, errFail) {
		b.Fatalf("tripping call: got %v, want %v", err, errFail)
	}
	if err := ex.Run(succeed); !errors.Is(err, circuitbreaker.ErrOpen) {
		b.Fatalf("after tripping: got %v, want ErrOpen", err)
	}
	return ex
}

func benchFailsafePass(b *testing.B) {
	ex := newFailsafePass()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := ex.Run(succeed); err != nil {
			b.Fatal(err)
		}
	}
}

func benchFailsafePassParallel(b *testing.B) {
	ex := newFailsafePass()
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := ex.Run(succeed); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func benchFailsafeReject(b *testing.B) {
	ex := newFailsafeReject(b)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := ex.Run(succeed); err == nil {
			b.Fatal("call passed an open breaker")
		}
	}
}

func benchFailsafeRejectParallel(b *testing.B) {
	ex := newFailsafeReject(b)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := ex.Run(succeed); err == nil {
				b.Error("call passed an open breaker")
				return
			}
		}
	})
}
