package breakerprom

import (
	"math"
	"slices"

	"github.com/halfopen/breaker"
)

// DefaultBuckets are the upper bounds, in seconds, of breaker_rt_seconds unless WithBuckets
// says otherwise: from 1ms to 10s, for calls to other services. Do not modify it.
var DefaultBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// DefaultMaxResources is how many resource names get series of their own unless
// WithMaxResources says otherwise.
const DefaultMaxResources = 1000

// DefaultMaxNameLength is the longest resource name, in bytes, that gets series of its own
// unless WithMaxNameLength says otherwise: the core's breaker.DefaultMaxNameLength (1 KiB).
const DefaultMaxNameLength = breaker.DefaultMaxNameLength

// DefaultMaxNameBytes is how many bytes of resource names the Collector keeps unless
// WithMaxNameBytes says otherwise: 128 KiB, about 128 bytes for each of DefaultMaxResources
// names.
const DefaultMaxNameBytes = 128 << 10

// OverflowResource is the resource label of the calls and transitions of every resource name
// past the Collector's bounds (WithMaxResources, WithMaxNameLength, WithMaxNameBytes). A
// resource really named so shares its series.
const OverflowResource = "_other"

// Option configures a Collector.
type Option interface {
	apply(*config)
}

type config struct {
	buckets       []float64
	maxResources  int
	maxNameLength int
	maxNameBytes  int
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

// WithMaxResources sets how many resource names get series of their own in the metrics that
// calls and transitions grow: breaker_calls_total, breaker_rt_seconds, breaker_rejected_total,
// breaker_would_reject_total and breaker_transitions_total. The first n names seen keep their
// series for the life of the Collector; every later name is counted under the resource label
// OverflowResource ("_other"), so that callers who make up names (a resource per URL path)
// cannot grow the Collector without end. breaker_override and
// breaker_override_end_timestamp_seconds, and the breaker_in_flight of the names that hold
// template settings, take names of the same bound. The default is DefaultMaxResources (1,000);
// an n below 1 keeps it.
func WithMaxResources(n int) Option {
	return optionFunc(func(c *config) {
		if n >= 1 {
			c.maxResources = n
		}
	})
}

// WithMaxNameLength sets the longest resource name, in bytes, that gets series of its own. The
// calls and transitions of a longer name are counted under OverflowResource ("_other"), and the
// name is neither kept nor looked up, so a caller who passes a whole URL or request body as
// the name costs nothing. The default is DefaultMaxNameLength (1 KiB), the longest name the
// core keeps; an n below 1 keeps it.
func WithMaxNameLength(n int) Option {
	return optionFunc(func(c *config) {
		if n >= 1 {
			c.maxNameLength = n
		}
	})
}

// WithMaxNameBytes sets how many bytes the resource names with series of their own may take
// together, each charged by its length (and that of its label, when the name is not UTF-8 and
// its label had to be rewritten). Names are taken in the order seen, as for WithMaxResources:
// once a new name does not fit, it and every later new name are counted under
// OverflowResource ("_other"). The Collector keeps a copy of each name it keeps, never the
// caller's string, so a name cut from a larger string does not keep that string alive. The
// default is DefaultMaxNameBytes (128 KiB); an n below 1 keeps it.
func WithMaxNameBytes(n int) Option {
	return optionFunc(func(c *config) {
		if n >= 1 {
			c.maxNameBytes = n
		}
	})
}
