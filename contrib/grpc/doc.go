// Package breakergrpc puts the breakers of a [breaker.Manager] in front of gRPC: on the client
// side as interceptors of a ClientConn ([UnaryClientInterceptor], [StreamClientInterceptor]),
// on the server side as interceptors of a Server ([UnaryServerInterceptor],
// [StreamServerInterceptor]). Each RPC, or each stream from its creation to its end, is one
// call of the manager, under a resource named after its full method, such as
// "/orders.v1.Orders/Get", and the rules loaded for that name decide when RPCs are rejected. A
// client rejects RPCs to a failing method without sending them:
//
//	conn, err := grpc.NewClient(target,
//		grpc.WithTransportCredentials(creds),
//		grpc.WithChainUnaryInterceptor(breakergrpc.UnaryClientInterceptor(m)),
//		grpc.WithChainStreamInterceptor(breakergrpc.StreamClientInterceptor(m)))
//
// The status codes that count as failures ([DefaultFailureCodes], [WithFailureCodes]), the
// status and standard error details a blocked RPC fails with ([ErrorDomain], RetryInfo),
// resource Timeouts, and when a stream ends are in the module's README.
package breakergrpc
