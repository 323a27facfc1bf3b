package breakergrpc_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/halfopen/breaker"
	breakergrpc "github.com/halfopen/breaker/contrib/grpc"
)

// timeout is the resource Timeout of the tests: short, since it is real time.
const timeout = 20 * time.Millisecond

// tripOnErrors is an ErrorRatio rule for resource that opens after three calls that all failed.
func tripOnErrors(resource string) breaker.Rule {
	return breaker.Rule{
		Resource:         resource,
		Strategy:         breaker.ErrorRatio,
		Threshold:        1,
		MinRequestAmount: 3,
		RetryTimeout:     retryTimeout,
	}
}

// details returns the ErrorInfo of err's status, and its RetryInfo or nil.
func details(t *testing.T, err error) (*errdetails.ErrorInfo, *errdetails.RetryInfo) {
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
	return info, retry
}

// Given a resource forced open, or at its concurrency limit, then an RPC the server rejects
// for it gets Unavailable or ResourceExhausted, the Reason, no RetryInfo, and the cause only
// with WithBlockDetails.
func TestServerBlockedBySettings(t *testing.T) {
	for _, withDetails := range []bool{false, true} {
		var opts []breakergrpc.Option
		if withDetails {
			opts = append(opts, breakergrpc.WithBlockDetails())
		}
		t.Run("forced open", func(t *testing.T) {
			m, _, _ := newManager(t)
			require.NoError(t, m.LoadResources(map[string]breaker.ResourceConfig{echoMethod: {Force: breaker.ForceOpen}}))
			s, conn := serveWith(t, m, opts...)

			_, err := echo(context.Background(), conn, "hello")
			assert.Equal(t, codes.Unavailable, status.Code(err))
			info, retry := details(t, err)
			assert.Equal(t, breakergrpc.ReasonForcedOpen, info.GetReason())
			assert.Nil(t, retry, "no retry time: an operator ends it")
			want := map[string]string{"resource": echoMethod}
			if withDetails {
				want["cause"] = breaker.ErrForcedOpen.Error()
			}
			assert.Equal(t, want, info.GetMetadata())
			assert.Zero(t, s.hits.Load())
		})
		t.Run("concurrency limit", func(t *testing.T) {
			m, _, _ := newManager(t)
			require.NoError(t, m.LoadResources(map[string]breaker.ResourceConfig{echoMethod: {MaxConcurrency: 1}}))
			s, conn := serveWith(t, m, opts...)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			first := make(chan error, 1)
			go func() {
				_, err := echo(ctx, conn, "wait")
				first <- err
			}()
			<-s.waiting

			_, err := echo(context.Background(), conn, "hello")
			assert.Equal(t, codes.ResourceExhausted, status.Code(err))
			info, retry := details(t, err)
			assert.Equal(t, breakergrpc.ReasonConcurrencyLimit, info.GetReason())
			assert.Nil(t, retry)
			want := map[string]string{"resource": echoMethod}
			if withDetails {
				want["cause"] = breaker.ErrConcurrencyLimit.Error()
			}
			assert.Equal(t, want, info.GetMetadata())
			cancel()
			assert.Equal(t, codes.Canceled, status.Code(<-first))
			assert.Equal(t, int64(1), s.hits.Load())
		})
	}
}

// Given a resource with a Timeout and a server that hangs until its context is done, then each
// RPC, unary or stream, ends at the deadline with DeadlineExceeded and fails, on the client and
// on the server; the third trips the ErrorRatio rule, and the fourth is rejected. The Timeout
// fails an RPC even when no code counts as a failure (WithFailureCodes()).
func TestTimeout(t *testing.T) {
	call := map[string]func(ctx context.Context, conn *grpc.ClientConn) error{
		echoMethod: func(ctx context.Context, conn *grpc.ClientConn) error {
			_, err := echo(ctx, conn, "wait")
			return err
		},
		chatMethod: func(ctx context.Context, conn *grpc.ClientConn) error {
			_, err := chat(ctx, conn, "wait")
			return err
		},
	}
	sides := map[string]func(t *testing.T, m *breaker.Manager, opts ...breakergrpc.Option) (*testServer, *grpc.ClientConn){
		"client": func(t *testing.T, m *breaker.Manager, opts ...breakergrpc.Option) (*testServer, *grpc.ClientConn) {
			s := serve(t)
			return s, clientConn(t, s, m, opts...)
		},
		"server": serveWith,
	}
	for side, start := range sides {
		for method, give := range call {
			for _, noFailureCodes := range []bool{false, true} {
				var opts []breakergrpc.Option
				if noFailureCodes {
					opts = append(opts, breakergrpc.WithFailureCodes())
				}
				t.Run(fmt.Sprintf("%s%s no failure codes %v", side, method, noFailureCodes), func(t *testing.T) {
					m, _, rec := newManager(t, tripOnErrors(method))
					require.NoError(t, m.LoadResources(map[string]breaker.ResourceConfig{method: {Timeout: timeout}}))
					s, conn := start(t, m, opts...)
					// The caller's own deadline is a backstop, for the test to end if the
					// Timeout were lost.
					ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
					defer cancel()

					for range 3 {
						began := time.Now()
						err := give(ctx, conn)
						assert.Equal(t, codes.DeadlineExceeded, status.Code(err), "%v", err)
						assert.GreaterOrEqual(t, time.Since(began), timeout)
					}
					for _, c := range rec.waitCalls(t, 3) {
						assert.ErrorIs(t, c.err, context.DeadlineExceeded)
					}
					assert.Equal(t, breaker.Open, stats(t, m, method).State)

					err := give(ctx, conn)
					assert.Equal(t, codes.Unavailable, status.Code(err))
					assert.NoError(t, ctx.Err(), "the backstop did not run out")
					assert.Equal(t, int64(3), s.hits.Load(), "the fourth did not reach the handler")
				})
			}
		}
	}
}

// Given a resource with a Timeout and a client that opens a stream and sends nothing, then the
// handler's RecvMsg returns at the deadline with DeadlineExceeded, as the handler's context
// says, so the stream ends there, long before the caller's own deadline, and is no longer in
// flight. gRPC's own RecvMsg waits for the RPC's context alone.
func TestServerStreamTimeoutEndsRecv(t *testing.T) {
	for _, method := range []string{chatMethod, collectMethod} {
		t.Run(method, func(t *testing.T) {
			m, _, rec := newManager(t, countAll(method))
			require.NoError(t, m.LoadResources(map[string]breaker.ResourceConfig{method: {Timeout: timeout}}))
			s, conn := serveWith(t, m)
			desc := map[string]*grpc.StreamDesc{chatMethod: chatDesc, collectMethod: collectDesc}[method]
			// The caller's own deadline is a backstop, for the test to end if the Timeout
			// were lost.
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()

			began := time.Now()
			stream, err := conn.NewStream(ctx, desc, method)
			require.NoError(t, err)
			err = stream.RecvMsg(new(wrapperspb.StringValue))
			assert.Equal(t, codes.DeadlineExceeded, status.Code(err), "%v", err)
			assert.Less(t, time.Since(began), time.Second, "the Timeout, not the backstop, ended it")
			assert.NoError(t, ctx.Err(), "the backstop did not run out")

			c := rec.waitCalls(t, 1)
			assert.ErrorIs(t, c[0].err, context.DeadlineExceeded)
			assert.Zero(t, inFlight(m, method))
			assert.Equal(t, int64(1), s.hits.Load())
		})
	}
}
