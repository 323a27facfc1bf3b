package breakergrpc

import (
	"context"
	"io"
	"sync/atomic"

	"google.golang.org/grpc"

	"github.com/halfopen/breaker"
)

// UnaryClientInterceptor returns an interceptor that makes each unary RPC of a ClientConn a
// call of m: it enters the RPC's resource, invokes the RPC if the breakers let it pass, and
// counts its outcome. A nil m means breaker.Default().
//
// The resource is the RPC's full method, such as "/orders.v1.Orders/Get"; WithResource
// replaces it. An RPC the breakers block gets a status error of code Unavailable with the
// details described in the package documentation, which also unwraps to the
// *breaker.BlockError; the invoker is not called, so nothing is sent.
//
// An RPC whose status code is one of DefaultFailureCodes (or WithFailureCodes) fails; any other
// code succeeds; codes.Canceled, and any error after the caller canceled the context, counts
// neither way. The invoker's error is returned unchanged. If the invoker panics, the RPC
// counts as failed and the panic goes on up. The RPC's response time runs until the invoker
// returns, gRPC's own retries included.
//
// When the resource has a Timeout (breaker.ResourceConfig), the invoker gets a context with
// that deadline, never later than the caller's, canceled when the invoker returns. An RPC cut
// off by it ends with DeadlineExceeded, and fails whatever WithFailureCodes says.
//
// Install it with grpc.WithChainUnaryInterceptor; interceptors after it in the chain run
// inside the call, and are not reached when it is blocked.
func UnaryClientInterceptor(m *breaker.Manager, opts ...Option) grpc.UnaryClientInterceptor {
	if m == nil {
		m = breaker.Default()
	}
	o := newOptions(opts)
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn,
		invoker grpc.UnaryInvoker, callOpts ...grpc.CallOption) error {
		e, err := m.EnterContext(ctx, o.resourceOf(ctx, method))
		if err != nil {
			return blocked(m, o, err)
		}
		// Run returns the error it recorded; the caller gets the invoker's own.
		_ = e.Run(ctx, func(callCtx context.Context) error {
			err = invoker(callCtx, method, req, reply, cc, callOpts...)
			return o.timedOut(ctx, callCtx, err, o.clientOutcome(ctx, err))
		})
		return err
	}
}

// StreamClientInterceptor returns an interceptor that makes each stream of a ClientConn one
// call of m, from its creation to its end: it enters the stream's resource, creates the stream
// if the breakers let it pass, and counts its outcome when it ends. A nil m means
// breaker.Default().
//
// The resource, the blocked error and the outcomes are those of UnaryClientInterceptor; a
// blocked stream is not created, so nothing is sent. The stream ends when gRPC finishes it (see
// Streams in the package documentation): when RecvMsg returns a non-nil error (io.EOF is a
// success), when SendMsg returns an error other than io.EOF, when RecvMsg returns the response
// of a stream whose server does not stream, when the context is done, or when the ClientConn
// is closed. Its response time runs until then.
//
// When the resource has a Timeout (breaker.ResourceConfig), the stream is created with a
// context that has that deadline, never later than the caller's: it bounds the whole stream,
// and is canceled when the stream ends. A stream cut off by it fails whatever
// WithFailureCodes says.
//
// The interceptor adds a grpc.OnFinish call option, and returns a ClientStream that wraps the
// streamer's.
func StreamClientInterceptor(m *breaker.Manager, opts ...Option) grpc.StreamClientInterceptor {
	if m == nil {
		m = breaker.Default()
	}
	o := newOptions(opts)
	return func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string,
		streamer grpc.Streamer, callOpts ...grpc.CallOption) (grpc.ClientStream, error) {
		e, err := m.EnterContext(ctx, o.resourceOf(ctx, method))
		if err != nil {
			return nil, blocked(m, o, err)
		}
		// Not Entry.Run: the call ends with the stream, after the interceptor has returned.
		callCtx, cancel := e.WithTimeout(ctx)
		c := &streamCall{e: e, ctx: ctx, callCtx: callCtx, cancel: cancel, o: o, counted: make(chan struct{})}
		completed := false
		defer func() {
			if !completed {
				c.finishWith(breaker.ErrPanicked)
			}
		}()
		callOpts = append(callOpts[:len(callOpts):len(callOpts)], grpc.OnFinish(c.finish))
		cs, err := streamer(callCtx, desc, cc, method, callOpts...)
		completed = true
		if err != nil {
			c.finish(err)
			return nil, err
		}
		return &clientStream{ClientStream: cs, call: c, serverStreams: desc.ServerStreams}, nil
	}
}

// streamCall is the call of one client stream. It ends once, on whichever goroutine first
// sees the end: the caller's, or gRPC's through grpc.OnFinish. The other waits until the
// breakers have counted it, so that a caller who saw the stream end and calls again finds the
// breakers as this call left them.
type streamCall struct {
	e       *breaker.Entry
	ctx     context.Context    // the caller's
	callCtx context.Context    // the stream's: ctx with the resource's Timeout
	cancel  context.CancelFunc // cancels callCtx
	o       *options
	ended   atomic.Bool
	counted chan struct{} // closed once the call has ended and been counted
}

// finish ends the call of a stream that ended with err; io.EOF is a success.
func (c *streamCall) finish(err error) {
	if err == io.EOF {
		err = nil
	}
	c.finishWith(c.o.timedOut(c.ctx, c.callCtx, err, c.o.clientOutcome(c.ctx, err)))
}

// finishWith ends the call, recording err, unless it has ended; either way it returns once
// the call has been counted.
func (c *streamCall) finishWith(err error) {
	if !c.ended.CompareAndSwap(false, true) {
		<-c.counted
		return
	}
	defer close(c.counted)
	c.cancel()
	c.e.SetError(err)
	c.e.Exit()
}

// clientStream ends its call when the caller sees the stream end, for a streamer that ignores
// grpc.OnFinish.
type clientStream struct {
	grpc.ClientStream
	call          *streamCall
	serverStreams bool
}

var _ grpc.ClientStream = (*clientStream)(nil)

// SendMsg sends m; an error other than io.EOF ends the stream. io.EOF means the server ended
// it, with a status that RecvMsg returns.
func (s *clientStream) SendMsg(m any) error {
	err := s.ClientStream.SendMsg(m)
	if err != nil && err != io.EOF {
		s.call.finish(err)
	}
	return err
}

// RecvMsg receives into m; a non-nil error ends the stream, and so does the response of a
// stream whose server does not stream.
func (s *clientStream) RecvMsg(m any) error {
	err := s.ClientStream.RecvMsg(m)
	if err != nil || !s.serverStreams {
		s.call.finish(err)
	}
	return err
}
