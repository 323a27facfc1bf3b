package breakergrpc_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	"github.com/halfopen/breaker"
	breakergrpc "github.com/halfopen/breaker/contrib/grpc"
)

// A server sheds the RPCs of a failing method; its client reads why, and when to retry, from
// the status details.
func ExampleUnaryServerInterceptor() {
	clk := newClock() // a fake clock, so the output does not change
	m := breaker.NewManager(breaker.WithClock(clk))
	err := m.LoadRules([]breaker.Rule{{
		ID:               "echo-errors",
		Resource:         "/test.Echo/Echo", // the full method
		Strategy:         breaker.ErrorCount,
		Threshold:        1,
		MinRequestAmount: 1,
		RetryTimeout:     30 * time.Second,
	}})
	if err != nil {
		panic(err)
	}

	srv := grpc.NewServer(grpc.ChainUnaryInterceptor(breakergrpc.UnaryServerInterceptor(m)))
	srv.RegisterService(&echoDesc, newEchoServer())
	lis := bufconn.Listen(1 << 16)
	go func() { _ = srv.Serve(lis) }()
	defer srv.Stop()
	conn, err := grpc.NewClient("passthrough:///bufconn",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		panic(err)
	}
	defer conn.Close()

	_, err = echo(context.Background(), conn, "Internal") // trips the breaker
	fmt.Println(status.Code(err))
	clk.Advance(12 * time.Second)

	_, err = echo(context.Background(), conn, "hello")
	st := status.Convert(err)
	fmt.Println(st.Code())
	for _, d := range st.Details() {
		switch d := d.(type) {
		case *errdetails.ErrorInfo:
			if d.GetDomain() == breakergrpc.ErrorDomain && d.GetReason() == breakergrpc.ReasonCircuitOpen {
				md := d.GetMetadata()
				fmt.Println("circuit open for", md["resource"], "until", md["retry_at"])
			}
		case *errdetails.RetryInfo:
			fmt.Println("retry in", d.GetRetryDelay().AsDuration())
		}
	}
	// Output:
	// Internal
	// Unavailable
	// circuit open for /test.Echo/Echo until 2026-01-01T00:00:30Z
	// retry in 18s
}

// A client rejects the RPCs of a method its breaker opened for, without sending them. The
// error is a status error and also the *breaker.BlockError.
func ExampleUnaryClientInterceptor() {
	m := breaker.NewManager(breaker.WithClock(newClock()))
	err := m.LoadRules([]breaker.Rule{{
		Resource:         "/test.Echo/Echo",
		Strategy:         breaker.ErrorCount,
		Threshold:        2, // the second failure trips it
		MinRequestAmount: 1,
		RetryTimeout:     10 * time.Second,
	}})
	if err != nil {
		panic(err)
	}

	es := newEchoServer()
	srv := grpc.NewServer()
	srv.RegisterService(&echoDesc, es)
	lis := bufconn.Listen(1 << 16)
	go func() { _ = srv.Serve(lis) }()
	defer srv.Stop()
	conn, err := grpc.NewClient("passthrough:///bufconn",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithChainUnaryInterceptor(breakergrpc.UnaryClientInterceptor(m)))
	if err != nil {
		panic(err)
	}
	defer conn.Close()

	for _, msg := range []string{"NotFound", "Unavailable", "Unavailable", "hello"} {
		_, err := echo(context.Background(), conn, msg)
		var block *breaker.BlockError
		if errors.As(err, &block) {
			fmt.Println(status.Code(err), "without sending:", block.State, errors.Is(err, breaker.ErrOpen))
			continue
		}
		fmt.Println(status.Code(err))
	}
	fmt.Println("the server saw", es.hits.Load(), "RPCs")
	// Output:
	// NotFound
	// Unavailable
	// Unavailable
	// Unavailable without sending: OPEN true
	// the server saw 3 RPCs
}
