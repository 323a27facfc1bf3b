package breakerprom_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
	breakerprom "github.com/halfopen/breaker/contrib/prometheus"
)

// BenchmarkDo measures Manager.Do on the system clock, bare and with a Collector attached, for
// calls that pass and calls an open breaker blocks. Neither should allocate.
func BenchmarkDo(b *testing.B) {
	benchmarks := []struct {
		name    string
		collect bool
		blocked bool
	}{
		{name: "bare/passed"},
		{name: "collector/passed", collect: true},
		{name: "bare/blocked", blocked: true},
		{name: "collector/blocked", collect: true, blocked: true},
	}
	ok := func(context.Context) error { return nil }
	for _, bm := range benchmarks {
		c := breakerprom.New()
		var opts []breaker.Option
		if bm.collect {
			opts = append(opts, c.Option())
		}
		m := breaker.NewManager(opts...)
		if bm.collect {
			c.Watch(m)
		}
		require.NoError(b, m.LoadRules([]breaker.Rule{{Resource: "svc", Strategy: breaker.ErrorCount,
			Threshold: 1, MinRequestAmount: 1, RetryTimeout: time.Hour}}))
		if bm.blocked {
			_ = m.Do(context.Background(), "svc", func(context.Context) error { return errDown })
			require.ErrorIs(b, m.Do(context.Background(), "svc", ok), breaker.ErrOpen)
		}

		b.Run(bm.name+"/serial", func(b *testing.B) {
			b.ReportAllocs()
			ctx := context.Background()
			for b.Loop() {
				_ = m.Do(ctx, "svc", ok)
			}
		})
		b.Run(bm.name+"/parallel", func(b *testing.B) {
			b.ReportAllocs()
			ctx := context.Background()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					_ = m.Do(ctx, "svc", ok)
				}
			})
		})
	}
}
