package breakergrpc_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/halfopen/breaker"
	breakergrpc "github.com/halfopen/breaker/contrib/grpc"
)

// doneContext is a context that is done before the RPC starts, and the code of its status.
type doneContext struct {
	name string
	ctx  context.Context
	code codes.Code
}

// doneContexts are a context canceled and one past its deadline.
func doneContexts(t *testing.T) []doneContext {
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancelExpired := context.WithDeadline(context.Background(), time.Unix(0, 0))
	t.Cleanup(cancelExpired)
	return []doneContext{
		{"canceled", canceled, codes.Canceled},
		{"past its deadline", expired, codes.DeadlineExceeded},
	}
}

// assertContextStatus checks that err is the status of the done context: its code and
// message, as gRPC gives them for such an RPC, and not a block, with no details.
func (d doneContext) assertContextStatus(t *testing.T, err error) {
	t.Helper()
	st, ok := status.FromError(err)
	require.True(t, ok, "a status error: %v", err)
	assert.Equal(t, d.code, st.Code())
	assert.Equal(t, d.ctx.Err().Error(), st.Message())
	assert.Empty(t, st.Details(), "no block details")
	assert.NotErrorIs(t, err, breaker.ErrBlocked)
}

// guarded is a Manager in which an RPC that counted would show: resource has a rule that
// opens at the first failure and a MaxConcurrency of 1, a slot records the calls that exit,
// and a call observer what it hears.
type guarded struct {
	m        *breaker.Manager
	resource string
	exited   *calls
	heard    *heard
}

func newGuarded(t *testing.T, resource string) *guarded {
	t.Helper()
	g := &guarded{resource: resource, exited: &calls{}, heard: &heard{}}
	g.m = breaker.NewManager(breaker.WithClock(newClock()), breaker.WithSlots(g.exited),
		breaker.WithCallObserver(g.heard.OnCall))
	require.NoError(t, g.m.LoadRules([]breaker.Rule{tripOnFirstFailure(resource)}))
	require.NoError(t, g.m.LoadResources(map[string]breaker.ResourceConfig{resource: {MaxConcurrency: 1}}))
	return g
}

// assertNotACall checks that the Manager counted nothing for the resource, and that its call
// observer heard one call, not made because its context was done with err.
func (g *guarded) assertNotACall(t *testing.T, err error) {
	t.Helper()
	assert.Empty(t, g.exited.all(), "no call entered the slots")
	st := stats(t, g.m, g.resource)
	assert.Equal(t, breaker.Closed, st.State)
	assert.Zero(t, st.Total, "nothing in the window")
	assert.Zero(t, inFlight(g.m, g.resource), "no MaxConcurrency place taken")
	assert.Equal(t, []breaker.CallInfo{{Resource: g.resource, NotCalled: err}}, g.heard.all())
}

// heard is a call observer that records every call it hears.
type heard struct {
	mu    sync.Mutex
	calls []breaker.CallInfo
}

func (h *heard) OnCall(c breaker.CallInfo) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls = append(h.calls, c)
}

func (h *heard) all() []breaker.CallInfo {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]breaker.CallInfo(nil), h.calls...)
}

// Given a unary RPC whose context is canceled, or past its deadline, then the client
// interceptor returns the context's status, Canceled or DeadlineExceeded, without calling the
// invoker, and nothing counts it: a failing invoker would have opened the breaker.
func TestUnaryClientDoesNotInvokeAnRPCWhoseContextIsDone(t *testing.T) {
	for _, done := range doneContexts(t) {
		t.Run(done.name, func(t *testing.T) {
			g := newGuarded(t, echoMethod)
			invoked := 0
			invoker := func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error {
				invoked++
				return status.Error(codes.Internal, "invoked")
			}

			err := breakergrpc.UnaryClientInterceptor(g.m)(done.ctx, echoMethod, wrapperspb.String("hello"),
				new(wrapperspb.StringValue), nil, invoker)
			done.assertContextStatus(t, err)
			assert.Zero(t, invoked, "the invoker was not called")
			g.assertNotACall(t, done.ctx.Err())
		})
	}
}

// Given a stream whose context is canceled, or past its deadline, then the client
// interceptor returns no stream and the context's status without calling the streamer, and
// nothing counts it: a failing streamer would have opened the breaker.
func TestStreamClientDoesNotCreateAStreamWhoseContextIsDone(t *testing.T) {
	for _, done := range doneContexts(t) {
		t.Run(done.name, func(t *testing.T) {
			g := newGuarded(t, chatMethod)
			streamed := 0
			streamer := func(context.Context, *grpc.StreamDesc, *grpc.ClientConn, string, ...grpc.CallOption) (grpc.ClientStream, error) {
				streamed++
				return nil, status.Error(codes.Internal, "streamed")
			}

			stream, err := breakergrpc.StreamClientInterceptor(g.m)(done.ctx, chatDesc, nil, chatMethod, streamer)
			assert.Nil(t, stream)
			done.assertContextStatus(t, err)
			assert.Zero(t, streamed, "the streamer was not called")
			g.assertNotACall(t, done.ctx.Err())
		})
	}
}

// Given a unary RPC that reaches the server with its context canceled, or past its deadline,
// then the server interceptor answers the context's status without calling the handler, and
// nothing counts it: a failing handler would have opened the breaker.
func TestUnaryServerDoesNotHandleAnRPCWhoseContextIsDone(t *testing.T) {
	for _, done := range doneContexts(t) {
		t.Run(done.name, func(t *testing.T) {
			g := newGuarded(t, echoMethod)
			handled := 0
			handler := func(context.Context, any) (any, error) {
				handled++
				return nil, status.Error(codes.Internal, "handled")
			}

			resp, err := breakergrpc.UnaryServerInterceptor(g.m)(done.ctx, wrapperspb.String("hello"),
				&grpc.UnaryServerInfo{FullMethod: echoMethod}, handler)
			assert.Nil(t, resp)
			done.assertContextStatus(t, err)
			assert.Zero(t, handled, "the handler was not called")
			g.assertNotACall(t, done.ctx.Err())
		})
	}
}

// Given a stream that reaches the server with its context canceled, or past its deadline,
// then the server interceptor answers the context's status without calling the handler, and
// nothing counts it: a failing handler would have opened the breaker.
func TestStreamServerDoesNotHandleAStreamWhoseContextIsDone(t *testing.T) {
	for _, done := range doneContexts(t) {
		t.Run(done.name, func(t *testing.T) {
			g := newGuarded(t, chatMethod)
			handled := 0
			handler := func(any, grpc.ServerStream) error {
				handled++
				return status.Error(codes.Internal, "handled")
			}

			err := breakergrpc.StreamServerInterceptor(g.m)(nil, serverStream{ctx: done.ctx},
				&grpc.StreamServerInfo{FullMethod: chatMethod}, handler)
			done.assertContextStatus(t, err)
			assert.Zero(t, handled, "the handler was not called")
			g.assertNotACall(t, done.ctx.Err())
		})
	}
}

// inFlight is resource's calls admitted and not yet exited, as a Snapshot reads them.
func inFlight(m *breaker.Manager, resource string) int64 {
	snap := m.Snapshot()
	if r := snap.Resource(resource); r != nil {
		return r.InFlight
	}
	return 0
}
