package libs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/halfopen/breaker/benchmarks/scenario"
)

// TestMain removes sentinel-golang's log directory after the run.
func TestMain(m *testing.M) {
	code := m.Run()
	CleanupSentinel()
	os.Exit(code)
}

// TestGuardsSeeRefusalsAsTheirUsersWould makes 200 calls that the dependency refuses through
// each guard. Every caller whose call was admitted gets the refusal, hint and all; a guard
// that was refused nothing gets no refusal. The libraries that count a refusal against the
// dependency hold calls back before the 200th; Kratos' middleware marks a 429 a success, so
// kratos-sre admits every call. The calls take no time and nothing sleeps: the libraries'
// own clocks see 200 calls within one window.
func TestGuardsSeeRefusalsAsTheirUsersWould(t *testing.T) {
	tests := []struct {
		give scenario.Library
		// wantHeld: whether the guard rejects at least one call of the 200; unchecked for
		// hystrix, whose counts reach its circuit through a goroutine of its own, later.
		wantHeld, checkHeld bool
	}{
		{Breaker(Rule, false), true, true},
		{Breaker(Rule, true), true, true},
		{Recommended(Rule), true, true},
		{Gobreaker(Rule), true, true},
		{Sentinel(Rule), true, true},
		{Failsafe(Rule), true, true},
		{Hystrix(Rule), true, false},
		{GoZero(Rule), true, true},
		{KratosSRE(Rule), false, true},
	}
	refuse := func(context.Context) error { return &scenario.Refusal{RetryAfter: time.Second} }
	for i, tt := range tests {
		t.Run(tt.give.Name, func(t *testing.T) {
			g := tt.give.New(fmt.Sprintf("refusals/%d/%d", i, time.Now().UnixNano()), func(scenario.State) {})
			defer g.Close()
			rejected := 0
			for n := range 200 {
				admitted, err := g.Call(context.Background(), refuse)
				hint, refused := scenario.RetryAfterOf(err)
				switch {
				case !admitted:
					rejected++
					if refused || err == nil {
						t.Fatalf("call %d rejected with %v, want the guard's own error", n, err)
					}
				case !errors.Is(err, scenario.ErrRefused) || hint != time.Second:
					t.Fatalf("call %d: the caller got %v (hint %v), want the refusal with its 1s hint", n, err, hint)
				}
			}
			if tt.checkHeld && (rejected > 0) != tt.wantHeld {
				t.Errorf("%d of 200 calls rejected; want calls held back: %v", rejected, tt.wantHeld)
			}
		})
	}
}
