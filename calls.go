package breaker

import "time"

// CallInfo describes one call, for a call observer (WithCallObserver).
type CallInfo struct {
	// Resource is the name the call was made under.
	Resource string
	// Blocked is the error of a call that was not let through; nil for a call that ran.
	Blocked *BlockError
	// RT is the call's response time from Enter to Exit, by the Manager's clock; zero when
	// the call was blocked.
	RT time.Duration
	// Outcome is how the call counted (see Classifier); Success when it was blocked.
	Outcome Outcome
	// Slow reports whether a SlowRequestRatio rule of the resource found the call slow.
	Slow bool
	// DryRun is, for a call that ran, the error that a DryRun rule, or a breaker of a
	// ForceClosed resource, would have rejected it with; nil when none would have.
	DryRun *BlockError
	// NotCalled is, for a call that was not made because its context was already done before
	// admission (Do, Execute, a Handle's Do, EnterContext), the context's error; nil for every other call.
	// Such a call was neither let through nor blocked, and no breaker counted it.
	NotCalled error
	// At is when a call that ran ended, or when a blocked one was refused, by the Manager's
	// clock: the reading the Manager took anyway, so that an observer that places calls in
	// time (the exporters' last minute) need not read a clock of its own. Zero for a call not
	// made (NotCalled).
	At time.Time
}
