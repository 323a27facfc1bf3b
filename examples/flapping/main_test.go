package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Given a dependency that is down, then half back, then healed, the breaker trips on three
// failures in a row, backs off 1, 2, 4 and 8 seconds as its probe runs fail while the
// dependency is half back, and closes after three good probes in a row once it has healed.
func TestRunTimeline(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(&out))
	t.Log("\n" + out.String())
	want := []string{
		"  0.50s  CLOSED → OPEN: ThresholdExceeded (retry in 1s)",
		"  1.50s  OPEN → HALF_OPEN: RetryTimeoutElapsed",
		"  1.50s  HALF_OPEN → OPEN: ProbeFailed (retry in 2s)",
		"  3.50s  OPEN → HALF_OPEN: RetryTimeoutElapsed",
		"  3.75s  HALF_OPEN → OPEN: ProbeFailed (retry in 4s)",
		"  7.75s  OPEN → HALF_OPEN: RetryTimeoutElapsed",
		"  8.00s  HALF_OPEN → OPEN: ProbeFailed (retry in 8s)",
		" 16.00s  OPEN → HALF_OPEN: RetryTimeoutElapsed",
		" 16.50s  HALF_OPEN → CLOSED: ProbeSucceeded",
		"",
		"120 calls: 64 reached the dependency, 56 rejected; final state CLOSED",
	}
	assert.Equal(t, want, strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n"))
}
