package breakerdebug_test

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakerdebug"
)

// BenchmarkCallWithSubscribers measures a call that passes, and moves no breaker, on a Manager
// whose status handler has 0 or 100 idle subscribers of its event stream (connected over HTTP,
// their replay and first status read, then hearing nothing): the subscribers hear state changes
// only, so the call should cost the same. Serial and parallel; neither allocates.
func BenchmarkCallWithSubscribers(b *testing.B) {
	ok := func(context.Context) error { return nil }
	for _, n := range []int{0, 100} {
		b.Run("subscribers="+strconv.Itoa(n), func(b *testing.B) {
			m := subscribed(b, n)
			b.Run("serial", func(b *testing.B) {
				b.ReportAllocs()
				ctx := context.Background()
				for b.Loop() {
					_ = m.Do(ctx, "svc", ok)
				}
			})
			b.Run("parallel", func(b *testing.B) {
				b.ReportAllocs()
				ctx := context.Background()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						_ = m.Do(ctx, "svc", ok)
					}
				})
			})
		})
	}
}

// subscribed returns a Manager on the system clock with an ErrorRatio rule for "svc", whose
// status handler, served over HTTP until the benchmark ends, has n subscribers of its event
// stream that have read their replay and first status.
func subscribed(b *testing.B, n int) *breaker.Manager {
	b.Helper()
	m := breaker.NewManager()
	if err := m.LoadRules([]breaker.Rule{{Resource: "svc", Strategy: breaker.ErrorRatio, Threshold: 0.5,
		RetryTimeout: time.Minute}}); err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(breakerdebug.Handler(m, breakerdebug.WithSubscribers(n+1)))
	b.Cleanup(srv.Close)
	for range n {
		resp, err := http.Get(srv.URL + "/events")
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = resp.Body.Close() }) // before the server closes: it waits for them
		in := bufio.NewReader(resp.Body)
		for line := ""; !strings.HasPrefix(line, "event: status"); {
			if line, err = in.ReadString('\n'); err != nil {
				b.Fatal(err)
			}
		}
	}
	return m
}
