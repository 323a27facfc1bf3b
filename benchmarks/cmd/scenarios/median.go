package main

import (
	"math"
	"slices"
	"time"

	"github.com/halfopen/breaker/benchmarks/scenario"
)

// median of xs; NaN if any is NaN (a measure that does not apply), +Inf sorts last.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	for _, x := range s {
		if math.IsNaN(x) {
			return math.NaN()
		}
	}
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	if math.IsInf(s[n/2], 1) {
		return s[n/2] // the upper middle never happened: neither did the median
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// medianOf applies median to one number taken from each repetition's measures.
func medianOf(ms []scenario.Measures, f func(scenario.Measures) float64) float64 {
	xs := make([]float64, len(ms))
	for i, m := range ms {
		xs[i] = f(m)
	}
	return median(xs)
}

// dur turns a duration measure into a float, with Inf for never and NaN for not applicable.
func dur(d time.Duration) float64 {
	switch {
	case d == scenario.Inf:
		return math.Inf(1)
	case d < 0:
		return math.NaN()
	}
	return float64(d)
}
