package breakergrpc_test

import (
	"context"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakertest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// retryTimeout is how long the breakers of the tests stay OPEN.
const retryTimeout = 10 * time.Second

// The methods of the test service, test.Echo.
const (
	echoMethod    = "/test.Echo/Echo"    // unary
	chatMethod    = "/test.Echo/Chat"    // bidirectional streaming
	collectMethod = "/test.Echo/Collect" // client streaming
)

// tripOnFirstFailure is a rule that opens the breaker of resource at its first failure.
func tripOnFirstFailure(resource string) breaker.Rule {
	return breaker.Rule{
		ID:               "first-failure",
		Resource:         resource,
		Strategy:         breaker.ErrorCount,
		Threshold:        1,
		MinRequestAmount: 1,
		RetryTimeout:     retryTimeout,
	}
}

// countAll is a rule that never trips, so its window counts every call of resource.
func countAll(resource string) breaker.Rule {
	return breaker.Rule{
		Resource:     resource,
		Strategy:     breaker.ErrorCount,
		Threshold:    1000,
		RetryTimeout: retryTimeout,
	}
}

// newClock returns a fake clock that moves only when told to.
func newClock() *breakertest.Clock { return breakertest.NewClock() }

// newManager returns a manager on a fake clock with rules loaded, and the calls it completes.
func newManager(t *testing.T, rules ...breaker.Rule) (*breaker.Manager, *breakertest.Clock, *calls) {
	t.Helper()
	clk := newClock()
	rec := &calls{}
	m := breaker.NewManager(breaker.WithClock(clk), breaker.WithSlots(rec))
	require.NoError(t, m.LoadRules(rules))
	return m, clk, rec
}

// stats reads the only breaker of resource.
func stats(t *testing.T, m *breaker.Manager, resource string) breaker.Stats {
	t.Helper()
	bs := m.Breakers(resource)
	require.Len(t, bs, 1, "breakers of %q", resource)
	return bs[0].Stats()
}

// calls is a slot that records the resource and the error of every call that exits.
type calls struct {
	mu   sync.Mutex
	done []call
}

type call struct {
	resource string
	err      error
}

func (c *calls) OnEntry(*breaker.Entry) error { return nil }

func (c *calls) OnExit(e *breaker.Entry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.done = append(c.done, call{e.Resource(), e.Err()})
}

func (c *calls) all() []call {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]call(nil), c.done...)
}

// only returns the one call recorded.
func (c *calls) only(t *testing.T) call {
	t.Helper()
	all := c.all()
	require.Len(t, all, 1, "calls exited")
	return all[0]
}

// waitCalls waits until n calls have exited, for calls that end on another goroutine.
func (c *calls) waitCalls(t *testing.T, n int) []call {
	t.Helper()
	require.Eventually(t, func() bool { return len(c.all()) >= n }, 5*time.Second, time.Millisecond)
	return c.all()
}

// blockingSlot blocks every call with err.
type blockingSlot struct{ err error }

func (s blockingSlot) OnEntry(*breaker.Entry) error { return s.err }
func (s blockingSlot) OnExit(*breaker.Entry)        {}

// echoServer implements test.Echo. Each message says what to do with it: the name of a status
// code other than OK ("Internal") fails the RPC with that code; "wait" waits until the RPC's
// context is done and returns its error; anything else is echoed back.
type echoServer struct {
	hits    atomic.Int64  // RPCs that reached a handler
	waiting chan struct{} // a handler started to wait
}

// quotaDelay is the RetryInfo delay of the answer to "quota".
const quotaDelay = 3 * time.Second

// codeNames maps the names of the status codes, such as "Internal", to them.
var codeNames = func() map[string]codes.Code {
	names := make(map[string]codes.Code)
	for c := codes.Canceled; c <= codes.Unauthenticated; c++ {
		names[c.String()] = c
	}
	return names
}()

// answer is what the server does with one message: a reply, or the RPC's error.
func (s *echoServer) answer(ctx context.Context, msg string) (string, error) {
	if c, ok := codeNames[msg]; ok {
		return "", status.Error(c, "echo: "+msg)
	}
	if msg == "quota" { // out of quota for quotaDelay, as a RetryInfo says
		st, err := status.New(codes.ResourceExhausted, "echo: quota").WithDetails(
			&errdetails.RetryInfo{RetryDelay: durationpb.New(quotaDelay)})
		if err != nil {
			return "", err
		}
		return "", st.Err()
	}
	if msg == "wait" {
		select {
		case s.waiting <- struct{}{}:
		default:
		}
		<-ctx.Done()
		return "", ctx.Err() // not a status: the server converts it
	}
	return msg, nil
}

func (s *echoServer) echo(ctx context.Context, in *wrapperspb.StringValue) (*wrapperspb.StringValue, error) {
	s.hits.Add(1)
	reply, err := s.answer(ctx, in.GetValue())
	if err != nil {
		return nil, err
	}
	return wrapperspb.String(reply), nil
}

// chat answers each message as it comes, until the client closes its side.
func (s *echoServer) chat(ss grpc.ServerStream) error {
	s.hits.Add(1)
	for {
		in := new(wrapperspb.StringValue)
		if err := ss.RecvMsg(in); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
		reply, err := s.answer(ss.Context(), in.GetValue())
		if err != nil {
			return err
		}
		if err := ss.SendMsg(wrapperspb.String(reply)); err != nil {
			return err
		}
	}
}

// collect answers every message, then sends the replies joined by spaces.
func (s *echoServer) collect(ss grpc.ServerStream) error {
	s.hits.Add(1)
	var replies []string
	for {
		in := new(wrapperspb.StringValue)
		if err := ss.RecvMsg(in); err == io.EOF {
			return ss.SendMsg(wrapperspb.String(strings.Join(replies, " ")))
		} else if err != nil {
			return err
		}
		reply, err := s.answer(ss.Context(), in.GetValue())
		if err != nil {
			return err
		}
		replies = append(replies, reply)
	}
}

// echoDesc describes test.Echo by hand, with wrapperspb.StringValue for every message.
var echoDesc = grpc.ServiceDesc{
	ServiceName: "test.Echo",
	HandlerType: (*any)(nil),
	Methods: []grpc.MethodDesc{{
		MethodName: "Echo",
		Handler: func(srv any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
			s := srv.(*echoServer)
			in := new(wrapperspb.StringValue)
			if err := dec(in); err != nil {
				return nil, err
			}
			handler := func(ctx context.Context, req any) (any, error) {
				return s.echo(ctx, req.(*wrapperspb.StringValue))
			}
			if interceptor == nil {
				return handler(ctx, in)
			}
			return interceptor(ctx, in, &grpc.UnaryServerInfo{Server: srv, FullMethod: echoMethod}, handler)
		},
	}},
	Streams: []grpc.StreamDesc{
		{
			StreamName:    "Chat",
			Handler:       func(srv any, ss grpc.ServerStream) error { return srv.(*echoServer).chat(ss) },
			ServerStreams: true,
			ClientStreams: true,
		},
		{
			StreamName:    "Collect",
			Handler:       func(srv any, ss grpc.ServerStream) error { return srv.(*echoServer).collect(ss) },
			ClientStreams: true,
		},
	},
}

var (
	chatDesc    = &echoDesc.Streams[0]
	collectDesc = &echoDesc.Streams[1]
)

// testServer is a test.Echo server on an in-memory listener.
type testServer struct {
	*echoServer
	lis *bufconn.Listener
}

// serve starts a test.Echo server with opts on an in-memory listener, stopped when the test
// ends. Its hits count the RPCs that reached a handler.
func serve(t *testing.T, opts ...grpc.ServerOption) *testServer {
	t.Helper()
	s := &testServer{echoServer: newEchoServer(), lis: bufconn.Listen(1 << 16)}
	startServer(t, s.echoServer, s.lis, opts...)
	return s
}

func newEchoServer() *echoServer { return &echoServer{waiting: make(chan struct{}, 64)} }

// startServer serves es on lis until the test ends.
func startServer(t *testing.T, es *echoServer, lis net.Listener, opts ...grpc.ServerOption) {
	t.Helper()
	srv := grpc.NewServer(opts...)
	srv.RegisterService(&echoDesc, es)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(lis)
	}()
	t.Cleanup(func() {
		srv.Stop()
		<-done
	})
}

// dial connects to the server with opts; the connection closes when the test ends.
func (s *testServer) dial(t *testing.T, opts ...grpc.DialOption) *grpc.ClientConn {
	t.Helper()
	opts = append([]grpc.DialOption{
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return s.lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
	}, opts...)
	conn, err := grpc.NewClient("passthrough:///bufconn", opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// echo calls test.Echo/Echo with msg.
func echo(ctx context.Context, conn *grpc.ClientConn, msg string) (string, error) {
	out := new(wrapperspb.StringValue)
	err := conn.Invoke(ctx, echoMethod, wrapperspb.String(msg), out)
	return out.GetValue(), err
}

// chat sends msgs on a test.Echo/Chat stream, closes its side and reads every reply until the
// stream ends; it returns the replies and the error that ended the stream (nil for io.EOF).
func chat(ctx context.Context, conn *grpc.ClientConn, msgs ...string) ([]string, error) {
	stream, err := conn.NewStream(ctx, chatDesc, chatMethod)
	if err != nil {
		return nil, err
	}
	for _, msg := range msgs {
		if err := stream.SendMsg(wrapperspb.String(msg)); err == io.EOF {
			break // the server ended the stream: RecvMsg tells how
		} else if err != nil {
			return nil, err
		}
	}
	if err := stream.CloseSend(); err != nil {
		return nil, err
	}
	var replies []string
	for {
		in := new(wrapperspb.StringValue)
		if err := stream.RecvMsg(in); err == io.EOF {
			return replies, nil
		} else if err != nil {
			return replies, err
		}
		replies = append(replies, in.GetValue())
	}
}

// blockDetails returns the ErrorInfo and RetryInfo details of err's status, as a client reads
// them.
func blockDetails(t *testing.T, err error) (*errdetails.ErrorInfo, *errdetails.RetryInfo) {
	t.Helper()
	var info *errdetails.ErrorInfo
	var retry *errdetails.RetryInfo
	for _, d := range status.Convert(err).Details() {
		switch d := d.(type) {
		case *errdetails.ErrorInfo:
			info = d
		case *errdetails.RetryInfo:
			retry = d
		}
	}
	require.NotNil(t, info, "ErrorInfo detail of %v", err)
	require.NotNil(t, retry, "RetryInfo detail of %v", err)
	return info, retry
}
