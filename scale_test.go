package breaker_test

import (
	"runtime"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
)

// manyRules returns two rules (slow and error ratio, 10 buckets each) for each of n resources.
func manyRules(resources int) []breaker.Rule {
	rules := make([]breaker.Rule, 0, 2*resources)
	for i := 0; i < resources; i++ {
		rules = append(rules, passRules("resource-"+strconv.Itoa(i))...)
	}
	return rules
}

// heapInUse returns the live heap after a full collection.
func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// A breaker with 10 buckets, with its share of the manager's maps, stays under 1 KiB.
func TestBreakerMemory(t *testing.T) {
	const resources = 5000
	rules := manyRules(resources)
	before := heapInUse()
	m := breaker.NewManager()
	require.NoError(t, m.LoadRules(rules))
	perBreaker := (heapInUse() - before) / uint64(len(rules))
	t.Logf("%d bytes per breaker", perBreaker)
	assert.Less(t, perBreaker, uint64(1024))
	runtime.KeepAlive(m)
	runtime.KeepAlive(rules)
}

// BenchmarkLoadRules100k loads 100,000 rules over 50,000 resources into an empty manager and
// reports the live heap it takes.
func BenchmarkLoadRules100k(b *testing.B) {
	rules := manyRules(50_000)
	b.ReportAllocs()
	var heap uint64
	for range b.N {
		b.StopTimer()
		base := heapInUse()
		m := breaker.NewManager()
		b.StartTimer()
		if err := m.LoadRules(rules); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		heap = heapInUse() - base
		runtime.KeepAlive(m)
		b.StartTimer()
	}
	b.ReportMetric(float64(heap)/(1<<20), "heap-MB")
}
