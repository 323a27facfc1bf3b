// Package breakerhttp puts the breakers of a [breaker.Manager] in front of net/http: on the
// client side as an [http.RoundTripper] ([NewTransport]), on the server side as a middleware
// ([Middleware]). Each request is one call of the manager, under a resource named after the
// request, and the rules loaded for that name decide when requests are rejected.
//
// A client rejects requests to a failing host without sending them:
//
//	m := breaker.NewManager()
//	err := m.LoadRules([]breaker.Rule{{
//		Resource:     "GET api:8080", // method and host: see NewTransport
//		Strategy:     breaker.ErrorRatio,
//		Threshold:    0.5,
//		RetryTimeout: 5 * time.Second,
//	}})
//	...
//	client := &http.Client{Transport: breakerhttp.NewTransport(nil, m)}
//	resp, err := client.Get("http://api:8080/orders/7")
//	if errors.Is(err, breaker.ErrOpen) {
//		// rejected: the request was not sent
//	}
//
// A server sheds the requests of a failing route with 503 Service Unavailable and a
// Retry-After header, without calling its handler:
//
//	mw := breakerhttp.Middleware(m)
//	mux := http.NewServeMux()
//	mux.Handle("GET /orders/{id}", mw(orders)) // resource "@server GET /orders/{id}"
//
// A server's names begin with [ServerPrefix], so that a rule written for the hosts a program
// calls ("POST *") never takes a route it serves, nor one written for its routes a host. A
// request that matches no pattern, or that the mux redirects, is [UnmatchedResource], one
// name for all of them, so a client cannot create resources by inventing paths; on the client
// side, the hops of a redirect keep the first request's resource, so an upstream cannot either
// by naming hosts. A resource's Timeout
// (breaker.ResourceConfig) bounds the request on either side: the handler's context, or the
// client request's context until its body is read or closed, gets that deadline.
//
// By default a transport error or a 5xx response is a failure on the client side, and a 5xx
// answer or a panic on the server side; the [Option]s replace the resource names, the failure
// decisions and the blocked answer.
//
// The package starts no goroutines.
package breakerhttp
