package scenario

import (
	"testing"
	"time"
)

func testScript() Script {
	return Script{Name: "test", Phases: []Phase{
		{Name: "ok", Duration: time.Second, Latency: Latency{Base: 5 * time.Millisecond}},
		{Name: "down", Duration: 2 * time.Second, Down: true, ErrorRate: 1, Latency: Latency{Base: 5 * time.Millisecond}},
		{Name: "healed", Duration: time.Second, Latency: Latency{Base: 5 * time.Millisecond}},
	}}
}

func TestPhaseAtFollowsTheScript(t *testing.T) {
	s := testScript()
	cases := []struct {
		at   time.Duration
		want int
	}{
		{-time.Millisecond, 0}, {0, 0}, {999 * time.Millisecond, 0},
		{time.Second, 1}, {2999 * time.Millisecond, 1},
		{3 * time.Second, 2}, {4 * time.Second, 2}, {time.Hour, 2},
	}
	for _, c := range cases {
		if got := s.PhaseAt(c.at); got != c.want {
			t.Errorf("PhaseAt(%v) = %d, want %d", c.at, got, c.want)
		}
	}
	if s.Total() != 4*time.Second || s.Start(1) != time.Second || s.Start(3) != 4*time.Second {
		t.Errorf("Total %v, Start(1) %v, Start(3) %v", s.Total(), s.Start(1), s.Start(3))
	}
	if d, ok := s.DownStart(); !ok || d != time.Second {
		t.Errorf("DownStart = %v, %v", d, ok)
	}
	if h, ok := s.Healed(); !ok || h != 3*time.Second {
		t.Errorf("Healed = %v, %v", h, ok)
	}
}

func TestScriptsAreValid(t *testing.T) {
	var all time.Duration
	names := map[string]bool{}
	for _, s := range Scripts() {
		if err := s.Validate(100 * time.Millisecond); err != nil {
			t.Error(err)
		}
		if s.Total() > 30*time.Second {
			t.Errorf("%s lasts %v: the whole set must run in minutes", s.Name, s.Total())
		}
		if names[s.Name] {
			t.Errorf("two scripts named %s: -only and the plots need each name once", s.Name)
		}
		names[s.Name] = true
		all += s.Total()
	}
	if all > 2*time.Minute {
		t.Errorf("the scripts last %v together: a repetition must stay within two minutes", all)
	}
	bad := Script{Name: "bad", Phases: []Phase{{Name: "odd", Duration: 150 * time.Millisecond}}}
	if bad.Validate(100*time.Millisecond) == nil {
		t.Error("a phase that is not a whole number of buckets passed Validate")
	}
	if (Script{Name: "empty"}).Validate(100*time.Millisecond) == nil {
		t.Error("a script without phases passed Validate")
	}
	hintAlone := Script{Name: "hint", Phases: []Phase{{Name: "refusing", Duration: time.Second, QuotaRetryAfter: time.Second}}}
	if hintAlone.Validate(100*time.Millisecond) == nil {
		t.Error("a retry hint for refusals without a quota passed Validate")
	}
	backwards := Script{Name: "backwards", Rate: -1, Phases: []Phase{{Name: "all", Duration: time.Second}}}
	if backwards.Validate(100*time.Millisecond) == nil {
		t.Error("a negative rate passed Validate")
	}
}

// TestOfferedRate: a script offers DefaultRate unless it names a rate of its own.
func TestOfferedRate(t *testing.T) {
	if got := testScript().OfferedRate(); got != DefaultRate {
		t.Errorf("a script without a rate offers %v, want %v", got, DefaultRate)
	}
	if got := (Script{Name: "quiet", Rate: 10}).OfferedRate(); got != 10 {
		t.Errorf("a script of 10 calls/s offers %v", got)
	}
}

func TestHealLater(t *testing.T) {
	s := testScript()
	later := s.HealLater(300 * time.Millisecond)
	if h, _ := later.Healed(); h != 3300*time.Millisecond || later.Total() != 4300*time.Millisecond {
		t.Errorf("healed %v, total %v", h, later.Total())
	}
	if s.Phases[1].Duration != 2*time.Second {
		t.Error("HealLater changed the original script")
	}
	calm := Script{Name: "calm", Phases: []Phase{{Name: "all", Duration: time.Second}}}
	if calm.HealLater(time.Second).Total() != time.Second {
		t.Error("HealLater lengthened a script without a Down phase")
	}
}
