package breakergrpc_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/halfopen/breaker"
	breakergrpc "github.com/halfopen/breaker/contrib/grpc"
)

// serveWith starts a server with the server interceptors of m, and returns it and a plain
// connection to it.
func serveWith(t *testing.T, m *breaker.Manager, opts ...breakergrpc.Option) (*testServer, *grpc.ClientConn) {
	t.Helper()
	s := serve(t,
		grpc.ChainUnaryInterceptor(breakergrpc.UnaryServerInterceptor(m, opts...)),
		grpc.ChainStreamInterceptor(breakergrpc.StreamServerInterceptor(m, opts...)))
	return s, s.dial(t)
}

// The resource is the full method of the RPC, for unary RPCs and streams.
func TestServerDefaultResource(t *testing.T) {
	m, _, rec := newManager(t)
	_, conn := serveWith(t, m)

	_, err := echo(context.Background(), conn, "hello")
	require.NoError(t, err)
	_, err = chat(context.Background(), conn, "a")
	require.NoError(t, err)

	assert.Equal(t, []call{{echoMethod, nil}, {chatMethod, nil}}, rec.all())
}

// WithResource names the resource from the incoming context, with its metadata.
func TestServerWithResource(t *testing.T) {
	m, _, rec := newManager(t)
	_, conn := serveWith(t, m, breakergrpc.WithResource(func(ctx context.Context, method string) string {
		md, _ := metadata.FromIncomingContext(ctx)
		return md.Get("tenant")[0] + method
	}))
	ctx := metadata.AppendToOutgoingContext(context.Background(), "tenant", "acme")

	_, err := echo(ctx, conn, "hello")
	require.NoError(t, err)
	_, err = chat(ctx, conn, "a")
	require.NoError(t, err)

	assert.Equal(t, []call{{"acme" + echoMethod, nil}, {"acme" + chatMethod, nil}}, rec.all())
}

// Given a handler that ends with a code, then the default failure codes, only, count as
// failures, for unary RPCs and streams.
func TestServerCountsCodes(t *testing.T) {
	tests := []struct {
		give    codes.Code
		wantBad uint64
	}{
		{give: codes.OK, wantBad: 0},
		{give: codes.Unavailable, wantBad: 1},
		{give: codes.DeadlineExceeded, wantBad: 1},
		{give: codes.Internal, wantBad: 1},
		{give: codes.Unknown, wantBad: 1},
		{give: codes.ResourceExhausted, wantBad: 1},
		{give: codes.InvalidArgument, wantBad: 0},
		{give: codes.NotFound, wantBad: 0},
		{give: codes.FailedPrecondition, wantBad: 0},
		{give: codes.Unauthenticated, wantBad: 0},
	}
	for _, tt := range tests {
		t.Run(tt.give.String(), func(t *testing.T) {
			m, _, rec := newManager(t, countAll(echoMethod), countAll(chatMethod))
			_, conn := serveWith(t, m)

			_, err := echo(context.Background(), conn, tt.give.String())
			assert.Equal(t, tt.give, status.Code(err))
			_, err = chat(context.Background(), conn, "a", tt.give.String())
			assert.Equal(t, tt.give, status.Code(err))

			for _, method := range []string{echoMethod, chatMethod} {
				st := stats(t, m, method)
				assert.Equal(t, uint64(1), st.Total, method)
				assert.Equal(t, tt.wantBad, st.Bad, method)
			}
			assert.Len(t, rec.all(), 2, "each RPC exited once")
		})
	}
}

// Given a handler that returns an error with no status, then it counts with the code the
// server sends for it.
func TestServerCountsPlainErrors(t *testing.T) {
	tests := []struct {
		name      string
		give      error
		wantTotal uint64
		wantBad   uint64
	}{
		{name: "an error", give: errors.New("disk full"), wantTotal: 1, wantBad: 1}, // Unknown
		{name: "context.DeadlineExceeded", give: context.DeadlineExceeded, wantTotal: 1, wantBad: 1},
		{name: "context.Canceled", give: context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, _, rec := newManager(t, countAll(echoMethod))
			intercept := breakergrpc.UnaryServerInterceptor(m)

			_, err := intercept(context.Background(), wrapperspb.String("hello"), &grpc.UnaryServerInfo{FullMethod: echoMethod},
				func(context.Context, any) (any, error) { return nil, tt.give })
			assert.Equal(t, tt.give, err, "returned unchanged")
			assert.ErrorIs(t, rec.only(t).err, tt.give)

			st := stats(t, m, echoMethod)
			assert.Equal(t, tt.wantTotal, st.Total)
			assert.Equal(t, tt.wantBad, st.Bad)
		})
	}
}

// Given a client that gives up while the handler works, then the handler's Canceled counts
// neither way.
func TestServerCanceled(t *testing.T) {
	tests := []struct {
		name   string
		method string
		give   func(ctx context.Context, conn *grpc.ClientConn) error
	}{
		{
			name:   "unary",
			method: echoMethod,
			give: func(ctx context.Context, conn *grpc.ClientConn) error {
				_, err := echo(ctx, conn, "wait")
				return err
			},
		},
		{
			name:   "stream",
			method: chatMethod,
			give: func(ctx context.Context, conn *grpc.ClientConn) error {
				_, err := chat(ctx, conn, "wait")
				return err
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, _, rec := newManager(t, tripOnFirstFailure(tt.method))
			s, conn := serveWith(t, m)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() {
				<-s.waiting
				cancel()
			}()

			assert.Equal(t, codes.Canceled, status.Code(tt.give(ctx, conn)))
			got := rec.waitCalls(t, 1)
			require.Len(t, got, 1, "calls exited")
			assert.Equal(t, tt.method, got[0].resource)
			assert.ErrorIs(t, got[0].err, context.Canceled, "the handler's ctx.Err()")
			st := stats(t, m, tt.method)
			assert.Equal(t, breaker.Closed, st.State)
			assert.Zero(t, st.Total, "not counted")
		})
	}
}

// Given a breaker that tripped at 0s, when an RPC comes at 4s, then the client gets
// Unavailable with the details, and the handler is not called.
func TestServerBlocked(t *testing.T) {
	tests := []struct {
		name   string
		method string
		give   func(conn *grpc.ClientConn, msg string) error
	}{
		{
			name:   "unary",
			method: echoMethod,
			give: func(conn *grpc.ClientConn, msg string) error {
				_, err := echo(context.Background(), conn, msg)
				return err
			},
		},
		{
			name:   "stream",
			method: chatMethod,
			give: func(conn *grpc.ClientConn, msg string) error {
				_, err := chat(context.Background(), conn, msg)
				return err
			},
		},
	}
	for _, tt := range tests {
		for _, details := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, details %v", tt.name, details), func(t *testing.T) {
				m, clk, _ := newManager(t, tripOnFirstFailure(tt.method))
				var opts []breakergrpc.Option
				if details {
					opts = append(opts, breakergrpc.WithBlockDetails())
				}
				s, conn := serveWith(t, m, opts...)
				require.Equal(t, codes.ResourceExhausted, status.Code(tt.give(conn, "ResourceExhausted")))
				require.Equal(t, breaker.Open, stats(t, m, tt.method).State)

				clk.Advance(4 * time.Second)
				err := tt.give(conn, "hello")
				assert.Equal(t, codes.Unavailable, status.Code(err))
				info, retry := blockDetails(t, err)
				assert.Equal(t, breakergrpc.ErrorDomain, info.GetDomain())
				assert.Equal(t, breakergrpc.ReasonCircuitOpen, info.GetReason())
				if details {
					assert.Equal(t, `breaker: call to "`+tt.method+`" rejected: circuit OPEN by rule "first-failure" (ErrorCount)`,
						status.Convert(err).Message())
					assert.Equal(t, map[string]string{
						"resource": tt.method,
						"rule_id":  "first-failure",
						"strategy": "ErrorCount",
						"state":    "OPEN",
						"retry_at": "2026-01-01T00:00:10Z",
					}, info.GetMetadata())
				} else {
					// By default the client learns no rule ID, strategy or state.
					assert.Equal(t, `breaker: call to "`+tt.method+`" rejected: circuit open`, status.Convert(err).Message())
					assert.Equal(t, map[string]string{
						"resource": tt.method,
						"retry_at": "2026-01-01T00:00:10Z",
					}, info.GetMetadata())
				}
				assert.Equal(t, 6*time.Second, retry.GetRetryDelay().AsDuration())
				assert.Equal(t, int64(1), s.hits.Load(), "the blocked RPC did not reach the handler")
			})
		}
	}
}

// Given a probe in flight, then another RPC is blocked with HALF_OPEN, a retry time two buckets
// ahead and a retry delay of a second; when the probe's client gives up, the breaker is OPEN again with its retry time.
func TestServerBlockedWhileProbing(t *testing.T) {
	m, clk, _ := newManager(t, tripOnFirstFailure(echoMethod))
	s, conn := serveWith(t, m, breakergrpc.WithBlockDetails())
	_, err := echo(context.Background(), conn, "Internal")
	require.Equal(t, codes.Internal, status.Code(err))
	clk.Advance(retryTimeout + 30*time.Second) // long past the retry time

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	probe := make(chan error, 1)
	go func() {
		_, err := echo(ctx, conn, "wait")
		probe <- err
	}()
	<-s.waiting
	require.Equal(t, breaker.HalfOpen, stats(t, m, echoMethod).State)

	_, err = echo(context.Background(), conn, "hello")
	assert.Equal(t, codes.Unavailable, status.Code(err))
	info, retry := blockDetails(t, err)
	assert.Equal(t, "HALF_OPEN", info.GetMetadata()["state"])
	assert.Equal(t, "2026-01-01T00:00:40.2Z", info.GetMetadata()["retry_at"], "the bucket after next, not the past retry time")
	assert.Equal(t, time.Second, retry.GetRetryDelay().AsDuration())

	cancel()
	assert.Equal(t, codes.Canceled, status.Code(<-probe))
	require.Eventually(t, func() bool { return stats(t, m, echoMethod).State == breaker.Open },
		5*time.Second, time.Millisecond, "the canceled probe returned the breaker to OPEN")
	assert.Equal(t, int64(2), s.hits.Load())
}

// Given a handler that panics, then the RPC fails and the panic goes on up, for unary RPCs and
// streams.
func TestServerPanic(t *testing.T) {
	tests := []struct {
		name   string
		method string
		give   func(m *breaker.Manager)
	}{
		{
			name:   "unary",
			method: echoMethod,
			give: func(m *breaker.Manager) {
				_, _ = breakergrpc.UnaryServerInterceptor(m)(context.Background(), wrapperspb.String("hello"),
					&grpc.UnaryServerInfo{FullMethod: echoMethod},
					func(context.Context, any) (any, error) { panic("nil map") })
			},
		},
		{
			name:   "stream",
			method: chatMethod,
			give: func(m *breaker.Manager) {
				_ = breakergrpc.StreamServerInterceptor(m)(nil, serverStream{ctx: context.Background()},
					&grpc.StreamServerInfo{FullMethod: chatMethod},
					func(any, grpc.ServerStream) error { panic("nil map") })
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, _, rec := newManager(t, tripOnFirstFailure(tt.method))
			assert.PanicsWithValue(t, "nil map", func() { tt.give(m) })
			assert.Equal(t, call{tt.method, breaker.ErrPanicked}, rec.only(t))
			assert.Equal(t, breaker.Open, stats(t, m, tt.method).State)
		})
	}
}

// serverStream is a ServerStream with a context and nothing else.
type serverStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s serverStream) Context() context.Context { return s.ctx }

// WithFailureCodes replaces the failure codes of the server too.
func TestServerWithFailureCodes(t *testing.T) {
	m, _, _ := newManager(t, countAll(echoMethod))
	_, conn := serveWith(t, m, breakergrpc.WithFailureCodes(codes.PermissionDenied))

	for _, msg := range []string{"PermissionDenied", "Internal", "hello"} {
		_, _ = echo(context.Background(), conn, msg)
	}
	st := stats(t, m, echoMethod)
	assert.Equal(t, uint64(3), st.Total)
	assert.Equal(t, uint64(1), st.Bad)
}

// Given a breaker that closed on a probe and ramps up, when it holds an RPC back, then the
// client gets Unavailable with Reason RAMPING_UP, the next bucket as retry_at, a RetryInfo of
// at least a second, and the handler is not called.
func TestServerRampingUp(t *testing.T) {
	rule := tripOnFirstFailure(echoMethod)
	rule.Threshold, rule.RampUp = 3, time.Minute
	m, clk, _ := newManager(t, rule)
	s, conn := serveWith(t, m)
	fail := func() {
		_, err := echo(context.Background(), conn, "ResourceExhausted")
		require.Equal(t, codes.ResourceExhausted, status.Code(err))
	}
	for range 3 {
		fail()
	}
	require.Equal(t, breaker.Open, stats(t, m, echoMethod).State)
	clk.Advance(retryTimeout)
	_, err := echo(context.Background(), conn, "hello") // the probe closes it: the ramp starts
	require.NoError(t, err)
	fail() // the ramp's first call fails: the rest of the bucket is held back
	_, err = echo(context.Background(), conn, "hello")
	assert.Equal(t, codes.Unavailable, status.Code(err))
	info, retry := blockDetails(t, err)
	assert.Equal(t, breakergrpc.ReasonRampingUp, info.GetReason())
	assert.Equal(t, `breaker: call to "`+echoMethod+`" held back: ramping up after recovery`, status.Convert(err).Message())
	wantAt := clk.Now().Truncate(100 * time.Millisecond).Add(100 * time.Millisecond)
	assert.Equal(t, wantAt.UTC().Format(time.RFC3339Nano), info.GetMetadata()["retry_at"])
	assert.Equal(t, time.Second, retry.GetRetryDelay().AsDuration(), "at least a second")
	assert.Equal(t, int64(5), s.hits.Load(), "the held back RPC did not reach the handler")
}

// Given a rule with Pace whose window meets its threshold while RPCs still succeed, when its
// breaker, CLOSED and pacing, holds an RPC back, then the client gets Unavailable with Reason
// PACING, not CIRCUIT_OPEN, the next bucket as retry_at, a RetryInfo of at least a second, and
// the handler is not called.
func TestServerPacing(t *testing.T) {
	m, clk, _ := newManager(t, breaker.Rule{Resource: echoMethod, Strategy: breaker.ErrorRatio, Threshold: 0.5,
		MinRequestAmount: 4, RetryTimeout: retryTimeout, Pace: true})
	s, conn := serveWith(t, m)
	for _, msg := range []string{"hello", "hello", "ResourceExhausted", "ResourceExhausted"} {
		_, _ = echo(context.Background(), conn, msg) // the fourth meets 0.5 with two successes
	}
	st := stats(t, m, echoMethod)
	require.Equal(t, breaker.Closed, st.State)
	require.True(t, st.Pacing)
	_, err := echo(context.Background(), conn, "hello")
	assert.Equal(t, codes.Unavailable, status.Code(err))
	info, retry := blockDetails(t, err)
	assert.Equal(t, breakergrpc.ReasonPacing, info.GetReason())
	assert.Equal(t, `breaker: call to "`+echoMethod+`" held back: pacing a dependency that fails part of its calls`,
		status.Convert(err).Message())
	wantAt := clk.Now().Truncate(100 * time.Millisecond).Add(100 * time.Millisecond)
	assert.Equal(t, wantAt.UTC().Format(time.RFC3339Nano), info.GetMetadata()["retry_at"])
	assert.Equal(t, time.Second, retry.GetRetryDelay().AsDuration(), "at least a second")
	assert.Equal(t, int64(4), s.hits.Load(), "the held back RPC did not reach the handler")
}
