package breakerotel

import (
	"go.opentelemetry.io/otel/attribute"

	"github.com/halfopen/breaker/breakerview"
)

// DefaultLimits returns the bounds on resource names that WithLimits's fields below 1 take: 180
// names of at most 1 KiB, 25 KiB of them in all (about 140 bytes a name). breaker.calls takes
// an attribute set for each outcome, cause and mode a resource's calls had (passed, failed,
// slow, blocked by each of seven causes, would-reject in two modes: twelve at most), so 180
// names stay under the SDK's default cardinality limit of 2,000 sets per instrument, past which
// the SDK folds every new set into one overflow set, while they average at most eleven.
func DefaultLimits() breakerview.Limits {
	return breakerview.Limits{Names: 180, NameBytes: 25 << 10}.Or(breakerview.DefaultLimits())
}

// Option configures Instruments.
type Option interface {
	apply(*config)
}

type config struct {
	attrs  []attribute.KeyValue
	limits breakerview.Limits
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// WithAttributes adds attrs to every measurement of the Instruments, such as the name of the
// Manager when a process reports several to one MeterProvider. It may be given more than once.
// An attribute with a key that the package sets, such as breaker.resource, is overridden.
func WithAttributes(attrs ...attribute.KeyValue) Option {
	return optionFunc(func(c *config) { c.attrs = append(c.attrs, attrs...) })
}

// WithLimits bounds the resource names that get attribute sets of their own in the instruments
// that calls and transitions grow (breaker.calls, breaker.call.duration, breaker.transitions),
// and in those of template breakers, template settings and overrides: the names past l are
// measured with breaker.resource breakerview.Overflow ("_other"), so that callers who make up
// names (a resource per URL path) cannot grow the Instruments, or the MeterProvider's
// aggregations, without end. A field below 1 keeps DefaultLimits's. Above 180 names, raise the
// SDK's limit too (sdkmetric.WithCardinalityLimit).
func WithLimits(l breakerview.Limits) Option {
	return optionFunc(func(c *config) { c.limits = l })
}
