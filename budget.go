package breaker

import (
	"fmt"
	"math"

	"github.com/halfopen/breaker/internal/window"
)

// breakerBytes is what a breaker takes beside its buckets: the breaker, its period, its
// window's header and its rule, rounded up from what TestBreakerMemory measures.
const breakerBytes = 768

// breakerMemory is what the breaker of r takes at most, its window included. The buckets are
// counted an eighth larger, the most that rounding up to an allocation size can add.
func (r Rule) breakerMemory() int64 {
	if !r.Strategy.windowed() {
		return breakerBytes
	}
	if r.StatCalls > 0 {
		mem := breakerBytes + window.CallsBytes(r.StatCalls)
		if r.Strategy == SlowRequestRatio { // and its calls in flight
			mem += window.FlightBytes(int64(r.statInterval())/int64(r.bucketCount()), int64(r.MaxAllowedRT))
		}
		return mem
	}
	buckets := window.SlidingBytes(r.bucketCount())
	mem := breakerBytes + buckets + buckets/8
	if r.Strategy == SlowRequestRatio && r.MaxAllowedRT > 0 { // and its calls in flight
		mem += window.FlightBytes(int64(r.statInterval())/int64(r.bucketCount()), int64(r.MaxAllowedRT))
	}
	return mem
}

// ruleMemory is what a rule of a named resource takes: its breaker and its name.
func (r Rule) ruleMemory() int64 { return r.breakerMemory() + int64(len(r.Resource)) }

// templateEntryBytes is what a resource's entry for its breakers from a template takes beside them
// and its name, rounded up from what TestTemplateBound measures. The names are charged as they
// come, by their length, against what the budget leaves.
const templateEntryBytes = 256

// settingsBytes is what one resource's installed settings take, its entry in the rule set's
// map and index (up to four slots of 40 bytes) included, rounded up.
const settingsBytes = 640

// over reports whether sum is past budget; a budget <= 0 is no bound.
func over(budget, sum int64) bool { return budget > 0 && sum > budget }

// satSum adds two non-negative numbers, saturating instead of overflowing.
func satSum(a, b int64) int64 {
	if b > math.MaxInt64-a {
		return math.MaxInt64
	}
	return a + b
}

// satMul multiplies two non-negative numbers without overflow.
func satMul(a, b int64) int64 {
	if a != 0 && b > math.MaxInt64/a {
		return math.MaxInt64
	}
	return a * b
}

// formatBytes writes n in MiB when it is a whole number of them, else in bytes.
func formatBytes(n int64) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}
