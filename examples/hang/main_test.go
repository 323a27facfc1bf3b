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

// Given a dependency that hangs, when the example runs on a fake clock, then the timeouts turn
// the hang into failures, the breaker trips on the third, the forced resource rejects even
// after the dependency is fixed, and the reset brings the calls back.
func TestRunTimeline(t *testing.T) {
	clk := breakertest.NewClock()
	var out bytes.Buffer
	started := time.Now()
	require.NoError(t, run(&out, clk, clk.Advance))
	t.Log("\n" + out.String())
	assert.Less(t, time.Since(started), 10*time.Second, "each hanging call ends at its 50ms timeout")

	want := []string{
		"  0.0s     call: ok",
		"  0.0s     call: ok",
		"  0.0s     call: ok",
		"  1.0s the dependency hangs",
		"  1.0s     call: failed: timed out after 50ms",
		"  1.0s     call: failed: timed out after 50ms",
		"  1.0s   ▸ CLOSED → OPEN: ThresholdExceeded",
		"  1.0s     call: failed: timed out after 50ms",
		"  1.0s     call: rejected: breaker open",
		"  1.0s     call: rejected: breaker open",
		"  5.0s an operator forces the resource open",
		"  5.0s     call: rejected: forced open",
		"  5.0s     call: rejected: forced open",
		" 10.0s the dependency is fixed; the resource is still forced open",
		" 10.0s     call: rejected: forced open",
		" 10.0s     call: rejected: forced open",
		" 15.0s the operator resets the breaker and releases the force",
		" 15.0s   ▸ OPEN → CLOSED: Reset",
		" 15.0s     call: ok",
		" 15.0s     call: ok",
		" 15.0s     call: ok",
		"",
		"final state: CLOSED",
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	assert.Equal(t, want, lines[1:])
}
