package breaker

import "strconv"

// State is the state of one breaker.
type State int32

const (
	// Closed lets calls pass and counts their outcomes.
	Closed State = iota
	// Open rejects every call until the breaker's retry time.
	Open
	// HalfOpen has one probe call in flight and rejects every other call.
	HalfOpen
)

// String returns "CLOSED", "OPEN" or "HALF_OPEN".
func (s State) String() string {
	switch s {
	case Closed:
		return "CLOSED"
	case Open:
		return "OPEN"
	case HalfOpen:
		return "HALF_OPEN"
	}
	return "State(" + strconv.Itoa(int(s)) + ")"
}
