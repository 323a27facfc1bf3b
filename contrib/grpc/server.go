package breakergrpc

import (
	"context"

	"google.golang.org/grpc"

	"github.com/halfopen/breaker"
)

// UnaryServerInterceptor returns an interceptor that makes each unary RPC a Server receives a
// call of m: it enters the RPC's resource, calls the handler if the breakers let it pass, and
// counts its outcome. A nil m means breaker.Default().
//
// The resource is the RPC's full method, such as "/orders.v1.Orders/Get"; WithResource
// replaces it. An RPC the breakers block is answered with status code Unavailable and the
// details described in the package documentation; the handler is not called.
//
// A handler that returns an error whose status code is one of DefaultFailureCodes (or
// WithFailureCodes) fails; an error that carries no status counts with the code the Server
// sends for it: a context error's code, else Unknown. Any other code succeeds, and
// codes.Canceled counts neither way. A handler that panics fails, and the panic goes on up.
// The RPC's response time runs until the handler returns.
//
// Install it with grpc.ChainUnaryInterceptor, first if the breakers are to shed RPCs before
// the other interceptors do any work.
func UnaryServerInterceptor(m *breaker.Manager, opts ...Option) grpc.UnaryServerInterceptor {
	if m == nil {
		m = breaker.Default()
	}
	o := newOptions(opts)
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		e, err := m.Enter(o.resourceOf(ctx, info.FullMethod))
		if err != nil {
			return nil, blocked(m, err, o.ruleDetails)
		}
		completed := false
		defer func() {
			if !completed {
				e.SetError(breaker.ErrPanicked)
			}
			e.Exit()
		}()
		resp, err := handler(ctx, req)
		e.SetError(o.outcome(err))
		completed = true
		return resp, err
	}
}

// StreamServerInterceptor returns an interceptor that makes each stream a Server receives one
// call of m, from the handler's start to its return, whatever number of messages the stream
// carries. A nil m means breaker.Default(). The resource, the blocked answer and the
// outcomes are those of UnaryServerInterceptor; the resource is named with the stream's
// context.
func StreamServerInterceptor(m *breaker.Manager, opts ...Option) grpc.StreamServerInterceptor {
	if m == nil {
		m = breaker.Default()
	}
	o := newOptions(opts)
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		e, err := m.Enter(o.resourceOf(ss.Context(), info.FullMethod))
		if err != nil {
			return blocked(m, err, o.ruleDetails)
		}
		completed := false
		defer func() {
			if !completed {
				e.SetError(breaker.ErrPanicked)
			}
			e.Exit()
		}()
		err = handler(srv, ss)
		e.SetError(o.outcome(err))
		completed = true
		return err
	}
}
