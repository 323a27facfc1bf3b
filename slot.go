package breaker

// Slot is a step of the chain every call goes through. The built-in breaker check runs first;
// the slots given to WithSlots run after it, in order.
type Slot interface {
	// OnEntry checks the call. A non-nil error blocks it: the later slots do not run, the
	// slots before get OnExit at once, and the caller gets a *BlockError whose Cause is the
	// error.
	OnEntry(e *Entry) error
	// OnExit runs when the call exits, for every slot whose OnEntry passed, in reverse order.
	OnExit(e *Entry)
}

// enterSlots runs the OnEntry of the Manager's slots for the call of e. When one blocks the
// call, or panics, the slots before it get OnExit and the breakers give back their probes.
func (e *Entry) enterSlots() (blocked *BlockError) {
	done := false
	defer func() {
		if !done {
			e.exitSlots()
			e.call.giveBack(e.call.m.now())
			e.call.leave()
		}
	}()
	for i, s := range e.call.m.slots {
		if err := s.OnEntry(e); err != nil {
			// The call observers hear of it before the deferred return of its probes.
			return e.call.m.reject(&e.call, &BlockError{Resource: e.call.name, Cause: err})
		}
		e.passed = int32(i + 1)
	}
	done = true
	return nil
}

// exitSlots runs OnExit of the slots whose OnEntry passed, last first.
func (e *Entry) exitSlots() {
	for i := e.passed - 1; i >= 0; i-- {
		e.call.m.slots[i].OnExit(e)
	}
	e.passed = 0
}
