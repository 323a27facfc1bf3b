package breakerprom

import (
	"math"
	"slices"
)

// DefaultBuckets are the upper bounds, in seconds, of breaker_rt_seconds unless WithBuckets
// says otherwise: from 1ms to 10s, for calls to other services. Do not modify it.
var DefaultBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// DefaultMaxResources is how many resource names a Collector gives series of their own unless
// WithMaxResources says otherwise.
const DefaultMaxResources = 1000

// OverflowResource is the value of the resource label under which a Collector counts the calls
// and transitions of every resource past its bound (see WithMaxResources).
const OverflowResource = "(overflow)"

// Option configures a Collector.
type Option interface {
	apply(*config)
}

type config struct {
	buckets      []float64
	maxResources int
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

// WithMaxResources bounds the resource names that get series of their own in
// breaker_calls_total, breaker_rt_seconds and breaker_transitions_total at n; the default is
// DefaultMaxResources. The first n names a call or a transition is seen under keep their
// series for the life of the Collector; the calls and transitions of every later name are
// counted under the resource label OverflowResource, so each metric has at most n+1 resource
// values, whatever names the callers make up. An n below 1 keeps the default.
//
// A name is never moved: once in the overflow, its calls stay there, also when others stop
// being called. Raise n if OverflowResource shows calls; it should stay absent.
func WithMaxResources(n int) Option {
	return optionFunc(func(c *config) {
		if n >= 1 {
			c.maxResources = n
		}
	})
}
