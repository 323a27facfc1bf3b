package benchmarks

import (
	"errors"
	"testing"
	"time"

	resbreaker "github.com/eapache/go-resiliency/breaker"
)

// go-resiliency's breaker counts errors, not ratios: New(errorThreshold, successThreshold,
// timeout) opens after errorThreshold errors within timeout of each other and stays open for
// timeout.

// newResiliencyPass returns a CLOSED breaker that would open after 5 errors.
func newResiliencyPass() *resbreaker.Breaker {
	return resbreaker.New(5, 1, time.Hour)
}

// newResiliencyReject returns a breaker that one failure opened for an hour.
func newResiliencyReject(b *testing.B) *resbreaker.Breaker {
	b.Helper()
	cb := resbreaker.New(1, 1, time.Hour)
	if err := cb.Run(fail); !errors.Is(err, errFail) {
		b.Fatalf("tripping call: got %v, want %v", err, errFail)
	}
	if err := cb.Run(succeed); !errors.Is(err, resbreaker.ErrBreakerOpen) {
		b.Fatalf("after tripping: got %v, want ErrBreakerOpen", err)
	}
	return cb
}

func benchResiliencyPass(b *testing.B) {
	cb := newResiliencyPass()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := cb.Run(succeed); err != nil {
			b.Fatal(err)
		}
	}
}

func benchResiliencyPassParallel(b *testing.B) {
	cb := newResiliencyPass()
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := cb.Run(succeed); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func benchResiliencyReject(b *testing.B) {
	cb := newResiliencyReject(b)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := cb.Run(succeed); err == nil {
			b.Fatal("call passed an open breaker")
		}
	}
}

func benchResiliencyRejectParallel(b *testing.B) {
	cb := newResiliencyReject(b)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := cb.Run(succeed); err == nil {
				b.Error("call passed an open breaker")
				return
			}
		}
	})
}
