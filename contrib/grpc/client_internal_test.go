package breakergrpc

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakertest"
)

// exitGate is a slot whose OnExit waits until the test opens it.
type exitGate struct {
	entered chan struct{}
	open    chan struct{}
}

func (g exitGate) OnEntry(*breaker.Entry) error { return nil }
func (g exitGate) OnExit(*breaker.Entry) {
	close(g.entered)
	<-g.open
}

// Given a stream whose end is being counted on one goroutine (gRPC's, through OnFinish), then
// its end seen on another (the caller's) returns only once the breakers have counted it: a
// caller who calls again finds the breaker tripped by the call it just saw fail.
func TestStreamEndWaitsUntilCounted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := exitGate{entered: make(chan struct{}), open: make(chan struct{})}
		m := breaker.NewManager(breaker.WithClock(breakertest.NewClock()), breaker.WithSlots(gate))
		require.NoError(t, m.LoadRules([]breaker.Rule{{Resource: "chat", Strategy: breaker.ErrorCount,
			Threshold: 1, RetryTimeout: time.Minute}}))
		e, err := m.Enter("chat")
		require.NoError(t, err)
		ctx := context.Background()
		c := &streamCall{e: e, ctx: ctx, callCtx: ctx, cancel: func() {}, o: newOptions(nil),
			counted: make(chan struct{})}

		failure := errors.New("stream broke")
		go c.finish(failure) // gRPC's goroutine: it ends the call and waits at the gate
		<-gate.entered
		callerDone := make(chan struct{})
		go func() {
			c.finish(failure) // the caller's: it sees the same end
			close(callerDone)
		}()
		synctest.Wait()
		select {
		case <-callerDone:
			t.Fatal("the caller saw the stream end before the breakers counted it")
		default:
		}

		close(gate.open)
		<-callerDone
		_, err = m.Enter("chat")
		assert.ErrorIs(t, err, breaker.ErrOpen, "the caller's next call finds the breaker tripped")
	})
}
