package scenario

import (
	"context"
	"errors"
	"slices"
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

// TestDependencyQuota: only the first QuotaPerSecond calls of each second of the run's clock
// are answered, after their latency; the later ones of that second fail at once with
// ErrQuotaExceeded, and the next second starts a new quota, even partway through the phase.
func TestDependencyQuota(t *testing.T) {
	clock := &FakeClock{}
	s := Script{Name: "quota", Phases: []Phase{
		{Name: "ok", Duration: 500 * time.Millisecond},
		{Name: "quota", Duration: 2 * time.Second, Down: true, QuotaPerSecond: 3, Latency: Latency{Base: 5 * time.Millisecond}},
	}}
	dep := NewDependency(s, clock, 1, context.Background())
	// Calls before the quota phase do not count against the second they fall in.
	for range 5 {
		if err := dep.Call(context.Background()); err != nil {
			t.Fatalf("call at %v before the quota phase: %v", clock.Now(), err)
		}
	}
	type call struct {
		at   time.Duration
		want error
		took time.Duration
	}
	// Second 0 from 500 ms: three calls answered in 5 ms, then refusals at once; second 1
	// takes three again.
	calls := []call{
		{500 * time.Millisecond, nil, 5 * time.Millisecond},
		{600 * time.Millisecond, nil, 5 * time.Millisecond},
		{700 * time.Millisecond, nil, 5 * time.Millisecond},
		{800 * time.Millisecond, ErrQuotaExceeded, 0},
		{990 * time.Millisecond, ErrQuotaExceeded, 0},
		{time.Second, nil, 5 * time.Millisecond},
		{1500 * time.Millisecond, nil, 5 * time.Millisecond},
		{1600 * time.Millisecond, nil, 5 * time.Millisecond},
		{1999 * time.Millisecond, ErrQuotaExceeded, 0},
		{2 * time.Second, nil, 5 * time.Millisecond},
	}
	for _, c := range calls {
		clock.Advance(c.at - clock.Now())
		err := dep.Call(context.Background())
		if !errors.Is(err, c.want) || (c.want == nil && err != nil) {
			t.Errorf("call at %v: err %v, want %v", c.at, err, c.want)
		}
		if took := clock.Now() - c.at; took != c.took {
			t.Errorf("call at %v took %v, want %v", c.at, took, c.took)
		}
	}
}

// TestDependencyAlternates: an alternating phase fails by its error rate in its first period
// of AlternateEvery, answers without errors in the second, and so on.
func TestDependencyAlternates(t *testing.T) {
	clock := &FakeClock{}
	s := Script{Name: "flaps", Phases: []Phase{
		{Name: "ok", Duration: time.Second},
		{Name: "flaps", Duration: time.Second, Down: true, ErrorRate: 1, AlternateEvery: 250 * time.Millisecond},
	}}
	dep := NewDependency(s, clock, 1, context.Background())
	for at := time.Duration(0); at < s.Total(); at += 10 * time.Millisecond {
		clock.Advance(at - clock.Now())
		err := dep.Call(context.Background())
		// Failing in [1, 1.25) s and [1.5, 1.75) s, answering otherwise.
		since := at - time.Second
		wantFail := at >= time.Second && since/(250*time.Millisecond)%2 == 0
		if (err != nil) != wantFail || (wantFail && !errors.Is(err, ErrDependency)) {
			t.Fatalf("call at %v: err %v, want failure %v", at, err, wantFail)
		}
	}
}

// TestDependencyRefusesBeyondQuota: with a retry hint, a call beyond the quota is refused at
// once with a *Refusal carrying the hint, which is neither the quota's 503 nor a failure; a
// call within the quota fails by the error rate with a plain failure and no hint, and still
// counts against the quota.
func TestDependencyRefusesBeyondQuota(t *testing.T) {
	clock := &FakeClock{}
	s := Script{Name: "quota-429", Phases: []Phase{{Name: "quota", Duration: 2 * time.Second, Down: true,
		QuotaPerSecond: 2, QuotaRetryAfter: time.Second, ErrorRate: 1, Latency: Latency{Base: 5 * time.Millisecond}}}}
	dep := NewDependency(s, clock, 1, context.Background())
	for _, second := range []time.Duration{0, time.Second} {
		clock.Advance(second - clock.Now())
		for i := range 4 {
			at := clock.Now()
			err := dep.Call(context.Background())
			took := clock.Now() - at
			hint, refused := RetryAfterOf(err)
			if i < 2 {
				// Within the quota: answered after its latency, with a plain failure.
				if !errors.Is(err, ErrDependency) || errors.Is(err, ErrRefused) || refused || took != 5*time.Millisecond {
					t.Errorf("call %d at %v: err %v after %v, want ErrDependency after 5ms", i, at, err, took)
				}
				continue
			}
			if !errors.Is(err, ErrRefused) || !refused || hint != time.Second || took != 0 {
				t.Errorf("call %d at %v: err %v (hint %v, %v) after %v, want a refusal at once with a 1s hint", i, at, err, hint, refused, took)
			}
			if errors.Is(err, ErrQuotaExceeded) || errors.Is(err, ErrDependency) {
				t.Errorf("call %d at %v: the refusal %v is also a 503 or a failure", i, at, err)
			}
		}
	}
}

// TestDependencyQuota429AtTheUsersNumbers drives the quota-429 script's dependency at its
// offered rate through its quota phase: each second answers its 50 calls, about 2% of them
// with a plain failure, and refuses the other 150 with Retry-After 1 s.
func TestDependencyQuota429AtTheUsersNumbers(t *testing.T) {
	i := slices.IndexFunc(Scripts(), func(s Script) bool { return s.Name == "quota-429" })
	if i < 0 {
		t.Fatal("no quota-429 script")
	}
	s := Scripts()[i]
	clock := &FakeClock{}
	dep := NewDependency(s, clock, 11, context.Background())
	quota := s.Phases[1]
	start, end := s.Start(1), s.Start(2)
	interval := time.Duration(float64(time.Second) / s.OfferedRate())
	type count struct{ answered, failed, refused int }
	perSecond := map[time.Duration]*count{}
	for at := start; at < end; at += interval {
		clock.Advance(at - clock.Now())
		c := perSecond[at.Truncate(time.Second)]
		if c == nil {
			c = &count{}
			perSecond[at.Truncate(time.Second)] = c
		}
		err := dep.Call(context.Background())
		hint, refused := RetryAfterOf(err)
		switch {
		case refused:
			c.refused++
			if hint != time.Second {
				t.Fatalf("refusal at %v with hint %v, want 1s", at, hint)
			}
		case err != nil:
			c.answered++
			c.failed++
			if !errors.Is(err, ErrDependency) {
				t.Fatalf("call at %v: %v, want a plain failure", at, err)
			}
		default:
			c.answered++
		}
	}
	if len(perSecond) != 10 || quota.Duration != 10*time.Second {
		t.Fatalf("%d seconds of quota, want 10", len(perSecond))
	}
	failed := 0
	for sec, c := range perSecond {
		if c.answered != 50 || c.refused != 150 {
			t.Errorf("second %v: %d answered, %d refused; want 50 and 150", sec, c.answered, c.refused)
		}
		failed += c.failed
	}
	if failed < 5 || failed > 20 {
		t.Errorf("%d of the 500 calls answered failed, want about 2%%", failed)
	}
}
