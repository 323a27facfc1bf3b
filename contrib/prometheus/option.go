package breakerprom

import (
	"math"
	"slices"

	"github.com/halfopen/breaker/breakerview"
)

// DefaultBuckets are the upper bounds, in seconds, of breaker_rt_seconds unless WithBuckets
// says otherwise: from 1ms to 10s, for calls to other services. Do not modify it.
var DefaultBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// Option configures a Collector.
type Option interface {
	apply(*config)
}

type config struct {
	buckets []float64
	limits  breakerview.Limits
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// WithBuckets sets the upper bounds, in seconds, of the buckets of breaker_rt_seconds; the
// default is DefaultBuckets. They are sorted, and repeats, NaN and infinities are dropped (the
// +Inf bucket is always there); bounds of which none is left keep the default.
// prometheus.ExponentialBuckets and its kin make longer lists.
func WithBuckets(bounds ...float64) Option {
	return optionFunc(func(c *config) {
		var kept []float64
		for _, b := range bounds {
			if !math.IsNaN(b) && !math.IsInf(b, 0) {
				kept = append(kept, b)
			}
		}
		slices.Sort(kept)
		if kept = slices.Compact(kept); len(kept) > 0 {
			c.buckets = kept
		}
	})
}

// WithLimits bounds the resource names that get series of their own in the metrics that calls
// and transitions grow (breaker_calls_total, breaker_rt_seconds, breaker_rejected_total,
// breaker_would_reject_total, breaker_transitions_total), and in those of template breakers,
// template settings and overrides: the names past l are counted under the resource label
// breakerview.Overflow ("_other"), so that callers who make up names (a resource per URL path)
// cannot grow the Collector without end. A field below 1 keeps the default,
// breakerview.DefaultLimits (1,000 names of at most 1 KiB, 128 KiB of them in all).
func WithLimits(l breakerview.Limits) Option {
	return optionFunc(func(c *config) { c.limits = l })
}
