package main

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/halfopen/breaker/breakertest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// runFake runs the example on a fake clock, which the steps advance instead of sleeping. The
// requests still go over loopback to the example's server.
func runFake(t *testing.T) string {
	t.Helper()
	clk := breakertest.NewClock()
	var out bytes.Buffer
	require.NoError(t, run(&out, clk, clk.Advance))
	return out.String()
}

// Given an outage of the server, when the client sends requests through it, then the breaker
// trips, fails one probe while the server is still down, recovers, and ends CLOSED.
func TestRunShowsTripAndRecovery(t *testing.T) {
	out := runFake(t)
	t.Log("\n" + out)

	// The transitions, in this order, each at the step the schedule puts it.
	tests := []string{
		" 750ms  ▸ CLOSED → OPEN: ThresholdExceeded (error ratio 0.50)\n",
		"1350ms  ▸ OPEN → HALF_OPEN: RetryTimeoutElapsed\n",
		"1350ms  ▸ HALF_OPEN → OPEN: ProbeFailed\n",
		"1950ms  ▸ OPEN → HALF_OPEN: RetryTimeoutElapsed\n",
		"1950ms  ▸ HALF_OPEN → CLOSED: ProbeSucceeded\n",
	}
	rest := out
	for _, want := range tests {
		i := strings.Index(rest, want)
		require.GreaterOrEqual(t, i, 0, "missing, or out of order: %q", want)
		rest = rest[i+len(want):]
	}
	assert.NotContains(t, rest, "▸", "no transition after the recovery")
	assert.True(t, strings.HasSuffix(out, "\nfinal state: CLOSED; the server saw 53 of 80 requests\n"),
		"the last line gives the final state and the requests sent")
}

// Given the breaker is OPEN, then the requests are rejected without reaching the server: each
// step's server count is its number of answered requests.
func TestRunRejectsWithoutNetwork(t *testing.T) {
	var rejected, sent int
	for _, row := range parseSteps(t, runFake(t)) {
		answered := 0
		for _, r := range row.results {
			switch r {
			case "open":
				rejected++
				assert.Equal(t, "OPEN", row.state, "a rejection leaves the breaker OPEN")
			case "200", "503":
				answered++
			default:
				t.Errorf("unexpected result %q", r)
			}
		}
		assert.Equal(t, answered, row.sent, "the server saw only the requests that were answered")
		sent += row.sent
	}
	// Every request of the 6 steps from 900ms to 1800ms but for the failed probe's, and the 3
	// after that probe.
	assert.Equal(t, 27, rejected)
	assert.Equal(t, 80-27, sent)
}

// The fake clock makes the output the same on every run, but for the server's port.
func TestRunIsDeterministic(t *testing.T) {
	first, second := runFake(t), runFake(t)
	_, first, _ = strings.Cut(first, "\n")
	_, second, _ = strings.Cut(second, "\n")
	assert.Equal(t, first, second)
}

type stepRow struct {
	results []string
	sent    int
	state   string
}

// parseSteps parses the per-step rows of the timeline.
func parseSteps(t *testing.T, out string) []stepRow {
	t.Helper()
	var rows []stepRow
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) != 4+requestsStep || !strings.HasSuffix(f[0], "ms") || f[1] == "▸" {
			continue // the header, a transition or the summary
		}
		sent, err := strconv.Atoi(f[2+requestsStep])
		require.NoError(t, err, "row %q", line)
		rows = append(rows, stepRow{results: f[2 : 2+requestsStep], sent: sent, state: f[3+requestsStep]})
	}
	require.Len(t, rows, steps, "one row a step")
	return rows
}
