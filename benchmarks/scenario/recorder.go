package scenario

import (
	"sync"
	"time"
)

// Bucket counts the calls that started in one fixed slice of time: offered, admitted (run by
// the library) or rejected (refused by the library without running them), and of the admitted
// those that failed (the caller got an error), of which those the dependency refused (a 429).
type Bucket struct {
	Offered, Admitted, Rejected, Failed int
	// Refused is the failed calls the dependency refused: each is in Failed too, as its caller
	// got an error, and Refused ≤ Failed.
	Refused int
}

// Outcome is how a call ended, as the recorder counts it.
type Outcome int

const (
	// Rejected: the library refused the call without running it.
	Rejected Outcome = iota
	// Succeeded: the library ran the call and its caller got no error.
	Succeeded
	// Failed: the library ran the call and its caller got an error.
	Failed
	// Refused: the library ran the call and the dependency refused it (ErrRefused); its caller
	// got an error, so it counts as failed too.
	Refused
)

// Succeeded is the calls the library admitted that did not fail: the goodput. A rejected call
// and a failed one are both errors to their caller.
func (b Bucket) Succeeded() int { return b.Admitted - b.Failed }

// PhaseStats counts the calls that started in one phase, with each caller's latency.
type PhaseStats struct {
	Bucket
	// Latencies are what callers waited, admitted or not, in the order calls ended.
	Latencies []time.Duration
}

// Transition is one state change, stamped with the harness clock.
type Transition struct {
	At time.Duration
	To State
}

// maxEvents bounds every per-call list a recorder keeps; a run at 200 calls/s for 10 s makes
// 2,000, so the bound is never met by the scripted runs.
const maxEvents = 1 << 20

// Recorder collects one run: per-bucket and per-phase counts, the admitted calls' start times,
// state changes and the peak of goroutines the callers hold. It is safe for concurrent use.
type Recorder struct {
	script     Script
	bucketSize time.Duration

	mu          sync.Mutex
	buckets     []Bucket
	phases      []PhaseStats
	admittedAt  []time.Duration
	transitions []Transition
	dropped     int

	callers, orphans int // callers waiting; dependency calls whose caller already returned
	peakGoroutines   int
}

// NewRecorder returns a recorder for script in buckets of bucketSize.
func NewRecorder(script Script, bucketSize time.Duration) *Recorder {
	n := int((script.Total() + bucketSize - 1) / bucketSize)
	return &Recorder{
		script:     script,
		bucketSize: bucketSize,
		buckets:    make([]Bucket, n),
		phases:     make([]PhaseStats, len(script.Phases)),
	}
}

// bucketAt returns the index of the bucket holding offset t, clamped to the run.
func (r *Recorder) bucketAt(t time.Duration) int {
	return min(max(int(t/r.bucketSize), 0), len(r.buckets)-1)
}

// Start records a call offered at t and that its caller now waits.
func (r *Recorder) Start(t time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.buckets[r.bucketAt(t)].Offered++
	r.phases[r.script.PhaseAt(t)].Offered++
	r.callers++
	r.notePeak()
}

// End records how the call offered at t ended and how long its caller waited.
func (r *Recorder) End(t time.Duration, o Outcome, waited time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	b, p := &r.buckets[r.bucketAt(t)], &r.phases[r.script.PhaseAt(t)]
	b.count(o)
	p.count(o)
	if o != Rejected {
		r.keep(func() { r.admittedAt = append(r.admittedAt, t) }, len(r.admittedAt))
	}
	r.keep(func() { p.Latencies = append(p.Latencies, waited) }, len(p.Latencies))
	r.callers--
}

// count adds one call that ended with o.
func (b *Bucket) count(o Outcome) {
	if o == Rejected {
		b.Rejected++
		return
	}
	b.Admitted++
	if o == Failed || o == Refused {
		b.Failed++
	}
	if o == Refused {
		b.Refused++
	}
}

// keep runs add unless the list it grows already holds maxEvents.
func (r *Recorder) keep(add func(), n int) {
	if n >= maxEvents {
		r.dropped++
		return
	}
	add()
}

// Orphan records that a dependency call outlived its caller (started=true) or that such a
// call returned (started=false): a goroutine the library left running, as hystrix's timeout
// does.
func (r *Recorder) Orphan(started bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if started {
		r.orphans++
		r.notePeak()
	} else {
		r.orphans--
	}
}

// notePeak updates the goroutine peak; r.mu is held.
func (r *Recorder) notePeak() { r.peakGoroutines = max(r.peakGoroutines, r.callers+r.orphans) }

// Changed records a state change at t.
func (r *Recorder) Changed(t time.Duration, to State) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.keep(func() { r.transitions = append(r.transitions, Transition{At: t, To: to}) }, len(r.transitions))
}

// Timeline is what a recorder holds at the end of a run.
type Timeline struct {
	Script         Script
	BucketSize     time.Duration
	Buckets        []Bucket
	Phases         []PhaseStats
	AdmittedAt     []time.Duration // start offsets of admitted calls, in the order they ended
	Transitions    []Transition    // in the order they were reported
	PeakGoroutines int             // callers waiting plus orphaned dependency calls, at most
	Dropped        int             // events beyond maxEvents (0 in any scripted run)
}

// Timeline returns a copy of what was recorded.
func (r *Recorder) Timeline() Timeline {
	r.mu.Lock()
	defer r.mu.Unlock()
	phases := make([]PhaseStats, len(r.phases))
	for i, p := range r.phases {
		phases[i] = PhaseStats{Bucket: p.Bucket, Latencies: append([]time.Duration(nil), p.Latencies...)}
	}
	return Timeline{
		Script:         r.script,
		BucketSize:     r.bucketSize,
		Buckets:        append([]Bucket(nil), r.buckets...),
		Phases:         phases,
		AdmittedAt:     append([]time.Duration(nil), r.admittedAt...),
		Transitions:    append([]Transition(nil), r.transitions...),
		PeakGoroutines: r.peakGoroutines,
		Dropped:        r.dropped,
	}
}
