package breakergrpc_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	"github.com/halfopen/breaker"
	breakergrpc "github.com/halfopen/breaker/contrib/grpc"
)

// The recipe for an internal gRPC service (docs/recipes.md): the README's recommended rules
// under a template for every method of the service, with a MaxRetryTimeout for the service's
// retry hints, a Timeout for each method, and the client interceptors' defaults: the caller's
// mistakes count as successes, ResourceExhausted as a refusal, and Unavailable,
// DeadlineExceeded, Internal and Unknown as failures. An RPC that runs past its Timeout fails;
// an outage opens the breaker, which then rejects without sending.
func Example_internalService() {
	clk := newClock() // a fake clock, so the output does not change
	var last breaker.CallInfo
	m := breaker.NewManager(breaker.WithClock(clk),
		breaker.WithCallObserver(func(c breaker.CallInfo) { last = c }))
	err := m.LoadRules([]breaker.Rule{
		{Resource: "/test.Echo/*", Strategy: breaker.ErrorRatio, Threshold: 0.5,
			FastBuckets: 2, RetryTimeout: 5 * time.Second, RetryJitter: 0.2, RampUp: 20 * time.Second,
			Pace: true, MaxRetryTimeout: 30 * time.Second}, // room for the service's RetryInfo
		{Resource: "/test.Echo/*", Strategy: breaker.SlowRequestRatio, Threshold: 0.5,
			MaxAllowedRT: 300 * time.Millisecond, FastBuckets: 2, RetryTimeout: 5 * time.Second,
			RetryJitter: 0.2, RampUp: 20 * time.Second, Pace: true},
	})
	if err != nil {
		panic(err)
	}
	err = m.LoadResources(map[string]breaker.ResourceConfig{
		// Each method's own; a real deadline, short here since the echo answers at once.
		"/test.Echo/*": {Timeout: 50 * time.Millisecond, MaxConcurrency: 100},
	})
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
		// WithRetryHints: the service's own breakers, behind its server interceptors, say when
		// to call again (within MaxRetryTimeout), and an internal service is trusted to say it.
		grpc.WithChainUnaryInterceptor(breakergrpc.UnaryClientInterceptor(m, breakergrpc.WithRetryHints())),
		grpc.WithChainStreamInterceptor(breakergrpc.StreamClientInterceptor(m, breakergrpc.WithRetryHints())))
	if err != nil {
		panic(err)
	}
	defer conn.Close()

	call := func(msg string) {
		_, err := echo(context.Background(), conn, msg)
		if errors.Is(err, breaker.ErrOpen) {
			fmt.Printf("%-16s %-18v not sent: %v\n", msg, status.Code(err), last.Blocked.State)
			return
		}
		fmt.Printf("%-16s %-18v counted %v\n", msg, status.Code(err), last.Outcome)
	}
	// "quota" answers ResourceExhausted with a RetryInfo; "wait" never answers.
	for _, msg := range []string{"hello", "NotFound", "InvalidArgument", "quota", "wait"} {
		call(msg)
	}

	clk.Advance(2 * time.Second) // a window later, the service goes down
	for range 5 {
		call("Unavailable")
	}
	call("hello")
	fmt.Println("the service saw", es.hits.Load(), "RPCs")
	// Output:
	// hello            OK                 counted Success
	// NotFound         NotFound           counted Success
	// InvalidArgument  InvalidArgument    counted Success
	// quota            ResourceExhausted  counted Refused
	// wait             DeadlineExceeded   counted Failure
	// Unavailable      Unavailable        counted Failure
	// Unavailable      Unavailable        counted Failure
	// Unavailable      Unavailable        counted Failure
	// Unavailable      Unavailable        counted Failure
	// Unavailable      Unavailable        counted Failure
	// hello            Unavailable        not sent: OPEN
	// the service saw 10 RPCs
}
