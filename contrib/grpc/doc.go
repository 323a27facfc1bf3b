// Package breakergrpc puts the breakers of a [breaker.Manager] in front of gRPC: on the client
// side as interceptors of a ClientConn ([UnaryClientInterceptor], [StreamClientInterceptor]),
// on the server side as interceptors of a Server ([UnaryServerInterceptor],
// [StreamServerInterceptor]). Each RPC is one call of the manager, under a resource named after
// its full method, such as "/orders.v1.Orders/Get", and the rules loaded for that name decide
// when RPCs are rejected.
//
// A client rejects RPCs to a failing method without sending them:
//
//	conn, err := grpc.NewClient(target,
//		grpc.WithTransportCredentials(creds),
//		grpc.WithChainUnaryInterceptor(breakergrpc.UnaryClientInterceptor(m)),
//		grpc.WithChainStreamInterceptor(breakergrpc.StreamClientInterceptor(m)))
//
// A server sheds the RPCs of a failing method without calling its handler:
//
//	srv := grpc.NewServer(
//		grpc.ChainUnaryInterceptor(breakergrpc.UnaryServerInterceptor(m)),
//		grpc.ChainStreamInterceptor(breakergrpc.StreamServerInterceptor(m)))
//
// # Outcomes
//
// An RPC that ends with a status code of [DefaultFailureCodes] (Unavailable, DeadlineExceeded,
// Internal, Unknown, ResourceExhausted) is a failure; any other code, such as InvalidArgument
// or NotFound, is a success: the caller's mistake or a correct answer says nothing about the
// health of the service. [WithFailureCodes] replaces the set. An RPC that ends with
// codes.Canceled counts neither way, whatever the options say (it is recorded as
// breaker.CountAs(err, breaker.Ignore)); so does a client RPC whose context the caller canceled.
// The error of a failed RPC is recorded on its Entry as it is, and the Manager's Classifier
// reads it as it reads any error (by default: a failure).
//
// # Blocked calls
//
// An RPC the breakers block, on either side, fails with a status error of code Unavailable
// (ResourceExhausted when its resource is at its MaxConcurrency), without reaching the network
// (client) or the handler (server). Its message says the resource and why in a few words, and
// its details are standard messages of google.golang.org/genproto/googleapis/rpc/errdetails,
// so a client reads them with no new protos, also across processes:
//
//   - an ErrorInfo with Domain [ErrorDomain] ("breaker") and a Reason: [ReasonCircuitOpen]
//     ("CIRCUIT_OPEN") when a breaker rejected the RPC, [ReasonForcedOpen] ("FORCED_OPEN")
//     when its resource is ForceOpen, [ReasonConcurrencyLimit] ("CONCURRENCY_LIMIT") when it
//     is at its MaxConcurrency, [ReasonRampingUp] ("RAMPING_UP") when a breaker ramping up
//     after recovery held it back, [ReasonPacing] ("PACING") when a breaker pacing a
//     dependency that fails part of its calls held it back, [ReasonCallBlocked]
//     ("CALL_BLOCKED") when a slot (breaker.WithSlots) blocked it. Its Metadata holds
//     "resource"; when a breaker rejected or held back the RPC, also "retry_at" (the
//     BlockError.RetryAt, in UTC, RFC 3339 with nanoseconds).
//   - a RetryInfo whose RetryDelay is the time from m.Now() until RetryAt, and at least one
//     second, never zero or negative, also for a RetryAt already past (one second when a slot
//     blocked the call: there is no RetryAt). A forced-open or concurrency-limited RPC has no
//     RetryInfo: no retry time is known.
//
// The rule's ID and strategy, the breaker's state and a slot's error are the server's own
// business and are not sent unless [WithBlockDetails] says so: then the message is the
// [breaker.BlockError]'s, and the Metadata adds "rule_id", "strategy", "state" and "cause".
//
// # Timeouts
//
// When a resource has a Timeout (breaker.ResourceConfig), each interceptor gives the RPC a
// context with that deadline, never later than the caller's (breaker.Entry.WithTimeout), and
// cancels it when the call ends. An RPC cut off by it fails whatever [WithFailureCodes] says.
// On the server a stream's RecvMsg also returns at the deadline, with DeadlineExceeded, while
// the client sends nothing (see [StreamServerInterceptor]).
//
// A client reads them from the status:
//
//	st := status.Convert(err)
//	for _, d := range st.Details() {
//		switch d := d.(type) {
//		case *errdetails.ErrorInfo:
//			if d.GetDomain() == breakergrpc.ErrorDomain && d.GetReason() == breakergrpc.ReasonCircuitOpen {
//				// the service's breaker for d.GetMetadata()["resource"] is open
//			}
//		case *errdetails.RetryInfo:
//			wait := d.GetRetryDelay().AsDuration()
//		}
//	}
//
// On the client side the error of a blocked RPC also unwraps to the *breaker.BlockError, so
// errors.Is(err, breaker.ErrOpen) holds when a breaker rejected it, and errors.As finds the
// BlockError; status.Code(err) is codes.Unavailable.
//
// # Streams
//
// A stream is one call, from its creation to its end, whatever number of messages it carries.
// On the server the call ends when the handler returns. On the client it ends when gRPC
// finishes the stream, which it reports through grpc.OnFinish: when RecvMsg returns a non-nil
// error (io.EOF is a success), when SendMsg returns an error other than io.EOF, when RecvMsg
// returns the one response of a stream whose server does not stream, or when the stream's
// context is done or the ClientConn is closed. The wrapper ClientStream the interceptor returns
// ends the call on the first three too, for an inner interceptor that returns a stream of its
// own and ignores grpc.OnFinish; the RecvMsg or SendMsg that reports the end returns once the
// call is counted, so the caller's next call finds the breakers as this one left them. A
// stream whose caller does none of these, as gRPC asks, never ends: it is not counted, and if
// it was a probe, its ProbeTimeout counts it as failed.
//
// A panic in the invoker, the streamer or a server handler counts as a failure; the panic goes
// on up.
//
// The package starts no goroutines, but for one: a server stream under a resource Timeout
// waits for each message on a goroutine, which ends with the message or the stream, so that
// its RecvMsg can return at the deadline.
package breakergrpc
