package breaker

import (
	"strconv"
	"sync"
	"time"

	"go.uber.org/atomic"
)

// Reason says why a breaker changed state.
type Reason int32

const (
	// ThresholdExceeded: CLOSED → OPEN, the window met the rule's threshold.
	ThresholdExceeded Reason = iota
	// RetryTimeoutElapsed: OPEN → HALF_OPEN, the retry time came and a call became the probe.
	RetryTimeoutElapsed
	// ProbeSucceeded: HALF_OPEN → CLOSED, the probe succeeded; the window starts empty.
	ProbeSucceeded
	// ProbeFailed: HALF_OPEN → OPEN, the probe failed; a new retry time is set.
	ProbeFailed
	// ProbeBlocked: HALF_OPEN → OPEN, a later slot or another breaker blocked the probe; the
	// retry time is unchanged, so the next call may probe.
	ProbeBlocked
	// ProbeTimedOut: HALF_OPEN → OPEN, the probe ran past the rule's ProbeTimeout and counts
	// as failed; a new retry time is set.
	ProbeTimedOut
	// RuleChanged: any state → CLOSED, the rule was changed or removed by LoadRules.
	RuleChanged
	// ProbeIgnored: HALF_OPEN → OPEN, the probe's outcome counts neither way (its caller
	// gave up, see Manager.Do); the retry time is unchanged, so the next call may probe.
	ProbeIgnored
	// Reset: OPEN or HALF_OPEN → CLOSED, or CLOSED → CLOSED from pacing, by Manager.Reset; the
	// window starts empty.
	Reset
	// Evicted: OPEN or HALF_OPEN → CLOSED, a template's breaker was dropped to make room for
	// another resource's (WithMaxTemplateBreakers).
	Evicted
	// FastTrip: CLOSED → OPEN, the newest buckets of the window (Rule.FastBuckets) met
	// Rule.FastThreshold on their own, before the whole window met Threshold.
	FastTrip
	// Override: no transition (From is To); an operator's override of the resource began or
	// ended (Manager.Override): StateChange.Note says which.
	Override
	// PacingStarted: CLOSED → CLOSED, the window met the rule's threshold while the dependency
	// still served calls, and the breaker paces them instead of opening (Rule.Pace).
	PacingStarted
	// PacingEnded: CLOSED → CLOSED, a bucket held no call back, or a reload turned Pace off:
	// the breaker lets every call through again.
	PacingEnded
)

var reasonNames = [...]string{
	ThresholdExceeded:   "ThresholdExceeded",
	RetryTimeoutElapsed: "RetryTimeoutElapsed",
	ProbeSucceeded:      "ProbeSucceeded",
	ProbeFailed:         "ProbeFailed",
	ProbeBlocked:        "ProbeBlocked",
	ProbeTimedOut:       "ProbeTimedOut",
	RuleChanged:         "RuleChanged",
	ProbeIgnored:        "ProbeIgnored",
	Reset:               "Reset",
	Evicted:             "Evicted",
	FastTrip:            "FastTrip",
	Override:            "Override",
	PacingStarted:       "PacingStarted",
	PacingEnded:         "PacingEnded",
}

// String returns the reason's name, such as "ThresholdExceeded".
func (r Reason) String() string {
	if r >= 0 && int(r) < len(reasonNames) {
		return reasonNames[r]
	}
	return "Reason(" + strconv.Itoa(int(r)) + ")"
}

// StateChange describes one transition of one breaker.
type StateChange struct {
	Resource string
	Rule     Rule
	From, To State
	Reason   Reason
	// Snapshot is, for ThresholdExceeded and PacingStarted, the ratio or count that met the
	// threshold; for FastTrip, the ratio of the newest buckets; else 0.
	Snapshot float64
	// At is when the transition happened, by the manager's clock.
	At time.Time
	// Generation counts the breaker's transitions, this one included. It starts again at 1
	// for the breaker of a rule that is removed and added back.
	Generation uint64
	// Seq is the transition's place in a sequence that increases across the whole Manager, in
	// the order the transitions happened: later transitions of a breaker, also one of a rule
	// removed and added back, have larger numbers. Changes made on different goroutines may
	// reach an observer out of order; Seq orders them. Numbers may be skipped.
	Seq uint64
	// DryRun reports that the breaker rejects no call: its rule is DryRun, or its resource is
	// ForceClosed. An OPEN DryRun breaker says what would have been rejected.
	DryRun bool
	// Note is, for Override, the operator's note when an override begins, and "ended" or
	// "expired" when it ends; else empty.
	Note string
}

// Observer hears every state change of every breaker of a Manager.
//
// OnStateChange runs synchronously on the goroutine that made the transition, after the state
// has changed and with no lock of the library held: it may read states, load rules or add
// observers. It should return quickly, since that goroutine is a caller's. A panic is recovered
// and logged.
type Observer interface {
	OnStateChange(StateChange)
}

// ObserverFunc adapts a function to an Observer.
type ObserverFunc func(StateChange)

// OnStateChange calls f(c).
func (f ObserverFunc) OnStateChange(c StateChange) { f(c) }

// observers is a copy-on-write list: notify reads it without a lock.
type observers struct {
	mu   sync.Mutex // serialises changes
	list atomic.Pointer[[]*registration]
}

type registration struct {
	o       Observer
	removed atomic.Bool
}

// AddObserver registers o for every later state change, after the observers already
// registered. The returned function unregisters it; calling it again does nothing.
func (m *Manager) AddObserver(o Observer) (remove func()) {
	reg := &registration{o: o}
	m.observers.change(func(list []*registration) []*registration {
		return append(list, reg)
	})
	return func() {
		if reg.removed.Swap(true) {
			return
		}
		m.observers.change(func(list []*registration) []*registration {
			kept := make([]*registration, 0, len(list))
			for _, r := range list {
				if r != reg {
					kept = append(kept, r)
				}
			}
			return kept
		})
	}
}

func (obs *observers) change(edit func([]*registration) []*registration) {
	obs.mu.Lock()
	defer obs.mu.Unlock()
	var list []*registration
	if p := obs.list.Load(); p != nil {
		list = append(list, *p...) // copy: readers hold the old slice
	}
	list = edit(list)
	obs.list.Store(&list)
}

// notify tells every observer about c, in registration order.
func (m *Manager) notify(c StateChange) {
	p := m.observers.list.Load()
	if p == nil {
		return
	}
	for _, reg := range *p {
		if !reg.removed.Load() {
			m.tell(reg.o, c)
		}
	}
}

func (m *Manager) tell(o Observer, c StateChange) {
	defer func() {
		if v := recover(); v != nil {
			m.logger.Error("breaker: observer panicked", "panic", v, "resource", c.Resource,
				"from", c.From.String(), "to", c.To.String(), "reason", c.Reason.String())
		}
	}()
	o.OnStateChange(c)
}

func (m *Manager) tellCall(hear func(CallInfo), c CallInfo) {
	defer func() {
		if v := recover(); v != nil {
			m.logger.Error("breaker: call observer panicked", "panic", v, "resource", c.Resource)
		}
	}()
	hear(c)
}
