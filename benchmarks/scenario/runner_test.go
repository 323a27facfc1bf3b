package scenario

import (
	"context"
	"errors"
	"testing"
	"time"
)

// fakeGuard rejects every third call and reports a trip at the first failure and a recovery
// at the first success after it, so a run produces every kind of count.
type fakeGuard struct {
	n       int
	open    bool
	changed func(State)
}

func (g *fakeGuard) Call(ctx context.Context, fn func(context.Context) error) (bool, error) {
	g.n++
	if g.n%3 == 0 {
		return false, context.DeadlineExceeded // any error: the harness must not look at it
	}
	err := fn(ctx)
	if (err != nil) != g.open {
		g.open = err != nil
		if g.open {
			g.changed(Open)
		} else {
			g.changed(Closed)
		}
	}
	return true, err
}

func (g *fakeGuard) Close() {}

// fakeRun runs testScript at 200 calls/s through a fakeGuard on a fake clock, on one goroutine.
func fakeRun(t *testing.T) (Timeline, *FakeClock) {
	t.Helper()
	clock := &FakeClock{}
	s := testScript()
	rec := NewRecorder(s, 100*time.Millisecond)
	g := &fakeGuard{changed: func(st State) { rec.Changed(clock.Now(), st) }}
	run := Run{Script: s, Rate: 200, Seed: 3, Clock: clock,
		Spawn: func(f func()) { f() }}
	return run.Execute(g, rec), clock
}

func TestRunCountersAddUp(t *testing.T) {
	tl, _ := fakeRun(t)
	if len(tl.Buckets) != 40 {
		t.Fatalf("%d buckets, want 40", len(tl.Buckets))
	}
	var sum Bucket
	for i, b := range tl.Buckets {
		if b.Admitted+b.Rejected != b.Offered || b.Failed > b.Admitted || b.Refused > b.Failed {
			t.Errorf("bucket %d: %+v", i, b)
		}
		sum.Offered += b.Offered
		sum.Admitted += b.Admitted
		sum.Rejected += b.Rejected
		sum.Failed += b.Failed
	}
	var phases Bucket
	latencies := 0
	for i, p := range tl.Phases {
		if p.Admitted+p.Rejected != p.Offered || p.Failed > p.Admitted {
			t.Errorf("phase %d: %+v", i, p.Bucket)
		}
		phases.Offered += p.Offered
		phases.Admitted += p.Admitted
		phases.Rejected += p.Rejected
		phases.Failed += p.Failed
		latencies += len(p.Latencies)
	}
	if sum != phases {
		t.Errorf("buckets add up to %+v, phases to %+v", sum, phases)
	}
	// 4 s at 200 calls/s, a third of them rejected.
	if sum.Offered != 800 || sum.Rejected != 266 || latencies != 800 || len(tl.AdmittedAt) != sum.Admitted {
		t.Errorf("totals %+v, %d latencies, %d admitted times", sum, latencies, len(tl.AdmittedAt))
	}
	if tl.PeakGoroutines != 1 {
		t.Errorf("peak goroutines %d, want 1 on one goroutine", tl.PeakGoroutines)
	}
}

// TestRunPhasesHappenWhenScripted checks that failures start and end with the down phase,
// bucket by bucket, and that the guard's changes are stamped at the phase edges.
func TestRunPhasesHappenWhenScripted(t *testing.T) {
	tl, _ := fakeRun(t)
	for i, b := range tl.Buckets {
		down := i >= 10 && i < 30
		if down && b.Failed != b.Admitted || !down && b.Failed != 0 {
			t.Errorf("bucket %d (down %v): %+v", i, down, b)
		}
	}
	if len(tl.Transitions) != 2 {
		t.Fatalf("transitions %+v, want a trip and a recovery", tl.Transitions)
	}
	// The call at 1 s is the 201st, which the guard rejects; the next, at 1.005 s, fails 5 ms
	// later. The call at 3 s (the 601st) is admitted and succeeds 5 ms later.
	trip, back := tl.Transitions[0], tl.Transitions[1]
	if trip.To != Open || trip.At != time.Second+10*time.Millisecond {
		t.Errorf("trip %+v", trip)
	}
	if back.To != Closed || back.At != 3*time.Second+5*time.Millisecond {
		t.Errorf("recovery %+v", back)
	}
	m := Measure(tl)
	if m.Trips[1] != 1 || m.Changes[2] != 1 || m.Detection != 10*time.Millisecond || m.SentBeforeTrip != 1 {
		t.Errorf("measures %+v", m)
	}
	// Every third call is rejected, so no bucket reaches 90%: never recovered.
	if m.Recovery != Inf {
		t.Errorf("recovery %v, want never", m.Recovery)
	}
}

// TestRunGoodput: on the fake clock, the guard rejects every third call and the dependency
// fails every call while down, so goodput is the two thirds admitted outside the outage and
// nothing during it.
func TestRunGoodput(t *testing.T) {
	tl, _ := fakeRun(t)
	// Calls 1-200 start in "ok" and 601-800 in "healed": 66 of each 200 are rejected.
	if want := []float64{134, 0, 134}; !equalFloats(Measure(tl).Goodput, want) {
		t.Errorf("goodput %v, want %v calls/s", Measure(tl).Goodput, want)
	}
}

// TestRecorderOrphans checks the goroutine peak: callers waiting plus dependency calls left
// running after their caller returned.
func TestRecorderOrphans(t *testing.T) {
	rec := NewRecorder(testScript(), 100*time.Millisecond)
	rec.Start(0)
	rec.Start(0)
	rec.End(0, Failed, 0)
	rec.Orphan(true) // the first call's work goes on
	rec.Start(time.Millisecond)
	if got := rec.Timeline().PeakGoroutines; got != 3 {
		t.Errorf("peak %d, want 3 (two callers and an orphan)", got)
	}
	rec.Orphan(false)
	rec.End(0, Rejected, 0)
	rec.End(time.Millisecond, Succeeded, 0)
	rec.Start(2 * time.Millisecond)
	if got := rec.Timeline().PeakGoroutines; got != 3 {
		t.Errorf("peak %d after all returned, want it kept at 3", got)
	}
}

// opaqueGuard runs every call and hands its caller an error of its own for any failure, as a
// library that wraps or replaces errors might.
type opaqueGuard struct{}

func (opaqueGuard) Call(ctx context.Context, fn func(context.Context) error) (bool, error) {
	if fn(ctx) != nil {
		return true, errors.New("opaque: the call failed")
	}
	return true, nil
}

func (opaqueGuard) Close() {}

// TestRunCountsRefusals: the calls the dependency refuses are counted as refused, and as
// failed, by what the dependency answered, whatever error the guard handed its caller; a run
// without a rate of its own offers the script's.
func TestRunCountsRefusals(t *testing.T) {
	s := Script{Name: "refusing", Phases: []Phase{
		{Name: "quota", Duration: time.Second, Down: true, QuotaPerSecond: 50, QuotaRetryAfter: time.Second,
			Latency: Latency{Base: 5 * time.Millisecond}},
	}}
	clock := &FakeClock{}
	run := Run{Script: s, Seed: 1, Clock: clock, Spawn: func(f func()) { f() }}
	tl := run.Execute(opaqueGuard{}, NewRecorder(s, 100*time.Millisecond))
	want := Bucket{Offered: 200, Admitted: 200, Failed: 150, Refused: 150}
	if tl.Phases[0].Bucket != want {
		t.Errorf("phase %+v, want %+v", tl.Phases[0].Bucket, want)
	}
	// The first 50 calls of the second, those of its first 250 ms, are answered.
	if b := tl.Buckets[2]; b.Refused != 10 || b.Failed != 10 {
		t.Errorf("bucket at 200 ms %+v: want its last 10 calls refused", b)
	}
	if m := Measure(tl); m.Goodput[0] != 50 || m.Refused[0] != 150 || m.Sent[0] != 200 {
		t.Errorf("goodput %v, refused %v, sent %v; want 50, 150 and 200", m.Goodput, m.Refused, m.Sent)
	}
}

// TestRunOffersTheScriptsRate: a script of 10 calls a second offers one call per 100 ms
// bucket when the run leaves the rate to it, and the run's own rate when it names one.
func TestRunOffersTheScriptsRate(t *testing.T) {
	s := testScript()
	s.Rate = 10
	for _, tt := range []struct {
		give float64
		want int
	}{{0, 40}, {200, 800}} {
		clock := &FakeClock{}
		run := Run{Script: s, Rate: tt.give, Seed: 1, Clock: clock, Spawn: func(f func()) { f() }}
		tl := run.Execute(opaqueGuard{}, NewRecorder(s, 100*time.Millisecond))
		offered := 0
		for _, b := range tl.Buckets {
			offered += b.Offered
		}
		if offered != tt.want || tt.give == 0 && tl.Buckets[7].Offered != 1 {
			t.Errorf("run rate %v: %d calls offered (bucket 7: %d), want %d", tt.give, offered, tl.Buckets[7].Offered, tt.want)
		}
	}
}
