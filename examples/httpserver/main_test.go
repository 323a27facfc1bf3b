package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/halfopen/breaker/breakertest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// runFake runs the example on a fake clock, which the steps advance instead of sleeping. The
// server and its traffic are real, on loopback.
func runFake(t *testing.T, linger time.Duration) string {
	t.Helper()
	clk := breakertest.NewClock()
	var out bytes.Buffer
	require.NoError(t, run(&out, clk, clk.Advance, linger))
	return out.String()
}

// Given an outage of the orders endpoint, when the example drives traffic through the
// middleware, then the breaker trips, fails one probe, recovers, and the status page agrees.
func TestRunShowsTripAndRecovery(t *testing.T) {
	out := runFake(t, 0)
	t.Log("\n" + out)

	// The transitions, in this order, each at the step the schedule puts it.
	tests := []string{
		" 500ms  ▸ CLOSED → OPEN: ThresholdExceeded (error ratio 0.50)\n",
		"1000ms  ▸ OPEN → HALF_OPEN: RetryTimeoutElapsed\n",
		"1000ms  ▸ HALF_OPEN → OPEN: ProbeFailed\n",
		"1500ms  ▸ OPEN → HALF_OPEN: RetryTimeoutElapsed\n",
		"1500ms  ▸ HALF_OPEN → CLOSED: ProbeSucceeded\n",
	}
	rest := out
	for _, want := range tests {
		i := strings.Index(rest, want)
		require.GreaterOrEqual(t, i, 0, "missing, or out of order: %q", want)
		rest = rest[i+len(want):]
	}
	assert.NotContains(t, rest, "▸", "no transition after the recovery")

	// The summary read from /debug/breakers?format=json. The window holds the 40 requests
	// from 1500ms on, but the probe: the window starts empty after it.
	assert.Contains(t, out, "\n/debug/breakers?format=json says:\n"+
		"  @server GET /orders/{id}: CLOSED after 5 transitions; in the window, 0 of 39 requests failed\n"+
		"  transitions, newest first: ProbeSucceeded, RetryTimeoutElapsed, ProbeFailed, RetryTimeoutElapsed, ThresholdExceeded\n")
}

// Given the breaker is OPEN, then the middleware answers 503 with Retry-After without calling
// the handler, but for the probe; once it recovers, every request is served.
func TestRunAnswers503WhileOpen(t *testing.T) {
	tests := []struct {
		give string // the step
		want string // its responses, Retry-After and the breaker's state after it
	}{
		{give: "400ms", want: "500 500 500 500 - CLOSED"},
		{give: "500ms", want: "500 500 500 500 - OPEN"}, // the fourth 500 trips it
		{give: "600ms", want: "503 503 503 503 1s OPEN"},
		{give: "900ms", want: "503 503 503 503 1s OPEN"},
		{give: "1000ms", want: "500 503 503 503 1s OPEN"}, // the probe fails
		{give: "1200ms", want: "503 503 503 503 1s OPEN"}, // healthy again, but still open
		{give: "1400ms", want: "503 503 503 503 1s OPEN"},
		{give: "1500ms", want: "200 200 200 200 - CLOSED"}, // the probe succeeds
		{give: "2400ms", want: "200 200 200 200 - CLOSED"},
	}
	rows := parseSteps(t, runFake(t, 0))
	for _, tt := range tests {
		assert.Equal(t, tt.want, rows[tt.give], tt.give)
	}

	var rejected int
	for at, row := range rows {
		if n := strings.Count(row, "503"); n > 0 {
			rejected += n
			assert.True(t, strings.HasSuffix(row, " 1s OPEN"), "503s only while OPEN, with Retry-After: %s %s", at, row)
		}
	}
	assert.Equal(t, 35, rejected, "every request of the 9 steps from 600ms to 1400ms, but the probe at 1000ms")
}

// The fake clock makes the output the same on every run, but for the port in the first line.
func TestRunIsDeterministic(t *testing.T) {
	_, first, _ := strings.Cut(runFake(t, 0), "\n")
	_, second, _ := strings.Cut(runFake(t, 0), "\n")
	assert.Equal(t, first, second)
}

// Given -linger, then the example keeps serving for that long after the summary.
func TestRunLingers(t *testing.T) {
	out := runFake(t, time.Minute)
	assert.Regexp(t, `\nserving for another 1m0s: open http://127\.0\.0\.1:\d+/debug/breakers\n$`, out)
}

// parseSteps returns the rows of the timeline by their step: responses, Retry-After, state.
func parseSteps(t *testing.T, out string) map[string]string {
	t.Helper()
	rows := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) != 3+requestsPerStep+1 || !strings.HasSuffix(f[0], "ms") || f[1] == "▸" {
			continue // the header, a transition or the summary
		}
		rows[f[0]] = strings.Join(f[2:], " ")
	}
	require.Len(t, rows, steps, "one row a step")
	return rows
}
