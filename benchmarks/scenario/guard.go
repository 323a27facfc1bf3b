package scenario

import "context"

// State is a breaker's state as the harness records it, whatever the library calls it.
type State int

const (
	Closed State = iota
	Open
	HalfOpen
)

func (s State) String() string {
	switch s {
	case Closed:
		return "closed"
	case Open:
		return "open"
	case HalfOpen:
		return "half-open"
	}
	return "unknown"
}

// Guard is one library's breaker, configured for a run, in the shape the harness calls.
type Guard interface {
	// Call runs fn through the library. admitted is false when the library rejected the call
	// without running fn; err is what the caller got.
	Call(ctx context.Context, fn func(context.Context) error) (admitted bool, err error)
	// Close releases what the guard holds (a polling goroutine, process-wide registrations).
	Close()
}

// Library makes a guard for each run. New gets a name unique to the run (for libraries with
// process-wide state) and a function to report each state change with; the harness stamps
// the time.
type Library struct {
	Name string
	New  func(name string, changed func(State)) Guard
	// Throttler marks an adaptive throttler: a guard without states, which rejects a share of
	// the calls that grows with the failures it sees and never reports a change. Its trips are
	// the buckets in which it starts shedding half of the calls (see MeasureThrottler).
	Throttler bool
}

// Measure computes the measures of a timeline of one of l's runs: Measure for a breaker,
// MeasureThrottler for a throttler.
func (l Library) Measure(tl Timeline) Measures {
	if l.Throttler {
		return MeasureThrottler(tl)
	}
	return Measure(tl)
}
