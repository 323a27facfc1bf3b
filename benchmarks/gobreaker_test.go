package benchmarks

import (
	"errors"
	"testing"
	"time"

	"github.com/sony/gobreaker/v2"
)

// gobreakerSucceed is succeed in the shape gobreaker's Execute wants.
func gobreakerSucceed() (any, error) { return nil, nil }

// newGobreakerPass returns a CLOSED breaker with a rolling window like breaker's default
// (1s in 10 buckets) that would trip at an error ratio of 0.5 over at least 5 calls.
func newGobreakerPass() *gobreaker.CircuitBreaker[any] {
	return gobreaker.NewCircuitBreaker[any](gobreaker.Settings{
		Name:         "pass",
		Interval:     time.Second,
		BucketPeriod: 100 * time.Millisecond,
		Timeout:      time.Hour,
		ReadyToTrip: func(c gobreaker.Counts) bool {
			return c.Requests >= 5 && float64(c.TotalFailures) >= 0.5*float64(c.Requests)
		},
	})
}

// newGobreakerReject returns a breaker that one failure opened for an hour.
func newGobreakerReject(b *testing.B) *gobreaker.CircuitBreaker[any] {
	b.Helper()
	cb := gobreaker.NewCircuitBreaker[any](gobreaker.Settings{
		Name:        "reject",
		Timeout:     time.Hour,
		ReadyToTrip: func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= 1 },
	})
	if _, err := cb.Execute(func() (any, error) { return nil, fail() }); !errors.Is(err, errFail) {
		b.Fatalf("tripping call: got %v, want %v", err, errFail)
	}
	if _, err := cb.Execute(gobreakerSucceed); !errors.Is(err, gobreaker.ErrOpenState) {
		b.Fatalf("after tripping: got %v, want ErrOpenState", err)
	}
	return cb
}

func benchGobreakerPass(b *testing.B) {
	cb := newGobreakerPass()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := cb.Execute(gobreakerSucceed); err != nil {
			b.Fatal(err)
		}
	}
}

func benchGobreakerPassParallel(b *testing.B) {
	cb := newGobreakerPass()
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := cb.Execute(gobreakerSucceed); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func benchGobreakerReject(b *testing.B) {
	cb := newGobreakerReject(b)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := cb.Execute(gobreakerSucceed); err == nil {
			b.Fatal("call passed an open breaker")
		}
	}
}

func benchGobreakerRejectParallel(b *testing.B) {
	cb := newGobreakerReject(b)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := cb.Execute(gobreakerSucceed); err == nil {
				b.Error("call passed an open breaker")
				return
			}
		}
	})
}
