package breaker_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
)

// TestSoak runs steady traffic on 1,000 resources for SOAK (a duration, such as 60s or 10m),
// reloading rules every second, on the real clock. The peak live heap of the second half of the
// run must be within 10% of the first half's, and no goroutine may be left over. It runs only
// when SOAK is set (make soak).
func TestSoak(t *testing.T) {
	if os.Getenv("SOAK") == "" {
		t.Skip("set SOAK to a duration (make soak) to run the soak test")
	}
	length, err := time.ParseDuration(os.Getenv("SOAK"))
	require.NoError(t, err, "SOAK")
	warmUp := min(length/6, 10*time.Second)

	const resources = 1000
	names := make([]string, resources)
	for i := range names {
		names[i] = "resource-" + strconv.Itoa(i)
	}
	// Two rule sets: the error rule of every resource stays, the slow rule of every other
	// resource changes threshold, so each reload keeps half the breakers and replaces half.
	sets := [2][]breaker.Rule{}
	for s := range sets {
		for i, name := range names {
			sets[s] = append(sets[s],
				breaker.Rule{Resource: name, Strategy: breaker.ErrorRatio, Threshold: 0.5, MinRequestAmount: 10,
					RetryTimeout: 200 * time.Millisecond},
				breaker.Rule{Resource: name, Strategy: breaker.SlowRequestRatio, MaxAllowedRT: time.Millisecond,
					Threshold: 0.9 - float64(s*(i%2))/10, RetryTimeout: 300 * time.Millisecond})
		}
	}

	m := breaker.NewManager()
	var calls, blocked, transitions atomic.Int64
	m.AddObserver(breaker.ObserverFunc(func(breaker.StateChange) { transitions.Add(1) }))
	require.NoError(t, m.LoadRules(sets[0]))
	goroutinesBefore := runtime.NumGoroutine()

	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(3)
	for w := 0; w < 2; w++ {
		go func() { // traffic: each resource is healthy or sick in turns of a few seconds
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 3))
			ctx := context.Background()
			for !stop.Load() {
				i := rng.IntN(resources)
				sick := (i+int(time.Now().Unix()/3))%4 == 0
				err := m.Do(ctx, names[i], func(context.Context) error {
					if sick && rng.IntN(2) == 0 {
						return errDown
					}
					return nil
				})
				calls.Add(1)
				if err != nil && err != errDown {
					blocked.Add(1)
				}
			}
		}()
	}
	go func() { // reloads every second
		defer wg.Done()
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for i := 1; !stop.Load(); i++ {
			<-tick.C
			assert.NoError(t, m.LoadRules(sets[i%2]))
		}
	}()

	// The live heap rises and falls with the traffic (breakers opening and closing, reloads),
	// so it is sampled every second during the traffic: a leak shows as the peak of the second
	// half of the run rising above the peak of the first.
	time.Sleep(warmUp) // a soak runs in real time: the clock is what it tests
	var samples []uint64
	for elapsed := warmUp; elapsed < length; elapsed += time.Second {
		time.Sleep(time.Second)
		samples = append(samples, heapInUse())
	}
	stop.Store(true)
	wg.Wait()
	half := len(samples) / 2
	first, second := slices.Max(samples[:half]), slices.Max(samples[half:])

	fmt.Printf("soak %v: %d calls, %d blocked, %d transitions, peak heap %.1f MiB in the first half, %.1f MiB in the second\n",
		length, calls.Load(), blocked.Load(), transitions.Load(), float64(first)/(1<<20), float64(second)/(1<<20))
	assert.LessOrEqual(t, float64(second), 1.1*float64(first), "the heap grew by more than 10%")
	assert.Equal(t, goroutinesBefore, runtime.NumGoroutine(), "no goroutine left over")
	assert.Positive(t, transitions.Load(), "the traffic tripped breakers")
	runtime.KeepAlive(m)
}
