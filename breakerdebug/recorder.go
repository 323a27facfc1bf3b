package breakerdebug

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"go.uber.org/atomic"

	"github.com/halfopen/breaker"
)

// Overflow is the name under which a Recorder counts the calls of resources whose names it
// does not keep (see RecorderLimit, RecorderLimitBytes and RecorderMaxNameLength): "_other",
// as contrib/prometheus and contrib/otel name theirs.
const Overflow = "_other"

const (
	// seconds is the length of the window a Recorder keeps, in one-second buckets.
	seconds = 60
	// lastSeconds is the length of the recent part of it the status shows apart, so that a
	// change in the last seconds is not averaged away over the minute.
	lastSeconds = 10
	// defaultLimit is how many resource names a Recorder keeps apart by default.
	defaultLimit = 1000
	// defaultLimitBytes is how many bytes of names a Recorder keeps by default: room for
	// defaultLimit names of 128 bytes, or 128 of the longest.
	defaultLimitBytes = 128 << 10
	// defaultMaxNameLength is the longest name a Recorder keeps by default, in bytes, the
	// bound the Manager puts on the names it keeps.
	defaultMaxNameLength = 1 << 10
)

// rtBounds are the upper bounds of the response-time histogram's buckets; a last bucket holds
// the calls slower than the last bound. Percentiles are read as the bound of their bucket.
var rtBounds = [...]time.Duration{
	time.Millisecond, 2 * time.Millisecond, 5 * time.Millisecond,
	10 * time.Millisecond, 20 * time.Millisecond, 50 * time.Millisecond,
	100 * time.Millisecond, 200 * time.Millisecond, 500 * time.Millisecond,
	time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 30 * time.Second, time.Minute,
}

// Recorder is a breaker.CallObserver that counts each resource's calls in one-second buckets
// over the last minute, for the status page: pass it to breaker.WithCallObserver, and to
// Handler with WithRecorder. It counts calls, calls rejected by a breaker, by ForceOpen and by
// the concurrency limit, failures and slow calls, and the response times of calls that ran in
// a histogram of fixed buckets (1ms to 1m), from which it reads p50 and p99, and the longest
// response time itself.
//
// Its memory is bounded: it keeps at most the limit of names (RecorderLimit, 1,000 by
// default), each about 13 KB of counters, and at most a limit of bytes of names (128 KiB by
// default, RecorderLimitBytes), each name charged by its length and none longer than 1 KiB
// (RecorderMaxNameLength); it counts the calls of any other name under Overflow. It keeps a
// copy of each name, never the string the name was cut from. OnCall reads the Recorder's
// clock once and, for a name it knows or one too long to keep, only adds to atomic counters;
// it does not allocate. Counts read while calls are being made may miss a call at the edge of a
// second. Make one with NewRecorder; the zero value is not usable. A Recorder is safe for
// concurrent use and starts no goroutines.
type Recorder struct {
	clock         breaker.Clock
	limit         int // names kept, Overflow aside
	limitBytes    int // bytes of the names kept
	maxNameLength int // bytes of the longest name kept
	overflow      *series
	started       time.Time // when it was made, by its clock

	names atomic.Pointer[map[string]*series] // copied on write, under mu; holds Overflow
	mu    sync.Mutex
	bytes int // of the names kept, Overflow aside; under mu
}

var _ breaker.CallObserver = (*Recorder)(nil)

// RecorderOption configures a Recorder.
type RecorderOption interface {
	apply(*Recorder)
}

type recorderOptionFunc func(*Recorder)

func (f recorderOptionFunc) apply(r *Recorder) { f(r) }

// RecorderClock sets the clock a Recorder reads the time of each call from; give it the clock
// of the Manager (breaker.WithClock), so that its minute is the one the page shows. By default
// it is the system clock.
func RecorderClock(c breaker.Clock) RecorderOption {
	return recorderOptionFunc(func(r *Recorder) {
		if c != nil {
			r.clock = c
		}
	})
}

// RecorderLimit sets how many resource names a Recorder keeps apart (1,000 by default); the
// calls of names past it are counted under Overflow. A limit below 1 is taken as 1.
func RecorderLimit(n int) RecorderOption {
	return recorderOptionFunc(func(r *Recorder) { r.limit = max(n, 1) })
}

// RecorderLimitBytes sets how many bytes of names a Recorder keeps in all, each name charged
// by its length (128 KiB by default): the calls of a name that would take it past n are
// counted under Overflow. With n <= 0 it keeps no name apart.
func RecorderLimitBytes(n int) RecorderOption {
	return recorderOptionFunc(func(r *Recorder) { r.limitBytes = max(n, 0) })
}

// RecorderMaxNameLength sets the longest name, in bytes, that a Recorder keeps (1 KiB by
// default, as the Manager bounds the names it keeps): the calls of a longer name are counted
// under Overflow, so that callers who make long names cannot make it keep them. With n <= 0 it
// keeps no name apart.
func RecorderMaxNameLength(n int) RecorderOption {
	return recorderOptionFunc(func(r *Recorder) { r.maxNameLength = max(n, 0) })
}

// NewRecorder returns a Recorder with no calls counted.
func NewRecorder(opts ...RecorderOption) *Recorder {
	r := &Recorder{clock: systemClock{}, limit: defaultLimit, limitBytes: defaultLimitBytes,
		maxNameLength: defaultMaxNameLength, overflow: &series{}}
	for _, o := range opts {
		o.apply(r)
	}
	names := map[string]*series{Overflow: r.overflow}
	r.names.Store(&names)
	r.started = r.clock.Now()
	return r
}

// recordedAMinute reports whether r has been recording, at now, for at least its minute, so
// that a name without calls in it had none for a whole minute.
func (r *Recorder) recordedAMinute(now time.Time) bool {
	return !now.Before(r.started.Add(seconds * time.Second))
}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

// Option returns the breaker.Option that makes a Manager report its calls to r. Give it to
// breaker.NewManager, and r to Handler with WithRecorder: the integrations all attach so, an
// Option for the calls and the Manager itself for the rest.
func (r *Recorder) Option() breaker.Option { return breaker.WithCallObserver(r) }

// OnCall counts c in the current second of its resource.
func (r *Recorder) OnCall(c breaker.CallInfo) {
	if c.NotCalled != nil {
		return // not a call: its context was done before it was admitted
	}
	s := r.overflow
	if len(c.Resource) <= r.maxNameLength { // a longer name is not even looked up
		if s = (*r.names.Load())[c.Resource]; s == nil {
			s = r.add(c.Resource)
		}
	}
	s.record(c, r.clock.Now().Unix())
}

// add returns the series of name, made if it is new and the limits allow, else Overflow's.
// It keeps a copy of name: the caller's string may be part of a much longer one.
func (r *Recorder) add(name string) *series {
	r.mu.Lock()
	defer r.mu.Unlock()
	old := *r.names.Load()
	if s := old[name]; s != nil {
		return s
	}
	if len(old)-1 >= r.limit || r.bytes+len(name) > r.limitBytes {
		return r.overflow
	}
	names := make(map[string]*series, len(old)+1)
	for k, v := range old {
		names[k] = v
	}
	s := &series{}
	names[strings.Clone(name)] = s
	r.bytes += len(name)
	r.names.Store(&names)
	return s
}

// series is one resource's last minute, a ring of one-second buckets.
type series struct {
	buckets [seconds]bucket
}

type bucket struct {
	mu  sync.Mutex   // held to reset the bucket for a new second
	sec atomic.Int64 // the Unix second counted; 0: never used

	calls, open, forced, concurrency, otherBlocked atomic.Uint32
	ran, failures, slow                            atomic.Uint32
	rt                                             [len(rtBounds) + 1]atomic.Uint32
	// rtMax is the longest response time of the second's calls that ran, exact where the
	// histogram only bounds it, so that the one slow call an operator hunts shows as itself.
	rtMax atomic.Int64
}

func (s *series) record(c breaker.CallInfo, sec int64) {
	b := &s.buckets[sec%seconds]
	if held := b.sec.Load(); held != sec {
		if held > sec {
			return // a minute or more older than the bucket's second: out of the window
		}
		b.reset(sec)
	}
	b.calls.Inc()
	if c.Blocked != nil {
		switch c.Blocked.Kind() {
		case breaker.BlockedByBreaker:
			b.open.Inc()
		case breaker.BlockedByForce:
			b.forced.Inc()
		case breaker.BlockedByLimit:
			b.concurrency.Inc()
		default:
			b.otherBlocked.Inc()
		}
		return
	}
	b.ran.Inc()
	if c.Outcome == breaker.Failure {
		b.failures.Inc()
	}
	if c.Slow {
		b.slow.Inc()
	}
	b.rt[rtBucket(c.RT)].Inc()
	raise(&b.rtMax, int64(c.RT)) // lock-free, as the rest of OnCall
}

// reset empties b for sec, unless another call did already, or moved it to a later second: a
// bucket only moves forward, so a call that read the clock long before it counted cannot wipe
// a newer second. The counters are zeroed before sec is stored, so a call that sees sec counts
// in the emptied bucket.
func (b *bucket) reset(sec int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.sec.Load() >= sec {
		return
	}
	for _, c := range []*atomic.Uint32{&b.calls, &b.open, &b.forced, &b.concurrency,
		&b.otherBlocked, &b.ran, &b.failures, &b.slow} {
		c.Store(0)
	}
	for i := range b.rt {
		b.rt[i].Store(0)
	}
	b.rtMax.Store(0)
	b.sec.Store(sec)
}

// rtBucket returns the index of the histogram bucket that counts rt.
func rtBucket(rt time.Duration) int {
	for i, bound := range rtBounds {
		if rt <= bound {
			return i
		}
	}
	return len(rtBounds)
}

// callStats is a resource's last minute, as the status shows it.
type callStats struct {
	Calls        uint64  `json:"calls"`
	Open         uint64  `json:"rejectedOpen"`
	Forced       uint64  `json:"rejectedForced"`
	Concurrency  uint64  `json:"rejectedConcurrency"`
	OtherBlocked uint64  `json:"rejectedOther"`
	Ran          uint64  `json:"ran"`
	Failures     uint64  `json:"failures"`
	Slow         uint64  `json:"slow"`
	ErrorPercent float64 `json:"errorPercent"`
	SlowPercent  float64 `json:"slowPercent"`
	RTP50        string  `json:"rtP50"`
	RTP99        string  `json:"rtP99"`
	// RTMax is the longest response time of the calls that ran, to the microsecond, as
	// time.Duration formats it; "" when none ran.
	RTMax string `json:"rtMax"`
	// PerSecond is the calls of each second of the minute, the oldest first, the current
	// second last.
	PerSecond []uint64 `json:"perSecond"`
	// Last10s is the last 10 seconds of the minute, the current one included.
	Last10s lastStats `json:"last10s"`
}

// lastStats is the calls of a resource's last seconds, and the shares of failed and slow calls
// among those that ran.
type lastStats struct {
	Calls        uint64  `json:"calls"`
	Ran          uint64  `json:"ran"`
	Failures     uint64  `json:"failures"`
	Slow         uint64  `json:"slow"`
	ErrorPercent float64 `json:"errorPercent"`
	SlowPercent  float64 `json:"slowPercent"`
}

// snapshot returns the last minute of s up to the second now, that second included.
func (s *series) snapshot(now int64) callStats {
	st := callStats{PerSecond: make([]uint64, seconds)}
	var rt [len(rtBounds) + 1]uint64
	var rtMax time.Duration
	for i := range s.buckets {
		b := &s.buckets[i]
		sec := b.sec.Load()
		age := now - sec
		if sec == 0 || age < 0 || age >= seconds {
			continue
		}
		calls := uint64(b.calls.Load())
		st.PerSecond[seconds-1-age] = calls
		st.Calls += calls
		st.Open += uint64(b.open.Load())
		st.Forced += uint64(b.forced.Load())
		st.Concurrency += uint64(b.concurrency.Load())
		st.OtherBlocked += uint64(b.otherBlocked.Load())
		ran := uint64(b.ran.Load())
		st.Ran += ran
		failures, slow := uint64(b.failures.Load()), uint64(b.slow.Load())
		st.Failures += failures
		st.Slow += slow
		for j := range rt {
			rt[j] += uint64(b.rt[j].Load())
		}
		rtMax = max(rtMax, time.Duration(b.rtMax.Load()))
		if age < lastSeconds {
			last := &st.Last10s
			last.Calls += calls
			last.Ran += ran
			last.Failures += failures
			last.Slow += slow
		}
	}
	if st.Ran > 0 {
		st.ErrorPercent = percentOf(st.Failures, st.Ran)
		st.SlowPercent = percentOf(st.Slow, st.Ran)
	}
	if last := &st.Last10s; last.Ran > 0 {
		last.ErrorPercent = percentOf(last.Failures, last.Ran)
		last.SlowPercent = percentOf(last.Slow, last.Ran)
	}
	st.RTP50 = percentile(&rt, 50)
	st.RTP99 = percentile(&rt, 99)
	if st.Ran > 0 {
		st.RTMax = rtMax.Round(time.Microsecond).String()
	}
	return st
}

// percentOf returns part/whole as a percentage rounded to one decimal.
func percentOf(part, whole uint64) float64 {
	return math.Round(float64(part)*1000/float64(whole)) / 10
}

// percentile returns the bound of the bucket that holds the p-th percentile of the counts in
// rt: ">1m0s" for the last bucket, "" when rt is empty.
func percentile(rt *[len(rtBounds) + 1]uint64, p uint64) string {
	var n uint64
	for _, c := range rt {
		n += c
	}
	if n == 0 {
		return ""
	}
	rank := (n*p + 99) / 100 // the ceiling of n*p/100, at least 1
	var seen uint64
	for i, c := range rt {
		seen += c
		if seen >= rank {
			if i == len(rtBounds) {
				return ">" + rtBounds[len(rtBounds)-1].String()
			}
			return rtBounds[i].String()
		}
	}
	return ""
}

// resourceCalls is a resource's name and its last minute.
type resourceCalls struct {
	name  string
	stats callStats
}

// read returns the last minute of every resource with a call in it, at now, by name.
func (r *Recorder) read(now time.Time) map[string]callStats {
	out := map[string]callStats{}
	for name, s := range *r.names.Load() {
		st := s.snapshot(now.Unix())
		if st.Calls > 0 {
			out[name] = st
		}
	}
	return out
}

// topByCalls returns the n resources of stats with the most calls, most first, then by name.
func topByCalls(stats map[string]callStats, n int) []resourceCalls {
	all := make([]resourceCalls, 0, len(stats))
	for name, st := range stats {
		all = append(all, resourceCalls{name, st})
	}
	slices.SortFunc(all, func(a, b resourceCalls) int {
		if c := cmp.Compare(b.stats.Calls, a.stats.Calls); c != 0 {
			return c
		}
		return cmp.Compare(a.name, b.name)
	})
	return all[:min(n, len(all))]
}
