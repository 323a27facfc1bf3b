package breakergrpc_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
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

// clientConn connects to s through the client interceptors of m.
func clientConn(t *testing.T, s *testServer, m *breaker.Manager, opts ...breakergrpc.Option) *grpc.ClientConn {
	t.Helper()
	return s.dial(t,
		grpc.WithChainUnaryInterceptor(breakergrpc.UnaryClientInterceptor(m, opts...)),
		grpc.WithChainStreamInterceptor(breakergrpc.StreamClientInterceptor(m, opts...)))
}

// The resource is the full method of the RPC, for unary RPCs and streams.
func TestClientDefaultResource(t *testing.T) {
	m, _, rec := newManager(t)
	conn := clientConn(t, serve(t), m)

	reply, err := echo(context.Background(), conn, "hello")
	require.NoError(t, err)
	assert.Equal(t, "hello", reply)
	replies, err := chat(context.Background(), conn, "a", "b")
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b"}, replies)

	assert.Equal(t, []call{{echoMethod, nil}, {chatMethod, nil}}, rec.all())
}

// WithResource names the resource from the RPC's context and method.
func TestClientWithResource(t *testing.T) {
	m, _, rec := newManager(t)
	conn := clientConn(t, serve(t), m, breakergrpc.WithResource(func(ctx context.Context, method string) string {
		md, _ := metadata.FromOutgoingContext(ctx)
		return md.Get("tenant")[0] + method
	}))
	ctx := metadata.AppendToOutgoingContext(context.Background(), "tenant", "acme")

	_, err := echo(ctx, conn, "hello")
	require.NoError(t, err)
	_, err = chat(ctx, conn, "a")
	require.NoError(t, err)

	assert.Equal(t, []call{{"acme" + echoMethod, nil}, {"acme" + chatMethod, nil}}, rec.all())
}

// Given a server that fails with a code, then the default failure codes, only, count as
// failures, and the error reaches the caller unchanged.
func TestUnaryClientCountsCodes(t *testing.T) {
	tests := []struct {
		give    codes.Code
		wantBad uint64
	}{
		{give: codes.Unavailable, wantBad: 1},
		{give: codes.DeadlineExceeded, wantBad: 1},
		{give: codes.Internal, wantBad: 1},
		{give: codes.Unknown, wantBad: 1},
		{give: codes.InvalidArgument, wantBad: 0},
		{give: codes.NotFound, wantBad: 0},
		{give: codes.AlreadyExists, wantBad: 0},
		{give: codes.PermissionDenied, wantBad: 0},
		{give: codes.FailedPrecondition, wantBad: 0},
		{give: codes.Aborted, wantBad: 0},
		{give: codes.Unimplemented, wantBad: 0},
		{give: codes.Unauthenticated, wantBad: 0},
	}
	for _, tt := range tests {
		t.Run(tt.give.String(), func(t *testing.T) {
			m, _, rec := newManager(t, countAll(echoMethod))
			conn := clientConn(t, serve(t), m)

			_, err := echo(context.Background(), conn, tt.give.String())
			assert.Equal(t, tt.give, status.Code(err))
			assert.Equal(t, "echo: "+tt.give.String(), status.Convert(err).Message())

			st := stats(t, m, echoMethod)
			assert.Equal(t, uint64(1), st.Total)
			assert.Equal(t, tt.wantBad, st.Bad)
			if tt.wantBad == 1 {
				assert.Equal(t, tt.give, status.Code(rec.only(t).err), "the failure is recorded as it is")
			} else {
				assert.NoError(t, rec.only(t).err)
			}
		})
	}
}

// Given a breaker that tripped at 0s with a 10s retry timeout, when an RPC comes at each
// moment, then it fails with Unavailable, the BlockError and the details (all of them, with
// WithBlockDetails), and is not sent.
func TestUnaryClientBlocked(t *testing.T) {
	tests := []struct {
		give      time.Duration // since the trip
		wantDelay time.Duration
	}{
		{give: 0, wantDelay: 10 * time.Second},
		{give: 2500 * time.Millisecond, wantDelay: 7500 * time.Millisecond},
		{give: 8 * time.Second, wantDelay: 2 * time.Second},
		{give: 9500 * time.Millisecond, wantDelay: time.Second}, // at least a second
	}
	for _, tt := range tests {
		t.Run(tt.give.String(), func(t *testing.T) {
			m, clk, _ := newManager(t, tripOnFirstFailure(echoMethod))
			s := serve(t)
			conn := clientConn(t, s, m, breakergrpc.WithBlockDetails())
			tripped := clk.Now()
			_, err := echo(context.Background(), conn, "Internal")
			require.Equal(t, codes.Internal, status.Code(err))
			require.Equal(t, breaker.Open, stats(t, m, echoMethod).State)

			clk.Advance(tt.give)
			_, err = echo(context.Background(), conn, "hello")

			assert.Equal(t, codes.Unavailable, status.Code(err))
			assert.Equal(t, `breaker: call to "/test.Echo/Echo" rejected: circuit OPEN by rule "first-failure" (ErrorCount)`,
				status.Convert(err).Message())
			assert.ErrorIs(t, err, breaker.ErrOpen)
			var block *breaker.BlockError
			require.ErrorAs(t, err, &block)
			assert.Equal(t, echoMethod, block.Resource)
			assert.Equal(t, tripped.Add(retryTimeout), block.RetryAt)

			info, retry := blockDetails(t, err)
			assert.Equal(t, breakergrpc.ErrorDomain, info.GetDomain())
			assert.Equal(t, breakergrpc.ReasonCircuitOpen, info.GetReason())
			assert.Equal(t, map[string]string{
				"resource": echoMethod,
				"rule_id":  "first-failure",
				"strategy": "ErrorCount",
				"state":    "OPEN",
				"retry_at": "2026-01-01T00:00:10Z",
			}, info.GetMetadata())
			assert.Equal(t, tt.wantDelay, retry.GetRetryDelay().AsDuration())

			assert.Equal(t, int64(1), s.hits.Load(), "the blocked RPC was not sent")
		})
	}
}

// Given a slot that blocks every call, then an RPC fails with Unavailable and CALL_BLOCKED,
// and a retry delay of a second.
func TestUnaryClientBlockedBySlot(t *testing.T) {
	m := breaker.NewManager(breaker.WithSlots(blockingSlot{errors.New("too many RPCs in flight")}))
	s := serve(t)
	conn := clientConn(t, s, m)

	_, err := echo(context.Background(), conn, "hello")
	assert.Equal(t, codes.Unavailable, status.Code(err))
	assert.ErrorIs(t, err, breaker.ErrBlocked)
	assert.NotErrorIs(t, err, breaker.ErrOpen)
	info, retry := blockDetails(t, err)
	assert.Equal(t, breakergrpc.ReasonCallBlocked, info.GetReason())
	assert.Equal(t, map[string]string{"resource": echoMethod}, info.GetMetadata())
	assert.Equal(t, time.Second, retry.GetRetryDelay().AsDuration())
	assert.Zero(t, s.hits.Load())
}

// Given an RPC canceled by its caller, or ended by the server with Canceled, then it counts
// neither way; one that ran out of time fails. (An RPC whose context is done before it starts
// is not a call: see context_test.go.)
func TestUnaryClientCanceled(t *testing.T) {
	tests := []struct {
		name      string
		give      func(s *testServer, conn *grpc.ClientConn) error
		wantCode  codes.Code
		wantTotal uint64
	}{
		{
			name: "canceled while the server works",
			give: func(s *testServer, conn *grpc.ClientConn) error {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				go func() {
					<-s.waiting
					cancel()
				}()
				_, err := echo(ctx, conn, "wait")
				return err
			},
			wantCode: codes.Canceled,
		},
		{
			name: "canceled with a cause",
			give: func(s *testServer, conn *grpc.ClientConn) error {
				ctx, cancel := context.WithCancelCause(context.Background())
				defer cancel(nil)
				go func() {
					<-s.waiting
					cancel(errors.New("the user closed the page"))
				}()
				_, err := echo(ctx, conn, "wait")
				return err
			},
			wantCode: codes.Canceled,
		},
		{
			name: "the server answers Canceled",
			give: func(_ *testServer, conn *grpc.ClientConn) error {
				_, err := echo(context.Background(), conn, "Canceled")
				return err
			},
			wantCode: codes.Canceled,
		},
		{
			name: "the deadline passes while the server works",
			give: func(_ *testServer, conn *grpc.ClientConn) error {
				ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
				defer cancel()
				_, err := echo(ctx, conn, "wait")
				return err
			},
			wantCode:  codes.DeadlineExceeded,
			wantTotal: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, _, rec := newManager(t, tripOnFirstFailure(echoMethod))
			s := serve(t)
			conn := clientConn(t, s, m)

			err := tt.give(s, conn)
			assert.Equal(t, tt.wantCode, status.Code(err))
			assert.Equal(t, tt.wantCode, status.Code(rec.only(t).err), "the call exited once")
			if tt.wantTotal == 0 {
				st := stats(t, m, echoMethod)
				assert.Equal(t, breaker.Closed, st.State)
				assert.Zero(t, st.Total, "not counted")
			} else {
				assert.Equal(t, breaker.Open, stats(t, m, echoMethod).State, "counted as a failure")
			}
		})
	}
}

// WithFailureCodes replaces the failure codes; Canceled never fails.
func TestClientWithFailureCodes(t *testing.T) {
	tests := []struct {
		name      string
		give      []codes.Code
		call      codes.Code
		wantTotal uint64
		wantBad   uint64
	}{
		{name: "a listed code fails", give: []codes.Code{codes.NotFound}, call: codes.NotFound, wantTotal: 1, wantBad: 1},
		{name: "a default code not listed succeeds", give: []codes.Code{codes.NotFound}, call: codes.Internal, wantTotal: 1},
		{name: "no codes: nothing fails", give: nil, call: codes.Unavailable, wantTotal: 1},
		{
			name: "the defaults extended", give: append(breakergrpc.DefaultFailureCodes(), codes.Aborted),
			call: codes.Aborted, wantTotal: 1, wantBad: 1,
		},
		{name: "Canceled listed still counts neither way", give: []codes.Code{codes.Canceled}, call: codes.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, _, _ := newManager(t, countAll(echoMethod), countAll(chatMethod))
			conn := clientConn(t, serve(t), m, breakergrpc.WithFailureCodes(tt.give...))

			_, err := echo(context.Background(), conn, tt.call.String())
			require.Equal(t, tt.call, status.Code(err))
			_, err = chat(context.Background(), conn, tt.call.String())
			require.Equal(t, tt.call, status.Code(err))

			for _, method := range []string{echoMethod, chatMethod} {
				st := stats(t, m, method)
				assert.Equal(t, tt.wantTotal, st.Total, method)
				assert.Equal(t, tt.wantBad, st.Bad, method)
			}
		})
	}
}

// Given an invoker that panics, then the RPC fails and the panic goes on up.
func TestUnaryClientPanic(t *testing.T) {
	m, _, rec := newManager(t, tripOnFirstFailure(echoMethod))
	intercept := breakergrpc.UnaryClientInterceptor(m)
	invoker := func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error {
		panic("connection pool corrupted")
	}

	assert.PanicsWithValue(t, "connection pool corrupted", func() {
		_ = intercept(context.Background(), echoMethod, wrapperspb.String("hello"), new(wrapperspb.StringValue), nil, invoker)
	})
	assert.Equal(t, call{echoMethod, breaker.ErrPanicked}, rec.only(t))
	assert.Equal(t, breaker.Open, stats(t, m, echoMethod).State)
}

// Given a stream, however it ends, then it is one call, counted once, with the outcome of its
// end.
func TestStreamClientCountsOnce(t *testing.T) {
	tests := []struct {
		name     string
		give     func(t *testing.T, conn *grpc.ClientConn)
		wantCode codes.Code // of the recorded call
		wantBad  uint64
		counted  bool
	}{
		{
			name: "read until io.EOF",
			give: func(t *testing.T, conn *grpc.ClientConn) {
				replies, err := chat(context.Background(), conn, "a", "b", "c")
				require.NoError(t, err)
				require.Equal(t, []string{"a", "b", "c"}, replies)
			},
			counted: true,
		},
		{
			name: "the server fails after two messages",
			give: func(t *testing.T, conn *grpc.ClientConn) {
				replies, err := chat(context.Background(), conn, "a", "b", "Internal", "d")
				require.Equal(t, codes.Internal, status.Code(err))
				require.Equal(t, []string{"a", "b"}, replies)
			},
			wantCode: codes.Internal,
			wantBad:  1,
			counted:  true,
		},
		{
			name: "client streaming: CloseSend, then one RecvMsg",
			give: func(t *testing.T, conn *grpc.ClientConn) {
				stream, err := conn.NewStream(context.Background(), collectDesc, collectMethod)
				require.NoError(t, err)
				for _, msg := range []string{"a", "b"} {
					require.NoError(t, stream.SendMsg(wrapperspb.String(msg)))
				}
				require.NoError(t, stream.CloseSend())
				out := new(wrapperspb.StringValue)
				require.NoError(t, stream.RecvMsg(out))
				require.Equal(t, "a b", out.GetValue())
			},
			counted: true,
		},
		{
			name: "client streaming: the server fails",
			give: func(t *testing.T, conn *grpc.ClientConn) {
				stream, err := conn.NewStream(context.Background(), collectDesc, collectMethod)
				require.NoError(t, err)
				require.NoError(t, stream.SendMsg(wrapperspb.String("Unavailable")))
				require.NoError(t, stream.CloseSend())
				require.Equal(t, codes.Unavailable, status.Code(stream.RecvMsg(new(wrapperspb.StringValue))))
			},
			wantCode: codes.Unavailable,
			wantBad:  1,
			counted:  true,
		},
		{
			name: "canceled after a reply, without another RecvMsg",
			give: func(t *testing.T, conn *grpc.ClientConn) {
				ctx, cancel := context.WithCancel(context.Background())
				stream, err := conn.NewStream(ctx, chatDesc, chatMethod)
				require.NoError(t, err)
				require.NoError(t, stream.SendMsg(wrapperspb.String("a")))
				require.NoError(t, stream.RecvMsg(new(wrapperspb.StringValue)))
				cancel() // gRPC ends the stream, and reports it through grpc.OnFinish
			},
			wantCode: codes.Canceled,
		},
		{
			name: "CloseSend, then the deadline passes",
			give: func(t *testing.T, conn *grpc.ClientConn) {
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
				defer cancel()
				stream, err := conn.NewStream(ctx, chatDesc, chatMethod)
				require.NoError(t, err)
				require.NoError(t, stream.SendMsg(wrapperspb.String("wait")))
				require.NoError(t, stream.CloseSend())
				<-ctx.Done()
			},
			wantCode: codes.DeadlineExceeded,
			wantBad:  1,
			counted:  true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, _, rec := newManager(t, countAll(chatMethod), countAll(collectMethod))
			conn := clientConn(t, serve(t), m)

			tt.give(t, conn)
			got := rec.waitCalls(t, 1)
			require.Len(t, got, 1, "calls exited")
			assert.Equal(t, tt.wantCode, status.Code(got[0].err))

			var total, bad uint64
			for _, method := range []string{chatMethod, collectMethod} {
				st := stats(t, m, method)
				total, bad = total+st.Total, bad+st.Bad
			}
			assert.Equal(t, tt.counted, total == 1, "counted")
			assert.Equal(t, tt.wantBad, bad)
			assert.Len(t, rec.all(), 1, "no second exit")
		})
	}
}

// Given a breaker that is OPEN, then a stream is not created: Unavailable with the details,
// and the server saw nothing.
func TestStreamClientBlocked(t *testing.T) {
	m, _, _ := newManager(t, tripOnFirstFailure(chatMethod))
	s := serve(t)
	conn := clientConn(t, s, m)
	_, err := chat(context.Background(), conn, "Unknown")
	require.Equal(t, codes.Unknown, status.Code(err))
	require.Equal(t, breaker.Open, stats(t, m, chatMethod).State)

	stream, err := conn.NewStream(context.Background(), chatDesc, chatMethod)
	assert.Nil(t, stream)
	assert.Equal(t, codes.Unavailable, status.Code(err))
	assert.ErrorIs(t, err, breaker.ErrOpen)
	info, retry := blockDetails(t, err)
	assert.Equal(t, breakergrpc.ReasonCircuitOpen, info.GetReason())
	assert.Equal(t, chatMethod, info.GetMetadata()["resource"])
	assert.Equal(t, retryTimeout, retry.GetRetryDelay().AsDuration())
	assert.Equal(t, int64(1), s.hits.Load(), "the blocked stream was not opened")
}

// Given many streams at once, half canceled midway, then each exits exactly once and only
// the finished ones count.
func TestStreamClientConcurrent(t *testing.T) {
	const streams = 16
	m, _, rec := newManager(t, countAll(chatMethod))
	conn := clientConn(t, serve(t), m)

	var wg sync.WaitGroup
	for i := range streams {
		wg.Go(func() {
			if i%2 == 0 {
				_, err := chat(context.Background(), conn, "a", "b")
				assert.NoError(t, err)
				return
			}
			ctx, cancel := context.WithCancel(context.Background())
			stream, err := conn.NewStream(ctx, chatDesc, chatMethod)
			if !assert.NoError(t, err) {
				cancel()
				return
			}
			assert.NoError(t, stream.SendMsg(wrapperspb.String("a")))
			go cancel() // races with the RecvMsg below
			_ = stream.RecvMsg(new(wrapperspb.StringValue))
			_ = stream.RecvMsg(new(wrapperspb.StringValue))
		})
	}
	wg.Wait()

	assert.Len(t, rec.waitCalls(t, streams), streams)
	st := stats(t, m, chatMethod)
	assert.Equal(t, uint64(streams/2), st.Total, "the finished streams; the canceled ones count neither way")
	assert.Zero(t, st.Bad)
}

// fakeStream is a ClientStream whose RecvMsg and SendMsg return scripted errors, for a
// streamer that ignores grpc.OnFinish.
type fakeStream struct {
	grpc.ClientStream
	recv []error
	send []error
}

func (s *fakeStream) RecvMsg(any) error {
	err := s.recv[0]
	s.recv = s.recv[1:]
	return err
}

func (s *fakeStream) SendMsg(any) error {
	err := s.send[0]
	s.send = s.send[1:]
	return err
}

// Given a streamer that ignores grpc.OnFinish and returns a stream of its own, then the
// wrapper ends the call when its caller sees the stream end.
func TestStreamClientWrapperEnds(t *testing.T) {
	internal := status.Error(codes.Internal, "boom")
	tests := []struct {
		name     string
		desc     *grpc.StreamDesc
		give     *fakeStream
		sends    int // SendMsg calls, then RecvMsg until one ends the call
		wantRecv int // RecvMsg calls until the call ended
		wantErr  error
	}{
		{
			name:     "RecvMsg returns io.EOF",
			desc:     chatDesc,
			give:     &fakeStream{recv: []error{nil, nil, io.EOF}},
			wantRecv: 3,
		},
		{
			name:     "RecvMsg fails",
			desc:     chatDesc,
			give:     &fakeStream{recv: []error{nil, internal}},
			wantRecv: 2,
			wantErr:  internal,
		},
		{
			name:     "SendMsg returns io.EOF: RecvMsg has the status",
			desc:     chatDesc,
			give:     &fakeStream{send: []error{io.EOF}, recv: []error{internal}},
			sends:    1,
			wantRecv: 1,
			wantErr:  internal,
		},
		{
			name:    "SendMsg fails",
			desc:    chatDesc,
			give:    &fakeStream{send: []error{internal}},
			sends:   1,
			wantErr: internal,
		},
		{
			name:     "client streaming: the response",
			desc:     collectDesc,
			give:     &fakeStream{recv: []error{nil}},
			wantRecv: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, _, rec := newManager(t)
			intercept := breakergrpc.StreamClientInterceptor(m)
			var gotOpts []grpc.CallOption
			streamer := func(_ context.Context, _ *grpc.StreamDesc, _ *grpc.ClientConn, _ string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
				gotOpts = opts
				return tt.give, nil
			}
			method := "/test.Echo/" + tt.desc.StreamName
			stream, err := intercept(context.Background(), tt.desc, nil, method, streamer)
			require.NoError(t, err)
			require.Len(t, gotOpts, 1)
			assert.IsType(t, grpc.OnFinishCallOption{}, gotOpts[0])

			for range tt.sends {
				_ = stream.SendMsg(wrapperspb.String("a"))
			}
			recvs := 0
			for len(rec.all()) == 0 && recvs < 10 {
				_ = stream.RecvMsg(new(wrapperspb.StringValue))
				recvs++
			}
			assert.Equal(t, tt.wantRecv, recvs, "RecvMsg calls until the call ended")
			assert.Equal(t, []call{{method, tt.wantErr}}, rec.all())

			gotOpts[0].(grpc.OnFinishCallOption).OnFinish(status.Error(codes.Unavailable, "late"))
			assert.Len(t, rec.all(), 1, "grpc.OnFinish after the end changes nothing")
		})
	}
}

// Given a streamer that fails, then the call fails and no stream is returned; one that panics
// fails it too, and the panic goes on up.
func TestStreamClientStreamerFails(t *testing.T) {
	m, _, rec := newManager(t, countAll(chatMethod))
	intercept := breakergrpc.StreamClientInterceptor(m)
	unavailable := status.Error(codes.Unavailable, "no connection")

	stream, err := intercept(context.Background(), chatDesc, nil, chatMethod,
		func(context.Context, *grpc.StreamDesc, *grpc.ClientConn, string, ...grpc.CallOption) (grpc.ClientStream, error) {
			return nil, unavailable
		})
	assert.Nil(t, stream)
	assert.Equal(t, unavailable, err)

	assert.PanicsWithValue(t, "streamer broke", func() {
		_, _ = intercept(context.Background(), chatDesc, nil, chatMethod,
			func(context.Context, *grpc.StreamDesc, *grpc.ClientConn, string, ...grpc.CallOption) (grpc.ClientStream, error) {
				panic("streamer broke")
			})
	})

	assert.Equal(t, []call{{chatMethod, unavailable}, {chatMethod, breaker.ErrPanicked}}, rec.all())
	assert.Equal(t, uint64(2), stats(t, m, chatMethod).Bad)
}

// Given a server out of quota, answering ResourceExhausted with a RetryInfo, then the RPC is
// refused: it counts against an error rule, as a refusal, and the breaker it trips stays OPEN
// for the server's delay without WithRetryHints (within MaxRetryTimeout). WithRefusalCodes
// changes which codes are refused.
func TestClientRefusal(t *testing.T) {
	rule := breaker.Rule{Resource: echoMethod, Strategy: breaker.ErrorCount, Threshold: 1,
		MinRequestAmount: 1, RetryTimeout: time.Second, MaxRetryTimeout: time.Minute}
	t.Run("by default", func(t *testing.T) {
		m, clk, rec := newManager(t, rule)
		_, err := echo(context.Background(), clientConn(t, serve(t), m), "quota")
		require.Equal(t, codes.ResourceExhausted, status.Code(err), "the error reaches the caller as it is")
		recorded := rec.only(t).err
		outcome, marked := breaker.CountedAs(recorded)
		assert.True(t, marked)
		assert.Equal(t, breaker.Refused, outcome)
		assert.Equal(t, codes.ResourceExhausted, status.Code(recorded))
		st := stats(t, m, echoMethod)
		require.Equal(t, breaker.Open, st.State)
		assert.Equal(t, clk.Now().Add(quotaDelay), st.RetryAt, "the server's delay, without WithRetryHints")
	})
	t.Run("no codes refused", func(t *testing.T) {
		m, _, rec := newManager(t, countAll(echoMethod))
		_, err := echo(context.Background(), clientConn(t, serve(t), m, breakergrpc.WithRefusalCodes(),
			breakergrpc.WithFailureCodes(append(breakergrpc.DefaultFailureCodes(), codes.ResourceExhausted)...)), "quota")
		require.Equal(t, codes.ResourceExhausted, status.Code(err))
		recorded := rec.only(t).err
		_, marked := breaker.CountedAs(recorded)
		assert.False(t, marked, "a failure, recorded as it is")
		assert.Equal(t, codes.ResourceExhausted, status.Code(recorded))
	})
	t.Run("another code refused", func(t *testing.T) {
		m, _, rec := newManager(t, countAll(echoMethod))
		_, err := echo(context.Background(), clientConn(t, serve(t), m, breakergrpc.WithRefusalCodes(codes.Unavailable)),
			codes.Unavailable.String())
		require.Equal(t, codes.Unavailable, status.Code(err))
		outcome, marked := breaker.CountedAs(rec.only(t).err)
		assert.True(t, marked)
		assert.Equal(t, breaker.Refused, outcome)
	})
}

// Given WithRetryHints and a server whose own breaker rejects the RPC with a RetryInfo, then
// the client's breaker, tripped by that rejection, stays OPEN for the server's delay (within
// MaxRetryTimeout); without the option, for its RetryTimeout.
func TestClientRetryHints(t *testing.T) {
	for _, hints := range []bool{true, false} {
		t.Run(fmt.Sprintf("hints=%v", hints), func(t *testing.T) {
			serverM, _, _ := newManager(t, tripOnFirstFailure(echoMethod))
			require.Error(t, serverM.Do(context.Background(), echoMethod, func(context.Context) error {
				return errors.New("down")
			}))
			s := serve(t, grpc.ChainUnaryInterceptor(breakergrpc.UnaryServerInterceptor(serverM)))

			rule := breaker.Rule{Resource: echoMethod, Strategy: breaker.ErrorCount, Threshold: 1,
				MinRequestAmount: 1, RetryTimeout: time.Second, MaxRetryTimeout: time.Minute}
			m, clk, _ := newManager(t, rule)
			var opts []breakergrpc.Option
			want := time.Second
			if hints {
				opts, want = []breakergrpc.Option{breakergrpc.WithRetryHints()}, retryTimeout
			}
			_, err := echo(context.Background(), clientConn(t, s, m, opts...), "hello")
			require.Equal(t, codes.Unavailable, status.Code(err))
			st := stats(t, m, echoMethod)
			require.Equal(t, breaker.Open, st.State)
			assert.Equal(t, clk.Now().Add(want), st.RetryAt)
		})
	}
}
