package breakerotel

import "go.opentelemetry.io/otel/attribute"

// DefaultMaxResources is how many resource names get attribute sets of their own unless
// WithMaxResources says otherwise. breaker.calls may take up to nine attribute sets per
// resource (passed, failed, ignored, blocked by each of four causes, would-reject in two
// modes), so 200 keeps it under the SDK's default cardinality limit of 2,000 sets per
// instrument, past which the SDK folds every new set into one overflow set.
const DefaultMaxResources = 200

// OverflowResource is the breaker.resource of the calls and transitions of every resource name
// past the bound of the Instruments (WithMaxResources). A resource really named so shares its
// series.
const OverflowResource = "_other"

// Option configures Instruments.
type Option interface {
	apply(*config)
}

type config struct {
	attrs        []attribute.KeyValue
	maxResources int
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
// MeterProvider's aggregations, without end. The default is DefaultMaxResources (200); an n
// below 1 keeps it. Above 222, raise the SDK's limit too (sdkmetric.WithCardinalityLimit).
func WithMaxResources(n int) Option {
	return optionFunc(func(c *config) {
		if n >= 1 {
			c.maxResources = n
		}
	})
}
