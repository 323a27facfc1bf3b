// Package benchmarks compares breaker with peer circuit-breaker libraries doing the same work:
// a call that passes a CLOSED breaker, and a call that an OPEN breaker rejects.
//
// Every library gets the same four benchmarks, each run as a sub-benchmark named after the
// library (BenchmarkPass/gobreaker, BenchmarkPass/breaker, ...) so that benchstat can put the
// libraries side by side. The loops call each library directly rather than through a shared
// func value, so no library pays for an indirection the others do not.
package benchmarks

import (
	"context"
	"errors"
	"testing"
)

// errFail is what a failing call returns when a setup trips a breaker.
var errFail = errors.New("benchmarks: induced failure")

// succeed is the wrapped call of every benchmark: it passes and does nothing else. It is a
// plain function, not a closure, so passing it to a library allocates nothing.
func succeed() error { return nil }

// fail is the wrapped call that setups use to trip a breaker.
func fail() error { return errFail }

// succeedCtx and failCtx are succeed and fail for APIs that pass a context.
func succeedCtx(context.Context) error { return nil }
func failCtx(context.Context) error    { return errFail }

// lib is one library under test: a function for each of the four benchmarks.
type lib struct {
	name                   string
	pass, passParallel     func(*testing.B)
	reject, rejectParallel func(*testing.B)
}

// libs lists breaker first, then the peers; benchstat keeps this order in its columns.
var libs = []lib{
	{"breaker", benchBreakerPass, benchBreakerPassParallel, benchBreakerReject, benchBreakerRejectParallel},
	{"breaker_resource", benchResourcePass, benchResourcePassParallel, benchResourceReject, benchResourceRejectParallel},
	{"gobreaker", benchGobreakerPass, benchGobreakerPassParallel, benchGobreakerReject, benchGobreakerRejectParallel},
	{"sentinel", benchSentinelPass, benchSentinelPassParallel, benchSentinelReject, benchSentinelRejectParallel},
	{"failsafe", benchFailsafePass, benchFailsafePassParallel, benchFailsafeReject, benchFailsafeRejectParallel},
	{"hystrix", benchHystrixPass, benchHystrixPassParallel, benchHystrixReject, benchHystrixRejectParallel},
	{"resiliency", benchResiliencyPass, benchResiliencyPassParallel, benchResiliencyReject, benchResiliencyRejectParallel},
}

// BenchmarkPass measures one call through a CLOSED breaker whose wrapped function returns nil.
func BenchmarkPass(b *testing.B) {
	for _, l := range libs {
		b.Run(l.name, l.pass)
	}
}

// BenchmarkPassParallel is BenchmarkPass with b.RunParallel: all goroutines share one breaker.
func BenchmarkPassParallel(b *testing.B) {
	for _, l := range libs {
		b.Run(l.name, l.passParallel)
	}
}

// BenchmarkReject measures one call rejected by an OPEN breaker whose retry window is an hour,
// so it stays open for the whole run.
func BenchmarkReject(b *testing.B) {
	for _, l := range libs {
		b.Run(l.name, l.reject)
	}
}

// BenchmarkRejectParallel is BenchmarkReject with b.RunParallel: all goroutines share one breaker.
func BenchmarkRejectParallel(b *testing.B) {
	for _, l := range libs {
		b.Run(l.name, l.rejectParallel)
	}
}
