package breakergrpc_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/halfopen/breaker"
	breakergrpc "github.com/halfopen/breaker/contrib/grpc"
)

// Given a server and a client with breakers on a real loopback listener, when the server's
// breaker trips, then the client reads the block's details off the wire, and its own breaker
// counts the Unavailable as a failure.
func TestTCP(t *testing.T) {
	server, serverClock, _ := newManager(t, tripOnFirstFailure(echoMethod))
	client, _, _ := newManager(t, countAll(echoMethod))
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	es := newEchoServer()
	startServer(t, es, lis, grpc.ChainUnaryInterceptor(breakergrpc.UnaryServerInterceptor(server)))
	conn, err := grpc.NewClient("passthrough:///"+lis.Addr().String(),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithChainUnaryInterceptor(breakergrpc.UnaryClientInterceptor(client)))
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })

	reply, err := echo(context.Background(), conn, "hello")
	require.NoError(t, err)
	require.Equal(t, "hello", reply)
	_, err = echo(context.Background(), conn, "Internal")
	require.Equal(t, codes.Internal, status.Code(err))
	require.Equal(t, breaker.Open, stats(t, server, echoMethod).State)

	serverClock.Advance(2 * time.Second)
	_, err = echo(context.Background(), conn, "hello")
	assert.Equal(t, codes.Unavailable, status.Code(err))
	assert.NotErrorIs(t, err, breaker.ErrBlocked, "the client's breaker did not block it")
	info, retry := blockDetails(t, err)
	assert.Equal(t, breakergrpc.ReasonCircuitOpen, info.GetReason())
	assert.Equal(t, "2026-01-01T00:00:10Z", info.GetMetadata()["retry_at"])
	assert.Equal(t, 8*time.Second, retry.GetRetryDelay().AsDuration())
	assert.Equal(t, int64(2), es.hits.Load())

	st := stats(t, client, echoMethod)
	assert.Equal(t, uint64(3), st.Total)
	assert.Equal(t, uint64(2), st.Bad, "Internal and Unavailable")
}
