package breaker

import (
	"fmt"
	"math"

	"github.com/halfopen/breaker/internal/window"
)

// breakerBytes is what a breaker takes beside its buckets: the breaker, its period, its
// window's header and its rule, rounded up from what TestBreakerMemory measures.
const breakerBytes = 768

// breakerMemory is what the breaker of r takes at most, its window included, with its counters
// striped for procs processors. The buckets are counted an eighth larger, the most that
// rounding up to an allocation size can add.
func (r Rule) breakerMemory(procs int) int64 {
	if !r.Strategy.windowed() {
		return breakerBytes
	}
	if r.StatCalls > 0 {
		mem := breakerBytes + window.CallsBytes(r.StatCalls)
		if r.Strategy == SlowRequestRatio { // and its calls in flight
			mem += window.FlightBytes(int64(r.statInterval())/int64(r.bucketCount()), int64(r.MaxAllowedRT), procs)
		}
		return mem
	}
	buckets := window.SlidingBytes(r.bucketCount(), procs)
	mem := breakerBytes + buckets + buckets/8
	if r.Strategy == SlowRequestRatio && r.MaxAllowedRT > 0 { // and its calls in flight
		mem += window.FlightBytes(int64(r.statInterval())/int64(r.bucketCount()), int64(r.MaxAllowedRT), procs)
	}
	return mem
}

// ruleMemory is what a rule of a named resource takes, striped for procs: its breaker and its
// name.
func (r Rule) ruleMemory(procs int) int64 { return r.breakerMemory(procs) + int64(len(r.Resource)) }

// resourceBytes is what a named resource with rules takes beside its breakers and its name, once
// for all its rules: its entry (the struct and the slices of its breakers), its share of the rule
// set's map and of its index (a table two to four times the names, of 32-byte slots), rounded up
// from what a resource of one rule takes with the index at its largest (4,097 names: 1,158 bytes
// in all, against 1,044 counted for its breaker and name).
const resourceBytes = 192

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
