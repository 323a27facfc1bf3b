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

// runFake runs the quickstart on a fake clock, which the steps advance instead of sleeping.
func runFake(t *testing.T) string {
	t.Helper()
	clk := breakertest.NewClock()
	var out bytes.Buffer
	require.NoError(t, run(&out, clk, clk.Advance))
	return out.String()
}

// Given an outage of the fake downstream, when the quickstart drives traffic through it, then
// the breaker trips, fails one probe, recovers, and ends CLOSED.
func TestRunShowsTripAndRecovery(t *testing.T) {
	out := runFake(t)
	t.Log("\n" + out)

	// The transitions, in this order, each at the step the schedule puts it.
	tests := []string{
		" 400ms  ▸ CLOSED → OPEN: FastTrip (error ratio 1.00 of the newest buckets)\n",
		" 900ms  ▸ OPEN → HALF_OPEN: RetryTimeoutElapsed\n",
		" 900ms  ▸ HALF_OPEN → OPEN: ProbeFailed\n",
		"1400ms  ▸ OPEN → HALF_OPEN: RetryTimeoutElapsed\n",
		"1400ms  ▸ HALF_OPEN → CLOSED: ProbeSucceeded\n",
	}
	rest := out
	for _, want := range tests {
		i := strings.Index(rest, want)
		require.GreaterOrEqual(t, i, 0, "missing, or out of order: %q", want)
		rest = rest[i+len(want):]
	}
	assert.NotContains(t, rest, "▸", "no transition after the recovery")
	assert.True(t, strings.HasSuffix(out, "\nfinal state: CLOSED\n"), "the last line gives the final state")
}

// Given the breaker is OPEN, then the calls of a step are rejected, not sent and failed.
func TestRunRejectsWhileOpen(t *testing.T) {
	var rejected, failedWhileOpen int
	for _, row := range parseSteps(t, runFake(t)) {
		if row.state != "OPEN" {
			continue
		}
		rejected += row.rejected
		failedWhileOpen += row.failed
	}
	// Every call of the 10 steps from 400ms to 1300ms, but the call that tripped it at 400ms
	// (its newest two buckets were all failures) and the probe at 900ms.
	assert.Equal(t, 98, rejected)
	// The call that tripped it and the failed probe.
	assert.Equal(t, 2, failedWhileOpen)
}

// The fake clock makes the output the same on every run.
func TestRunIsDeterministic(t *testing.T) {
	assert.Equal(t, runFake(t), runFake(t))
}

type stepRow struct {
	passed, failed, rejected int
	state                    string
}

// parseSteps parses the per-step rows of the timeline.
func parseSteps(t *testing.T, out string) []stepRow {
	t.Helper()
	var rows []stepRow
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) != 6 || !strings.HasSuffix(f[0], "ms") || f[1] == "▸" {
			continue // the header, a transition or the summary
		}
		n := make([]int, 3)
		for i := range n {
			v, err := strconv.Atoi(f[2+i])
			require.NoError(t, err, "row %q", line)
			n[i] = v
		}
		rows = append(rows, stepRow{passed: n[0], failed: n[1], rejected: n[2], state: f[5]})
	}
	require.Len(t, rows, 20, "one row a step")
	return rows
}
