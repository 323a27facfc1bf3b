package breakerotel_test

import (
	"context"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/halfopen/breaker"
	breakerotel "github.com/halfopen/breaker/contrib/otel"
)

// benchManager returns a Manager on the system clock with one SlowRequestRatio and one
// ErrorRatio rule for "svc", and an ErrorCount rule for "open" that the first failure trips;
// with instrumented, its Instruments report to an SDK MeterProvider with a ManualReader.
func benchManager(b *testing.B, instrumented bool) *breaker.Manager {
	b.Helper()
	var opts []breaker.Option
	var ins *breakerotel.Instruments
	if instrumented {
		provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
		b.Cleanup(func() { _ = provider.Shutdown(context.Background()) })
		var err error
		if ins, err = breakerotel.New(provider); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = ins.Close() })
		opts = append(opts, ins.Option())
	}
	m := breaker.NewManager(opts...)
	if ins != nil {
		if err := ins.Watch(m); err != nil {
			b.Fatal(err)
		}
	}
	err := m.LoadRules([]breaker.Rule{
		{Resource: "svc", Strategy: breaker.SlowRequestRatio, Threshold: 0.5, MaxAllowedRT: time.Second, RetryTimeout: time.Hour},
		{Resource: "svc", Strategy: breaker.ErrorRatio, Threshold: 0.5, RetryTimeout: time.Hour},
		{Resource: "open", Strategy: breaker.ErrorCount, Threshold: 1, MinRequestAmount: 1, RetryTimeout: time.Hour},
	})
	if err != nil {
		b.Fatal(err)
	}
	_ = m.Do(context.Background(), "open", fail)
	if m.Breakers("open")[0].State() != breaker.Open {
		b.Fatal("the breaker did not trip")
	}
	return m
}

// benchDo runs m.Do(resource, succeed) serially or from RunParallel goroutines, with and
// without the Instruments; wantErr says whether every call must be rejected.
func benchDo(b *testing.B, resource string, parallel, wantErr bool) {
	for _, instrumented := range []bool{false, true} {
		name := "bare"
		if instrumented {
			name = "otel"
		}
		b.Run(name, func(b *testing.B) {
			m := benchManager(b, instrumented)
			ctx := context.Background()
			_ = m.Do(ctx, resource, succeed) // the first call builds the resource's attribute sets
			b.ReportAllocs()
			b.ResetTimer()
			if !parallel {
				for range b.N {
					if err := m.Do(ctx, resource, succeed); (err != nil) != wantErr {
						b.Fatal("unexpected outcome")
					}
				}
				return
			}
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := m.Do(ctx, resource, succeed); (err != nil) != wantErr {
						b.Error("unexpected outcome")
						return
					}
				}
			})
		})
	}
}

func BenchmarkDoPass(b *testing.B)           { benchDo(b, "svc", false, false) }
func BenchmarkDoPassParallel(b *testing.B)   { benchDo(b, "svc", true, false) }
func BenchmarkDoReject(b *testing.B)         { benchDo(b, "open", false, true) }
func BenchmarkDoRejectParallel(b *testing.B) { benchDo(b, "open", true, true) }
