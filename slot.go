package breaker

// Slot is a step of the chain every call goes through. The built-in breaker check runs first;
// the slots given to WithSlots run after it, in order.
//
// The breaker check is the chain's first slot, built in: on a call's entry it asks each breaker
// of the call's resource through its door, TryPass, and the call passes only if every breaker
// lets it through; a breaker whose retry time has come lets it through as its probe to be, and
// the call takes its probes once no breaker rejected it. On the call's exit it has each breaker
// that let the call through count its outcome, through OnRequestComplete. Nothing else admits
// or counts a call.
type Slot interface {
	// OnEntry checks the call. A non-nil error blocks it: the later slots do not run, the
	// slots before get OnExit at once, and the caller gets a *BlockError whose Cause is the
	// error.
	OnEntry(e *Entry) error
	// OnExit runs when the call exits, for every slot whose OnEntry passed, in reverse order.
	OnExit(e *Entry)
}

// enterBreakers is the breaker slot's entry for the call of t: each of the breakers of its
// resource, in rule order, lets it through or not (TryPass), and t holds the rejection, if any;
// the call then takes the probes it is due (Ticket.takeProbes). It is small enough to inline
// (TestFastPathsInline holds it), so that the slot costs the call no frame of its own.
func (t *Ticket) enterBreakers(breakers []*circuit) {
	for _, b := range breakers {
		b.TryPass(t)
	}
}

// exitBreakers is the breaker slot's exit for the call of t, which has ended: each breaker that
// let it through counts its outcome (OnRequestComplete), in rule order. It is small enough to
// inline too.
func (t *Ticket) exitBreakers() {
	for i := range t.n {
		t.exiting = uint8(i)
		t.grantBreaker(i).OnRequestComplete(t)
	}
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
