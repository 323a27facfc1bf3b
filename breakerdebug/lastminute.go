package breakerdebug

import (
	"sync"
	"time"

	"go.uber.org/atomic"
)

const (
	// step is the length of a step of a LastMinute: a spike leaves it a step at a time.
	step = 10 * time.Second
	// steps is how many steps a LastMinute holds: the minute's, and the one in progress.
	steps = int64(time.Minute/step) + 1
)

// LastMinute is one resource's calls over the last minute and the longest response time of
// those that ran, in a ring of 10-second steps, as Micrometer's TimeWindowMax keeps its max: a
// step leaves the ring whole, a minute after it ends, so a call counts for between 60 and 70
// seconds and a spike ages out rather than staying for good. The exporters keep one per
// resource for their longest-call gauges and for Uncalled. The zero value is empty. It is safe
// for concurrent use; Record allocates nothing and takes a lock only for the first call of a
// step.
type LastMinute struct {
	ring [steps]minuteStep
}

type minuteStep struct {
	mu    sync.Mutex   // held to reset the step for a new one
	n     atomic.Int64 // the step counted (stepOf); 0: never used
	calls atomic.Uint64
	rtMax atomic.Int64 // nanoseconds, of the calls that ran; -1 while none ran
}

// stepOf numbers the step that holds t, from 1 at the Unix epoch.
func stepOf(t time.Time) int64 { return t.UnixNano()/int64(step) + 1 }

// Record counts a call that ended at now (CallInfo.At): one that ran (ran) with its response
// time rt, or one that was rejected.
func (m *LastMinute) Record(now time.Time, ran bool, rt time.Duration) {
	n := stepOf(now)
	s := &m.ring[n%steps]
	if held := s.n.Load(); held != n {
		if held > n {
			return // the clock read before a later step took the slot: out of the ring
		}
		s.reset(n)
	}
	s.calls.Inc()
	if ran {
		raise(&s.rtMax, int64(rt))
	}
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

// reset empties s for step n, unless another call did already or moved it to a later step: a
// slot only moves forward. The counts are emptied before n is stored, so that a call that sees
// n counts in the emptied step.
func (s *minuteStep) reset(n int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n.Load() >= n {
		return
	}
	s.calls.Store(0)
	s.rtMax.Store(-1)
	s.n.Store(n)
}

// Read returns the calls of m in the steps of the last minute up to now, and the longest
// response time of those that ran; ran is false when none ran.
func (m *LastMinute) Read(now time.Time) (calls uint64, rtMax time.Duration, ran bool) {
	n := stepOf(now)
	longest := int64(-1)
	for i := range m.ring {
		s := &m.ring[i]
		if age := n - s.n.Load(); age < 0 || age >= steps {
			continue // never used, out of the ring, or ahead of a clock that stepped back
		}
		calls += s.calls.Load()
		longest = max(longest, s.rtMax.Load())
	}
	return calls, time.Duration(max(longest, 0)), longest >= 0
}
