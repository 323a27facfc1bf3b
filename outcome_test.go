package breaker_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
)

// badRequestError is a caller's mistake: it says nothing about the dependency's health.
type badRequestError struct{ msg string }

func (e *badRequestError) Error() string { return "bad request: " + e.msg }

// notFoundError is an answer the dependency gave correctly.
var errNotFound = errors.New("not found")

func classifier(err error) breaker.Outcome {
	var bad *badRequestError
	switch {
	case errors.As(err, &bad):
		return breaker.Ignore
	case errors.Is(err, errNotFound):
		return breaker.Success
	}
	return breaker.DefaultClassifier(err)
}

func classifiedHarness(t *testing.T, c breaker.Classifier, rules ...breaker.Rule) *harness {
	h := newHarness(t)
	h.m = breaker.NewManager(breaker.WithClock(h.clock), breaker.WithClassifier(c))
	h.m.AddObserver(h.events)
	require.NoError(t, h.m.LoadRules(rules))
	return h
}

// WithClassifier decides how each error counts.
func TestClassifier(t *testing.T) {
	tests := []struct {
		name     string
		give     error
		wantOpen bool // after one success and this call, with ErrorRatio 0.5 of 2 calls
	}{
		{"a bad request is ignored", &badRequestError{"no id"}, false},
		{"a wrapped bad request is ignored", fmt.Errorf("get: %w", &badRequestError{"no id"}), false},
		{"not found is a success", errNotFound, false},
		{"a deadline is a failure", context.DeadlineExceeded, true},
		{"canceled is ignored, as by default", context.Canceled, false},
		{"anything else is a failure", errDown, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := classifiedHarness(t, classifier, errorRatio(0.5, 2))
			require.NoError(t, h.m.Do(t.Context(), "svc", succeed))
			err := h.m.Do(t.Context(), "svc", func(context.Context) error { return tt.give })
			assert.Equal(t, tt.give, err, "Do returns fn's error whatever it counts as")
			assert.Equal(t, tt.wantOpen, h.state("svc", 0) == breaker.Open)
		})
	}
}

// An ignored call is not in the window at all, and a success is.
func TestClassifierIgnoreVersusSuccess(t *testing.T) {
	h := classifiedHarness(t, classifier, errorRatio(0.5, 2))
	_ = h.m.Do(t.Context(), "svc", func(context.Context) error { return &badRequestError{"x"} }) // not counted
	_ = h.m.Do(t.Context(), "svc", fail)                                                         // 1 of 1, below the minimum of 2
	assert.Equal(t, breaker.Closed, h.state("svc", 0))
	_ = h.m.Do(t.Context(), "svc", func(context.Context) error { return errNotFound }) // 1 bad of 2
	assert.Equal(t, breaker.Open, h.state("svc", 0))
}

// CountAs overrides the classifier for one call, and Do returns the error it marks.
func TestCountAs(t *testing.T) {
	tests := []struct {
		name     string
		give     error
		wantErr  error
		wantOpen bool
	}{
		{"an error counted as success", breaker.CountAs(errDown, breaker.Success), errDown, false},
		{"an error ignored", breaker.CountAs(errDown, breaker.Ignore), errDown, false},
		{"nil counted as failure", breaker.CountAs(nil, breaker.Failure), nil, true},
		{"an unknown outcome is a failure", breaker.CountAs(nil, breaker.Outcome(9)), nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assertOpensThroughDoAndEntry(t, tt.give, tt.wantErr, tt.wantOpen)
		})
	}
	// A resource without rules returns the error CountAs marks too, not the mark.
	m := breaker.NewManager()
	assert.Equal(t, errDown, m.Do(t.Context(), "no rules", func(context.Context) error {
		return breaker.CountAs(errDown, breaker.Ignore)
	}))
	assert.Equal(t, "breaker: counted as Failure", breaker.CountAs(nil, breaker.Failure).Error())
	assert.ErrorIs(t, breaker.CountAs(errDown, breaker.Success), errDown)
}

// Given a CountAs mark that callers wrapped on the way up (fmt.Errorf's %w, errors.Join, more
// than once), then it counts as marked, as errors.As would find it: an ignored bad request or a
// success does not trip a breaker that opens on one failure, and Do returns the wrapped error
// as the function did, matching what it wraps.
// CountedAs reads the mark CountAs left, through wrapping, as the call would count it.
func TestCountedAs(t *testing.T) {
	tests := []struct {
		name   string
		give   error
		want   breaker.Outcome
		wantOK bool
	}{
		{"unmarked", errDown, breaker.Success, false},
		{"nil", nil, breaker.Success, false},
		{"ignored", breaker.CountAs(errDown, breaker.Ignore), breaker.Ignore, true},
		{"wrapped success", fmt.Errorf("wrapped: %w", breaker.CountAs(errDown, breaker.Success)), breaker.Success, true},
		{"joined", errors.Join(errNotFound, breaker.CountAs(nil, breaker.Failure)), breaker.Failure, true},
		{"the outer mark of two", breaker.CountAs(breaker.CountAs(errDown, breaker.Failure), breaker.Ignore), breaker.Ignore, true},
		{"an unknown outcome is a failure", breaker.CountAs(errDown, breaker.Outcome(9)), breaker.Failure, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := breaker.CountedAs(tt.give)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.wantOK, ok)
		})
	}
}

func TestCountAsSurvivesWrapping(t *testing.T) {
	tests := []struct {
		name     string
		give     error
		wantOpen bool
	}{
		{"wrapped ignore", fmt.Errorf("wrapped: %w", breaker.CountAs(errDown, breaker.Ignore)), false},
		{"wrapped success", fmt.Errorf("wrapped: %w", breaker.CountAs(errDown, breaker.Success)), false},
		{"wrapped twice", fmt.Errorf("outer: %w", fmt.Errorf("inner: %w", breaker.CountAs(errDown, breaker.Ignore))), false},
		{"joined", errors.Join(errNotFound, breaker.CountAs(errDown, breaker.Ignore)), false},
		{"wrapped failure of nil", fmt.Errorf("wrapped: %w", breaker.CountAs(nil, breaker.Failure)), true},
		{"unmarked", fmt.Errorf("wrapped: %w", errDown), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assertOpensThroughDoAndEntry(t, tt.give, tt.give, tt.wantOpen)
		})
	}
	assert.ErrorIs(t, fmt.Errorf("wrapped: %w", breaker.CountAs(errDown, breaker.Ignore)), errDown)
}

// Given a call that fails with a wrapped mark, then reading the mark allocates nothing, and a
// call that succeeds reads none.
func TestCountAsFoundWithoutAllocating(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	m := breaker.NewManager()
	require.NoError(t, m.LoadRules([]breaker.Rule{errorCount(1e6, 1)}))
	wrapped := fmt.Errorf("wrapped: %w", breaker.CountAs(errDown, breaker.Failure))
	for _, give := range []error{nil, wrapped} {
		fn := func(context.Context) error { return give }
		assert.Zero(t, testing.AllocsPerRun(100, func() { _ = m.Do(context.Background(), "svc", fn) }), "%v", give)
	}
}

// A panicking classifier is logged and the call counts as a failure.
func TestPanickingClassifier(t *testing.T) {
	var logs bytes.Buffer
	h := newHarness(t)
	h.m = breaker.NewManager(breaker.WithClock(h.clock), breaker.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))),
		breaker.WithClassifier(func(error) breaker.Outcome { panic("classifier broke") }))
	require.NoError(t, h.m.LoadRules([]breaker.Rule{errorCount(1, 1)}))
	assert.Equal(t, errDown, h.m.Do(t.Context(), "svc", fail))
	assert.Equal(t, breaker.Open, h.state("svc", 0))
	assert.Contains(t, logs.String(), "classifier broke")
}

func TestOutcomeStrings(t *testing.T) {
	tests := []struct {
		give breaker.Outcome
		want string
	}{
		{breaker.Success, "Success"}, {breaker.Failure, "Failure"}, {breaker.Ignore, "Ignore"}, {breaker.Outcome(5), "Outcome(5)"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tt.give.String())
	}
}

// Do: fn's error is the outcome; context.Canceled counts neither way.
func TestDoOutcomes(t *testing.T) {
	tests := []struct {
		name     string
		give     error
		wantOpen bool
	}{
		{"nil is a success", nil, false},
		{"an error is a failure", errDown, true},
		{"a wrapped error is a failure", fmt.Errorf("call: %w", errDown), true},
		{"context.Canceled counts neither way", context.Canceled, false},
		{"wrapped context.Canceled counts neither way", fmt.Errorf("call: %w", context.Canceled), false},
		{"context.DeadlineExceeded is a failure", context.DeadlineExceeded, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// ErrorRatio 0.5 of at least 2 calls: one success, then the call under test.
			h := newHarness(t, errorRatio(0.5, 2))
			require.NoError(t, h.m.Do(t.Context(), "svc", func(context.Context) error { return nil }))
			err := h.m.Do(t.Context(), "svc", func(context.Context) error { return tt.give })
			assert.Equal(t, tt.give, err)
			assert.Equal(t, tt.wantOpen, h.state("svc", 0) == breaker.Open)
			if tt.give != nil && !tt.wantOpen {
				// Not counted at all: the next error makes 1 of 2 counted calls, which trips.
				assert.Equal(t, errDown, h.m.Do(t.Context(), "svc", func(context.Context) error { return errDown }))
				assert.Equal(t, breaker.Open, h.state("svc", 0))
			}
		})
	}
}

// A canceled probe counts neither way: the breaker reopens with the retry time unchanged.
func TestCanceledProbe(t *testing.T) {
	h := newHarness(t, errorCount(1, 1))
	h.completeN("svc", 1, errDown)
	h.at(5 * time.Second)
	err := h.m.Do(t.Context(), "svc", func(context.Context) error { return context.Canceled })
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, breaker.Open, h.state("svc", 0))
	assert.Equal(t, "HALF_OPEN->OPEN ProbeIgnored", h.events.transitions()[2])
	require.NoError(t, h.complete("svc", 0, nil), "the next call may probe at once")
	assert.Equal(t, breaker.Closed, h.state("svc", 0))
}

// assertOpensThroughDoAndEntry checks that a call of "svc", under an ErrorCount rule that one
// failure trips, that ends with give opens the breaker when wantOpen says so: through Do, which
// returns wantErr, and through an Entry.
func assertOpensThroughDoAndEntry(t *testing.T, give, wantErr error, wantOpen bool) {
	t.Helper()
	h := newHarness(t, errorCount(1, 1))
	err := h.m.Do(t.Context(), "svc", func(context.Context) error { return give })
	assert.Equal(t, wantErr, err)
	assert.Equal(t, wantOpen, h.state("svc", 0) == breaker.Open, "through Do")

	h = newHarness(t, errorCount(1, 1))
	e, err := h.m.Enter("svc")
	require.NoError(t, err)
	e.SetError(give)
	e.Exit()
	assert.Equal(t, wantOpen, h.state("svc", 0) == breaker.Open, "through an Entry")
}
