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

// ErrRampingUp is the Cause of the *BlockError of a call that a breaker held back while it
// ramps up after closing on a probe (Rule.RampUp). It does not match ErrOpen: the breaker is
// CLOSED, and admits a growing share of the calls.
var ErrRampingUp = errors.New("breaker: ramping up after recovery")

// ErrPacing is the Cause of the *BlockError of a call that a breaker held back while it paces
// a dependency that fails part of its calls (Rule.Pace). It does not match ErrOpen: the breaker
// is CLOSED, and admits what the dependency has shown it can serve.
var ErrPacing = errors.New("breaker: pacing a dependency that serves part of its calls")

// BlockError is the error of a call that was not let through. Enter, Do and Execute return it.
//
// A breaker hands the same *BlockError to every call it rejects in one period, so rejecting
// costs no allocation: read it, do not modify it.
type BlockError struct {
	// Resource is the name the call was made under.
	Resource string
	// Rule is the rule whose breaker rejected the call; nil when a slot blocked it.
	Rule *Rule
	// State is that breaker's state at rejection: Open or HalfOpen; Closed when it was
	// ramping up or pacing (Cause ErrRampingUp, ErrPacing), or when a slot blocked the call.
	State State
	// RetryAt is when the caller may try again, after the rejection as the breaker judged it
	// (for a call whose reading of the clock went stale, after the period or bucket it met, not
	// after the old reading): while OPEN, when that breaker lets a probe through; while
	// HALF_OPEN (its probe in flight, or another call taking the next probe of a run), the start
	// of the bucket after next of the rule's window (at least one bucket away), or the probe's
	// deadline if that is sooner; while ramping up, the start of the bucket after the one the
	// call counted in, or the ramp's end if that is sooner; while pacing, the start of the
	// bucket after the one the call counted in.
	// Zero when a slot or the resource's settings blocked the call.
	RetryAt time.Time
	// Cause is the slot's error, when a slot blocked the call; ErrForcedOpen or
	// ErrConcurrencyLimit when the resource's settings did; ErrRampingUp or ErrPacing when a
	// ramping or pacing breaker held the call back; ErrNameTooLong when the name was past the Manager's bound.
	// Nil when an OPEN or HALF_OPEN breaker rejected the call.
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
	switch e.Cause {
	case ErrRampingUp:
		return fmt.Sprintf("breaker: call to %s held back: ramping up after recovery by rule %s", quoteName(e.Resource), rule)
	case ErrPacing:
		return fmt.Sprintf("breaker: call to %s held back: pacing a dependency that serves part of its calls by rule %s",
			quoteName(e.Resource), rule)
	}
	return fmt.Sprintf("breaker: call to %s rejected: circuit %v by rule %s", quoteName(e.Resource), e.State, rule)
}

// Is reports whether target is ErrBlocked, or ErrOpen when a breaker rejected the call or
// its resource is ForceOpen.
func (e *BlockError) Is(target error) bool {
	return target == ErrBlocked || (target == ErrOpen && (e.Rule != nil && e.Cause == nil || e.Cause == ErrForcedOpen))
}

// Unwrap returns Cause, so that errors.Is matches ErrForcedOpen, ErrConcurrencyLimit,
// ErrRampingUp, ErrPacing, ErrNameTooLong or a slot's error.
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
	// BlockedByRampUp: a breaker ramping up after recovery held the call back (Cause
	// ErrRampingUp); the error has a Rule and State Closed.
	BlockedByRampUp
	// BlockedByPacing: a breaker pacing a dependency that fails part of its calls held the
	// call back (Cause ErrPacing); the error has a Rule and State Closed.
	BlockedByPacing
)

// String returns "open", "forced_open", "concurrency_limit", "slot", "name_too_long",
// "ramping_up" or "pacing", the values the integrations' metrics use for the cause of a rejection.
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
	case BlockedByRampUp:
		return "ramping_up"
	case BlockedByPacing:
		return "pacing"
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
	case e.Cause == ErrRampingUp:
		return BlockedByRampUp
	case e.Cause == ErrPacing:
		return BlockedByPacing
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

// ErrPanicked is the error recorded on the Entry of a call whose function panicked, by Do and
// Execute and by the integrations (breakerhttp, the gRPC interceptors): slots see it through
// Entry.Err, and the call counts as a failure, whatever the Classifier says. The panic goes on
// up; no caller gets this error.
var ErrPanicked = errors.New("breaker: call panicked")

// RuleError is the error for what a change cannot take: an invalid rule or settings, which it
// wraps ErrInvalidRule for, or an override Manager.Override refuses, which it wraps
// ErrInvalidOverride for (Index -1; Field one of Resource, Force, Duration, Note).
type RuleError struct {
	// Index is the rule's position in the slice given to LoadRules, or in the array read by
	// ParseRules or ParseSentinelRules; -1 from Rule.Validate and Rule.UnmarshalJSON.
	Index int
	// Resource is the rule's resource.
	Resource string
	// Field names the offending field: a Rule field, or a JSON or Sentinel field name from the
	// parsers; empty when the rule as a whole is at fault.
	Field string
	// Reason says what is wrong and what is allowed.
	Reason string

	of error // what it wraps; nil: ErrInvalidRule
}

// wraps returns the error e wraps.
func (e *RuleError) wraps() error {
	if e.of == nil {
		return ErrInvalidRule
	}
	return e.of
}

// Error describes the rule, the field and the allowed values.
func (e *RuleError) Error() string {
	where := e.wraps().Error()
	if e.Index >= 0 {
		where += " " + strconv.Itoa(e.Index)
	}
	where += fmt.Sprintf(" (resource %q)", e.Resource)
	if e.Field == "" {
		return where + ": " + e.Reason
	}
	return where + ": " + e.Field + " " + e.Reason
}

// Unwrap returns ErrInvalidRule, or ErrInvalidOverride for an override.
func (e *RuleError) Unwrap() error { return e.wraps() }

// ErrInvalidOverride is wrapped by every error that Manager.Override returns for an override it
// refuses.
var ErrInvalidOverride = errors.New("breaker: invalid override")

// ErrInvalidRule is wrapped by every error that Rule.Validate, LoadRules and the rule parsers
// return for a rule that cannot be loaded. Use errors.As with *RuleError for the details.
var ErrInvalidRule = errors.New("breaker: invalid rule")
