package scenario

import (
	"fmt"
	"time"
)

// Phase is one stretch of a dependency's script: how long it lasts, how the dependency answers
// during it, and whether it counts as an outage for the measures.
type Phase struct {
	Name     string
	Duration time.Duration
	// Down marks the phases during which the dependency is unhealthy: calls admitted then are
	// "sent while down", and healing is the end of the last Down phase.
	Down bool
	// ErrorRate is the chance that a call fails (after its latency) with ErrDependency: a
	// failure with no hint, as a plain 503 is.
	ErrorRate float64
	// Latency is the time a call takes before it answers.
	Latency Latency
	// CapacityFrom and CapacityTo, when CapacityTo > 0, limit the calls the dependency takes
	// per second, ramping linearly from CapacityFrom at the start of the phase to CapacityTo at
	// its end; calls beyond it fail at once with ErrOverloaded. Zero means no limit.
	CapacityFrom, CapacityTo float64
	// CrashOnOverload makes a capacity-limited dependency fall over when offered more than
	// twice its capacity in a capacity window: its warm-up starts again from CapacityFrom, as a
	// service does whose caches and pools a flood wipes out.
	CrashOnOverload bool
	// QuotaPerSecond, when positive, answers only the first QuotaPerSecond calls of each
	// second of the run's clock (counted from the start of the run, whatever the phase); the
	// later calls of that second fail at once with ErrQuotaExceeded, as a backend's per-second
	// quota does with a 503. A call within the quota counts against it whether it then
	// succeeds or fails.
	QuotaPerSecond int
	// QuotaRetryAfter, when positive, refuses the calls beyond QuotaPerSecond instead: each
	// fails at once with a *Refusal whose RetryAfter is this, as an API's quota answers with a
	// 429 and Retry-After.
	QuotaRetryAfter time.Duration
	// AlternateEvery, when positive, makes the phase alternate every AlternateEvery from its
	// start between answering by ErrorRate (first) and answering without errors: with
	// ErrorRate 1, a dependency that flaps between down and up.
	AlternateEvery time.Duration
}

// Latency is a call's response time: Base, plus up to Jitter of uniform noise, except that
// with probability TailProb the call takes Tail instead (a long tail or a hang).
type Latency struct {
	Base, Jitter time.Duration
	TailProb     float64
	Tail         time.Duration
}

// DefaultRate is the calls per second a script offers unless it says otherwise.
const DefaultRate = 200

// Script is a scenario: its phases, in order, from the start of the run, and the calls per
// second offered throughout.
type Script struct {
	Name   string
	Phases []Phase
	// Rate is the calls per second offered, in every phase; 0 means DefaultRate.
	Rate float64
}

// OfferedRate is the calls per second the script offers: Rate, or DefaultRate.
func (s Script) OfferedRate() float64 {
	if s.Rate > 0 {
		return s.Rate
	}
	return DefaultRate
}

// Total is the length of the whole script.
func (s Script) Total() time.Duration {
	var t time.Duration
	for _, p := range s.Phases {
		t += p.Duration
	}
	return t
}

// Start is when phase i begins.
func (s Script) Start(i int) time.Duration {
	var t time.Duration
	for _, p := range s.Phases[:i] {
		t += p.Duration
	}
	return t
}

// PhaseAt returns the index of the phase in force at offset t; offsets past the end belong to
// the last phase, offsets before 0 to the first.
func (s Script) PhaseAt(t time.Duration) int {
	var end time.Duration
	for i, p := range s.Phases {
		end += p.Duration
		if t < end {
			return i
		}
	}
	return len(s.Phases) - 1
}

// DownStart is when the first Down phase begins, and ok is false if none is Down.
func (s Script) DownStart() (t time.Duration, ok bool) {
	for i, p := range s.Phases {
		if p.Down {
			return s.Start(i), true
		}
	}
	return 0, false
}

// Healed is when the last Down phase ends, and ok is false if none is Down.
func (s Script) Healed() (t time.Duration, ok bool) {
	for i := len(s.Phases) - 1; i >= 0; i-- {
		if s.Phases[i].Down {
			return s.Start(i + 1), true
		}
	}
	return 0, false
}

// Validate checks that the script has phases, each with a positive duration that is a whole
// number of buckets, so per-bucket and per-phase counts cover the same calls.
func (s Script) Validate(bucket time.Duration) error {
	if len(s.Phases) == 0 {
		return fmt.Errorf("scenario %q: no phases", s.Name)
	}
	if s.Rate < 0 {
		return fmt.Errorf("scenario %q: a negative rate", s.Name)
	}
	for _, p := range s.Phases {
		if p.Duration <= 0 || p.Duration%bucket != 0 {
			return fmt.Errorf("scenario %q: phase %q lasts %v, not a positive multiple of %v", s.Name, p.Name, p.Duration, bucket)
		}
		if p.ErrorRate < 0 || p.ErrorRate > 1 || p.Latency.TailProb < 0 || p.Latency.TailProb > 1 {
			return fmt.Errorf("scenario %q: phase %q: probabilities must be in [0, 1]", s.Name, p.Name)
		}
		if p.QuotaPerSecond < 0 || p.QuotaRetryAfter < 0 || p.AlternateEvery < 0 {
			return fmt.Errorf("scenario %q: phase %q: a negative quota, retry hint or alternation", s.Name, p.Name)
		}
		if p.QuotaRetryAfter > 0 && p.QuotaPerSecond == 0 {
			return fmt.Errorf("scenario %q: phase %q: a retry hint for refusals, but no quota to refuse beyond", s.Name, p.Name)
		}
	}
	return nil
}

// HealLater returns a copy of s whose last Down phase lasts d longer, so that healing falls at
// a different point of the breakers' retry cycles; without a Down phase it returns s.
func (s Script) HealLater(d time.Duration) Script {
	phases := append([]Phase(nil), s.Phases...)
	for i := len(phases) - 1; i >= 0; i-- {
		if phases[i].Down {
			phases[i].Duration += d
			break
		}
	}
	s.Phases = phases
	return s
}
