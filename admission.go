package breaker

import (
	"context"
	"time"

	"go.uber.org/atomic"
)

// This file is the path of every call, in the order the call runs. Do, Execute, Enter,
// handles (Handle) and the integrations (through EnterContext) all take it:
//
//  1. find the resource's breakers and settings (Manager.find, with templates in lookup);
//  2. admit: ForceOpen, then the breaker slot, the chain's first (slot.go: each breaker's door,
//     TryPass, then the probes the call is due), then MaxConcurrency;
//  3. the user's slots (enterSlots), for calls through an Entry;
//  4. run the call with the resource's Timeout, counting a panic as a failure (in do, or
//     Entry.Run);
//  5. finish: the call observers hear of the call, then the breaker slot's exit has each breaker
//     that let the call through count its outcome (OnRequestComplete).
//
// A rejection at any step is told to the call observers in one place, reject.

// Enter checks a call to resource. When the call may go ahead it returns an Entry, which the
// caller must Exit when the call ends, after SetError if it failed (Entry.Run does both).
// Otherwise it returns a nil Entry and a *BlockError.
//
// A resource with no rules, and no slots configured, passes at the cost of a lookup by name.
func (m *Manager) Enter(resource string) (*Entry, error) {
	return m.enter(context.Background(), resource, m.find(m.rules.Load(), resource))
}

// EnterContext is Enter for a call made with ctx. When ctx is already done (canceled, or past
// its deadline) the call is not made: it returns a nil Entry and ctx.Err(), and nothing counts
// it, no breaker, probe or MaxConcurrency place; call observers hear it with NotCalled set. So
// callers that pass on a deadline they have used up never trip a healthy dependency's breaker.
// The integrations enter their calls through it; Do, Execute and handles check ctx
// the same way. A call made with the context of a call to the same resource that holds its
// probe passes as part of that probe (see Do).
func (m *Manager) EnterContext(ctx context.Context, resource string) (*Entry, error) {
	if err := ctx.Err(); err != nil {
		return nil, m.notCalled(resource, err)
	}
	return m.enter(ctx, resource, m.find(m.rules.Load(), resource))
}

// notCalled tells the call observers of a call to resource that was not made because its
// context was done with err, and returns err.
func (m *Manager) notCalled(resource string, err error) error {
	for _, o := range m.calls {
		m.tellCall(o, CallInfo{Resource: resource, NotCalled: err})
	}
	return err
}

// enter is EnterContext for the breakers res (nil when the resource has none), without the
// check of ctx; Enter gives context.Background().
func (m *Manager) enter(ctx context.Context, resource string, res *resource) (*Entry, error) {
	var c call // on the stack, so a rejection allocates nothing
	c.begin(m, resource)
	if blocked := m.admit(&c, resource, res); blocked != nil {
		if blocked == forProbe {
			blocked = m.admitInProbe(&c, resource, res, ctx)
		}
		if blocked != nil {
			return nil, blocked
		}
	}
	e := &Entry{call: c, timeout: res.timeoutOf()}
	if len(m.slots) > 0 {
		if blocked := e.enterSlots(); blocked != nil {
			return nil, blocked
		}
	}
	return e, nil
}

// Do calls fn if the breakers of resource let the call through, and returns fn's error; if
// not, it returns a *BlockError without calling fn. When ctx is already done, it returns
// ctx.Err() without calling fn and counts nothing (see EnterContext).
//
// fn's error is the call's outcome, as the Manager's Classifier reads it: by default nil is a
// success, context.Canceled (the caller gave up) counts neither way, and any other error is a
// failure. fn may return CountAs(err, o), or an error that wraps it, to say how this one call
// counts; Do then returns err. Two endings count whatever fn returned: when ctx is canceled by
// the time fn returns an error, the call counts neither way; when fn returns after the
// resource's Timeout, the call failed (and is slow). If fn panics, the call counts as failed and
// the panic goes on up.
//
// A call that fn makes to the same resource of the same Manager with the context fn was given
// (a breakerretry loop, or an integration such as breakerhttp's transport, inside fn) is a call of its own
// while the breakers are CLOSED. When this call holds a breaker's probe, such a nested call
// passes as part of the probe, uncounted, and this call's outcome judges the probe; fn must pass
// its context on for the nested call to be recognised.
func (m *Manager) Do(ctx context.Context, resource string, fn func(context.Context) error) error {
	return m.do(ctx, resource, nil, fn)
}

// do is Do for the resource name, found by name, or through the handle h if it is not nil. A
// call with user slots goes through an Entry, which the slots are given; a resource without
// rules runs fn as it is when no call observer needs the call; the others keep their call on
// the stack. Do is small enough to inline, so that a call by name takes this one frame.
func (m *Manager) do(ctx context.Context, name string, h *Handle, fn func(context.Context) error) error {
	if err := ctx.Err(); err != nil {
		return m.notCalled(name, err) // before the lookup, which may make a template's breakers
	}
	var res *resource
	if h != nil {
		res = h.breakers()
	} else if rs := m.rules.Load(); !rs.hasTemplates {
		res = rs.index.get(name) // find without its frame: it is not inlined
	} else {
		res = m.find(rs, name)
	}
	if len(m.slots) > 0 {
		e, err := m.enter(ctx, name, res)
		if err != nil {
			return err
		}
		return e.Run(ctx, fn)
	}
	if res == nil && len(m.calls) == 0 {
		return uncounted(fn(ctx))
	}
	var c call
	c.begin(m, name)
	if blocked := m.admit(&c, name, res); blocked != nil {
		if blocked == forProbe {
			blocked = m.admitInProbe(&c, name, res, ctx)
		}
		if blocked != nil {
			return blocked
		}
	}
	if c.due {
		ctx = c.withProbe(ctx) // it may hold a probe: a call nested in fn passes as part of it
	}
	// The call runs here, in this frame, or in runTimed's with the resource's Timeout: its
	// outcome is counted also when fn panics (Entry.Run is the same for an Entry).
	if t := res.timeoutOf(); t > 0 {
		return c.runTimed(ctx, t, fn)
	}
	defer c.abandon()
	err := fn(ctx)
	c.finish(err, endingOf(ctx, err))
	return uncounted(err)
}

// runTimed is the end of do for a resource with a Timeout, t: fn's context gets its deadline.
// In a frame of its own, it costs the calls without a Timeout nothing (about 18 instructions
// a call when do held it).
func (c *call) runTimed(ctx context.Context, t time.Duration, fn func(context.Context) error) error {
	timed, cancel, lim := withTimeout(ctx, t)
	defer cancel()
	defer c.abandon()
	err := fn(timed)
	c.finish(err, lim.ending(ctx, err))
	return uncounted(err)
}

// abandon counts the call c as failed unless it finished: its function panicked.
func (c *call) abandon() {
	if !c.finished {
		c.finish(ErrPanicked, byError)
	}
}

// Execute is Do for a function that returns a value. When the call is blocked it returns T's
// zero value and the *BlockError. Go methods cannot have type parameters, so Execute is a
// function that takes the Manager (Default() for the package-level one). Through a Handle, a
// closure does the same: h.Do(ctx, func(ctx context.Context) error { v, err = fn(ctx); return err }).
func Execute[T any](ctx context.Context, m *Manager, resource string, fn func(context.Context) (T, error)) (T, error) {
	var out T
	err := m.Do(ctx, resource, func(ctx context.Context) error {
		var err error
		out, err = fn(ctx)
		return err
	})
	return out, err
}

// find returns the breakers and settings of a call to resource under rs, making its breakers
// and settings from templates on its first call. Without templates it is one lookup in the
// rule set's index.
func (m *Manager) find(rs *ruleSet, resource string) *resource {
	res := rs.index.get(resource)
	if rs.hasTemplates {
		return m.lookup(rs, resource, res)
	}
	return res
}

// call is a call on its way through admission: its Ticket, which its breakers read, its count
// of calls in flight and its template entry. It lives on the caller's stack (in an Entry, for
// Enter), so a call allocates nothing.
type call struct {
	Ticket
	m        *Manager
	name     string         // the resource the call is made under
	inflight *atomic.Int64  // the resource's count of calls in flight, which this call is in
	owner    *templateEntry // the entry of a resource made from templates, which the call marks used
}

// begin makes c, zero, a call of m to resource by the admission path.
func (c *call) begin(m *Manager, resource string) {
	c.m, c.name, c.issued = m, resource, true
}

// leave takes the call out of its resource's calls in flight, once.
func (c *call) leave() {
	if c.inflight != nil {
		c.inflight.Dec()
		c.inflight = nil
	}
}

// admit is the check of a call to resource, whose breakers and settings are res (nil: none), in
// the order the call meets them: an override whose end has come is set aside, ForceOpen rejects
// before anything else; then the breaker slot (slot.go: ForceClosed makes the breakers let the
// call through); then MaxConcurrency, which gives back a probe the call took. A call that a
// HALF_OPEN breaker rejected for the probe in flight is left to the caller, which holds its
// context, unreported: admit returns forProbe, and admitInProbe goes on from there. It records
// in c what the call's completion needs, and times the call when a breaker or a call observer
// needs its response time. A blocked call's record is dropped: the caller reads nothing of it
// after a rejection, once what it was given is given back.
func (m *Manager) admit(c *call, resource string, res *resource) *BlockError {
	if res == nil {
		if len(m.calls) > 0 {
			c.start, c.timed = m.now(), true // a call observer wants the RT
		}
		return nil
	}
	s := res.set
	if s != nil {
		if s.override != nil {
			s = s.at(m.now()) // an override whose end has come counts for nothing
		}
		if s != nil && s.Force == ForceOpen {
			return m.reject(c, s.forcedOpen)
		}
	}
	if res.owner != nil { // c is new: a store only where there is something to store
		c.owner = res.owner
	}
	if res.timed || len(m.calls) > 0 {
		c.start, c.timed = m.now(), true
	}
	c.enterBreakers(res.breakers)
	if c.due && c.blocked == nil {
		c.blocked = c.takeProbes()
	}
	if c.blocked != nil {
		if c.blocked.State == HalfOpen {
			return forProbe
		}
		return m.refuse(c)
	}
	if s != nil {
		return m.enterLimit(c, resource, s)
	}
	return nil
}

// forProbe is admit's answer for a call that a HALF_OPEN breaker rejected, before anyone hears
// of it. It never leaves the package: admitInProbe turns it into the call's own answer.
var forProbe = &BlockError{}

// admitInProbe goes on with the admission of the call c to resource, made with ctx,
// which a HALF_OPEN breaker of res rejected: when c is nested in a call that holds that probe
// (nested.go) it passes the breakers uncounted and meets MaxConcurrency; else it is refused.
func (m *Manager) admitInProbe(c *call, resource string, res *resource, ctx context.Context) *BlockError {
	if !c.nestedInProbe(ctx, res) {
		return m.refuse(c)
	}
	c.passNested()
	if s := res.set.at(c.start); s != nil {
		return m.enterLimit(c, resource, s)
	}
	return nil
}

// refuse rejects the call c with the error of the breakers that blocked it: the call observers
// hear of the rejection, then the breakers get back what they gave the call (cause before
// effect).
func (m *Manager) refuse(c *call) *BlockError {
	if len(m.calls) > 0 {
		m.reject(c, c.blocked)
	}
	if c.n > 0 {
		c.giveBack(c.start)
	}
	if c.owner != nil {
		c.owner.touch(c.start) // a breaker rejected the call: its resource is not idle
	}
	return c.blocked
}

// enterLimit counts the admitted call c among the calls in flight of a resource with settings
// s, or rejects it past MaxConcurrency, giving back a probe it took.
func (m *Manager) enterLimit(c *call, resource string, s *settings) *BlockError {
	if n := s.inflight.Inc(); s.MaxConcurrency > 0 && n > int64(s.MaxConcurrency) {
		s.inflight.Dec()
		m.reject(c, s.overLimit) // the call observers hear of the call before any probe's return
		if c.holdsGrant() {
			c.giveBack(m.now())
		}
		return s.overLimit
	}
	c.inflight = s.inflight
	return nil
}

// reject tells the call observers of the call c, which was not let through, the one place
// that does, and returns its error. The time they hear is the call's reading of the clock,
// taken at its entry for them; a call refused before it (ForceOpen) reads the clock here.
func (m *Manager) reject(c *call, blocked *BlockError) *BlockError {
	if len(m.calls) == 0 {
		return blocked
	}
	at := c.start
	if !c.timed {
		at = m.now()
	}
	info := CallInfo{Resource: c.name, Blocked: blocked, At: m.timeAt(at)}
	for _, o := range m.calls {
		m.tellCall(o, info)
	}
	return blocked
}

// finish counts the outcome of a call that ended with err (ErrPanicked: its function panicked)
// and as how says, in every breaker that admitted it, and tells the call observers.
func (c *call) finish(err error, how ending) {
	m := c.m
	c.finished = true
	c.leave()
	if c.n == 0 && len(m.calls) == 0 && c.owner == nil {
		return
	}
	now := m.now()
	if c.owner != nil {
		c.owner.touch(now) // the call ended: its resource is not idle
	}
	c.end, c.res = now, result{} // a success
	if err != nil || how != byError {
		c.res = m.resultOf(err, how)
	}
	if c.timed {
		c.res.rt = now - c.start
	}
	if len(m.calls) > 0 {
		m.callDone(c) // before the transitions the outcome makes: cause before effect
	}
	c.exitBreakers()
}

// callDone tells the call observers of a call that ran.
func (m *Manager) callDone(c *call) {
	info := CallInfo{Resource: c.name, RT: time.Duration(c.res.rt), Outcome: c.res.o, DryRun: c.dry,
		At: m.timeAt(c.end)}
	info.Slow = c.slow()
	for _, obs := range m.calls {
		m.tellCall(obs, info)
	}
}
