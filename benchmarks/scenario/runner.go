package scenario

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// Run is one library facing one scenario at a fixed call rate: an open-loop load generator
// (calls start on schedule whether or not earlier ones returned, as requests from many
// clients do), a simulated dependency and a recorder.
type Run struct {
	Script Script
	Rate   float64 // calls per second offered; 0 takes the script's (Script.OfferedRate)
	Seed   uint64  // seeds the dependency's draws
	Clock  Clock
	// Spawn starts a call; nil means a new goroutine per call. The tests pass a function that
	// runs the call at once, so the whole run is one goroutine on a fake clock.
	Spawn func(func())
	// Grace is how long the run waits after its last call started for callers to return
	// before it ends every dependency wait (0: 1s).
	Grace time.Duration
}

// Execute drives guard through the script and returns what happened.
func (r Run) Execute(guard Guard, rec *Recorder) Timeline {
	stop, endAll := context.WithCancel(context.Background())
	defer endAll()
	dep := NewDependency(r.Script, r.Clock, r.Seed, stop)
	spawn := r.Spawn
	if spawn == nil {
		spawn = func(f func()) { go f() }
	}

	var wg sync.WaitGroup
	rate := r.Rate
	if rate <= 0 {
		rate = r.Script.OfferedRate()
	}
	interval := time.Duration(float64(time.Second) / rate)
	total := r.Script.Total()
	for at := time.Duration(0); at < total; at += interval {
		if wait := at - r.Clock.Now(); wait > 0 {
			_ = r.Clock.Sleep(context.Background(), wait)
		}
		wg.Add(1)
		spawn(func() {
			defer wg.Done()
			r.call(guard, dep, rec, at)
		})
	}

	grace := r.Grace
	if grace <= 0 {
		grace = time.Second
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-afterOn(r.Clock, grace):
		endAll()
		<-done
	}
	return rec.Timeline()
}

// afterOn is time.After on the run's clock. On a fake clock every call has already returned,
// so the channel is never needed.
func afterOn(c Clock, d time.Duration) <-chan struct{} {
	ch := make(chan struct{})
	if _, fake := c.(*FakeClock); fake {
		return ch
	}
	go func() { _ = c.Sleep(context.Background(), d); close(ch) }()
	return ch
}

// Bits of a call's handshake between its caller and its dependency call, which may run on
// different goroutines (hystrix runs the work on its own and returns at its timeout).
const (
	depStarted int32 = 1 << iota
	depEnded
	depRefused // the dependency refused the call (set with depEnded)
	callerReturned
)

// call makes the call offered at offset at and records it. A dependency call still running
// after its caller returned is an orphan: a goroutine the library left behind.
func (r Run) call(guard Guard, dep *Dependency, rec *Recorder, at time.Duration) {
	rec.Start(at)
	begin := r.Clock.Now()
	var st atomic.Int32
	// The caller sets no deadline of its own: each guard applies the common timeout, with its
	// library's own mechanism where it has one.
	admitted, err := guard.Call(context.Background(), func(ctx context.Context) error {
		if old := st.Or(depStarted); old&callerReturned != 0 {
			rec.Orphan(true)
		}
		err := dep.Call(ctx)
		ended := depEnded
		if errors.Is(err, ErrRefused) {
			ended |= depRefused
		}
		if old := st.Or(ended); old&callerReturned != 0 {
			rec.Orphan(false)
		}
		return err
	})
	waited := r.Clock.Now() - begin
	old := st.Or(callerReturned)
	rec.End(at, outcomeOf(admitted, err, old&depRefused != 0), waited)
	if old&depStarted != 0 && old&depEnded == 0 {
		rec.Orphan(true) // after End, so the caller and its orphan are not counted together
	}
}

// outcomeOf is how a call ended for the recorder: whether the library admitted it, the error
// its caller got, and whether the dependency refused it. A refusal is counted by what the
// dependency answered, not by the error the library handed back, which may wrap it or not.
func outcomeOf(admitted bool, err error, refused bool) Outcome {
	switch {
	case !admitted:
		return Rejected
	case err == nil:
		return Succeeded
	case refused:
		return Refused
	}
	return Failed
}
