package breakerview_test

import (
	"context"
	"fmt"
	"time"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakertest"
	"github.com/halfopen/breaker/breakerview"
)

// A View of a Manager whose breaker tripped: each breaker with its label and state, and the
// last minute of each name called, rejections by cause.
func Example() {
	clock := breakertest.NewClock()
	calls := breakerview.NewCalls(breakerview.Limits{}, func(string) struct{} { return struct{}{} })
	m := breaker.NewManager(breaker.WithClock(clock), breaker.WithCallObserver(calls.OnCall))
	since := m.Now()
	_ = m.LoadRules([]breaker.Rule{{ID: "payments-errors", Resource: "payments", Strategy: breaker.ErrorCount,
		Threshold: 1, MinRequestAmount: 1, RetryTimeout: time.Minute}})
	fail := func(context.Context) error { return errDown }
	for range 3 {
		_ = m.Do(context.Background(), "payments", fail)
	}

	snap := m.Snapshot()
	v := calls.View(&snap, since)
	for _, r := range v.Resources {
		for _, b := range r.Breakers {
			fmt.Printf("%s %s: %s, dry run %v\n", r.Label, b.Label, b.State, b.DryRun)
		}
	}
	for _, c := range v.Called {
		fmt.Printf("%s: %d calls, %d ran, %d failed, %d rejected (%s)\n", c.Name, c.Calls, c.Ran(), c.Failed,
			c.Rejected[breaker.BlockedByBreaker], breaker.BlockedByBreaker)
	}
	// Output:
	// payments payments-errors: OPEN, dry run false
	// payments: 3 calls, 1 ran, 1 failed, 2 rejected (open)
}
