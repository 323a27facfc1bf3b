package breakerotel

import "go.opentelemetry.io/otel/attribute"

// Option configures Instruments.
type Option interface {
	apply(*config)
}

type config struct {
	attrs []attribute.KeyValue
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// WithAttributes adds attrs to every measurement of the Instruments, such as the name of the
// Manager when a process reports several to one MeterProvider. It may be given more than once.
// An attribute with a key that the package sets, such as breaker.resource, is overridden.
func WithAttributes(attrs ...attribute.KeyValue) Option {
	return optionFunc(func(c *config) { c.attrs = append(c.attrs, attrs...) })
}
