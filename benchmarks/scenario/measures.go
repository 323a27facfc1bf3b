package scenario

import (
	"math"
	"slices"
	"time"
)

// RecoveredShare is the share of offered calls a bucket must admit to count as normal traffic.
const RecoveredShare = 0.9

// Measures are the numbers one run yields. Durations are in the run's (scaled) time; a measure
// that does not apply to the script (no Down phase, say) is NaN.
type Measures struct {
	// SentWhileDown is the calls admitted (sent to the dependency) that started in Down phases.
	SentWhileDown float64
	// GoodPerSent is, of the calls sent while down, the share that succeeded: what a guard
	// got for each call it let into a sick dependency.
	GoodPerSent float64
	// SentBeforeTrip is the calls admitted from the start of the first Down phase until the
	// first trip after it (all of the Down phases' calls if it never tripped).
	SentBeforeTrip float64
	// Detection is the time from the first Down phase's start to the first trip after it
	// (+Inf if it never tripped).
	Detection time.Duration
	// Recovery is the time from healing to the start of the first bucket from which every
	// bucket to the end of the run admitted at least RecoveredShare of its offered calls
	// (+Inf if the last bucket did not).
	Recovery time.Duration
	// Trips and Changes count transitions to OPEN and all transitions, per phase.
	Trips, Changes []int
	// ErrorRate, P50 and P99 are the callers' view per phase: the share of calls that got an
	// error (rejected or failed), and their waiting time.
	ErrorRate []float64
	P50, P99  []time.Duration
	// Goodput is, per phase, the calls that started in it and succeeded (admitted and not
	// failed), per second of the phase, so that phases of different lengths compare; NaN for
	// a phase of no length.
	Goodput []float64
	// Sent, Failed and Refused count, per phase, the calls that started in it and that the
	// guard admitted (sent to the dependency), those of them that failed (refusals included:
	// their callers got an error) and those the dependency refused (a 429).
	Sent, Failed, Refused []int
	// PeakGoroutines is the most goroutines the calls held at once: callers waiting plus
	// dependency calls their caller had already given up on.
	PeakGoroutines int
}

// Inf stands for "never" in duration measures.
const Inf = time.Duration(math.MaxInt64)

// Measure computes the measures of a timeline.
func Measure(tl Timeline) Measures {
	n := len(tl.Script.Phases)
	m := Measures{
		SentWhileDown: math.NaN(), GoodPerSent: math.NaN(), SentBeforeTrip: math.NaN(),
		Detection: -1, Recovery: -1,
		Trips: make([]int, n), Changes: make([]int, n),
		ErrorRate: make([]float64, n), Goodput: make([]float64, n),
		Sent: make([]int, n), Failed: make([]int, n), Refused: make([]int, n),
		P50: make([]time.Duration, n), P99: make([]time.Duration, n),
		PeakGoroutines: tl.PeakGoroutines,
	}
	for i, p := range tl.Phases {
		m.ErrorRate[i] = math.NaN()
		if p.Offered > 0 {
			m.ErrorRate[i] = float64(p.Rejected+p.Failed) / float64(p.Offered)
		}
		m.P50[i], m.P99[i] = Percentile(p.Latencies, 0.50), Percentile(p.Latencies, 0.99)
		m.Goodput[i] = Goodput(p.Bucket, tl.Script.Phases[i].Duration)
		m.Sent[i], m.Failed[i], m.Refused[i] = p.Admitted, p.Failed, p.Refused
	}
	for _, t := range tl.Transitions {
		i := tl.Script.PhaseAt(t.At)
		m.Changes[i]++
		if t.To == Open {
			m.Trips[i]++
		}
	}
	if down, ok := tl.Script.DownStart(); ok {
		healed, _ := tl.Script.Healed()
		m.SentWhileDown = 0
		good := 0
		for i, p := range tl.Phases {
			if tl.Script.Phases[i].Down {
				m.SentWhileDown += float64(p.Admitted)
				good += p.Admitted - p.Failed
			}
		}
		if m.SentWhileDown > 0 {
			m.GoodPerSent = float64(good) / m.SentWhileDown
		}
		m.Detection = firstTrip(tl.Transitions, down)
		until := healed
		if m.Detection != Inf {
			until = down + m.Detection
		}
		m.SentBeforeTrip = float64(countIn(tl.AdmittedAt, down, until))
		m.Recovery = Recovery(tl.Buckets, tl.BucketSize, healed)
	}
	return m
}

// MeasureThrottler computes the measures of a throttler's timeline. A throttler has no states,
// so its trips are read from the buckets: a bucket sheds when it rejected at least half of
// the calls offered in it (SheddingBuckets). Its trip is the first shedding bucket at or after
// the start of the first Down phase; detection is the time from that start to the start of
// the bucket, and sent before trip the calls admitted in between (all of the Down phases'
// calls if no bucket sheds). Trips are the buckets in which shedding starts (a shedding bucket
// after one that did not), and changes those in which it starts or stops, each counted in the
// phase the bucket starts in. The other measures are Measure's.
func MeasureThrottler(tl Timeline) Measures {
	plain := tl
	plain.Transitions = nil // a throttler reports none; its changes come from the buckets
	m := Measure(plain)
	shed := SheddingBuckets(tl.Buckets)
	for k := range shed {
		prev := k > 0 && shed[k-1]
		if shed[k] == prev {
			continue
		}
		i := tl.Script.PhaseAt(time.Duration(k) * tl.BucketSize)
		m.Changes[i]++
		if shed[k] {
			m.Trips[i]++
		}
	}
	if down, ok := tl.Script.DownStart(); ok {
		healed, _ := tl.Script.Healed()
		m.Detection = Inf
		until := healed
		for k := int(down / tl.BucketSize); k < len(shed); k++ {
			if start := time.Duration(k) * tl.BucketSize; shed[k] && start >= down {
				m.Detection, until = start-down, start
				break
			}
		}
		m.SentBeforeTrip = float64(countIn(tl.AdmittedAt, down, until))
	}
	return m
}

// SheddingBuckets says, for each bucket, whether it rejected at least half of the calls
// offered in it; a bucket offered nothing does not shed.
func SheddingBuckets(buckets []Bucket) []bool {
	shed := make([]bool, len(buckets))
	for k, b := range buckets {
		shed[k] = b.Offered > 0 && 2*b.Rejected >= b.Offered
	}
	return shed
}

// Goodput is the calls of b that succeeded, per second of d; NaN if d is not positive.
func Goodput(b Bucket, d time.Duration) float64 {
	if d <= 0 {
		return math.NaN()
	}
	return float64(b.Succeeded()) / d.Seconds()
}

// firstTrip is the time from t to the first transition to OPEN at or after it, or Inf.
func firstTrip(ts []Transition, t time.Duration) time.Duration {
	first := Inf
	for _, tr := range ts {
		if tr.To == Open && tr.At >= t && tr.At-t < first {
			first = tr.At - t
		}
	}
	return first
}

// countIn counts the offsets in [from, to).
func countIn(ats []time.Duration, from, to time.Duration) int {
	n := 0
	for _, a := range ats {
		if a >= from && a < to {
			n++
		}
	}
	return n
}

// Recovery is the time from healed to the start of the first bucket, at or after the one
// holding healed, from which every bucket to the end admitted at least RecoveredShare of what
// was offered (a bucket offered nothing counts as normal). Inf if the last bucket fell short.
func Recovery(buckets []Bucket, size, healed time.Duration) time.Duration {
	first := int(healed / size)
	k := len(buckets) // the earliest bucket of the good run at the end
	for i := len(buckets) - 1; i >= first; i-- {
		b := buckets[i]
		if float64(b.Admitted) < RecoveredShare*float64(b.Offered) {
			break
		}
		k = i
	}
	if k == len(buckets) {
		return Inf
	}
	return max(time.Duration(k)*size-healed, 0)
}

// Percentile returns the q-quantile of ds by the nearest-rank method, 0 for none. ds is
// sorted in place.
func Percentile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	rank := int(math.Ceil(q*float64(len(ds)))) - 1
	return ds[min(max(rank, 0), len(ds)-1)]
}
