package breaker

import (
	"time"
	_ "unsafe" // for go:linkname: runtime.nanotime, see monotonic

	"go.uber.org/atomic"
)

// Clock tells the time. The Manager reads it once when a call enters (only if a rule needs the
// response time, a breaker is not CLOSED, or a call observer is set) and once when it exits.
type Clock interface {
	Now() time.Time
}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

// Times inside the library are ticks: nanoseconds since the Manager's epoch, the clock's reading
// when NewManager ran, kept in an int64 that wraps, as TCP sequence numbers do. A tick is never
// compared with another directly, only through their difference (a-b > 0 for "a is later"),
// which is right while the two are less than 2^63 ns, about 292 years, apart. So no reading of
// the clock, decades or centuries from the epoch, ahead or back, stops time for a breaker: the
// times it compares are those of its recent calls, close to each other wherever they lie.

// reading pairs a reading of the clock with its tick. The Manager keeps one, at first the
// epoch, to convert ticks back to times: a tick stands for the time within 2^63 ns of it.
type reading struct {
	at   time.Time
	tick int64
}

// nearReading is how far a reading of the clock may lie from the kept one; one farther away is
// kept instead. So the tick of every recent call, and any tick within 2^62 ns (about 146
// years) of one, such as a retry time, converts back to the time it stands for.
const nearReading = 1 << 62

// timeline is what a Manager shares with its breakers: the clock they read, as ticks, and the
// sequence of their transitions. A breaker holds a pointer to it, not to the Manager, and its
// methods get the time of their call passed down.
type timeline struct {
	clock   Clock
	system  bool         // clock is the system clock
	steady  bool         // read is the runtime's monotonic clock, which never steps back
	read    func() int64 // reads the clock: a tick once mono is taken from it
	mono    int64        // what read returned at epoch
	epoch   time.Time    // ticks are nanoseconds since epoch
	near    atomic.Pointer[reading]
	seq     atomic.Uint64 // the last StateChange.Seq handed out
	stripe  func() uint8  // which stripe of the breakers' counters a call writes; nil: window.Stripe's, the processor's
	stripes int           // how many stripes a counter has, striped from the start; 0: as window.Stripes says, striped on contention
}

// startClock reads the clock for the epoch, and chooses how to read it: the runtime's
// monotonic clock where the system clock has one here, time.Since(epoch) where it has not,
// and any other clock through tickOf.
func (m *timeline) startClock() {
	m.epoch = m.clock.Now()
	switch {
	case m.system && m.epoch != m.epoch.Round(0): // Round(0) strips a monotonic reading
		m.read, m.steady = monotonic, true
		m.mono = monotonic() - int64(time.Since(m.epoch))
	case m.system:
		m.read = func() int64 { return int64(time.Since(m.epoch)) }
	default:
		m.read = func() int64 { return m.tickOf(m.clock.Now()) }
	}
	m.near.Store(&reading{at: m.epoch})
}

// now reads the clock as a tick. It is small enough to inline: a read of the system clock is
// one call, to the runtime.
func (m *timeline) now() int64 { return m.read() - m.mono }

// monotonic is the runtime's monotonic clock, the one time.Since reads. Read directly it costs
// half as many instructions as time.Since (about 50 of the 100 a read costs, two reads a
// call), which checks for a testing/synctest bubble each time. The runtime keeps it for
// packages that link to it (go.dev/issue/67401). A Manager made inside a bubble has an epoch
// without a monotonic reading, and reads time.Since, which follows the bubble's fake time.
//
//go:linkname monotonic runtime.nanotime
func monotonic() int64

// tickOf converts a reading of a clock other than the system's to a tick. Near the kept
// reading it is one subtraction; farther, where time.Time.Sub may saturate, the tick is
// computed from Unix seconds, wrapping, and the reading is kept.
func (m *timeline) tickOf(t time.Time) int64 {
	near := m.near.Load()
	if d := t.Sub(near.at); -nearReading <= d && d <= nearReading {
		return near.tick + int64(d)
	}
	tick := (t.Unix()-m.epoch.Unix())*int64(time.Second) + int64(t.Nanosecond()-m.epoch.Nanosecond())
	m.near.Store(&reading{at: t, tick: tick})
	return tick
}

// span is a stretch of the Manager's time, from one tick to another: an operator's override
// lasts one.
type span struct{ from, until int64 }

// over reports whether s has ended at now by the Manager's clock: its end has come, or the
// clock stepped back further than s lasts (or the ticks wrapped), which would hold it for
// longer than the step. A shorter step back never ends it early: it lasts until the clock
// reaches its end again, at most the step longer.
func (s span) over(now int64) bool {
	ahead, lasts := s.until-now, s.until-s.from
	return ahead <= 0 || ahead-lasts > lasts
}

// timeAt converts a tick back to a time of the Manager's clock.
func (m *timeline) timeAt(tick int64) time.Time {
	near := m.near.Load()
	return near.at.Add(time.Duration(tick - near.tick)).Round(0)
}
