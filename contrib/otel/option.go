package breakerotel

import "go.opentelemetry.io/otel/attribute"

// DefaultMaxResources is how many resource names get attribute sets of their own unless
// WithMaxResources says otherwise. It keeps breaker.calls, with up to four attribute sets per
// resource, under the SDK's default cardinality limit of 2000 sets per instrument.
const DefaultMaxResources = 400

// OverflowResource is the value of ResourceKey under which Instruments count the calls and
// transitions of every resource past their bound (see WithMaxResources).
const OverflowResource = "(overflow)"

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

// WithMaxResources bounds the resource names that get attribute sets of their own in
// breaker.calls, breaker.call.duration and breaker.transitions at n; the default is
// DefaultMaxResources. The first n names a call or a transition is seen under keep their sets
// for the life of the Instruments; the calls and transitions of every later name are counted
// with ResourceKey OverflowResource, so each instrument has at most n+1 resource values,
// whatever names the callers make up. An n below 1 keeps the default.
//
// A name is never moved: once in the overflow, its calls stay there. Raise n if
// OverflowResource shows calls; it should stay absent. Above 499, breaker.calls may pass the
// SDK's default cardinality limit (sdkmetric.WithCardinalityLimit).
func WithMaxResources(n int) Option {
	return optionFunc(func(c *config) {
		if n >= 1 {
			c.maxResources = n
		}
	})
}
