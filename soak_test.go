package breaker_test

import (
	"context"
	"errors"
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
// reloading rules every second, on the real clock. The live heap, sampled at even steps of the
// traffic, must show no upward trend (see judgeHeap), and no goroutine may be left over. It
// runs only when SOAK is set (make soak).
func TestSoak(t *testing.T) {
	if os.Getenv("SOAK") == "" {
		t.Skip("set SOAK to a duration (make soak) to run the soak test")
	}
	length, err := time.ParseDuration(os.Getenv("SOAK"))
	require.NoError(t, err, "SOAK")
	require.Positive(t, length, "SOAK")

	run := runSoak(t, length, 0)
	trend, err := judgeHeap(run.samples)
	fmt.Printf("soak %v: %d calls, %d blocked, %d transitions; %v\n",
		length, run.calls, run.blocked, run.transitions, trend)
	assert.NoError(t, err, "the live heap")
	assert.Equal(t, run.goroutinesBefore, run.goroutinesAfter, "no goroutine left over")
	assert.Positive(t, run.transitions, "the traffic tripped breakers")
}

// soakRun is what one run of the soak traffic measured.
type soakRun struct {
	samples                           []heapSample
	calls, blocked, transitions       int64
	goroutinesBefore, goroutinesAfter int
}

// The heap is sampled about samplesPerSecond times a second of traffic, and at least
// minSamples times whatever the run's length, so that a short run still has a trend to fit.
const (
	samplesPerSecond = 2
	minSamples       = 20
)

// runSoak drives the soak traffic for length, on the real clock. After a warm-up it measures
// the traffic's pace and from then on samples the live heap each time a fixed number of calls
// has completed, so the samples are spaced by work done, not by the clock: a stalled machine
// takes fewer samples, not samples of an idle heap. The run lasts at least length and at least
// minSamples samples.
//
// When leakPerInterval is positive, the traffic keeps that many bytes alive at every sample
// interval, as a leaking library would: the tests of judgeHeap use it.
func runSoak(t *testing.T, length time.Duration, leakPerInterval int) soakRun {
	t.Helper()
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
	run := soakRun{goroutinesBefore: runtime.NumGoroutine()}

	// interval is the number of calls between two samples, zero during the warm-up. The
	// goroutine whose call completes an interval leaks, if asked to, and wakes the sampler.
	var interval atomic.Int64
	due := make(chan struct{}, 1)
	var leakMu sync.Mutex
	var leaked [][]byte

	// A sample is taken while the traffic and the reloads stand still. A reload holds the old
	// and the new breakers until it returns, and a collection that starts before it returns
	// keeps both, so a sample taken during one sees the heap double. And the collection gets
	// the machine to itself: beside the traffic, on a busy machine, it took up to 700ms.
	var pause sync.RWMutex
	const callsPerTurn = 256 // calls a worker makes between two looks at pause

	stop := make(chan struct{})
	var stopping atomic.Bool
	var wg sync.WaitGroup
	wg.Add(3)
	for w := 0; w < 2; w++ {
		go func() { // traffic: each resource is healthy or sick in turns of a few seconds
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 3))
			ctx := context.Background()
			for !stopping.Load() {
				pause.RLock()
				for range callsPerTurn {
					i := rng.IntN(resources)
					sick := (i+int(time.Now().Unix()/3))%4 == 0
					err := m.Do(ctx, names[i], func(context.Context) error {
						if sick && rng.IntN(2) == 0 {
							return errDown
						}
						return nil
					})
					if err != nil && err != errDown {
						blocked.Add(1)
					}
					n := calls.Add(1)
					if k := interval.Load(); k > 0 && n%k == 0 {
						if leakPerInterval > 0 {
							leakMu.Lock()
							leaked = append(leaked, make([]byte, leakPerInterval))
							leakMu.Unlock()
						}
						select {
						case due <- struct{}{}:
						default: // the sampler is behind: it reads the count when it gets there
						}
					}
				}
				pause.RUnlock()
			}
		}()
	}
	go func() { // reloads every second
		defer wg.Done()
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for i := 1; ; i++ {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			pause.RLock()
			assert.NoError(t, m.LoadRules(sets[i%2]))
			pause.RUnlock()
		}
	}()

	start := time.Now()
	time.Sleep(warmUp) // a soak runs in real time: the clock is what it tests
	pace := float64(calls.Load()) / time.Since(start).Seconds()
	sampling := (length - warmUp).Seconds()
	perSample := min(pace/samplesPerSecond, pace*sampling/minSamples)
	interval.Store(max(1, int64(perSample)))
	for time.Since(start) < length || len(run.samples) < minSamples {
		<-due
		pause.Lock()
		done := calls.Load()
		if n := len(run.samples); n == 0 || done > run.samples[n-1].calls { // else a stale wake-up
			run.samples = append(run.samples, heapSample{calls: done, heap: heapInUse()})
		}
		pause.Unlock()
	}
	stopping.Store(true)
	close(stop)
	wg.Wait()

	run.calls, run.blocked, run.transitions = calls.Load(), blocked.Load(), transitions.Load()
	run.goroutinesAfter = goroutinesSettled(run.goroutinesBefore)
	runtime.KeepAlive(m)
	runtime.KeepAlive(leaked)
	return run
}

// goroutinesSettled returns the number of goroutines once it is down to want, or after a
// second: a goroutine that has called wg.Done is still counted until it has returned.
func goroutinesSettled(want int) int {
	deadline := time.Now().Add(time.Second)
	n := runtime.NumGoroutine()
	for n > want && time.Now().Before(deadline) {
		runtime.Gosched()
		n = runtime.NumGoroutine()
	}
	return n
}

// heapSample is the live heap after a full collection, taken once calls calls had completed.
type heapSample struct {
	calls int64
	heap  uint64
}

// The heap may grow over a run by heapGrowthFloor plus heapGrowthShare of its median size.
//
// A steady heap still swings from sample to sample (by about 10 KiB on the soak's 2 MiB).
// No arrangement of swings within a band of height h can make the fitted line rise by more
// than 1.5·h over the run (the worst puts every low sample first and every high one last), so
// the bound tolerates swings of two thirds of itself, about 480 KiB on that heap. A leak that
// outgrows the bound by 1.5 times the swings fails whatever their order.
const (
	heapGrowthFloor = 512 << 10
	heapGrowthShare = 0.10
)

var (
	errHeapGrows         = errors.New("the live heap grows over the run")
	errFewSamples        = errors.New("too few heap samples to fit a trend")
	errSamplesOutOfOrder = errors.New("heap samples must be taken at increasing call counts")
)

// heapTrend is the least-squares line through a run's heap samples.
type heapTrend struct {
	slope  float64 // bytes per call
	growth float64 // slope times the calls from the first sample to the last
	median uint64  // the median live heap
	bound  float64 // the growth allowed
	count  int     // samples
}

func (h heapTrend) String() string {
	return fmt.Sprintf("%d heap samples, median %.2f MiB, slope %.3g B/call, growth %+.0f KiB over the run (bound %.0f KiB)",
		h.count, float64(h.median)/(1<<20), h.slope, h.growth/1024, h.bound/1024)
}

// judgeHeap fits a least-squares line through samples, the heap against the calls done, and
// returns errHeapGrows when the line rises over the run by more than the bound above. It
// returns errFewSamples for fewer than minSamples samples and errSamplesOutOfOrder when the call
// counts do not increase.
func judgeHeap(samples []heapSample) (heapTrend, error) {
	trend := heapTrend{count: len(samples)}
	if len(samples) < minSamples {
		return trend, fmt.Errorf("%w: %d, want at least %d", errFewSamples, len(samples), minSamples)
	}
	for i := 1; i < len(samples); i++ {
		if samples[i].calls <= samples[i-1].calls {
			return trend, fmt.Errorf("%w: sample %d at %d calls, sample %d at %d",
				errSamplesOutOfOrder, i-1, samples[i-1].calls, i, samples[i].calls)
		}
	}
	var meanX, meanY float64
	for _, s := range samples {
		meanX += float64(s.calls)
		meanY += float64(s.heap)
	}
	meanX /= float64(len(samples))
	meanY /= float64(len(samples))
	var sxy, sxx float64
	for _, s := range samples {
		dx := float64(s.calls) - meanX
		sxy += dx * (float64(s.heap) - meanY)
		sxx += dx * dx
	}
	heaps := make([]uint64, len(samples))
	for i, s := range samples {
		heaps[i] = s.heap
	}
	slices.Sort(heaps)

	trend.slope = sxy / sxx
	trend.growth = trend.slope * float64(samples[len(samples)-1].calls-samples[0].calls)
	trend.median = heaps[len(heaps)/2]
	trend.bound = heapGrowthFloor + heapGrowthShare*float64(trend.median)
	if trend.growth > trend.bound {
		return trend, fmt.Errorf("%w: %v", errHeapGrows, trend)
	}
	return trend, nil
}
