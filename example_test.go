package breaker_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakertest"
)

func ExampleManager_Do() {
	m := breaker.NewManager(breaker.WithClock(breakertest.NewClock()))
	err := m.LoadRules([]breaker.Rule{{
		Resource:         "payments",
		Strategy:         breaker.ErrorCount,
		Threshold:        3, // the third failure trips it
		MinRequestAmount: 1,
		RetryTimeout:     10 * time.Second,
	}})
	if err != nil {
		panic(err)
	}

	ctx := context.Background()
	charge := func(context.Context) error { return errors.New("payments: connection refused") }
	for range 3 {
		fmt.Println(m.Do(ctx, "payments", charge))
	}

	// The breaker is OPEN: Do returns at once, without calling the function.
	err = m.Do(ctx, "payments", charge)
	fmt.Println(errors.Is(err, breaker.ErrOpen))
	fmt.Println(err)
	// Output:
	// payments: connection refused
	// payments: connection refused
	// payments: connection refused
	// true
	// breaker: call to "payments" rejected: circuit OPEN by rule ErrorCount
}

func ExampleManager_Enter() {
	clk := breakertest.NewClock()
	m := breaker.NewManager(breaker.WithClock(clk))
	err := m.LoadRules([]breaker.Rule{{
		ID:               "db-errors",
		Resource:         "db",
		Strategy:         breaker.ErrorCount,
		Threshold:        1,
		MinRequestAmount: 1,
		RetryTimeout:     30 * time.Second,
	}})
	if err != nil {
		panic(err)
	}

	e, err := m.Enter("db")
	if err != nil {
		panic(err) // the breaker is CLOSED: the call passes
	}
	e.SetError(errors.New("db: deadline exceeded")) // the call failed...
	e.Exit()                                        // ...and its failure trips the breaker

	_, err = m.Enter("db")
	var blocked *breaker.BlockError
	if errors.As(err, &blocked) {
		fmt.Println(blocked.Resource, blocked.State, blocked.Rule.ID)
		fmt.Println("retry in", blocked.RetryAt.Sub(clk.Now()))
	}
	// Output:
	// db OPEN db-errors
	// retry in 30s
}

func ExampleManager_AddObserver() {
	clk := breakertest.NewClock()
	m := breaker.NewManager(breaker.WithClock(clk))
	err := m.LoadRules([]breaker.Rule{{
		Resource:         "search",
		Strategy:         breaker.ErrorRatio,
		Threshold:        0.5,
		MinRequestAmount: 4,
		RetryTimeout:     5 * time.Second,
	}})
	if err != nil {
		panic(err)
	}
	remove := m.AddObserver(breaker.ObserverFunc(func(c breaker.StateChange) {
		fmt.Printf("%v  %v → %v  %v", c.At.Sub(breakertest.Start), c.From, c.To, c.Reason)
		if c.Reason == breaker.ThresholdExceeded {
			fmt.Printf(" (%v)", c.Snapshot)
		}
		fmt.Println()
	}))
	defer remove()

	ctx := context.Background()
	ok := func(context.Context) error { return nil }
	fail := func(context.Context) error { return errors.New("search: timeout") }
	for _, call := range []func(context.Context) error{ok, fail, ok, fail} {
		_ = m.Do(ctx, "search", call) // the fourth call makes 2 failures of 4: OPEN
	}

	clk.Advance(5 * time.Second)
	_ = m.Do(ctx, "search", fail) // the probe fails: OPEN for another 5s
	clk.Advance(5 * time.Second)
	_ = m.Do(ctx, "search", ok) // the probe succeeds: CLOSED
	// Output:
	// 0s  CLOSED → OPEN  ThresholdExceeded (0.5)
	// 5s  OPEN → HALF_OPEN  RetryTimeoutElapsed
	// 5s  HALF_OPEN → OPEN  ProbeFailed
	// 10s  OPEN → HALF_OPEN  RetryTimeoutElapsed
	// 10s  HALF_OPEN → CLOSED  ProbeSucceeded
}

func ExampleExecute() {
	m := breaker.NewManager(breaker.WithClock(breakertest.NewClock()))
	err := m.LoadRules([]breaker.Rule{{
		Resource:         "stock",
		Strategy:         breaker.ErrorCount,
		Threshold:        1,
		MinRequestAmount: 1,
		RetryTimeout:     time.Minute,
	}})
	if err != nil {
		panic(err)
	}

	ctx := context.Background()
	n, err := breaker.Execute(ctx, m, "stock", func(context.Context) (int, error) { return 42, nil })
	fmt.Println(n, err)

	_, err = breaker.Execute(ctx, m, "stock", func(context.Context) (int, error) {
		return 0, errors.New("stock: connection refused")
	})
	fmt.Println(err) // the failure trips the breaker

	// Blocked: Execute returns the zero value without calling the function.
	n, err = breaker.Execute(ctx, m, "stock", func(context.Context) (int, error) { return 42, nil })
	var blocked *breaker.BlockError
	if errors.As(err, &blocked) {
		fmt.Println(n, blocked.Resource, blocked.State)
	}
	// Output:
	// 42 <nil>
	// stock: connection refused
	// 0 stock OPEN
}

func ExampleRule_Validate() {
	r := breaker.Rule{
		Resource:     "search",
		Strategy:     breaker.ErrorRatio,
		Threshold:    50, // meant 50%, but a ratio is in (0, 1]
		RetryTimeout: 5 * time.Second,
	}
	err := r.Validate()
	fmt.Println(err)
	fmt.Println(errors.Is(err, breaker.ErrInvalidRule))

	r.Threshold = 0.5
	fmt.Println(r.Validate())
	// Output:
	// breaker: invalid rule (resource "search"): Threshold must be in (0, 1] for ErrorRatio, got 50
	// true
	// <nil>
}

func ExampleManager_LoadResources() {
	m := breaker.NewManager()
	// The kill switch: every call to "payments" is rejected, whatever its rules say.
	if err := m.LoadResources(map[string]breaker.ResourceConfig{
		"payments": {Force: breaker.ForceOpen},
		"pricing":  {MaxConcurrency: 1},
	}); err != nil {
		panic(err)
	}
	ctx := context.Background()
	err := m.Do(ctx, "payments", func(context.Context) error { return nil })
	fmt.Println(errors.Is(err, breaker.ErrForcedOpen), errors.Is(err, breaker.ErrOpen))

	held, _ := m.Enter("pricing") // takes the one place
	err = m.Do(ctx, "pricing", func(context.Context) error { return nil })
	fmt.Println(errors.Is(err, breaker.ErrConcurrencyLimit), errors.Is(err, breaker.ErrOpen))
	held.Exit()
	fmt.Println(m.Do(ctx, "pricing", func(context.Context) error { return nil }))
	// Output:
	// true true
	// true false
	// <nil>
}

func ExampleManager_Reset() {
	m := breaker.NewManager(breaker.WithClock(breakertest.NewClock()))
	if err := m.LoadRules([]breaker.Rule{{Resource: "search", Strategy: breaker.ErrorCount,
		Threshold: 1, RetryTimeout: time.Minute}}); err != nil {
		panic(err)
	}
	m.AddObserver(breaker.ObserverFunc(func(c breaker.StateChange) {
		fmt.Println(c.From, "->", c.To, c.Reason)
	}))
	ctx := context.Background()
	_ = m.Do(ctx, "search", func(context.Context) error { return errors.New("search: down") })
	m.Reset("search") // an operator knows it is back
	fmt.Println(m.Do(ctx, "search", func(context.Context) error { return nil }))
	// Output:
	// CLOSED -> OPEN ThresholdExceeded
	// OPEN -> CLOSED Reset
	// <nil>
}

func ExampleParseDocument() {
	d, err := breaker.ParseDocument([]byte(`{
	  "rules": [{"resource": "payments", "strategy": "ErrorRatio", "threshold": 0.5,
	             "retryTimeout": "10s", "dryRun": true}],
	  "resources": {"payments": {"timeout": "2s", "maxConcurrency": 20}}
	}`))
	if err != nil {
		panic(err)
	}
	m := breaker.NewManager()
	if err := m.LoadDocument(d); err != nil {
		panic(err)
	}
	fmt.Println(m.Rules()[0].DryRun, m.Settings()["payments"].Timeout)
	_, err = breaker.ParseDocument([]byte(`{"resources": {"payments": {"force": "on"}}}`))
	fmt.Println(err)
	// Output:
	// true 2s
	// breaker: invalid rule (resource "payments"): force must be "auto", "open" or "closed", got "on"
}

func ExampleParseRules() {
	rules, err := breaker.ParseRules([]byte(`[
	  {"resource": "GET /orders/{id}", "strategy": "ErrorRatio", "threshold": 0.5,
	   "minRequestAmount": 20, "statInterval": "10s", "retryTimeout": "30s"}
	]`))
	if err != nil {
		panic(err)
	}
	fmt.Println(rules[0].Strategy, rules[0].Threshold, rules[0].RetryTimeout)
	_, err = breaker.ParseRules([]byte(`[{"resource": "x", "strategy": "ErrorRatio", "threshold": 2,
	  "retryTimeout": "1s"}]`))
	fmt.Println(err)
	// Output:
	// ErrorRatio 0.5 30s
	// breaker: invalid rule 0 (resource "x"): Threshold must be in (0, 1] for ErrorRatio, got 2
}

// A fallback is an if: the call's error says whether it was blocked (ErrBlocked, whatever
// blocked it: an OPEN breaker, a ramp, a concurrency limit, a force) or failed.
func ExampleManager_Do_fallback() {
	m := breaker.NewManager()
	if err := m.LoadResources(map[string]breaker.ResourceConfig{"prices": {Force: breaker.ForceOpen}}); err != nil {
		panic(err)
	}
	price := 0
	err := m.Do(context.Background(), "prices", func(context.Context) error {
		price = 42 // not called: the resource is forced open
		return nil
	})
	if errors.Is(err, breaker.ErrBlocked) {
		price, err = 40, nil // the cached price
	}
	fmt.Println(price, err)
	// Output: 40 <nil>
}

func ExampleWithClassifier() {
	errNotFound := errors.New("not found")
	m := breaker.NewManager(breaker.WithClassifier(func(err error) breaker.Outcome {
		if errors.Is(err, errNotFound) {
			return breaker.Success // the dependency answered: "not found" is not its failure
		}
		return breaker.Failure
	}))
	if err := m.LoadRules([]breaker.Rule{{Resource: "users", Strategy: breaker.ErrorCount,
		Threshold: 2, RetryTimeout: time.Minute}}); err != nil {
		panic(err)
	}
	ctx := context.Background()
	for range 3 {
		_ = m.Do(ctx, "users", func(context.Context) error { return errNotFound })
	}
	fmt.Println(m.Breakers("users")[0].State())
	// CountAs says how one call counts, whatever the classifier says.
	for range 2 {
		_ = m.Do(ctx, "users", func(context.Context) error { return breaker.CountAs(errNotFound, breaker.Failure) })
	}
	fmt.Println(m.Breakers("users")[0].State())
	// Output:
	// CLOSED
	// OPEN
}

func ExampleHandle() {
	m := breaker.NewManager()
	if err := m.LoadRules([]breaker.Rule{{Resource: "search", Strategy: breaker.ErrorCount,
		Threshold: 1, RetryTimeout: time.Minute}}); err != nil {
		panic(err)
	}
	search := m.Handle("search") // keep one per resource: no lookup by name on each call
	var hits int
	err := search.Do(context.Background(), func(context.Context) error {
		hits = 7 // a value comes back through the closure
		return nil
	})
	fmt.Println(hits, err)
	_ = search.Do(context.Background(), func(context.Context) error { return errors.New("search: down") })
	err = search.Do(context.Background(), func(context.Context) error { return nil })
	fmt.Println(errors.Is(err, breaker.ErrOpen))
	// Output:
	// 7 <nil>
	// true
}

// countingSlot counts the calls in flight, as a Slot that holds something per call would.
type countingSlot struct{ inFlight int }

func (s *countingSlot) OnEntry(*breaker.Entry) error {
	if s.inFlight >= 1 {
		return errors.New("one call at a time")
	}
	s.inFlight++
	return nil
}

func (s *countingSlot) OnExit(*breaker.Entry) { s.inFlight-- }

func ExampleWithSlots() {
	slot := &countingSlot{}
	m := breaker.NewManager(breaker.WithSlots(slot))
	first, _ := m.Enter("reports")
	_, err := m.Enter("reports")
	fmt.Println(err)
	first.Exit()
	second, err := m.Enter("reports")
	fmt.Println(err)
	second.Exit()
	// Output:
	// breaker: call to "reports" blocked: one call at a time
	// <nil>
}

func ExampleWithCallObserver() {
	clock := breakertest.NewClock()
	m := breaker.NewManager(breaker.WithClock(clock), breaker.WithCallObserver(
		func(c breaker.CallInfo) {
			fmt.Println(c.Resource, c.Outcome, c.RT, c.Blocked != nil)
		}))
	if err := m.LoadRules([]breaker.Rule{{Resource: "mail", Strategy: breaker.ErrorCount,
		Threshold: 1, RetryTimeout: time.Minute}}); err != nil {
		panic(err)
	}
	_ = m.Do(context.Background(), "mail", func(context.Context) error {
		clock.Advance(30 * time.Millisecond)
		return errors.New("mail: timeout")
	})
	_ = m.Do(context.Background(), "mail", func(context.Context) error { return nil })
	// Output:
	// mail Failure 30ms false
	// mail Success 0s true
}

// A template rule (Resource ending in "*") gives each host its own breaker on its first call:
// the one that fails trips alone.
func ExampleWithMaxTemplateBreakers() {
	m := breaker.NewManager(breaker.WithClock(breakertest.NewClock()), breaker.WithMaxTemplateBreakers(1000))
	if err := m.LoadRules([]breaker.Rule{{Resource: "GET *", Strategy: breaker.ErrorCount,
		Threshold: 2, RetryTimeout: time.Minute}}); err != nil {
		panic(err)
	}
	m.AddObserver(breaker.ObserverFunc(func(c breaker.StateChange) {
		fmt.Printf("%s (rule %q): %v -> %v\n", c.Resource, c.Rule.Resource, c.From, c.To)
	}))
	ctx := context.Background()
	down := func(context.Context) error { return errors.New("connection refused") }
	up := func(context.Context) error { return nil }
	for range 2 {
		_ = m.Do(ctx, "GET billing:443", down)
		_ = m.Do(ctx, "GET users:443", up)
	}
	err := m.Do(ctx, "GET billing:443", up)
	fmt.Println(errors.Is(err, breaker.ErrOpen), m.Do(ctx, "GET users:443", up))
	fmt.Println(m.TemplateResources(), m.Do(ctx, "POST users:443", down) != nil, m.Breakers("POST users:443"))
	fmt.Printf("%+v\n", m.TemplateStats())
	// Output:
	// GET billing:443 (rule "GET *"): CLOSED -> OPEN
	// true <nil>
	// [GET billing:443 GET users:443] true []
	// {Patterns:1 Resources:2 Breakers:2 Settings:0 Limit:1000 Dropped:0}
}

// A rule with FastBuckets trips on its newest buckets alone: here, at 100 calls a second, on
// the 11th call of a hard outage, where the whole window would need 50.
func ExampleRule_fastBuckets() {
	clock := breakertest.NewClock()
	m := breaker.NewManager(breaker.WithClock(clock))
	m.AddObserver(breaker.ObserverFunc(func(c breaker.StateChange) {
		fmt.Printf("%v -> %v: %v (%.2f)\n", c.From, c.To, c.Reason, c.Snapshot)
	}))
	err := m.LoadRules([]breaker.Rule{{
		Resource: "search", Strategy: breaker.ErrorRatio, Threshold: 0.5, MinRequestAmount: 5,
		FastBuckets:  2, // of the default 10 buckets of 100ms: the newest 200ms, at 80%
		RetryTimeout: 5 * time.Second,
	}})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	down := errors.New("search: unavailable")
	call := func(err error) error {
		defer clock.Advance(10 * time.Millisecond)
		return m.Do(ctx, "search", func(context.Context) error { return err })
	}
	for range 100 { // a healthy second
		_ = call(nil)
	}
	sent := 0
	for call(down) == down {
		sent++
	}
	fmt.Println("calls sent to the dead dependency:", sent)
	// Output:
	// CLOSED -> OPEN: FastTrip (1.00)
	// calls sent to the dead dependency: 11
}

// A rule with StatCalls judges the last calls, however slowly they come: at night, one call a
// minute, the last 20 calls trip it as they would by day.
func ExampleRule_statCalls() {
	clock := breakertest.NewClock()
	m := breaker.NewManager(breaker.WithClock(clock))
	m.AddObserver(breaker.ObserverFunc(func(c breaker.StateChange) {
		fmt.Printf("%v -> %v: %v (%.2f)\n", c.From, c.To, c.Reason, c.Snapshot)
	}))
	err := m.LoadRules([]breaker.Rule{{
		Resource: "ledger", Strategy: breaker.ErrorRatio, Threshold: 0.5,
		StatCalls:    20, // and MinRequestAmount 0: a full window of 20 calls
		RetryTimeout: 10 * time.Second,
	}})
	if err != nil {
		panic(err)
	}
	down := errors.New("ledger: unavailable")
	for i := 0; m.Breakers("ledger")[0].State() == breaker.Closed; i++ {
		_ = m.Do(context.Background(), "ledger", func(context.Context) error {
			if i%3 != 0 {
				return down // two calls in three fail
			}
			return nil
		})
		clock.Advance(time.Minute)
	}
	fmt.Println("after", m.Now().Sub(breakertest.Start))
	// Output:
	// CLOSED -> OPEN: ThresholdExceeded (0.65)
	// after 20m0s
}

// A SlowRequestRatio rule counts a call still in flight past MaxAllowedRT as slow, so a
// dependency that hangs trips it with no Timeout set: at MaxAllowedRT plus one bucket.
func ExampleRule_callsInFlight() {
	clock := breakertest.NewClock()
	m := breaker.NewManager(breaker.WithClock(clock))
	err := m.LoadRules([]breaker.Rule{{
		Resource: "pricing", Strategy: breaker.SlowRequestRatio, Threshold: 0.5,
		MaxAllowedRT: 50 * time.Millisecond, MinRequestAmount: 5, RetryTimeout: 5 * time.Second,
	}})
	if err != nil {
		panic(err)
	}
	for range 5 { // five calls that hang: none returns
		if _, err := m.Enter("pricing"); err != nil {
			panic(err)
		}
	}
	clock.Advance(150 * time.Millisecond)
	if e, err := m.Enter("pricing"); err == nil {
		e.Exit() // this call finds the hung ones slow, and trips the breaker
	}
	_, err = m.Enter("pricing")
	fmt.Println(err)
	// Output:
	// breaker: call to "pricing" rejected: circuit OPEN by rule SlowRequestRatio
}

// A rule with RampUp lets the flow back in after a probe closes its breaker, as the dependency
// shows it can take it: one that serves 4 calls in each 100ms bucket is offered 5, then 6.
func ExampleRule_rampUp() {
	clock := breakertest.NewClock()
	m := breaker.NewManager(breaker.WithClock(clock))
	err := m.LoadRules([]breaker.Rule{{
		Resource: "cache", Strategy: breaker.ErrorRatio, Threshold: 0.5, MinRequestAmount: 5,
		RetryTimeout: time.Second, RampUp: 10 * time.Second,
	}})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	full := errors.New("cache: warming up")
	for range 5 {
		_ = m.Do(ctx, "cache", func(context.Context) error { return full })
	}
	clock.Advance(time.Second)
	_ = m.Do(ctx, "cache", func(context.Context) error { return nil }) // the probe
	for bucket := range 3 {
		served, held := 0, 0
		for range 20 { // 20 calls offered in each bucket
			err := m.Do(ctx, "cache", func(context.Context) error {
				if served++; served > 4 {
					return full
				}
				return nil
			})
			if errors.Is(err, breaker.ErrRampingUp) {
				held++
			}
			clock.Advance(5 * time.Millisecond)
		}
		fmt.Printf("bucket %d: %d sent, %d held back\n", bucket, served, held)
	}
	// Output:
	// bucket 0: 5 sent, 15 held back
	// bucket 1: 6 sent, 14 held back
	// bucket 2: 6 sent, 14 held back
}

// A rule with Pace keeps serving a dependency that serves part of its calls: where the window
// trips while calls still succeed, the breaker stays CLOSED and offers it about 1.5 times what
// it served. Here it serves 4 calls in each 100ms bucket of the 20 offered: where a breaker
// without Pace opens and serves none, this one gets the 4 through, bucket after bucket.
func ExampleRule_pace() {
	clock := breakertest.NewClock()
	m := breaker.NewManager(breaker.WithClock(clock))
	m.AddObserver(breaker.ObserverFunc(func(c breaker.StateChange) {
		fmt.Printf("%v -> %v: %v at %.2f\n", c.From, c.To, c.Reason, c.Snapshot)
	}))
	err := m.LoadRules([]breaker.Rule{{
		Resource: "search", Strategy: breaker.ErrorRatio, Threshold: 0.5, MinRequestAmount: 10,
		RetryTimeout: time.Second, Pace: true,
	}})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	overloaded := errors.New("search: overloaded")
	for bucket := range 4 {
		served, sent, held := 0, 0, 0
		for range 20 {
			err := m.Do(ctx, "search", func(context.Context) error {
				if sent++; sent > 4 {
					return overloaded
				}
				served++
				return nil
			})
			if errors.Is(err, breaker.ErrPacing) {
				held++
			}
			clock.Advance(5 * time.Millisecond)
		}
		fmt.Printf("bucket %d: %d served of %d sent, %d held back\n", bucket, served, sent, held)
	}
	// Output:
	// CLOSED -> CLOSED: PacingStarted at 0.60
	// bucket 0: 4 served of 10 sent, 10 held back
	// bucket 1: 4 served of 6 sent, 14 held back
	// bucket 2: 4 served of 6 sent, 14 held back
	// bucket 3: 4 served of 6 sent, 14 held back
}
