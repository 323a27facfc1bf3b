package breakerdebug

import (
	"math"
	"time"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakerview"
)

// Recorder is a call observer that keeps each resource's last minute of calls for the
// status page: pass r.Option() to breaker.NewManager, and r to Handler with WithRecorder. It
// counts each second's calls, those rejected by each cause, those that failed, those the
// dependency refused and those that were slow, and the longest response time, as breakerview
// does for every surface, at the time the Manager reports each call: it reads no clock of its
// own.
//
// Its memory is bounded: it keeps the names within its limits (RecorderLimits: 1,000 names by
// default, each about 4 KB of counters, none longer than 1 KiB, 128 KiB of them in all), and
// counts the calls of any other name under breakerview.Overflow. OnCall takes no lock and
// allocates nothing for a name it knows or cannot keep. Make one with NewRecorder; the zero
// value is not usable. A Recorder is safe for concurrent use and starts no goroutines.
type Recorder struct {
	calls *breakerview.Calls[struct{}]
}

// RecorderOption configures a Recorder.
type RecorderOption interface {
	apply(*breakerview.Limits)
}

type recorderOptionFunc func(*breakerview.Limits)

func (f recorderOptionFunc) apply(l *breakerview.Limits) { f(l) }

// RecorderLimits sets the names a Recorder keeps apart (breakerview.DefaultLimits for the
// fields below 1); the calls of the others count under breakerview.Overflow.
func RecorderLimits(l breakerview.Limits) RecorderOption {
	return recorderOptionFunc(func(to *breakerview.Limits) { *to = l })
}

// NewRecorder returns a Recorder with no calls counted.
func NewRecorder(opts ...RecorderOption) *Recorder {
	var l breakerview.Limits
	for _, o := range opts {
		o.apply(&l)
	}
	return &Recorder{calls: breakerview.NewCalls(l, func(string) struct{} { return struct{}{} })}
}

// Option returns the breaker.Option that makes a Manager report its calls to r. Give it to
// breaker.NewManager, and r to Handler with WithRecorder.
func (r *Recorder) Option() breaker.Option { return breaker.WithCallObserver(r.OnCall) }

// OnCall counts c in the current second of its resource.
func (r *Recorder) OnCall(c breaker.CallInfo) { r.calls.Record(c) }

// view is the View of snap and of r's calls; of snap alone for a nil r.
func (r *Recorder) view(snap *breaker.Snapshot, since time.Time) *breakerview.View {
	var calls *breakerview.Calls[struct{}]
	if r != nil {
		calls = r.calls
	}
	return calls.View(snap, since)
}

// callStats is a resource's last minute, as the status shows it.
type callStats struct {
	Calls uint64 `json:"calls"`
	// Rejected counts the calls not let through, by cause, each cause's
	// breaker.BlockKind.String: "open", "forced_open", "concurrency_limit", ...
	Rejected map[string]uint64 `json:"rejected"`
	Ran      uint64            `json:"ran"`
	Failures uint64            `json:"failures"`
	// Refused counts the calls the dependency refused (breaker.Refused), apart from Failures.
	Refused        uint64  `json:"refused"`
	Slow           uint64  `json:"slow"`
	ErrorPercent   float64 `json:"errorPercent"`
	RefusedPercent float64 `json:"refusedPercent"`
	SlowPercent    float64 `json:"slowPercent"`
	// RTMax is the longest response time of the calls that ran, to the microsecond, as
	// time.Duration formats it; "" when none ran.
	RTMax string `json:"rtMax"`
	// PerSecond is the calls of each second of the minute, the oldest first, the current
	// second last.
	PerSecond []uint64 `json:"perSecond"`
	// Last10s is the last 10 seconds of the minute, the current one included.
	Last10s lastStats `json:"last10s"`
}

// lastStats is the calls of a resource's last seconds, and the shares of failed, refused and
// slow calls among those that ran.
type lastStats struct {
	Calls          uint64  `json:"calls"`
	Ran            uint64  `json:"ran"`
	Failures       uint64  `json:"failures"`
	Refused        uint64  `json:"refused"`
	Slow           uint64  `json:"slow"`
	ErrorPercent   float64 `json:"errorPercent"`
	RefusedPercent float64 `json:"refusedPercent"`
	SlowPercent    float64 `json:"slowPercent"`
}

// callStatsOf is the minute m as the status shows it.
func callStatsOf(m *breakerview.Minute) callStats {
	st := callStats{Calls: m.Calls, Rejected: map[string]uint64{}, Ran: m.Ran(), Failures: m.Failed, Refused: m.Refused,
		Slow: m.Slow, PerSecond: m.PerSecond[:]}
	for i, kind := range breakerview.Causes {
		st.Rejected[kind.String()] = m.Rejected[i]
	}
	if st.Ran > 0 {
		st.ErrorPercent = percentOf(st.Failures, st.Ran)
		st.RefusedPercent = percentOf(st.Refused, st.Ran)
		st.SlowPercent = percentOf(st.Slow, st.Ran)
		st.RTMax = m.Longest.Round(time.Microsecond).String()
	}
	last := &st.Last10s
	last.Calls, last.Ran, last.Failures, last.Refused, last.Slow = m.Recent.Calls, m.Recent.Ran(), m.Recent.Failed,
		m.Recent.Refused, m.Recent.Slow
	if last.Ran > 0 {
		last.ErrorPercent = percentOf(last.Failures, last.Ran)
		last.RefusedPercent = percentOf(last.Refused, last.Ran)
		last.SlowPercent = percentOf(last.Slow, last.Ran)
	}
	return st
}

// percentOf returns part/whole as a percentage rounded to one decimal.
func percentOf(part, whole uint64) float64 {
	return math.Round(float64(part)*1000/float64(whole)) / 10
}
