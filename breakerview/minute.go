package breakerview

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/halfopen/breaker"
)

const (
	// Seconds is the length of the last minute, in one-second steps: the second of the
	// reading and the 59 before it, so that a call counts for between 59 and 60 seconds on
	// every surface.
	Seconds = 60
	// RecentSeconds is the length of the last part of the minute that Minute.Recent counts
	// apart, so that a change in the last seconds is not averaged away over the minute.
	RecentSeconds = 10
)

// Counts are the calls of a span of the last minute.
type Counts struct {
	// Calls is every call, let through or rejected.
	Calls uint64
	// Failed and Slow count the calls that ran and failed (as the Manager's Classifier says),
	// or that a SlowRequestRatio rule found slow; a call may be both.
	Failed, Slow uint64
	// Refused counts the calls that ran and that the dependency refused (Outcome Refused): a
	// live dependency saying how much it takes, never counted in Failed. A call may be refused
	// and slow.
	Refused uint64
	// Rejected counts the calls that were not let through, by cause, indexed by BlockKind (see
	// Causes).
	Rejected [len(Causes)]uint64
	// Longest is the longest response time of the calls that ran, 0 when none ran.
	Longest time.Duration
}

// Blocked is the calls that were not let through, of every cause.
func (c *Counts) Blocked() uint64 {
	var n uint64
	for _, r := range c.Rejected {
		n += r
	}
	return n
}

// Ran is the calls that were let through.
func (c *Counts) Ran() uint64 { return c.Calls - c.Blocked() }

// add adds the counts of o to c.
func (c *Counts) add(o *Counts) {
	c.Calls += o.Calls
	c.Failed += o.Failed
	c.Slow += o.Slow
	c.Refused += o.Refused
	for i := range c.Rejected {
		c.Rejected[i] += o.Rejected[i]
	}
	c.Longest = max(c.Longest, o.Longest)
}

// Minute is a name's last minute of calls, up to the second of the reading.
type Minute struct {
	Counts // the whole minute
	// Recent is the last RecentSeconds seconds of it, the second of the reading included.
	Recent Counts
	// PerSecond holds the calls of each second of it, the oldest first.
	PerSecond [Seconds]uint64
}

// minute is one name's last minute of calls, a ring of one-second steps. It is safe for
// concurrent use; record allocates nothing and takes a lock only for the first call of a step.
// The zero value is empty.
type minute struct {
	steps [Seconds]step
}

// step is one second of a minute. Its counters are sync/atomic's, 4 bytes each where go.uber.org/atomic's take 8: a name's
// minute is 60 steps, and a surface keeps a minute for each of up to a thousand names.
type step struct {
	mu  sync.Mutex    // held to reset the step for another second
	key atomic.Uint64 // the second it counts (keyOf); 0: never used

	calls, failed, slow, refused atomic.Uint32
	rejected                     [len(Causes)]atomic.Uint32
	longest                      atomic.Int64 // nanoseconds, of the calls that ran
}

// keyOf numbers the second that holds t, in an order that keeps time's order, with 0 left for
// a step never used: the Unix second with its sign bit flipped, so that any reading a Clock
// can give, the zero time, one before 1970 or after 2262 (where UnixNano overflows) included,
// has a number of its own.
func keyOf(t time.Time) uint64 {
	s := t.Unix()
	if s == math.MinInt64 {
		s++ // no reading is that far back; one that says so counts with the second after it
	}
	return uint64(s) ^ 1<<63
}

// record counts the call c, at c.At.
func (m *minute) record(c *breaker.CallInfo) {
	k := keyOf(c.At)
	s := &m.steps[k%Seconds]
	if s.key.Load() != k {
		s.reset(k)
	}
	s.calls.Add(1)
	if c.Blocked != nil {
		if k := c.Blocked.Kind(); int(k) < len(s.rejected) {
			s.rejected[k].Add(1)
		}
		return
	}
	switch c.Outcome {
	case breaker.Failure:
		s.failed.Add(1)
	case breaker.Refused:
		s.refused.Add(1)
	}
	if c.Slow {
		s.slow.Add(1)
	}
	raise(&s.longest, int64(c.RT))
}

// raise sets v to to if that is more than v holds: a compare-and-swap that retries only while
// other calls raise v.
func raise(v *atomic.Int64, to int64) {
	for held := v.Load(); to > held; held = v.Load() {
		if v.CompareAndSwap(held, to) {
			return
		}
	}
}

// reset empties s for the second k, unless another call did already. The counts are emptied
// before k is stored, so a call that sees k counts in the emptied step. A step moves back too,
// when the clock stepped back a minute or more: what it held then lies ahead of every reading.
func (s *step) reset(k uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.key.Load() == k {
		return
	}
	for _, c := range []*atomic.Uint32{&s.calls, &s.failed, &s.slow, &s.refused} {
		c.Store(0)
	}
	for i := range s.rejected {
		s.rejected[i].Store(0)
	}
	s.longest.Store(0)
	s.key.Store(k)
}

// read returns the last minute of m up to the second of now, that second included. Steps of
// seconds after now (a clock that stepped back) are left out.
func (m *minute) read(now time.Time) Minute {
	var out Minute
	k := keyOf(now)
	for i := range m.steps {
		s := &m.steps[i]
		held := s.key.Load()
		if held == 0 || held > k || k-held >= Seconds {
			continue
		}
		age := k - held
		c := Counts{Calls: uint64(s.calls.Load()), Failed: uint64(s.failed.Load()), Slow: uint64(s.slow.Load()),
			Refused: uint64(s.refused.Load()), Longest: time.Duration(s.longest.Load())}
		for j := range s.rejected {
			c.Rejected[j] = uint64(s.rejected[j].Load())
		}
		out.PerSecond[Seconds-1-age] = c.Calls
		out.add(&c)
		if age < RecentSeconds {
			out.Recent.add(&c)
		}
	}
	return out
}
