package breaker

import (
	"context"
	syncatomic "sync/atomic"
	"time"

	"go.uber.org/atomic"
)

// Entry is one call that was let through. Exit it exactly once when the call ends; until then
// the breakers of its resource count it as in flight.
//
// Its methods are safe for concurrent use; Exit may run on another goroutine than Enter.
type Entry struct {
	call    call          // with the Manager and the resource's name
	timeout time.Duration // the resource's Timeout, for WithTimeout
	limit   atomic.Pointer[limit]
	err     atomic.Error
	exited  syncatomic.Bool // four bytes, where go.uber.org/atomic's takes eight
	passed  int32           // the user slots whose OnEntry passed; beside exited, so that an Entry fits 256 bytes
}

// Resource returns the name the call was made under.
func (e *Entry) Resource() string { return e.call.name }

// SetError records that the call failed with err; nil is ignored. The Manager's Classifier
// reads err at Exit (by default context.Canceled counts neither way, any other error as a
// failure); CountAs(err, o) says how this one call counts. After Exit it does nothing.
func (e *Entry) SetError(err error) {
	if err != nil && !e.exited.Load() {
		e.err.Store(err)
	}
}

// Err returns the error given to SetError, or nil.
func (e *Entry) Err() error { return e.err.Load() }

// Exit completes the call: the slots get OnExit in reverse order, then the breakers count the
// outcome. A second Exit does nothing. A call that ran past the deadline WithTimeout set failed,
// whatever its error.
func (e *Entry) Exit() { e.exit(byError) }

// exit is Exit for a call that ended as how, beside its error.
func (e *Entry) exit(how ending) {
	if e == nil || !e.exited.CompareAndSwap(false, true) {
		return
	}
	if e.passed == 0 {
		e.exitCounted(how)
		return
	}
	// The breakers count the call even if a slot's OnExit panics.
	defer e.exitCounted(how)
	e.exitSlots()
}

// exitCounted has the breakers count the call's outcome.
func (e *Entry) exitCounted(how ending) {
	if e.limit.Load().outlived() {
		how = outlived
	}
	e.call.finish(e.err.Load(), how)
}

// Run calls fn as e's call and exits e, for a call that ends when fn returns: fn gets ctx
// with the resource's Timeout (see WithTimeout), its error is recorded (SetError) and
// returned without a CountAs mark, and if fn panics the call counts as failed (ErrPanicked)
// and the panic goes on up. When ctx is canceled by the time fn returns an error, the call
// counts neither way, whatever the error (a driver may answer a cancellation with an error of
// its own). Manager.Do runs its calls the same way; the integrations run theirs through Run.
func (e *Entry) Run(ctx context.Context, fn func(context.Context) error) error {
	timed, cancel := e.WithTimeout(ctx)
	defer cancel()
	returned, how := false, byError
	defer func() {
		if !returned {
			e.SetError(ErrPanicked)
		}
		e.exit(how)
	}()
	err := fn(timed)
	returned = true
	e.SetError(err)
	how = endingOf(ctx, err)
	return uncounted(err)
}

// WithTimeout returns ctx with a deadline of the resource's Timeout (ResourceConfig) from now,
// never later than ctx's own, and its cancel function, which the caller must call when the
// call ends. For a resource without a Timeout it returns ctx itself and a cancel function
// that does nothing. When the call holds a breaker's probe, the context is marked so that a
// call to the same resource made with it passes as part of the probe (see Manager.Do). Do, Execute and handles apply the Timeout themselves; use this
// with Enter and Exit. A call that exits after this deadline (not an earlier one of ctx's)
// failed, and is slow for SlowRequestRatio whatever its MaxAllowedRT, whatever its error.
func (e *Entry) WithTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if e != nil && e.call.due {
		ctx = e.call.withProbe(ctx)
	}
	if e == nil || e.timeout <= 0 {
		return ctx, func() {}
	}
	ctx, cancel, lim := withTimeout(ctx, e.timeout)
	if lim != nil {
		e.limit.Store(lim)
	}
	return ctx, cancel
}
