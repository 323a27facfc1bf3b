package breaker

import (
	"time"

	"go.uber.org/atomic"
)

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

// Entry is one call that was let through. Exit it exactly once when the call ends; until then
// the breakers of its resource count it as in flight.
//
// Its methods are safe for concurrent use; Exit may run on another goroutine than Enter.
type Entry struct {
	m        *Manager
	resource string
	call     call
	passed   int           // the user slots whose OnEntry passed
	timeout  time.Duration // the resource's Timeout, for WithTimeout
	limit    atomic.Pointer[limit]
	err      atomic.Error
	exited   atomic.Bool
}

// call is what the breakers of a resource admitted: for each, the period that admitted the
// call, so its completion can be told from one of an earlier period.
type call struct {
	start    int64 // when the call entered; set when a breaker needs its response time
	timed    bool
	n        int
	inline   [4]admission // enough for the usual few rules of a resource, without allocating
	more     []admission
	inflight *atomic.Int64 // the resource's count of calls in flight, which this call is in
	dry      *BlockError   // what a DryRun breaker would have rejected the call with
}

type admission struct {
	c *circuit
	p *period // nil once completed
}

func (c *call) record(b *circuit, p *period) {
	if c.n < len(c.inline) {
		c.inline[c.n] = admission{b, p}
	} else {
		c.more = append(c.more, admission{b, p})
	}
	c.n++
}

func (c *call) at(i int) *admission {
	if i < len(c.inline) {
		return &c.inline[i]
	}
	return &c.more[i-len(c.inline)]
}

func (c *call) find(b *circuit) *admission {
	for i := 0; i < c.n; i++ {
		if a := c.at(i); a.c == b {
			return a
		}
	}
	return nil
}

func (c *call) forget() {
	c.n = 0
	c.more = c.more[:0]
	c.dry = nil
}

// holdsProbe reports whether the call is the probe of one of its breakers.
func (c *call) holdsProbe() bool {
	for i := 0; i < c.n; i++ {
		if p := c.at(i).p; p != nil && p.probing {
			return true
		}
	}
	return false
}

// leave takes the call out of its resource's calls in flight, once.
func (c *call) leave() {
	if c.inflight != nil {
		c.inflight.Dec()
		c.inflight = nil
	}
}

// Resource returns the name the call was made under.
func (e *Entry) Resource() string { return e.resource }

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
// outcome. A second Exit does nothing.
func (e *Entry) Exit() {
	if e == nil || !e.exited.CompareAndSwap(false, true) {
		return
	}
	if e.passed == 0 {
		e.exitCounted()
		return
	}
	// The breakers count the call even if a slot's OnExit panics.
	defer e.exitCounted()
	e.m.exitSlots(e)
}

// exitCounted has the breakers count the call's outcome.
func (e *Entry) exitCounted() {
	err := e.err.Load()
	e.m.finish(&e.call, e.resource, e.m.classify(err), retryHint(err), e.cutOff(err))
}

// admitAny is admit for the breakers res of resource, which may be nil (no rules); it tells
// the call observers of a block, and times the call for them.
func (m *Manager) admitAny(c *call, resource string, res *resource) *BlockError {
	if res == nil {
		if len(m.calls) > 0 {
			c.start, c.timed = m.now(), true
		}
		return nil
	}
	var blocked *BlockError
	if res.set == nil {
		blocked = m.admit(c, res)
	} else {
		blocked = m.admitWithSettings(c, res)
	}
	if blocked != nil && len(m.calls) > 0 {
		m.callBlocked(resource, blocked)
	}
	return blocked
}

// admit is the built-in breaker check: the call passes only if every breaker of res admits
// it. A breaker whose retry time has come takes the call as its probe only when no other
// breaker rejects it. It returns nil or the error of the rejecting breaker with the latest retry
// time, which says when the resource can admit a call again.
//
// When every breaker is CLOSED, the common case, it only records their periods.
func (m *Manager) admit(c *call, res *resource) *BlockError {
	if res.timed || len(m.calls) > 0 {
		c.start, c.timed = m.now(), true
	}
	for i, b := range res.breakers {
		p := b.cur.Load()
		if p.state != Closed {
			return m.admitNotClosed(c, res.breakers[i:])
		}
		c.record(b, p)
	}
	return nil
}

// admitNotClosed is admit from the first breaker that is not CLOSED on; c holds those before.
func (m *Manager) admitNotClosed(c *call, rest []*circuit) *BlockError {
	now := lazyNow{m: m, t: c.start, read: c.timed}
	var blocked *BlockError
	var latest int64 // the retry time of blocked
	probes := false
	for _, b := range rest {
		p, v := b.check(&now)
		switch v {
		case admitted:
			c.record(b, p)
		case probeDue:
			c.record(b, p)
			probes = true
		case rejected:
			err, at := p.blocked.Load(), p.retryAt
			if p.probing {
				err, at = b.rejection(p, now.get())
			}
			if b.dry() {
				// It lets the call through uncounted, and call observers hear what it would
				// have done.
				c.dry = err
				continue
			}
			// The latest retry time says when the resource can admit a call again.
			if blocked == nil || at-latest > 0 {
				blocked, latest = err, at
			}
		}
	}
	if blocked == nil && probes {
		blocked = m.takeProbes(c, now.get())
	}
	if blocked != nil {
		c.forget()
		if d := rest[0].owner; d != nil {
			d.touch(now.get()) // a breaker rejected the call: its resource is not idle
		}
	}
	return blocked
}

// admitWithSettings is admit for a resource with settings: ForceOpen rejects before anything
// else; then the breakers check the call (ForceClosed makes them let it through, see dry);
// then MaxConcurrency, which gives back a probe the call took.
func (m *Manager) admitWithSettings(c *call, res *resource) *BlockError {
	s := res.set
	if s.Force == ForceOpen {
		return s.forcedOpen
	}
	if blocked := m.admit(c, res); blocked != nil {
		return blocked
	}
	if n := s.inflight.Inc(); s.MaxConcurrency > 0 && n > int64(s.MaxConcurrency) {
		s.inflight.Dec()
		if c.holdsProbe() {
			m.releaseProbes(c, ProbeBlocked, m.now())
		}
		c.forget()
		return s.overLimit
	}
	c.inflight = s.inflight
	return nil
}

// takeProbes makes the call the probe of each breaker that is due. If another call won one of
// them, it gives back those it took.
func (m *Manager) takeProbes(c *call, now int64) *BlockError {
	for i := 0; i < c.n; i++ {
		a := c.at(i)
		if !a.p.awaitsProbe() {
			continue
		}
		q, ok := a.c.probe(a.p, now)
		if !ok {
			// Another call won the probe, or moved the breaker on: this one is rejected as
			// the breaker stands now.
			cur := a.c.cur.Load()
			if cur.state == Closed {
				cur = a.p
			}
			blocked, _ := a.c.rejection(cur, now)
			if a.c.dry() {
				// The breaker rejects nothing: the call passes, and it does not count it.
				c.dry = blocked
				a.p = nil
				continue
			}
			m.releaseProbes(c, ProbeBlocked, now)
			return blocked
		}
		a.p = q
	}
	return nil
}

// releaseProbes returns every probe the call holds to OPEN with its retry time unchanged.
func (m *Manager) releaseProbes(c *call, reason Reason, now int64) {
	for i := 0; i < c.n; i++ {
		if a := c.at(i); a.p != nil && a.p.probing {
			a.c.releaseProbe(a.p, reason, now)
		}
	}
}

// enterSlots runs the user slots' OnEntry. When one blocks the call, or panics, the slots
// before it get OnExit and the breakers give back their probes.
func (m *Manager) enterSlots(e *Entry) (blocked *BlockError) {
	done := false
	defer func() {
		if !done {
			m.exitSlots(e)
			m.releaseProbes(&e.call, ProbeBlocked, m.now())
			e.call.leave()
		}
	}()
	for i, s := range m.slots {
		if err := s.OnEntry(e); err != nil {
			return &BlockError{Resource: e.resource, Cause: err}
		}
		e.passed = i + 1
	}
	done = true
	return nil
}

// exitSlots runs OnExit of the slots whose OnEntry passed, last first.
func (m *Manager) exitSlots(e *Entry) {
	for i := e.passed - 1; i >= 0; i-- {
		m.slots[i].OnExit(e)
	}
	e.passed = 0
}

// finish counts the outcome of a call in every breaker that admitted it, and tells the call
// observers. cutOff says it ended at a deadline the library set.
func (m *Manager) finish(c *call, resource string, o Outcome, hint int64, cutOff bool) {
	c.leave()
	if c.n == 0 && len(m.calls) == 0 {
		return
	}
	now := m.now()
	if c.n > 0 {
		if d := c.inline[0].c.owner; d != nil {
			d.touch(now) // the call ended: its resource is not idle
		}
	}
	res := result{o: o, hint: hint, cutOff: cutOff}
	if c.timed {
		res.rt = now - c.start
	}
	for i := 0; i < c.n; i++ {
		a := c.at(i)
		a.c.complete(a.p, now, res)
	}
	if len(m.calls) > 0 {
		m.callDone(c, resource, res)
	}
}

// callDone tells the call observers of a call that ran.
func (m *Manager) callDone(c *call, resource string, res result) {
	info := CallInfo{Resource: resource, RT: time.Duration(res.rt), Outcome: res.o, DryRun: c.dry}
	for i := 0; i < c.n; i++ {
		if b := c.at(i).c; b.strategy == SlowRequestRatio && isSlow(res, b.tune.Load().maxRT) {
			info.Slow = true
		}
	}
	for _, obs := range m.calls {
		m.tellCall(obs, info)
	}
}
