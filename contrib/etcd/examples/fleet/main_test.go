package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// The example stops everything it starts: etcd's server and clients leave no goroutine behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Given two instances watching one key, when the operator lowers the rule's threshold in etcd,
// then both load the new rule and the same three failed calls now trip their breakers; when
// the operator writes a broken value, both refuse it and keep the rule; when the operator
// forces ledger open with one put, both reject its calls, and after the release both pass them.
func TestRunReachesEveryInstance(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(&out))
	t.Log("\n" + out.String())

	want := `etcd      started on loopback, one member
operator  put /config/payments/breakers: threshold 5
instance-a loaded at start: payments ErrorCount >= 5, retry 30s
instance-b loaded at start: payments ErrorCount >= 5, retry 30s
instance-a 3 failed calls to payments: CLOSED
instance-b 3 failed calls to payments: CLOSED
operator  put /config/payments/breakers: threshold 3
instance-a loaded: payments ErrorCount >= 3, retry 30s
instance-b loaded: payments ErrorCount >= 3, retry 30s
instance-a 3 failed calls to payments: OPEN
instance-b 3 failed calls to payments: OPEN
operator  put /config/payments/breakers: broken JSON
instance-a refused it (unexpected end of JSON input (at line 1, column 84, byte offset 83)); keeps payments ErrorCount >= 3, retry 30s
instance-b refused it (unexpected end of JSON input (at line 1, column 84, byte offset 83)); keeps payments ErrorCount >= 3, retry 30s
operator  put /config/payments/breakers: ledger forced open
instance-a loaded: ledger force open; a call to ledger rejected: breaker: call to "ledger" blocked: breaker: resource forced open
instance-b loaded: ledger force open; a call to ledger rejected: breaker: call to "ledger" blocked: breaker: resource forced open
operator  put /config/payments/breakers: ledger released
instance-a loaded: ledger force auto; a call to ledger passed
instance-b loaded: ledger force auto; a call to ledger passed
shutdown  watchers stopped, clients closed, etcd closed
`
	assert.Equal(t, want, out.String())
	assert.Equal(t, 2, strings.Count(out.String(), "loaded: payments ErrorCount >= 3"), "both instances saw the change")
}
