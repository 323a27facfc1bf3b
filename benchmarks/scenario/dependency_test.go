package scenario

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestDependencyAnswersByPhase calls the dependency through each phase on a fake clock and
// checks that each answers as scripted: outcome and latency.
func TestDependencyAnswersByPhase(t *testing.T) {
	clock := &FakeClock{}
	s := testScript()
	dep := NewDependency(s, clock, 1, context.Background())
	ctx := context.Background()
	for clock.Now() < s.Total() {
		at := clock.Now()
		err := dep.Call(ctx)
		if took := clock.Now() - at; took != 5*time.Millisecond {
			t.Fatalf("call at %v took %v, want 5ms", at, took)
		}
		wantFail := s.PhaseAt(at) == 1
		if (err != nil) != wantFail || (err != nil && !errors.Is(err, ErrDependency)) {
			t.Fatalf("call at %v (phase %s): err %v", at, s.Phases[s.PhaseAt(at)].Name, err)
		}
	}
	if dep.Running() != 0 || dep.PeakRunning() != 1 {
		t.Errorf("running %d, peak %d; want 0 and 1", dep.Running(), dep.PeakRunning())
	}
}

// TestDependencyErrorRateAndTail checks the drawn error rate and latency tail over many calls.
func TestDependencyErrorRateAndTail(t *testing.T) {
	clock := &FakeClock{}
	s := Script{Name: "noise", Phases: []Phase{{Name: "noisy", Duration: time.Hour, ErrorRate: 0.1,
		Latency: Latency{Base: time.Millisecond, Jitter: time.Millisecond, TailProb: 0.05, Tail: time.Second}}}}
	dep := NewDependency(s, clock, 7, context.Background())
	const n = 20000
	fails, tails := 0, 0
	for range n {
		at := clock.Now()
		if dep.Call(context.Background()) != nil {
			fails++
		}
		switch took := clock.Now() - at; {
		case took == time.Second:
			tails++
		case took < time.Millisecond || took >= 2*time.Millisecond:
			t.Fatalf("latency %v outside [1ms, 2ms) and not the tail", took)
		}
	}
	if fails < n*8/100 || fails > n*12/100 {
		t.Errorf("%d failures of %d, want about 10%%", fails, n)
	}
	if tails < n*4/100 || tails > n*6/100 {
		t.Errorf("%d tail latencies of %d, want about 5%%", tails, n)
	}
}

// TestDependencyCapacity checks the capacity limit within one window and the crash: a flood
// of more than twice the capacity restarts the warm-up.
func TestDependencyCapacity(t *testing.T) {
	clock := &FakeClock{}
	s := Script{Name: "cap", Phases: []Phase{{Name: "warming", Duration: time.Second, CapacityFrom: 50, CapacityTo: 50}}}
	dep := NewDependency(s, clock, 1, context.Background())
	// 50 calls/s is 5 per 100 ms window; calls take no time, so all fall in window 0.
	var errs []error
	for range 7 {
		errs = append(errs, dep.Call(context.Background()))
	}
	for i, err := range errs {
		if want := i >= 5; (err != nil) != want || (want && !errors.Is(err, ErrOverloaded)) {
			t.Errorf("call %d: err %v", i, err)
		}
	}
	clock.Advance(capacityWindow) // a new window takes 5 again
	if err := dep.Call(context.Background()); err != nil {
		t.Errorf("first call of the next window: %v", err)
	}

	crash := Script{Name: "crash", Phases: []Phase{{Name: "warming", Duration: time.Second,
		CapacityFrom: 10, CapacityTo: 110, CrashOnOverload: true}}}
	clock = &FakeClock{}
	dep = NewDependency(crash, clock, 1, context.Background())
	clock.Advance(500 * time.Millisecond) // halfway: 60 calls/s, 6 per window
	for range 13 {                        // the 13th is more than twice 6
		_ = dep.Call(context.Background())
	}
	if dep.Crashes() != 1 {
		t.Fatalf("crashes = %d, want 1", dep.Crashes())
	}
	// 100 ms after the crash the warm-up is 100 ms old: 20 calls/s, 2 per window (7 without
	// the crash).
	clock.Advance(capacityWindow)
	ok := 0
	for range 5 {
		if dep.Call(context.Background()) == nil {
			ok++
		}
	}
	if ok != 2 {
		t.Errorf("%d calls passed 100 ms after the crash, want 2", ok)
	}
}

// TestDependencyStops checks that a hung call ends when its context or the run is done.
func TestDependencyStops(t *testing.T) {
	s := Script{Name: "hang", Phases: []Phase{{Name: "hung", Duration: time.Second, Latency: Latency{Base: time.Hour}}}}
	stop, end := context.WithCancel(context.Background())
	end()
	dep := NewDependency(s, NewRealClock(), 1, stop)
	if err := dep.Call(context.Background()); !errors.Is(err, context.Canceled) {
		t.Errorf("call after the run ended: %v, want context.Canceled", err)
	}
	dep = NewDependency(s, NewRealClock(), 1, context.Background())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := dep.Call(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("call with a canceled context: %v", err)
	}
}
