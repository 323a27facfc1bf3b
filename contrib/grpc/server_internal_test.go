package breakergrpc

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakertest"
)

// silentStream is a ServerStream whose client sends nothing: RecvMsg waits, as gRPC's does,
// until the RPC's context is done.
type silentStream struct {
	grpc.ServerStream
	rpc   context.Context
	recvs atomic.Int64
}

func (s *silentStream) Context() context.Context { return s.rpc }

func (s *silentStream) RecvMsg(any) error {
	s.recvs.Add(1)
	<-s.rpc.Done()
	return status.FromContextError(s.rpc.Err()).Err()
}

// Given a resource Timeout of 200ms and a client that sends nothing, then the handler's
// RecvMsg returns DeadlineExceeded at 200ms, and again at once without a second receive; the
// handler returns it, the call fails and is no longer in flight. The receive left waiting
// ends with the stream.
func TestServerStreamRecvReturnsAtDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const method = "/test.Echo/Chat"
		m := breaker.NewManager(breaker.WithClock(breakertest.NewClock()))
		require.NoError(t, m.LoadRules([]breaker.Rule{{Resource: method, Strategy: breaker.ErrorCount,
			Threshold: 1000, RetryTimeout: time.Second}}))
		require.NoError(t, m.LoadResources(map[string]breaker.ResourceConfig{method: {Timeout: 200 * time.Millisecond}}))
		rpc, endStream := context.WithTimeout(context.Background(), time.Hour) // the client's deadline
		defer endStream()
		ss := &silentStream{rpc: rpc}

		began := time.Now()
		var again error
		err := StreamServerInterceptor(m)(nil, ss, &grpc.StreamServerInfo{FullMethod: method},
			func(_ any, ss grpc.ServerStream) error {
				err := ss.RecvMsg(new(int))
				again = ss.RecvMsg(new(int))
				return err
			})

		assert.Equal(t, codes.DeadlineExceeded, status.Code(err), "%v", err)
		assert.Equal(t, codes.DeadlineExceeded, status.Code(again), "%v", again)
		assert.Equal(t, 200*time.Millisecond, time.Since(began))
		assert.Zero(t, inFlight(m, method))
		assert.Equal(t, uint64(1), m.Breakers(method)[0].Stats().Bad, "the call failed")
		assert.Equal(t, int64(1), ss.recvs.Load(), "one receive at a time")

		endStream() // gRPC ends the stream once the handler returns
		synctest.Wait()
	})
}

// inFlight is resource's calls admitted and not yet exited, as a Snapshot reads them.
func inFlight(m *breaker.Manager, resource string) int64 {
	snap := m.Snapshot()
	if r := snap.Resource(resource); r != nil {
		return r.InFlight
	}
	return 0
}
