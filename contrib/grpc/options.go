package breakergrpc

import (
	"context"
	"slices"

	"google.golang.org/grpc/codes"
)

// Option configures the interceptors of this package. Every option applies to all four.
type Option interface {
	apply(*options)
}

type optionFunc func(*options)

func (f optionFunc) apply(o *options) { f(o) }

// options holds what the Options set.
type options struct {
	resource     func(ctx context.Context, fullMethod string) string // nil: the full method
	failureCodes []codes.Code                                        // nil: DefaultFailureCodes
	refusalCodes []codes.Code                                        // nil: ResourceExhausted
	details      bool                                                // WithBlockDetails
	retryHints   bool                                                // WithRetryHints
}

func newOptions(opts []Option) *options {
	o := &options{}
	for _, opt := range opts {
		if opt != nil {
			opt.apply(o)
		}
	}
	if o.failureCodes == nil {
		o.failureCodes = DefaultFailureCodes()
	}
	if o.refusalCodes == nil {
		o.refusalCodes = []codes.Code{codes.ResourceExhausted}
	}
	return o
}

// WithResource names the resource of each RPC with f instead of its full method, such as
// "/orders.v1.Orders/Get". f gets the RPC's context (on the server, the incoming one, with its
// metadata) and its full method. A nil f keeps the default.
func WithResource(f func(ctx context.Context, fullMethod string) string) Option {
	return optionFunc(func(o *options) {
		if f != nil {
			o.resource = f
		}
	})
}

// WithBlockDetails makes the status of a blocked RPC tell all the BlockError holds: its
// message is the BlockError's, which names the rule's ID and strategy or the slot's error, and
// the ErrorInfo's Metadata adds "rule_id" (when the rule has one), "strategy" and "state" when
// a breaker rejected the RPC, and "cause", the text of BlockError.Cause, when a slot or the
// resource's settings blocked it. Without it the status holds only the resource, the Reason
// and the retry time: a server's rules are its own business, and its clients see only that a
// resource is shedding load and when to come back. Use it between services that share an
// operator, or on the client side, where the error stays in the process.
func WithBlockDetails() Option {
	return optionFunc(func(o *options) { o.details = true })
}

// WithFailureCodes makes an RPC that ends with one of cs a failure, and one that ends with any
// other code a success, instead of DefaultFailureCodes. With no codes, no RPC fails (a
// SlowRequestRatio rule still judges their response times). codes.Canceled counts neither way
// even if cs holds it, and an RPC that ends without an error (codes.OK) is always a success.
func WithFailureCodes(cs ...codes.Code) Option {
	cs = append([]codes.Code{}, cs...) // not nil, even when empty
	return optionFunc(func(o *options) { o.failureCodes = cs })
}

// WithRefusalCodes makes an RPC that ends with one of cs refused (breaker.Refused: the service
// is alive and says how much it takes, as a quota does), instead of ResourceExhausted alone. A
// refusal counts against ErrorRatio and ErrorCount rules, so they pace or trip on it, but never
// toward a fast trip, which is for hard outages; the delay of its RetryInfo detail, if any,
// always goes with it (breaker.RetryAfter), so that pacing waits for the quota to come back.
// A code refused is not also a failure; with no codes, nothing is refused. codes.Canceled
// counts neither way even if cs holds it.
func WithRefusalCodes(cs ...codes.Code) Option {
	cs = append([]codes.Code{}, cs...) // not nil, even when empty
	return optionFunc(func(o *options) { o.refusalCodes = cs })
}

// DefaultFailureCodes returns the status codes that count as failures unless WithFailureCodes
// says otherwise: Unavailable, DeadlineExceeded, Internal and Unknown (ResourceExhausted is
// refused, see WithRefusalCodes). Each call returns a new slice, which may be extended:
//
//	breakergrpc.WithFailureCodes(append(breakergrpc.DefaultFailureCodes(), codes.Aborted)...)
func DefaultFailureCodes() []codes.Code {
	return []codes.Code{
		codes.Unavailable,
		codes.DeadlineExceeded,
		codes.Internal,
		codes.Unknown,
	}
}

// resourceOf names the resource of an RPC.
func (o *options) resourceOf(ctx context.Context, fullMethod string) string {
	if o.resource != nil {
		return o.resource(ctx, fullMethod)
	}
	return fullMethod
}

// fails reports whether an RPC that ended with code c failed.
func (o *options) fails(c codes.Code) bool { return slices.Contains(o.failureCodes, c) }

// refuses reports whether an RPC that ends with c is refused.
func (o *options) refuses(c codes.Code) bool { return slices.Contains(o.refusalCodes, c) }

// WithRetryHints makes the client interceptors pass on the server's own retry hint: an RPC
// that counts as failed and whose status carries a RetryInfo detail (as this package's server
// interceptors send when a breaker rejects an RPC) is recorded with breaker.RetryAfter, so
// that when it trips the breaker or fails its probe the breaker stays OPEN at least the
// delay, within the rule's MaxRetryTimeout (RetryTimeout when that is 0). Off by default. The
// server interceptors ignore it.
func WithRetryHints() Option {
	return optionFunc(func(o *options) { o.retryHints = true })
}
