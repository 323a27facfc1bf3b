package breakergrpc

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/status"

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
// When the resource has a Timeout (breaker.ResourceConfig), the handler gets a context with
// that deadline, never later than the RPC's own, canceled when the handler returns. An RPC
// still running at that deadline fails, whatever its handler returns and whatever
// WithFailureCodes says; the handler must return when its context is done, and its error (say,
// ctx.Err(), which the Server sends as DeadlineExceeded) goes to the client as it is.
//
// Install it with grpc.ChainUnaryInterceptor, first if the breakers are to shed RPCs before
// the other interceptors do any work.
func UnaryServerInterceptor(m *breaker.Manager, opts ...Option) grpc.UnaryServerInterceptor {
	if m == nil {
		m = breaker.Default()
	}
	o := newOptions(opts)
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		e, err := m.EnterContext(ctx, o.resourceOf(ctx, info.FullMethod))
		if err != nil {
			return nil, blocked(m, o, err)
		}
		// Run returns the error it recorded; the client gets the handler's own.
		var resp any
		_ = e.Run(ctx, func(callCtx context.Context) error {
			resp, err = handler(callCtx, req)
			return o.timedOut(ctx, callCtx, err, o.outcome(err))
		})
		return resp, err
	}
}

// StreamServerInterceptor returns an interceptor that makes each stream a Server receives one
// call of m, from the handler's start to its return, whatever number of messages the stream
// carries. A nil m means breaker.Default(). The resource, the blocked answer and the
// outcomes are those of UnaryServerInterceptor; the resource is named with the stream's
// context. With a resource Timeout, the handler gets a ServerStream whose Context has that
// deadline, as a unary handler does, and whose RecvMsg returns at the deadline with status
// DeadlineExceeded, also while the client sends nothing: a handler that returns the errors of
// RecvMsg ends the stream there. To do so it waits for gRPC's RecvMsg on a goroutine, one per
// message, that ends when the message arrives or, after the deadline, when the stream ends; a
// message it receives into after the deadline is not to be read.
func StreamServerInterceptor(m *breaker.Manager, opts ...Option) grpc.StreamServerInterceptor {
	if m == nil {
		m = breaker.Default()
	}
	o := newOptions(opts)
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		e, err := m.EnterContext(ss.Context(), o.resourceOf(ss.Context(), info.FullMethod))
		if err != nil {
			return blocked(m, o, err)
		}
		ctx := ss.Context()
		// Run returns the error it recorded; the client gets the handler's own.
		_ = e.Run(ctx, func(callCtx context.Context) error {
			if callCtx != ctx {
				ss = &serverStream{ServerStream: ss, ctx: callCtx}
			}
			err = handler(srv, ss)
			return o.timedOut(ctx, callCtx, err, o.outcome(err))
		})
		return err
	}
}

// serverStream is a ServerStream under the resource's Timeout: its Context has the deadline,
// and its RecvMsg returns when the deadline passes. gRPC's own RecvMsg waits for a message or
// the end of the RPC's context, which an interceptor cannot shorten, so without this a handler
// waiting for a client that sends nothing would run until the client's deadline.
type serverStream struct {
	grpc.ServerStream
	ctx  context.Context
	done chan error // the result of gRPC's RecvMsg; made by the first RecvMsg
}

// Context returns the stream's context with the resource's Timeout.
func (s *serverStream) Context() context.Context { return s.ctx }

// RecvMsg receives a message into m, as gRPC's RecvMsg does, but returns the status of the
// context's error (DeadlineExceeded at the deadline) as soon as the context is done. gRPC's
// RecvMsg runs on a goroutine of its own, which ends when a message arrives or the stream
// ends, at the latest once the handler returns; until then it may still write m. Once the
// context is done RecvMsg receives nothing more, lest two receives run together: a
// ServerStream takes one at a time, as its RecvMsg calls are never concurrent.
func (s *serverStream) RecvMsg(m any) error {
	if err := s.ctx.Err(); err != nil {
		return status.FromContextError(err).Err()
	}
	if s.done == nil {
		s.done = make(chan error, 1)
	}
	go func(done chan<- error) { done <- s.ServerStream.RecvMsg(m) }(s.done)
	select {
	case err := <-s.done:
		return err
	case <-s.ctx.Done():
		return status.FromContextError(s.ctx.Err()).Err()
	}
}
