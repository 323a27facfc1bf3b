package breaker_test

import (
	"context"
	"math/rand/v2"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
)

// race starts n goroutines that wait for one signal, runs fn in each, and waits for them.
func race(n int, fn func(i int)) {
	var ready, done sync.WaitGroup
	start := make(chan struct{})
	ready.Add(n)
	done.Add(n)
	for i := 0; i < n; i++ {
		go func() {
			defer done.Done()
			ready.Done()
			<-start
			fn(i)
		}()
	}
	ready.Wait()
	close(start)
	done.Wait()
}

// However many calls race for the probe, exactly one wins and one transition is reported.
func TestOneProbeAmong64(t *testing.T) {
	h := newHarness(t, errorCount(1, 1))
	for round := 0; round < 50; round++ {
		h.completeN("svc", 1, errDown) // trips (again)
		require.Equal(t, breaker.Open, h.state("svc", 0))
		h.clock.Advance(5 * time.Second)
		h.events.reset()

		var mu sync.Mutex
		var probes []*breaker.Entry
		rejected := 0
		race(64, func(int) {
			e, err := h.m.Enter("svc")
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				assert.ErrorIs(t, err, breaker.ErrOpen)
				rejected++
				return
			}
			probes = append(probes, e)
		})
		require.Len(t, probes, 1, "round %d", round)
		assert.Equal(t, 63, rejected)
		assert.Equal(t, []string{probing}, h.events.transitions())
		probes[0].Exit()
		require.Equal(t, breaker.Closed, h.state("svc", 0))
	}
}

// N goroutines completing M calls each inside one bucket leave exactly N*M counted.
func TestExactCountsUnderConcurrency(t *testing.T) {
	const goroutines, calls = 16, 500
	const n = goroutines * calls
	r := errorCount(n+1, 1)
	r.StatInterval = time.Minute
	h := newHarness(t, r)
	race(goroutines, func(int) {
		for i := 0; i < calls; i++ {
			_ = h.m.Do(context.Background(), "svc", func(context.Context) error { return errDown })
		}
	})
	require.Equal(t, breaker.Closed, h.state("svc", 0), "no count made up")
	h.completeN("svc", 1, errDown)
	assert.Equal(t, breaker.Open, h.state("svc", 0), "no count lost")
	assert.Equal(t, float64(n+1), h.events.last().Snapshot)

	// The same for the total of a ratio: n successes need exactly n errors to reach 0.5.
	ratio := errorRatio(0.5, 1)
	ratio.StatInterval = time.Minute
	h = newHarness(t, ratio)
	race(goroutines, func(int) {
		for i := 0; i < calls; i++ {
			_ = h.m.Do(context.Background(), "svc", func(context.Context) error { return nil })
		}
	})
	h.completeN("svc", n-1, errDown)
	require.Equal(t, breaker.Closed, h.state("svc", 0))
	h.completeN("svc", 1, errDown)
	assert.Equal(t, breaker.Open, h.state("svc", 0))
	assert.Equal(t, 0.5, h.events.last().Snapshot)
}

// Exit may run on another goroutine; racing Exits count the call once.
func TestExitFromOtherGoroutines(t *testing.T) {
	h := newHarness(t, errorCount(2, 1))
	e, err := h.m.Enter("svc")
	require.NoError(t, err)
	race(8, func(int) {
		e.SetError(errDown)
		e.Exit()
		_ = e.Err()
	})
	assert.Equal(t, breaker.Closed, h.state("svc", 0), "one error counted, not eight")
	h.completeN("svc", 1, errDown)
	assert.Equal(t, breaker.Open, h.state("svc", 0))
}

// Traffic with random outcomes on several goroutines while rules reload and observers
// come and go. The rules of "svc" survive every reload (only their IDs change), so each of its
// breakers must report every transition exactly once, in a legal chain; the rules of "churn"
// are dropped and made anew, and every transition reported for them must still be legal.
func TestLoadRulesDuringTraffic(t *testing.T) {
	fast := func(r breaker.Rule, resource, id string) breaker.Rule {
		r.Resource, r.ID = resource, id
		r.RetryTimeout, r.ProbeTimeout = 10*time.Millisecond, 5*time.Millisecond
		if r.Strategy == breaker.SlowRequestRatio {
			r.MaxAllowedRT = time.Microsecond // slow when the clock ticks during the call
		}
		return r
	}
	sets := make([][]breaker.Rule, 3)
	for i, id := range []string{"a", "b", "c"} {
		sets[i] = []breaker.Rule{fast(errorCount(3, 1), "svc", id), fast(slowRatio(0.5, 4), "svc", id)}
	}
	sets[0] = append(sets[0], fast(errorRatio(0.5, 4), "churn", ""))
	sets[1] = append(sets[1], fast(errorCount(2, 1), "churn", ""))
	h := newHarness(t, sets[0]...)

	stop := make(chan struct{})
	var background sync.WaitGroup
	background.Add(2)
	go func() {
		defer background.Done()
		for i := 1; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			assert.NoError(t, h.m.LoadRules(sets[i%len(sets)]))
		}
	}()
	go func() { // observers come and go; the clock moves
		defer background.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			remove := h.m.AddObserver(breaker.ObserverFunc(func(breaker.StateChange) {}))
			h.clock.Advance(time.Millisecond)
			remove()
		}
	}()

	race(8, func(g int) {
		rng := rand.New(rand.NewPCG(uint64(g), 1))
		for i := 0; i < 3000; i++ {
			resource := "svc"
			if i%2 == 1 {
				resource = "churn"
			}
			e, err := h.m.Enter(resource)
			if err != nil {
				assert.ErrorIs(t, err, breaker.ErrOpen)
				continue
			}
			if rng.IntN(3) == 0 {
				e.SetError(errDown)
			}
			if rng.IntN(50) == 0 {
				continue // never exits: its probe must time out
			}
			e.Exit()
		}
	})
	close(stop)
	background.Wait()

	stable := map[breaker.Rule][]breaker.StateChange{}
	for _, c := range h.events.all() {
		assertLegal(t, c)
		if c.Resource == "svc" {
			r := c.Rule
			r.ID = ""
			stable[r] = append(stable[r], c)
		}
	}
	require.NotEmpty(t, stable, "the traffic tripped the breakers of svc")
	for rule, cs := range stable {
		sort.Slice(cs, func(i, j int) bool { return cs[i].Generation < cs[j].Generation })
		from := breaker.Closed
		for i, c := range cs {
			require.Equal(t, uint64(i+1), c.Generation, "%v: each transition reported once", rule.Strategy)
			require.Equal(t, from, c.From, "%v: generation %d", rule.Strategy, c.Generation)
			from = c.To
		}
	}
}

// assertLegal checks that c is a transition the state machine may make.
func assertLegal(t *testing.T, c breaker.StateChange) {
	t.Helper()
	want := map[breaker.Reason][2]breaker.State{
		breaker.ThresholdExceeded:   {breaker.Closed, breaker.Open},
		breaker.RetryTimeoutElapsed: {breaker.Open, breaker.HalfOpen},
		breaker.ProbeSucceeded:      {breaker.HalfOpen, breaker.Closed},
		breaker.ProbeFailed:         {breaker.HalfOpen, breaker.Open},
		breaker.ProbeTimedOut:       {breaker.HalfOpen, breaker.Open},
		breaker.ProbeBlocked:        {breaker.HalfOpen, breaker.Open},
		breaker.ProbeIgnored:        {breaker.HalfOpen, breaker.Open},
	}
	if c.Reason == breaker.RuleChanged {
		assert.Equal(t, breaker.Closed, c.To)
		assert.NotEqual(t, breaker.Closed, c.From, "a CLOSED breaker is dropped silently")
		return
	}
	w, ok := want[c.Reason]
	require.True(t, ok, "unknown reason %v", c.Reason)
	assert.Equal(t, w, [2]breaker.State{c.From, c.To}, "%v", c.Reason)
}
