package breakergrpc

import (
	"context"
	"errors"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/halfopen/breaker"
)

// codeOf is the status code an RPC that ended with err ends with, as the server sends it: a
// status error's code, else a context error's, else Unknown.
func codeOf(err error) codes.Code {
	if st, ok := status.FromError(err); ok {
		return st.Code()
	}
	return status.FromContextError(err).Code()
}

// outcome is the error to record on a call's Entry for err, the RPC's error: nil for a
// success, err marked breaker.Ignore for a canceled RPC, err marked breaker.Refused (with its
// RetryInfo delay) for a refusal, err itself for a failure.
func (o *options) outcome(err error) error {
	if err == nil {
		return nil
	}
	switch c := codeOf(err); {
	case c == codes.Canceled:
		return breaker.CountAs(err, breaker.Ignore)
	case o.refuses(c):
		if d, ok := retryInfoDelay(err); ok {
			err = breaker.RetryAfter(err, d)
		}
		return breaker.CountAs(err, breaker.Refused)
	case o.fails(c):
		return err
	}
	return nil
}

// timedOut returns what to record for an RPC made with parent that ran with callCtx (parent
// with the resource's Timeout) and ended with err, given recorded, what err alone says: a
// failure (context.DeadlineExceeded) if the Timeout cut it off, else recorded. The Timeout
// cut it off if its deadline, earlier than parent's, passed, or the RPC ended with
// DeadlineExceeded: the server, which hears of the deadline, may answer so just before it.
func (o *options) timedOut(parent, callCtx context.Context, err, recorded error) error {
	if callCtx == parent || parent.Err() != nil {
		return recorded
	}
	own, _ := callCtx.Deadline()
	if theirs, ok := parent.Deadline(); ok && !own.Before(theirs) {
		return recorded // the caller's deadline, not the Timeout
	}
	if callCtx.Err() == context.DeadlineExceeded || (err != nil && codeOf(err) == codes.DeadlineExceeded) {
		return context.DeadlineExceeded
	}
	return recorded
}

// clientOutcome is outcome for a client RPC made with ctx: it also ignores an RPC that failed
// because its caller canceled ctx, whatever code gRPC gave it.
func (o *options) clientOutcome(ctx context.Context, err error) error {
	if err != nil && errors.Is(ctx.Err(), context.Canceled) {
		return breaker.CountAs(err, breaker.Ignore)
	}
	recorded := o.outcome(err)
	if _, marked := breaker.CountedAs(recorded); o.retryHints && recorded != nil && !marked { // a failure
		if d, ok := retryInfoDelay(err); ok {
			return breaker.RetryAfter(recorded, d)
		}
	}
	return recorded
}

// retryInfoDelay returns the retry delay of the RetryInfo detail of a status error, such as
// the one this package's server interceptors send when a breaker rejects an RPC.
func retryInfoDelay(err error) (time.Duration, bool) {
	st, ok := status.FromError(err)
	if !ok {
		return 0, false
	}
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.RetryInfo); ok && info.GetRetryDelay().IsValid() {
			if delay := info.GetRetryDelay().AsDuration(); delay > 0 {
				return delay, true
			}
		}
	}
	return 0, false
}
