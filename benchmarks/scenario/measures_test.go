package scenario

import (
	"math"
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
		name             string
		admitted, failed bool
		want             float64 // calls per second of the 1 s "ok" phase
	}{
		{"admitted and answered", true, false, 1},
		{"admitted and failed", true, true, 0},
		{"rejected", false, false, 0},
		{"rejected, whatever the failed flag says", false, true, 0},
	}
	for _, tt := range tests {
		rec := NewRecorder(testScript(), 100*ms)
		rec.Start(500 * ms)
		rec.End(500*ms, tt.admitted, tt.failed, ms)
		m := Measure(rec.Timeline())
		if want := []float64{tt.want, 0, 0}; !equalFloats(m.Goodput, want) {
			t.Errorf("%s: goodput %v, want %v", tt.name, m.Goodput, want)
		}
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
