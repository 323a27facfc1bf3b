package breaker_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The synthetic runs: a steady heap of 4 MiB whose samples swing within a band of swing, the
// most the bound tolerates when the swings come in the worst order, and sixty times what the
// soak's samples show.
const (
	steadyHeap = 4 << 20
	swing      = 600 << 10
)

// noiseShapes make the swings of a synthetic run, each within [0, swing): rng picks the values
// of the random ones. The ordered ones are the worst a least-squares line can meet: every low
// sample first and every high one last, or the reverse.
var noiseShapes = []struct {
	name  string
	noise func(rng *rand.Rand, i, n int) uint64
}{
	{"uniform", func(rng *rand.Rand, _, _ int) uint64 { return rng.Uint64N(swing) }},
	{"rare spikes", func(rng *rand.Rand, _, _ int) uint64 {
		if rng.IntN(10) == 0 {
			return swing - 1
		}
		return rng.Uint64N(swing / 20)
	}},
	{"sawtooth", func(_ *rand.Rand, i, _ int) uint64 { return uint64(i%7) * (swing - 1) / 6 }},
	{"low then high", func(_ *rand.Rand, i, n int) uint64 { return uint64(2*i/n) * (swing - 1) }},
	{"high then low", func(_ *rand.Rand, i, n int) uint64 { return uint64(1-2*i/n) * (swing - 1) }},
}

// syntheticRun returns n samples of a heap that starts at steadyHeap, grows by growth over the
// run in equal steps, and swings by noise. The calls between samples vary, as the soak's do.
func syntheticRun(rng *rand.Rand, n int, growth float64, noise func(*rand.Rand, int, int) uint64) []heapSample {
	samples := make([]heapSample, n)
	var calls int64
	for i := range samples {
		calls += 100_000 + rng.Int64N(50_000)
		leaked := growth * float64(i) / float64(n-1)
		samples[i] = heapSample{calls: calls, heap: steadyHeap + uint64(leaked) + noise(rng, i, n)}
	}
	return samples
}

// Given a steady heap whose samples swing in any order, when the judgement fits its trend,
// then it passes.
func TestJudgeHeapPassesSteadyHeap(t *testing.T) {
	for _, shape := range noiseShapes {
		t.Run(shape.name, func(t *testing.T) {
			steepest := math.Inf(-1)
			for seed := uint64(0); seed < 200; seed++ {
				rng := rand.New(rand.NewPCG(seed, 1))
				n := minSamples + rng.IntN(400)
				trend, err := judgeHeap(syntheticRun(rng, n, 0, shape.noise))
				require.NoError(t, err, "seed %d, %d samples", seed, n)
				steepest = max(steepest, trend.growth)
			}
			t.Logf("largest fitted growth %.0f KiB, bound %.0f KiB", steepest/1024,
				(heapGrowthFloor+heapGrowthShare*steadyHeap)/1024)
		})
	}
}

// Given a heap that leaks 2 MiB over the run, under the same swings, when the judgement fits
// its trend, then it fails.
func TestJudgeHeapFailsLeak(t *testing.T) {
	const leak = 2 << 20
	for _, shape := range noiseShapes {
		t.Run(shape.name, func(t *testing.T) {
			shallowest := math.Inf(1)
			for seed := uint64(0); seed < 200; seed++ {
				rng := rand.New(rand.NewPCG(seed, 2))
				n := minSamples + rng.IntN(400)
				trend, err := judgeHeap(syntheticRun(rng, n, leak, shape.noise))
				require.ErrorIs(t, err, errHeapGrows, "seed %d, %d samples", seed, n)
				shallowest = min(shallowest, trend.growth)
			}
			t.Logf("smallest fitted growth %.0f KiB of a %d KiB leak", shallowest/1024, leak>>10)
		})
	}
}

// Given too few samples, or samples whose call counts do not increase, the judgement refuses
// to fit a trend.
func TestJudgeHeapRefusesBadSamples(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	flat := func(*rand.Rand, int, int) uint64 { return 0 }

	_, err := judgeHeap(nil)
	assert.ErrorIs(t, err, errFewSamples, "no samples")
	_, err = judgeHeap(syntheticRun(rng, minSamples-1, 0, flat))
	assert.ErrorIs(t, err, errFewSamples, "one sample short")

	repeated := syntheticRun(rng, minSamples, 0, flat)
	repeated[5].calls = repeated[4].calls
	_, err = judgeHeap(repeated)
	assert.ErrorIs(t, err, errSamplesOutOfOrder, "two samples at the same count")

	backwards := syntheticRun(rng, minSamples, 0, flat)
	backwards[5].calls = backwards[4].calls - 1
	_, err = judgeHeap(backwards)
	assert.ErrorIs(t, err, errSamplesOutOfOrder, "a sample before the one ahead of it")
}

// Given the soak's traffic with a library that keeps 128 KiB at every sample interval, 2.4 MiB
// or more between the first and the last of at least 20 samples, when the soak judges its
// heap, then it fails.
func TestSoakFailsLeak(t *testing.T) {
	run := runSoak(t, 500*time.Millisecond, 128<<10)
	trend, err := judgeHeap(run.samples)
	fmt.Printf("leaking soak: %d calls; %v\n", run.calls, trend)
	assert.ErrorIs(t, err, errHeapGrows)
	assert.Equal(t, run.goroutinesBefore, run.goroutinesAfter, "no goroutine left over")
}
