package benchmarks

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/halfopen/breaker"
)

// newBreakerPass returns a manager whose "pass" resource has a slow-request rule and an
// error-ratio rule, as in the core's own pass benchmark, so every call updates two windows.
func newBreakerPass(b *testing.B) *breaker.Manager {
	b.Helper()
	m := breaker.NewManager()
	err := m.LoadRules([]breaker.Rule{
		{Resource: "pass", Strategy: breaker.SlowRequestRatio, Threshold: 0.5, MaxAllowedRT: time.Second, RetryTimeout: time.Hour},
		{Resource: "pass", Strategy: breaker.ErrorRatio, Threshold: 0.5, RetryTimeout: time.Hour},
	})
	if err != nil {
		b.Fatal(err)
	}
	return m
}

// newBreakerReject returns a manager whose "reject" resource is OPEN for an hour.
func newBreakerReject(b *testing.B) *breaker.Manager {
	b.Helper()
	m := breaker.NewManager()
	err := m.LoadRules([]breaker.Rule{
		{Resource: "reject", Strategy: breaker.ErrorCount, Threshold: 1, MinRequestAmount: 1, RetryTimeout: time.Hour},
	})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	// One failing call meets the ErrorCount threshold of 1.
	if err := m.Do(ctx, "reject", failCtx); !errors.Is(err, errFail) {
		b.Fatalf("tripping call: got %v, want %v", err, errFail)
	}
	if err := m.Do(ctx, "reject", succeedCtx); !errors.Is(err, breaker.ErrOpen) {
		b.Fatalf("after tripping: got %v, want ErrOpen", err)
	}
	return m
}

func benchBreakerPass(b *testing.B) {
	m := newBreakerPass(b)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := m.Do(ctx, "pass", succeedCtx); err != nil {
			b.Fatal(err)
		}
	}
}

func benchBreakerPassParallel(b *testing.B) {
	m := newBreakerPass(b)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := m.Do(ctx, "pass", succeedCtx); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func benchBreakerReject(b *testing.B) {
	m := newBreakerReject(b)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		// Setup checked that the error is ErrOpen; here only that the call did not pass.
		if err := m.Do(ctx, "reject", succeedCtx); err == nil {
			b.Fatal("call passed an open breaker")
		}
	}
}

func benchBreakerRejectParallel(b *testing.B) {
	m := newBreakerReject(b)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := m.Do(ctx, "reject", succeedCtx); err == nil {
				b.Error("call passed an open breaker")
				return
			}
		}
	})
}

// The same calls through a Resource handle, which skips breaker's lookup by name: the shape
// of gobreaker's and go-resiliency's calls, made on a breaker object.

func benchResourcePass(b *testing.B) {
	r := newBreakerPass(b).Handle("pass")
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := r.Do(ctx, succeedCtx); err != nil {
			b.Fatal(err)
		}
	}
}

func benchResourcePassParallel(b *testing.B) {
	r := newBreakerPass(b).Handle("pass")
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := r.Do(ctx, succeedCtx); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func benchResourceReject(b *testing.B) {
	r := newBreakerReject(b).Handle("reject")
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := r.Do(ctx, succeedCtx); err == nil {
			b.Fatal("call passed an open breaker")
		}
	}
}

func benchResourceRejectParallel(b *testing.B) {
	r := newBreakerReject(b).Handle("reject")
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := r.Do(ctx, succeedCtx); err == nil {
				b.Error("call passed an open breaker")
				return
			}
		}
	})
}
