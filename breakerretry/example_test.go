package breakerretry_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakerretry"
	"github.com/halfopen/breaker/breakertest"
)

// A retry loop that the breaker paces: after the second failure trips it, the loop is
// rejected once and then waits until RetryAt, calling nothing meanwhile, and the probe
// succeeds.
func ExamplePolicy() {
	clock := breakertest.NewClock()
	at := func() time.Duration { return clock.Now().Sub(breakertest.Start) }
	m := breaker.NewManager(breaker.WithClock(clock),
		breaker.WithCallObserver(func(c breaker.CallInfo) {
			if c.Blocked != nil {
				fmt.Printf("%v: rejected until %v\n", at(), c.Blocked.RetryAt.Sub(breakertest.Start))
			}
		}))
	err := m.LoadRules([]breaker.Rule{{
		Resource:         "payments",
		Strategy:         breaker.ErrorCount,
		Threshold:        2, // the second failure of a minute trips it
		MinRequestAmount: 1,
		StatInterval:     time.Minute,
		RetryTimeout:     10 * time.Second,
	}})
	if err != nil {
		panic(err)
	}

	calls := 0
	charge := func(context.Context) error {
		calls++
		if calls <= 2 {
			fmt.Printf("%v: payments fails\n", at())
			return errors.New("payments: 503 service unavailable")
		}
		fmt.Printf("%v: payments succeeds\n", at())
		return nil
	}
	retry := breakerretry.Policy{
		Attempts: 5,
		Within:   time.Minute,
		Backoff:  func(n int) time.Duration { return time.Duration(n) * time.Second },
		// A program leaves Sleep nil, for a timer; here the fake clock moves instead.
		Sleep: func(_ context.Context, d time.Duration) error {
			fmt.Println("wait", d)
			clock.Advance(d)
			return nil
		},
	}
	fmt.Println(retry.Do(context.Background(), m, "payments", charge))
	// Output:
	// 0s: payments fails
	// wait 1s
	// 1s: payments fails
	// wait 2s
	// 3s: rejected until 11s
	// wait 8s
	// 11s: payments succeeds
	// <nil>
}
