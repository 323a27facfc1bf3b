package breaker

import "time"

// Clock tells the time. The Manager reads it once when a call enters (only if a rule needs the
// response time, a breaker is not CLOSED, or a CallObserver is set) and once when it exits.
type Clock interface {
	Now() time.Time
}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

// Times are clamped to ±2^61 ns (about 73 years) around the epoch.
const (
	maxTick = 1 << 61
	minTick = -maxTick
)

// Now returns the time by the Manager's clock, the one BlockError.RetryAt and StateChange.At
// are read from: for example, to turn RetryAt into a Retry-After header.
func (m *Manager) Now() time.Time { return m.timeAt(m.now()) }

// now reads the clock as nanoseconds since the epoch, clamped so window arithmetic cannot
// overflow.
func (m *Manager) now() int64 {
	var d time.Duration
	if m.system {
		d = time.Since(m.epoch) // monotonic, and cheaper than time.Now
	} else {
		d = m.clock.Now().Sub(m.epoch)
	}
	return min(max(int64(d), minTick), maxTick)
}

// timeAt converts nanoseconds since the epoch back to a time of the manager's clock.
func (m *Manager) timeAt(t int64) time.Time {
	return m.epoch.Add(time.Duration(t)).Round(0)
}

// lazyNow reads the clock at most once, and only if asked.
type lazyNow struct {
	m    *Manager
	t    int64
	read bool
}

func (l *lazyNow) get() int64 {
	if !l.read {
		l.t, l.read = l.m.now(), true
	}
	return l.t
}
