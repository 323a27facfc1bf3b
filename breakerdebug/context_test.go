package breakerdebug_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakerdebug"
	"github.com/halfopen/breaker/breakertest"
	"github.com/halfopen/breaker/breakerview"
)

// doneContexts are a context canceled and one past its deadline, both done before the call.
func doneContexts(t *testing.T) map[string]context.Context {
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancelExpired := context.WithDeadline(context.Background(), time.Unix(0, 0))
	t.Cleanup(cancelExpired)
	return map[string]context.Context{"canceled": canceled, "past its deadline": expired}
}

// Given calls whose context is canceled, or past its deadline, to a resource with a rule and
// to one without, when the status is read, then the Recorder counted none of them: the
// resource shows no call in its minute, and no unruled resource is listed.
func TestRecorderDoesNotCountACallWhoseContextWasDone(t *testing.T) {
	m, _, h := newRecorded(t, nil, inventoryRule)
	called := 0
	fn := func(context.Context) error { called++; return errDown }
	for _, ctx := range doneContexts(t) {
		for range 3 {
			require.ErrorIs(t, m.Do(ctx, "inventory", fn), ctx.Err())
			require.ErrorIs(t, m.Do(ctx, "inventroy", fn), ctx.Err())
		}
	}
	require.Zero(t, called, "no call was made")

	st := readStatus(t, h)
	assert.Equal(t, callsJSON{Rejected: rejected(nil), PerSecond: make([]uint64, 60)}, callsOf(t, st, "inventory"))
	assert.Empty(t, st.Unruled, "no unruled resource had a call")
}

// Given a Recorder that keeps one name apart, when it hears calls not made because their
// context was done, then they take no name: the next call that ran keeps its own.
func TestRecorderKeepsNoNameForACallWhoseContextWasDone(t *testing.T) {
	clk := breakertest.NewClock()
	rec := breakerdebug.NewRecorder(breakerdebug.RecorderLimits(breakerview.Limits{Names: 1}))
	rec.OnCall(breaker.CallInfo{Resource: "gone", NotCalled: context.Canceled})
	rec.OnCall(breaker.CallInfo{Resource: "late", NotCalled: context.DeadlineExceeded})
	rec.OnCall(breaker.CallInfo{Resource: "kept", RT: time.Millisecond, At: clk.Now()})
	assert.Equal(t, []string{"kept=1"}, unruledCounts(t, rec, clk))
}
