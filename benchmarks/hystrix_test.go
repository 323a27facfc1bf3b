package benchmarks

import (
	"testing"
	"time"

	"github.com/afex/hystrix-go/hystrix"
)

// hystrix-go runs every command in its own goroutine (plus a timeout goroutine) and counts
// outcomes on a per-circuit metrics goroutine; that is its normal API and is measured as it is.
// Its circuits are process-wide and are never torn down, so every benchmark uses its own
// command name. The metrics goroutines live until the process exits, which does no harm here.

// configureHystrix configures command name like breaker's error-ratio rule: it would open at
// 50% errors over at least 5 calls, and stays open for an hour.
func configureHystrix(name string, volume int) {
	hystrix.ConfigureCommand(name, hystrix.CommandConfig{
		Timeout: 1000, // ms; succeed returns at once
		// Do returns before the command goroutine gives back its concurrency ticket, so a
		// fast caller can briefly hold more tickets than it has calls in flight. A large limit
		// keeps such calls from being rejected with ErrMaxConcurrency.
		MaxConcurrentRequests:  10000,
		RequestVolumeThreshold: volume,
		SleepWindow:            int(time.Hour / time.Millisecond),
		ErrorPercentThreshold:  50,
	})
}

// setupHystrixReject opens command name with failing calls. hystrix counts outcomes
// asynchronously, so it drives failures until a call is short-circuited, for at most 5s.
func setupHystrixReject(b *testing.B, name string) {
	b.Helper()
	configureHystrix(name, 1)
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := hystrix.Do(name, fail, nil)
		if err == hystrix.ErrCircuitOpen {
			return
		}
		if err != errFail {
			b.Fatalf("tripping call: got %v, want %v", err, errFail)
		}
		if time.Now().After(deadline) {
			b.Fatal("circuit did not open within 5s")
		}
		time.Sleep(time.Millisecond)
	}
}

func benchHystrixPass(b *testing.B) {
	const name = "hystrix-pass"
	configureHystrix(name, 5)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := hystrix.Do(name, succeed, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func benchHystrixPassParallel(b *testing.B) {
	const name = "hystrix-pass-parallel"
	configureHystrix(name, 5)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := hystrix.Do(name, succeed, nil); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func benchHystrixReject(b *testing.B) {
	const name = "hystrix-reject"
	setupHystrixReject(b, name)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := hystrix.Do(name, succeed, nil); err == nil {
			b.Fatal("call passed an open breaker")
		}
	}
}

func benchHystrixRejectParallel(b *testing.B) {
	const name = "hystrix-reject-parallel"
	setupHystrixReject(b, name)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := hystrix.Do(name, succeed, nil); err == nil {
				b.Error("call passed an open breaker")
				return
			}
		}
	})
}
