package breakerhttp

import "errors"

// ErrFailureStatus is the error NewTransport and Middleware record on a call's Entry (see
// breaker.Entry.SetError) when the request got a response whose status counts as a failure: by
// default a 5xx. Slots (breaker.WithSlots) see it through Entry.Err; callers never get it.
var ErrFailureStatus = errors.New("breakerhttp: response status counts as a failure")

// ErrRefusedStatus is the error NewTransport records, marked breaker.Refused, for a request the
// upstream refused while alive (see WithClientRefusal): by default a 429, or a 503 with a
// Retry-After. Callers never get it.
var ErrRefusedStatus = errors.New("breakerhttp: the upstream refused the request")
