package breakerview

import "github.com/halfopen/breaker"

// Causes are the kinds of rejection, in the order of Counts.Rejected; each's String is the
// cause label every surface gives it: "open", "forced_open", "concurrency_limit", "slot",
// "name_too_long", "ramping_up", "pacing".
var Causes = [...]breaker.BlockKind{breaker.BlockedByBreaker, breaker.BlockedByForce,
	breaker.BlockedByLimit, breaker.BlockedBySlot, breaker.BlockedByName, breaker.BlockedByRampUp,
	breaker.BlockedByPacing}

// DryMode says why a breaker let through a call it would have rejected (CallInfo.DryRun).
type DryMode uint8

const (
	// DryByRule: the breaker's rule is DryRun.
	DryByRule DryMode = iota
	// DryByForce: the resource is forced closed, by its settings or an operator's override.
	DryByForce
)

// DryModes are the DryModes, in order.
var DryModes = [...]DryMode{DryByRule, DryByForce}

// String returns the label every surface gives m: "dry_run" or "force_closed".
func (m DryMode) String() string {
	if m == DryByRule {
		return "dry_run"
	}
	return "force_closed"
}

// DryModeOf returns why the breaker of dry, a call's CallInfo.DryRun, let it through.
func DryModeOf(dry *breaker.BlockError) DryMode {
	if dry.Rule != nil && dry.Rule.DryRun {
		return DryByRule
	}
	return DryByForce
}
