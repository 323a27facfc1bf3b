package breakergrpc

import (
	"errors"
	"fmt"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/protoadapt"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/halfopen/breaker"
)

// The ErrorInfo detail of a blocked RPC: its Domain is ErrorDomain, its Reason one of the
// Reason constants.
const (
	// ErrorDomain is the Domain of the ErrorInfo detail of an RPC the breakers blocked.
	ErrorDomain = "breaker"
	// ReasonCircuitOpen is the Reason of the ErrorInfo detail of an RPC that a breaker
	// rejected (OPEN, or HALF_OPEN with its probe in flight): errors.Is(err, breaker.ErrOpen).
	ReasonCircuitOpen = "CIRCUIT_OPEN"
	// ReasonCallBlocked is the Reason of the ErrorInfo detail of an RPC that a slot
	// (breaker.WithSlots) blocked.
	ReasonCallBlocked = "CALL_BLOCKED"
	// ReasonForcedOpen is the Reason of the ErrorInfo detail of an RPC to a resource that is
	// ForceOpen (breaker.ErrForcedOpen). Its code is Unavailable, and it has no RetryInfo: an
	// operator, not a retry time, ends it.
	ReasonForcedOpen = "FORCED_OPEN"
	// ReasonConcurrencyLimit is the Reason of the ErrorInfo detail of an RPC that would have
	// taken its resource past MaxConcurrency (breaker.ErrConcurrencyLimit). Its code is
	// ResourceExhausted, and it has no RetryInfo.
	ReasonConcurrencyLimit = "CONCURRENCY_LIMIT"
	// ReasonRampingUp is the Reason of the ErrorInfo detail of an RPC that a breaker held back
	// while it ramps up after recovery (breaker.ErrRampingUp, Rule.RampUp). Its code is
	// Unavailable, with a RetryInfo for the next bucket of the rule's window.
	ReasonRampingUp = "RAMPING_UP"
	// ReasonPacing is the Reason of the ErrorInfo detail of an RPC that a breaker held back
	// while it paces a dependency that fails part of its calls (breaker.ErrPacing, Rule.Pace).
	// Its code is Unavailable, with a RetryInfo for the next bucket of the rule's window, as
	// for ReasonRampingUp: the breaker is CLOSED, not open.
	ReasonPacing = "PACING"
)

// minRetryDelay is the least RetryDelay a blocked RPC advertises.
const minRetryDelay = time.Second

// blockedError is the error of an RPC the breakers blocked: a gRPC status with the details,
// which also unwraps to the *breaker.BlockError.
type blockedError struct {
	st    *status.Status
	block *breaker.BlockError
}

var _ interface{ GRPCStatus() *status.Status } = (*blockedError)(nil)

// Error formats the status as gRPC's status errors do.
func (e *blockedError) Error() string {
	return "rpc error: code = " + e.st.Code().String() + " desc = " + e.st.Message()
}

// GRPCStatus returns the status, for status.FromError and for the server to send.
func (e *blockedError) GRPCStatus() *status.Status { return e.st }

// Unwrap returns the *breaker.BlockError.
func (e *blockedError) Unwrap() error { return e.block }

// blocked turns the error of an Enter of m that blocked the call into the RPC's error. It reads
// m's clock, for the RetryInfo, only when a breaker blocked the call. Unless o.details is set,
// the status says only what a remote caller needs: the resource, why in one word, and when to
// retry; not which rule, its strategy, the breaker's state or a slot's error.
func blocked(m *breaker.Manager, o *options, err error) error {
	var block *breaker.BlockError
	if !errors.As(err, &block) {
		// The call's context was done before it was admitted (EnterContext): Canceled or
		// DeadlineExceeded, as gRPC answers such a call itself.
		return status.FromContextError(err).Err()
	}
	code := codes.Unavailable
	info := &errdetails.ErrorInfo{
		Domain:   ErrorDomain,
		Metadata: map[string]string{"resource": block.Resource},
	}
	delay := minRetryDelay
	msg := fmt.Sprintf("breaker: call to %q blocked", block.Resource)
	switch {
	case block.Cause == breaker.ErrRampingUp || block.Cause == breaker.ErrPacing: // CLOSED, not open
		info.Reason, msg = ReasonRampingUp, fmt.Sprintf("breaker: call to %q held back: ramping up after recovery", block.Resource)
		if block.Cause == breaker.ErrPacing {
			info.Reason = ReasonPacing
			msg = fmt.Sprintf("breaker: call to %q held back: pacing a dependency that fails part of its calls", block.Resource)
		}
		info.Metadata["retry_at"] = block.RetryAt.UTC().Format(time.RFC3339Nano)
		delay = max(block.RetryAt.Sub(m.Now()), minRetryDelay)
	case block.Rule != nil:
		info.Reason = ReasonCircuitOpen
		info.Metadata["retry_at"] = block.RetryAt.UTC().Format(time.RFC3339Nano)
		delay = max(block.RetryAt.Sub(m.Now()), minRetryDelay)
		msg = fmt.Sprintf("breaker: call to %q rejected: circuit open", block.Resource)
	case errors.Is(block.Cause, breaker.ErrForcedOpen):
		info.Reason = ReasonForcedOpen
		delay = 0
		msg = fmt.Sprintf("breaker: call to %q rejected: resource forced open", block.Resource)
	case errors.Is(block.Cause, breaker.ErrConcurrencyLimit):
		code = codes.ResourceExhausted
		info.Reason = ReasonConcurrencyLimit
		delay = 0
		msg = fmt.Sprintf("breaker: call to %q rejected: concurrency limit reached", block.Resource)
	default:
		info.Reason = ReasonCallBlocked
	}
	if o.details {
		msg = block.Error()
		if block.Rule != nil {
			info.Metadata["strategy"] = block.Rule.Strategy.String()
			info.Metadata["state"] = block.State.String()
			if block.Rule.ID != "" {
				info.Metadata["rule_id"] = block.Rule.ID
			}
		}
		if block.Cause != nil {
			info.Metadata["cause"] = block.Cause.Error()
		}
	}
	details := []protoadapt.MessageV1{info}
	if delay > 0 {
		details = append(details, &errdetails.RetryInfo{RetryDelay: durationpb.New(delay)})
	}
	st := status.New(code, msg)
	if withDetails, err := st.WithDetails(details...); err == nil {
		st = withDetails // WithDetails fails only if the messages do not marshal
	}
	return &blockedError{st: st, block: block}
}
