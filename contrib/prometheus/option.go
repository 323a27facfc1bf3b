package breakerprom

import (
	"math"
	"slices"
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
