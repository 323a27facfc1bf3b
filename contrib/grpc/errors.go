package breakergrpc

import (
	"errors"
	"strconv"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
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
)

// minRetryDelay is the least RetryDelay a blocked RPC advertises.
const minRetryDelay = time.Second

// blockedError is the error of an RPC the breakers blocked: a gRPC status of code Unavailable
// with the details, which also unwraps to the *breaker.BlockError.
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
// m's clock, for the RetryInfo, only when a breaker blocked the call. Unless ruleDetails, the
// status says only which resource, and when to retry: the rule's ID, its strategy, the state
// and the slot's error stay in the process.
func blocked(m *breaker.Manager, err error, ruleDetails bool) error {
	var block *breaker.BlockError
	if !errors.As(err, &block) {
		return status.Error(codes.Unavailable, err.Error()) // Enter returns only *BlockError
	}
	info := &errdetails.ErrorInfo{
		Reason:   ReasonCallBlocked,
		Domain:   ErrorDomain,
		Metadata: map[string]string{"resource": block.Resource},
	}
	msg := "breaker: call to " + strconv.Quote(block.Resource) + " blocked"
	delay := minRetryDelay
	if block.Rule != nil {
		info.Reason = ReasonCircuitOpen
		info.Metadata["retry_at"] = block.RetryAt.UTC().Format(time.RFC3339Nano)
		msg = "breaker: call to " + strconv.Quote(block.Resource) + " rejected: circuit open"
		if ruleDetails {
			info.Metadata["strategy"] = block.Rule.Strategy.String()
			info.Metadata["state"] = block.State.String()
			if block.Rule.ID != "" {
				info.Metadata["rule_id"] = block.Rule.ID
			}
		}
		delay = max(block.RetryAt.Sub(m.Now()), minRetryDelay)
	}
	if ruleDetails {
		msg = block.Error()
	}
	st := status.New(codes.Unavailable, msg)
	if withDetails, err := st.WithDetails(info, &errdetails.RetryInfo{RetryDelay: durationpb.New(delay)}); err == nil {
		st = withDetails // WithDetails fails only if the messages do not marshal
	}
	return &blockedError{st: st, block: block}
}
