package breakerotel

import (
	"go.opentelemetry.io/otel/attribute"

	"github.com/halfopen/breaker"
)

// DefaultMaxResources is how many resource names get attribute sets of their own unless
// WithMaxResources says otherwise. breaker.calls may take up to eleven attribute sets per
// resource (passed, failed, slow, blocked by each of six causes, would-reject in two
// modes), so 180 keeps it under the SDK's default cardinality limit of 2,000 sets per
// instrument, past which the SDK folds every new set into one overflow set.
const DefaultMaxResources = 180

// DefaultMaxNameLength is the longest resource name, in bytes, that gets attribute sets of its
// own unless WithMaxNameLength says otherwise: the core's breaker.DefaultMaxNameLength (1 KiB).
const DefaultMaxNameLength = breaker.DefaultMaxNameLength

// DefaultMaxNameBytes is how many bytes of resource names the Instruments keep unless
// WithMaxNameBytes says otherwise: 25 KiB, about 140 bytes for each of DefaultMaxResources
// names.
const DefaultMaxNameBytes = 25 << 10

// OverflowResource is the breaker.resource of the calls and transitions of every resource name
// past the bounds of the Instruments (WithMaxResources, WithMaxNameLength, WithMaxNameBytes). A
// resource really named so shares its series.
const OverflowResource = "_other"

// Option configures Instruments.
type Option interface {
	apply(*config)
}

type config struct {
	attrs         []attribute.KeyValue
	maxResources  int
	maxNameLength int
	maxNameBytes  int
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// WithAttributes adds attrs to every measurement of the Instruments, such as the name of the
// Manager when a process reports several to one MeterProvider. It may be given more than once.
// An attribute with a key that the package sets, such as breaker.resource, is overridden.
func WithAttributes(attrs ...attribute.KeyValue) Option {
	return optionFunc(func(c *config) { c.attrs = append(c.attrs, attrs...) })
}

// WithMaxResources sets how many resource names get series of their own in the instruments
// that calls and transitions grow: breaker.calls, breaker.call.duration and
// breaker.transitions. The first n names seen keep theirs for the life of the Instruments;
// every later name is measured with breaker.resource = OverflowResource ("_other"), so that
// callers who make up names (a resource per URL path) cannot grow the Instruments, or the
// MeterProvider's aggregations, without end. breaker.override and breaker.override.end, and
// the breaker.in_flight of the names that hold template settings, take names of the same
// bound. The default is DefaultMaxResources (180); an n below 1 keeps it. Above 180, raise the
// SDK's limit too (sdkmetric.WithCardinalityLimit).
func WithMaxResources(n int) Option {
	return optionFunc(func(c *config) {
		if n >= 1 {
			c.maxResources = n
		}
	})
}

// WithMaxNameLength sets the longest resource name, in bytes, that gets series of its own. The
// calls and transitions of a longer name are measured with breaker.resource = OverflowResource
// ("_other"), and the name is neither kept nor looked up, so a caller who passes a whole URL or
// request body as the name costs nothing. The default is DefaultMaxNameLength (1 KiB), the
// longest name the core keeps; an n below 1 keeps it.
func WithMaxNameLength(n int) Option {
	return optionFunc(func(c *config) {
		if n >= 1 {
			c.maxNameLength = n
		}
	})
}

// WithMaxNameBytes sets how many bytes the resource names with series of their own may take
// together, each charged by its length (and that of its breaker.resource, when the name is not
// UTF-8 and had to be rewritten). Names are taken in the order seen, as for
// WithMaxResources: once a new name does not fit, it and every later new name are measured
// with breaker.resource = OverflowResource ("_other"). The Instruments keep a copy of each name
// they keep, never the caller's string, so a name cut from a larger string does not keep that
// string alive. The default is DefaultMaxNameBytes (25 KiB); an n below 1 keeps it.
func WithMaxNameBytes(n int) Option {
	return optionFunc(func(c *config) {
		if n >= 1 {
			c.maxNameBytes = n
		}
	})
}
