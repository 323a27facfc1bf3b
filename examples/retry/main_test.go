package main

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/halfopen/breaker/breakertest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// runFake runs the example on a fake clock, which each wait advances instead of sleeping.
func runFake(t *testing.T) (tally, string) {
	t.Helper()
	clk := breakertest.NewClock()
	var out bytes.Buffer
	got, err := run(&out, clk, func(_ context.Context, d time.Duration) error {
		clk.Advance(d)
		return nil
	})
	require.NoError(t, err)
	return got, out.String()
}

// Given a ledger down for 2.5s, when one request retries its call, then the breaker trips on
// the third failure, each later attempt is either rejected without a call and followed by a
// wait to RetryAt or is the probe at RetryAt, and the probe after the recovery succeeds.
func TestRunWaitsForRetryAtAndRecovers(t *testing.T) {
	got, out := runFake(t)
	t.Log("\n" + out)

	assert.Equal(t, ` 0.00s  call 1: ledger: 503 service unavailable
 0.00s  wait 100ms
 0.10s  call 2: ledger: 503 service unavailable
 0.10s  wait 200ms
 0.30s  call 3: ledger: 503 service unavailable
 0.30s  ▸ CLOSED → OPEN: ThresholdExceeded
 0.30s  wait 250ms
 0.55s  rejected: the breaker is OPEN until 1.30s
 0.55s  wait 750ms
 1.30s  ▸ OPEN → HALF_OPEN: RetryTimeoutElapsed
 1.30s  call 4: ledger: 503 service unavailable
 1.30s  ▸ HALF_OPEN → OPEN: ProbeFailed
 1.30s  wait 250ms
 1.55s  rejected: the breaker is OPEN until 2.30s
 1.55s  wait 750ms
 2.30s  ▸ OPEN → HALF_OPEN: RetryTimeoutElapsed
 2.30s  call 5: ledger: 503 service unavailable
 2.30s  ▸ HALF_OPEN → OPEN: ProbeFailed
 2.30s  wait 250ms
 2.55s  rejected: the breaker is OPEN until 3.30s
 2.55s  wait 750ms
 3.30s  ▸ OPEN → HALF_OPEN: RetryTimeoutElapsed
 3.30s  call 6: ok
 3.30s  ▸ HALF_OPEN → CLOSED: ProbeSucceeded

result: ok after 3.30s: 9 attempts, 3 rejected without a call, 6 calls to the ledger
`, out)
	// The three calls that tripped the breaker and its three probes reached the ledger; the
	// three attempts while it was OPEN did not, and none of them was repeated at once.
	assert.Equal(t, tally{Attempts: 9, Rejected: 3, Calls: 6}, got)
}

// The fake clock makes the output the same on every run.
func TestRunIsDeterministic(t *testing.T) {
	_, first := runFake(t)
	_, second := runFake(t)
	assert.Equal(t, first, second)
}
