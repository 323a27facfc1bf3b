package breakerdebug_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/halfopen/breaker"
)

// Given calls a dependency refused (CountAs Refused), calls that failed and calls that
// succeeded, in the minute and in its last 10 seconds, then the JSON counts the refused calls
// apart from the failures, with their share of the calls that ran.
func TestRecorderCountsRefusedApart(t *testing.T) {
	m, clk, h := newRecorded(t, nil, paymentsErrors)
	refuse := func(context.Context) error { return breaker.CountAs(errDown, breaker.Refused) }
	for _, fn := range []func(context.Context) error{refuse, fail, succeed, succeed} {
		call(m, "payments", fn) // 20 s before the reading: in the minute, not in the last 10 s
	}
	clk.Advance(20 * time.Second)
	for _, fn := range []func(context.Context) error{refuse, refuse, refuse, fail, succeed} {
		call(m, "payments", fn)
	}

	got := callsOf(t, readStatus(t, h), "payments")
	assert.Equal(t, uint64(9), got.Ran)
	assert.Equal(t, uint64(4), got.Refused)
	assert.Equal(t, uint64(2), got.Failures, "a refusal is not a failure")
	assert.Equal(t, 44.4, got.RefusedPercent)
	assert.Equal(t, 22.2, got.ErrorPercent)
	assert.Equal(t, lastJSON{Calls: 5, Ran: 5, Failures: 1, Refused: 3, ErrorPercent: 20, RefusedPercent: 60},
		got.Last10s)
}
