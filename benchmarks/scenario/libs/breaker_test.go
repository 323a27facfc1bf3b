package libs

import (
	"errors"
	"testing"
	"time"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/benchmarks/scenario"
)

// TestCountAsTransport: the breaker guards mark a refusal as breakerhttp's transport marks a
// 429 with Retry-After (Refused, with the hint), and leave every other error a plain failure,
// the quota's 503 without a hint included.
func TestCountAsTransport(t *testing.T) {
	m := breaker.NewManager()
	tests := []struct {
		name        string
		give        error
		wantCounted bool
		wantWait    time.Duration
	}{
		{"a refusal with Retry-After 1 s", &scenario.Refusal{RetryAfter: time.Second}, true, time.Second},
		{"a refusal without a hint", &scenario.Refusal{}, true, 0},
		{"a plain failure", scenario.ErrDependency, false, 0},
		{"a 503 without a hint", scenario.ErrQuotaExceeded, false, 0},
		{"over capacity", scenario.ErrOverloaded, false, 0},
	}
	for _, tt := range tests {
		got := countAsTransport(tt.give)
		o, counted := breaker.CountedAs(got)
		if counted != tt.wantCounted || counted && o != breaker.Refused {
			t.Errorf("%s: counted as %v (%v), want Refused %v", tt.name, o, counted, tt.wantCounted)
		}
		if !counted && got != tt.give {
			t.Errorf("%s: %v changed to %v", tt.name, tt.give, got)
		}
		if wait, _ := m.RetryWait(got); wait != tt.wantWait {
			t.Errorf("%s: the breaker reads a hint of %v, want %v", tt.name, wait, tt.wantWait)
		}
		if !errors.Is(got, tt.give) {
			t.Errorf("%s: %v no longer is %v", tt.name, got, tt.give)
		}
	}
	if countAsTransport(nil) != nil {
		t.Error("a success was marked")
	}
}

// TestKratosFailed: Kratos' client middleware marks a refusal (a 429 to it) a success and the
// dependency's other errors failures.
func TestKratosFailed(t *testing.T) {
	tests := []struct {
		give error
		want bool
	}{
		{nil, false},
		{&scenario.Refusal{RetryAfter: time.Second}, false},
		{scenario.ErrDependency, true},
		{scenario.ErrQuotaExceeded, true},
		{scenario.ErrOverloaded, true},
	}
	for _, tt := range tests {
		if got := kratosFailed(tt.give); got != tt.want {
			t.Errorf("kratosFailed(%v) = %v, want %v", tt.give, got, tt.want)
		}
	}
}
