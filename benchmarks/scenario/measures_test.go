package scenario

import (
	"math"
	"slices"
	"testing"
	"time"
)

const ms = time.Millisecond

func buckets(admitted ...int) []Bucket {
	bs := make([]Bucket, len(admitted))
	for i, a := range admitted {
		bs[i] = Bucket{Offered: 10, Admitted: a, Rejected: 10 - a}
	}
	return bs
}

func TestRecovery(t *testing.T) {
	cases := []struct {
		name   string
		bs     []Bucket
		healed time.Duration
		want   time.Duration
	}{
		{"at once", buckets(0, 0, 10, 10), 200 * ms, 0},
		{"one bucket late", buckets(0, 0, 0, 9, 10), 200 * ms, 100 * ms},
		{"a dip after recovering counts", buckets(0, 0, 10, 8, 10, 10), 200 * ms, 200 * ms},
		{"never", buckets(0, 0, 10, 10, 5), 200 * ms, Inf},
		{"earlier good buckets do not count", buckets(10, 10, 10, 10), 200 * ms, 0},
		{"no traffic counts as normal", []Bucket{{}, {Offered: 10, Admitted: 9}}, 0, 0},
	}
	for _, c := range cases {
		if got := Recovery(c.bs, 100*ms, c.healed); got != c.want {
			t.Errorf("%s: Recovery = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestMeasureSynthetic computes every measure of a hand-made timeline.
func TestMeasureSynthetic(t *testing.T) {
	s := testScript() // ok 0-1s, down 1-3s, healed 3-4s
	tl := Timeline{
		Script: s, BucketSize: 100 * ms,
		Buckets: make([]Bucket, 40),
		Phases: []PhaseStats{
			{Bucket: Bucket{Offered: 4, Admitted: 4}, Latencies: []time.Duration{4 * ms, 1 * ms, 3 * ms, 2 * ms}},
			{Bucket: Bucket{Offered: 10, Admitted: 3, Rejected: 7, Failed: 3}, Latencies: []time.Duration{ms}},
			{Bucket: Bucket{Offered: 5, Admitted: 5, Failed: 1}},
		},
		// Calls admitted at 0.5 s (before the outage), at 1 s and 1.1 s (before the trip at
		// 1.2 s), at 2 s (a probe) and at 3.5 s (after healing).
		AdmittedAt: []time.Duration{500 * ms, 1000 * ms, 1100 * ms, 2000 * ms, 3500 * ms},
		Transitions: []Transition{
			{At: 200 * ms, To: Open}, // before the outage: a false trip, not the detection
			{At: 300 * ms, To: Closed},
			{At: 1200 * ms, To: Open},
			{At: 2000 * ms, To: HalfOpen},
			{At: 2010 * ms, To: Open},
			{At: 3100 * ms, To: HalfOpen},
			{At: 3110 * ms, To: Closed},
		},
		PeakGoroutines: 7,
	}
	for i := range tl.Buckets {
		tl.Buckets[i] = Bucket{Offered: 10, Admitted: 10}
	}
	tl.Buckets[30] = Bucket{Offered: 10, Admitted: 5, Rejected: 5} // the first healed bucket
	m := Measure(tl)
	if m.SentWhileDown != 3 || m.SentBeforeTrip != 2 || m.Detection != 200*ms {
		t.Errorf("sent while down %v, before trip %v, detection %v", m.SentWhileDown, m.SentBeforeTrip, m.Detection)
	}
	if m.Recovery != 100*ms {
		t.Errorf("recovery %v, want 100ms", m.Recovery)
	}
	if want := []int{1, 2, 0}; !equal(m.Trips, want) {
		t.Errorf("trips %v, want %v", m.Trips, want)
	}
	if want := []int{2, 3, 2}; !equal(m.Changes, want) {
		t.Errorf("changes %v, want %v", m.Changes, want)
	}
	if m.ErrorRate[0] != 0 || m.ErrorRate[1] != 1 || m.ErrorRate[2] != 0.2 {
		t.Errorf("error rates %v", m.ErrorRate)
	}
	if m.P50[0] != 2*ms || m.P99[0] != 4*ms || m.P50[2] != 0 {
		t.Errorf("p50 %v, p99 %v", m.P50, m.P99)
	}
	if want := []float64{4, 0, 4}; !equalFloats(m.Goodput, want) {
		t.Errorf("goodput %v, want %v", m.Goodput, want)
	}
	if m.PeakGoroutines != 7 {
		t.Errorf("peak goroutines %d", m.PeakGoroutines)
	}
	if m.GoodPerSent != 0 {
		t.Errorf("good per sent %v: every call sent while down failed", m.GoodPerSent)
	}
	tl.Phases[1].Failed, tl.Phases[2].Failed = 1, 5 // the healed phase's calls do not count
	if got := Measure(tl).GoodPerSent; got != 2.0/3 {
		t.Errorf("good per sent %v, want 2 of the 3 sent while down", got)
	}
}

// TestMeasureNeverTripped: a run whose breaker never trips sent every down call before its
// "trip", and a script without a Down phase has no outage measures.
func TestMeasureNeverTripped(t *testing.T) {
	tl := Timeline{Script: testScript(), BucketSize: 100 * ms, Buckets: buckets(make([]int, 40)...),
		Phases: make([]PhaseStats, 3), AdmittedAt: []time.Duration{1500 * ms, 2500 * ms, 3500 * ms}}
	tl.Phases[1].Admitted = 2
	m := Measure(tl)
	if m.Detection != Inf || m.SentBeforeTrip != 2 || m.SentWhileDown != 2 || m.Recovery != Inf {
		t.Errorf("%+v", m)
	}
	tl.Script = Script{Name: "calm", Phases: []Phase{{Name: "all", Duration: 4 * time.Second}}}
	tl.Phases = tl.Phases[:1]
	m = Measure(tl)
	if !math.IsNaN(m.SentWhileDown) || m.Detection >= 0 || m.Recovery >= 0 {
		t.Errorf("outage measures of a script without an outage: %+v", m)
	}
}

// TestGoodput: only calls admitted that did not fail are goodput, counted per second of the
// phase.
func TestGoodput(t *testing.T) {
	tests := []struct {
		name string
		give Bucket
		dur  time.Duration
		want float64
	}{
		{"every call succeeded", Bucket{Offered: 200, Admitted: 200}, time.Second, 200},
		{"failed calls are not goodput", Bucket{Offered: 200, Admitted: 200, Failed: 150}, time.Second, 50},
		{"rejected calls are not goodput", Bucket{Offered: 200, Admitted: 20, Rejected: 180}, time.Second, 20},
		{"per second of a longer phase", Bucket{Offered: 500, Admitted: 100, Rejected: 400, Failed: 40}, 2500 * ms, 24},
		{"per second of a shorter phase", Bucket{Offered: 100, Admitted: 60, Rejected: 40, Failed: 30}, 500 * ms, 60},
		{"nothing succeeded", Bucket{Offered: 400, Admitted: 10, Rejected: 390, Failed: 10}, 2 * time.Second, 0},
		{"no calls", Bucket{}, time.Second, 0},
	}
	for _, tt := range tests {
		if got := Goodput(tt.give, tt.dur); got != tt.want {
			t.Errorf("%s: Goodput(%+v, %v) = %v, want %v", tt.name, tt.give, tt.dur, got, tt.want)
		}
	}
	if got := Goodput(Bucket{Offered: 1, Admitted: 1}, 0); !math.IsNaN(got) {
		t.Errorf("goodput of a phase of no length = %v, want NaN", got)
	}
}

// TestMeasureGoodputPerPhase: given a timeline with known admitted, failed and rejected counts
// per phase, goodput is each phase's successes per second of that phase, the last down phase
// lengthened as the repetitions lengthen it.
func TestMeasureGoodputPerPhase(t *testing.T) {
	s := testScript().HealLater(500 * ms) // ok 0-1s, down 1-3.5s, healed 3.5-4.5s
	tl := Timeline{
		Script: s, BucketSize: 100 * ms, Buckets: make([]Bucket, 45),
		Phases: []PhaseStats{
			{Bucket: Bucket{Offered: 200, Admitted: 150, Rejected: 50, Failed: 10}},
			{Bucket: Bucket{Offered: 500, Admitted: 100, Rejected: 400, Failed: 40}},
			{Bucket: Bucket{Offered: 200, Admitted: 200}},
		},
	}
	m := Measure(tl)
	if want := []float64{140, 24, 200}; !equalFloats(m.Goodput, want) {
		t.Errorf("goodput %v, want %v", m.Goodput, want)
	}
}

// TestRecorderGoodput records single calls and checks that neither a call that failed nor one
// the library rejected counts as goodput.
func TestRecorderGoodput(t *testing.T) {
	tests := []struct {
		name string
		give Outcome
		want float64 // calls per second of the 1 s "ok" phase
	}{
		{"admitted and answered", Succeeded, 1},
		{"admitted and failed", Failed, 0},
		{"admitted and refused by the dependency", Refused, 0},
		{"rejected", Rejected, 0},
	}
	for _, tt := range tests {
		rec := NewRecorder(testScript(), 100*ms)
		rec.Start(500 * ms)
		rec.End(500*ms, tt.give, ms)
		m := Measure(rec.Timeline())
		if want := []float64{tt.want, 0, 0}; !equalFloats(m.Goodput, want) {
			t.Errorf("%s: goodput %v, want %v", tt.name, m.Goodput, want)
		}
	}
}

// TestRecorderCountsRefusalsApart: a call the dependency refused is sent and failed, as any
// failure is to its caller, and counted as refused too; a plain failure is not.
func TestRecorderCountsRefusalsApart(t *testing.T) {
	rec := NewRecorder(testScript(), 100*ms)
	for _, o := range []Outcome{Succeeded, Refused, Refused, Failed, Rejected} {
		rec.Start(1500 * ms)
		rec.End(1500*ms, o, ms)
	}
	tl := rec.Timeline()
	want := Bucket{Offered: 5, Admitted: 4, Rejected: 1, Failed: 3, Refused: 2}
	if tl.Buckets[15] != want || tl.Phases[1].Bucket != want {
		t.Errorf("bucket %+v, phase %+v; want %+v", tl.Buckets[15], tl.Phases[1].Bucket, want)
	}
	m := Measure(tl)
	if !equal(m.Sent, []int{0, 4, 0}) || !equal(m.Failed, []int{0, 3, 0}) || !equal(m.Refused, []int{0, 2, 0}) {
		t.Errorf("sent %v, failed %v, refused %v; want 4, 3 and 2 in the down phase", m.Sent, m.Failed, m.Refused)
	}
}

func TestPercentile(t *testing.T) {
	ds := make([]time.Duration, 100)
	for i := range ds {
		ds[i] = time.Duration(100-i) * ms // reversed: Percentile sorts
	}
	if p := Percentile(ds, 0.5); p != 50*ms {
		t.Errorf("p50 %v", p)
	}
	if p := Percentile(ds, 0.99); p != 99*ms {
		t.Errorf("p99 %v", p)
	}
	if Percentile(nil, 0.5) != 0 {
		t.Error("percentile of nothing")
	}
}

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func equalFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// shedding returns 40 buckets of 20 calls offered, all admitted except those of rejected,
// which maps a bucket to the calls rejected in it.
func shedding(rejected map[int]int) []Bucket {
	bs := make([]Bucket, 40)
	for k := range bs {
		r := rejected[k]
		bs[k] = Bucket{Offered: 20, Admitted: 20 - r, Rejected: r}
	}
	return bs
}

func TestSheddingBuckets(t *testing.T) {
	got := SheddingBuckets([]Bucket{
		{Offered: 20, Admitted: 10, Rejected: 10}, // exactly half sheds
		{Offered: 20, Admitted: 11, Rejected: 9},  // less than half does not
		{Offered: 20, Rejected: 20},
		{}, // nothing offered, nothing shed
		{Offered: 3, Admitted: 1, Rejected: 2},
	})
	if want := []bool{true, false, true, false, true}; !slices.Equal(got, want) {
		t.Errorf("SheddingBuckets = %v, want %v", got, want)
	}
}

// TestMeasureThrottler computes a throttler's measures from a hand-made timeline: its trips
// are the buckets where it starts shedding half of the calls, its detection the first such
// bucket after the outage began, whatever transitions the timeline holds.
func TestMeasureThrottler(t *testing.T) {
	s := testScript() // ok 0-1s, down 1-3s, healed 3-4s
	tl := Timeline{
		Script: s, BucketSize: 100 * ms,
		Buckets: shedding(map[int]int{
			2: 10, // sheds at 0.2 s, before the outage: a false trip, not the detection
			// The outage: a few rejections, then shedding from 1.2 s, a bucket that dips
			// under half at 2 s, shedding again to the end of the outage.
			10: 5, 11: 5, 12: 10, 13: 15, 14: 20, 15: 20, 16: 20, 17: 20, 18: 20, 19: 20,
			20: 9, 21: 12, 22: 20, 23: 20, 24: 20, 25: 20, 26: 20, 27: 20, 28: 20, 29: 20,
			30: 4, // healed: 16 of 20 admitted, under 90%; every bucket after admits all
		}),
		Phases: []PhaseStats{
			{Bucket: Bucket{Offered: 200, Admitted: 190, Rejected: 10}},
			{Bucket: Bucket{Offered: 400, Admitted: 40, Rejected: 330, Failed: 40}},
			{Bucket: Bucket{Offered: 200, Admitted: 196, Rejected: 4}},
		},
		// Admitted at 0.5 s (before the outage), four times before the bucket of 1.2 s, and
		// at 1.25 s, in it.
		AdmittedAt: []time.Duration{500 * ms, 1000 * ms, 1050 * ms, 1100 * ms, 1150 * ms, 1250 * ms},
		// A throttler reports no transitions; one here must change nothing.
		Transitions: []Transition{{At: 1500 * ms, To: Open}},
	}
	m := MeasureThrottler(tl)
	if m.Detection != 200*ms || m.SentBeforeTrip != 4 || m.SentWhileDown != 40 {
		t.Errorf("detection %v, sent before trip %v, sent while down %v; want 200ms, 4, 40", m.Detection, m.SentBeforeTrip, m.SentWhileDown)
	}
	if m.Recovery != 100*ms {
		t.Errorf("recovery %v, want 100ms", m.Recovery)
	}
	// Shedding starts at buckets 2, 12 and 21; it stops at 3, 20 and 30.
	if want := []int{1, 2, 0}; !equal(m.Trips, want) {
		t.Errorf("trips %v, want %v", m.Trips, want)
	}
	if want := []int{2, 3, 1}; !equal(m.Changes, want) {
		t.Errorf("changes %v, want %v", m.Changes, want)
	}
	if want := []float64{190, 0, 196}; !equalFloats(m.Goodput, want) {
		t.Errorf("goodput %v, want %v", m.Goodput, want)
	}
	if got := (Library{Throttler: true}).Measure(tl); got.Detection != m.Detection || !equal(got.Trips, m.Trips) {
		t.Errorf("Library.Measure of a throttler: detection %v, trips %v", got.Detection, got.Trips)
	}
	if got := (Library{}).Measure(tl); got.Detection != 500*ms {
		t.Errorf("Library.Measure of a breaker: detection %v, want 500ms (its transition)", got.Detection)
	}
}

// TestMeasureThrottlerEdges: shedding that began before the outage trips at the outage's
// first bucket, with nothing sent before it; a throttler that never sheds half never trips,
// and sent every down call before its "trip"; a script without an outage has no outage
// measures, but still counts its shedding.
func TestMeasureThrottlerEdges(t *testing.T) {
	tl := Timeline{Script: testScript(), BucketSize: 100 * ms,
		Buckets: shedding(map[int]int{9: 10, 10: 20, 11: 20}),
		Phases:  make([]PhaseStats, 3), AdmittedAt: []time.Duration{950 * ms, 1200 * ms}}
	m := MeasureThrottler(tl)
	if m.Detection != 0 || m.SentBeforeTrip != 0 {
		t.Errorf("shedding since before the outage: detection %v, sent before trip %v; want 0, 0", m.Detection, m.SentBeforeTrip)
	}
	if want := []int{1, 0, 0}; !equal(m.Trips, want) {
		t.Errorf("trips %v, want %v: shedding that goes on is one trip", m.Trips, want)
	}
	if want := []int{1, 1, 0}; !equal(m.Changes, want) {
		t.Errorf("changes %v, want %v", m.Changes, want)
	}

	tl.Buckets = shedding(map[int]int{10: 9, 20: 5})
	tl.AdmittedAt = []time.Duration{500 * ms, 1500 * ms, 2500 * ms, 3500 * ms}
	tl.Phases[1].Admitted = 2
	m = MeasureThrottler(tl)
	if m.Detection != Inf || m.SentBeforeTrip != 2 || m.SentWhileDown != 2 || m.Recovery != 0 {
		t.Errorf("never shed half: %+v", m)
	}
	if !equal(m.Trips, []int{0, 0, 0}) || !equal(m.Changes, []int{0, 0, 0}) {
		t.Errorf("never shed half: trips %v, changes %v", m.Trips, m.Changes)
	}

	tl.Script = Script{Name: "calm", Phases: []Phase{{Name: "all", Duration: 4 * time.Second}}}
	tl.Phases = tl.Phases[:1]
	tl.Buckets = shedding(map[int]int{5: 10})
	m = MeasureThrottler(tl)
	if !math.IsNaN(m.SentWhileDown) || !math.IsNaN(m.SentBeforeTrip) || m.Detection >= 0 || m.Recovery >= 0 {
		t.Errorf("outage measures of a script without an outage: %+v", m)
	}
	if !equal(m.Trips, []int{1}) || !equal(m.Changes, []int{2}) {
		t.Errorf("calm script: trips %v, changes %v; want [1], [2]", m.Trips, m.Changes)
	}
}
