package breaker

import (
	"errors"
	"fmt"
	"strconv"
	"time"
)

// ErrBlocked is matched by every *BlockError: errors.Is(err, ErrBlocked) holds for every call
// that Enter, Do or Execute did not let through.
var ErrBlocked = errors.New("breaker: call blocked")

// ErrOpen is matched by a *BlockError whose call a breaker rejected (OPEN, or HALF_OPEN with
// its probe in flight), as opposed to one that a slot blocked.
var ErrOpen = errors.New("breaker: circuit open")

// ErrForcedOpen is the Cause of the *BlockError of a call to a resource that is ForceOpen
// (LoadResources). Such an error also matches ErrOpen.
var ErrForcedOpen = errors.New("breaker: resource forced open")

// ErrConcurrencyLimit is the Cause of the *BlockError of a call that would have taken the
// calls in flight to its resource past MaxConcurrency (LoadResources). It does not match
// ErrOpen: no breaker rejected the call.
var ErrConcurrencyLimit = errors.New("breaker: concurrency limit reached")

// ErrNameTooLong is the Cause of the *BlockError of a call whose resource a template rule
// matches but whose name is longer than the Manager keeps (WithMaxNameLength), or than what
// the memory budget leaves for names (WithMemoryBudget): the Manager refuses it rather than
// keep it.
var ErrNameTooLong = errors.New("breaker: resource name too long to keep")

// BlockError is the error of a call that was not let through. Enter, Do and Execute return it.
//
// A breaker hands the same *BlockError to every call it rejects in one period, so rejecting
// costs no allocation: read it, do not modify it.
type BlockError struct {
	// Resource is the name the call was made under.
	Resource string
	// Rule is the rule whose breaker rejected the call; nil when a slot blocked it.
	Rule *Rule
	// State is that breaker's state at rejection: Open or HalfOpen. Closed when a slot
	// blocked the call.
	State State
	// RetryAt is when the caller may try again, never before the rejection: while OPEN, when
	// that breaker lets a probe through; while HALF_OPEN with its probe in flight, the start
	// of the bucket after next of the rule's window (at least one bucket away), or the
	// probe's deadline if that is sooner. Zero when a slot or the resource's settings blocked
	// the call.
	RetryAt time.Time
	// Cause is the slot's error, when a slot blocked the call; ErrForcedOpen or
	// ErrConcurrencyLimit when the resource's settings did.
	Cause error

	at int64 // RetryAt in the Manager's nanoseconds
}

// Error describes who blocked the call.
func (e *BlockError) Error() string {
	if e.Rule == nil {
		return fmt.Sprintf("breaker: call to %s blocked: %v", quoteName(e.Resource), e.Cause)
	}
	rule := e.Rule.Strategy.String()
	if e.Rule.ID != "" {
		rule = fmt.Sprintf("%q (%v)", e.Rule.ID, e.Rule.Strategy)
	}
	return fmt.Sprintf("breaker: call to %s rejected: circuit %v by rule %s", quoteName(e.Resource), e.State, rule)
}

// Is reports whether target is ErrBlocked, or ErrOpen when a breaker rejected the call or
// its resource is ForceOpen.
func (e *BlockError) Is(target error) bool {
	return target == ErrBlocked || (target == ErrOpen && (e.Rule != nil || e.Cause == ErrForcedOpen))
}

// Unwrap returns the slot's error, if any.
func (e *BlockError) Unwrap() error { return e.Cause }

// BlockKind says what blocked a call, for metrics and dashboards.
type BlockKind uint8

const (
	// BlockedByBreaker: a breaker of the resource rejected the call, OPEN or HALF_OPEN with its
	// probe in flight. The error matches ErrOpen and has a Rule.
	BlockedByBreaker BlockKind = iota
	// BlockedByForce: the resource is ForceOpen (Cause ErrForcedOpen); no breaker moved.
	BlockedByForce
	// BlockedByLimit: the call would have taken the calls in flight past the resource's
	// MaxConcurrency (Cause ErrConcurrencyLimit).
	BlockedByLimit
	// BlockedBySlot: a Slot's OnEntry blocked the call (Cause is its error).
	BlockedBySlot
	// BlockedByName: a template matches the resource, but its name is too long to keep
	// (Cause ErrNameTooLong).
	BlockedByName
)

// String returns "open", "forced_open", "concurrency_limit", "slot" or "name_too_long", the values the
// integrations' metrics use for the cause of a rejection.
func (k BlockKind) String() string {
	switch k {
	case BlockedByBreaker:
		return "open"
	case BlockedByForce:
		return "forced_open"
	case BlockedByLimit:
		return "concurrency_limit"
	case BlockedBySlot:
		return "slot"
	case BlockedByName:
		return "name_too_long"
	}
	return "BlockKind(" + strconv.Itoa(int(k)) + ")"
}

// Kind says what blocked the call.
func (e *BlockError) Kind() BlockKind {
	switch {
	case e.Cause == ErrForcedOpen:
		return BlockedByForce
	case e.Cause == ErrConcurrencyLimit:
		return BlockedByLimit
	case e.Cause == ErrNameTooLong:
		return BlockedByName
	case e.Rule != nil:
		return BlockedByBreaker
	}
	return BlockedBySlot
}

// quoteName quotes a resource name for a message, cut short past 128 bytes so that a huge name
// does not make a huge message.
func quoteName(name string) string {
	if len(name) <= 128 {
		return strconv.Quote(name)
	}
	return strconv.Quote(name[:64]) + "... (" + strconv.Itoa(len(name)) + " bytes)"
}
