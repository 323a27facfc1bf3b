package breaker_test

import (
	"math/rand/v2"
	"os"
	"runtime/pprof"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakertest"
)

// envInt reads a whole number from the environment, or returns def.
func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	require.NoError(t, err, name)
	return n
}

// TestStress drives at least STRESS_EPISODES (default 10,000) HALF_OPEN episodes from many
// goroutines while rules reload, observers come and go and states are read.
//
// Every call to "probe-only" fails, and its breaker is tripped before the traffic starts, so
// it can never be CLOSED again: every call it admits must be a probe. So the calls it admitted
// must equal its OPEN → HALF_OPEN transitions exactly, and its transitions must chain.
func TestStress(t *testing.T) {
	episodes := envInt(t, "STRESS_EPISODES", 10_000)
	clock := breakertest.NewClock()
	m := breaker.NewManager(breaker.WithClock(clock))
	events := &recorder{}
	m.AddObserver(events)
	var started atomic.Int64 // probe-only episodes
	m.AddObserver(breaker.ObserverFunc(func(c breaker.StateChange) {
		if c.Resource == "probe-only" && c.Reason == breaker.RetryTimeoutElapsed {
			started.Add(1)
		}
	}))

	probeRule := func(id string) breaker.Rule {
		return breaker.Rule{ID: id, Resource: "probe-only", Strategy: breaker.ErrorCount, Threshold: 1,
			MinRequestAmount: 1, RetryTimeout: time.Millisecond, ProbeTimeout: 3 * time.Millisecond}
	}
	mixed := []breaker.Rule{
		{Resource: "mixed", Strategy: breaker.ErrorRatio, Threshold: 0.5, MinRequestAmount: 4, RetryTimeout: 2 * time.Millisecond},
		{Resource: "mixed", Strategy: breaker.ErrorCount, Threshold: 3, MinRequestAmount: 1, RetryTimeout: time.Millisecond},
	}
	sets := [][]breaker.Rule{
		{probeRule("first"), mixed[0]},
		{probeRule("second"), mixed[1]},
		{probeRule("first"), mixed[0], mixed[1]},
	}
	require.NoError(t, m.LoadRules(sets[0]))
	e, err := m.Enter("probe-only")
	require.NoError(t, err)
	e.SetError(errDown)
	e.Exit()
	require.Equal(t, breaker.Open, m.Breakers("probe-only")[0].State())
	events.reset()

	var admitted atomic.Int64
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		var background sync.WaitGroup
		background.Add(3)
		go func() { // reloads
			defer background.Done()
			for i := 1; !stop.Load(); i++ {
				assert.NoError(t, m.LoadRules(sets[i%len(sets)]))
			}
		}()
		go func() { // observers come and go
			defer background.Done()
			for !stop.Load() {
				remove := m.AddObserver(breaker.ObserverFunc(func(breaker.StateChange) {}))
				remove()
			}
		}()
		go func() { // readers
			defer background.Done()
			for !stop.Load() {
				for _, b := range m.Breakers("mixed") {
					_ = b.State()
					_ = b.Rule()
				}
				_ = m.Rules()
			}
		}()
		race(8, func(g int) {
			rng := rand.New(rand.NewPCG(uint64(g), 2))
			for started.Load() < int64(episodes) {
				clock.Advance(time.Duration(rng.IntN(2000)) * time.Microsecond)
				if e, err := m.Enter("probe-only"); err == nil {
					admitted.Add(1)
					if rng.IntN(10) > 0 { // else it hangs: the probe times out
						e.SetError(errDown)
						e.Exit()
					}
				}
				if e, err := m.Enter("mixed"); err == nil {
					if rng.IntN(3) == 0 {
						e.SetError(errDown)
					}
					e.Exit()
				}
			}
		})
		stop.Store(true)
		background.Wait()
	}()
	select {
	case <-done:
	case <-time.After(time.Duration(envInt(t, "STRESS_WATCHDOG_SECONDS", 120)) * time.Second):
		_ = pprof.Lookup("goroutine").WriteTo(os.Stderr, 1)
		t.Fatal("watchdog: the stress run did not finish; goroutines above")
	}

	assert.GreaterOrEqual(t, started.Load(), int64(episodes))
	assert.Equal(t, started.Load(), admitted.Load(), "exactly one call admitted per HALF_OPEN episode")

	var probeOnly []breaker.StateChange
	for _, c := range events.all() {
		assertLegal(t, c)
		if c.Resource == "probe-only" {
			probeOnly = append(probeOnly, c)
			assert.NotEqual(t, breaker.ProbeSucceeded, c.Reason, "every probe fails")
		}
	}
	sort.Slice(probeOnly, func(i, j int) bool { return probeOnly[i].Generation < probeOnly[j].Generation })
	from := breaker.Open
	for i, c := range probeOnly {
		require.Equal(t, uint64(i+2), c.Generation, "each transition reported once") // 1 was the setup's trip
		require.Equal(t, from, c.From, "generation %d", c.Generation)
		from = c.To
	}
	t.Logf("%d episodes, %d transitions", started.Load(), len(events.all()))
}
