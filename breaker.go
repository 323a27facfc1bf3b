package breaker

import (
	syncatomic "sync/atomic" // Uint32 is half the size of go.uber.org/atomic's, in a breaker counted by the byte
	"time"

	"go.uber.org/atomic"

	"github.com/halfopen/breaker/internal/window"
)

// CircuitBreaker is the breaker of one rule. The Manager makes one for each loaded rule: a
// *ResponseTimeBreaker for SlowRequestRatio, an *ExceptionBreaker for ErrorRatio, ErrorCount
// and ConsecutiveErrors. Every method is safe for concurrent use.
//
// TryPass and OnRequestComplete are the door through which a call passes a breaker: the breaker
// slot, the first of every call's chain (slot.go), calls them for every call, with a Ticket only
// the admission path makes. To anyone else a breaker is read-only: it lets no call through on a
// Ticket it did not make, and counts none.
type CircuitBreaker interface {
	// Rule returns the rule the breaker enforces.
	Rule() Rule
	// State returns the breaker's state. It changes only when a call arrives or completes.
	State() State
	// TryPass reports whether the breaker lets the call of t through, and notes in t what the
	// call's completion needs. A breaker whose retry time has come lets the call through as
	// its probe to be: the call becomes the probe once every breaker of its resource has let
	// it through.
	TryPass(t *Ticket) bool
	// OnRequestComplete counts the outcome of the call of t, if this breaker admitted it in
	// its current period, and moves the breaker if the outcome calls for it.
	OnRequestComplete(t *Ticket)
	// Stats reads the breaker's state and window now, for dashboards and status pages.
	Stats() Stats
}

// Ticket is a call's way through the breakers of its resource: TryPass notes in it what each
// breaker gave the call, and OnRequestComplete reads it when the call ends. Only the Manager's
// admission path makes tickets, on the caller's stack.
type Ticket struct {
	start    int64       // when the call entered; set when a breaker or a call observer needs the time
	blocked  *BlockError // of the breakers that rejected the call, the one with the latest retry time
	dry      *BlockError // what a DryRun breaker, or one of a ForceClosed resource, would have rejected the call with
	end      int64       // when the call ended
	res      result      // how it ended
	n        int         // the grants, in the order of the resource's breakers
	inline   [4]grant    // enough for the usual few rules of a resource, without allocating
	more     *[]grant
	stripe   uint8 // which stripe of its breakers' counters it writes (stripeOf); 0: not chosen yet
	exiting  uint8 // the grant whose breaker OnRequestComplete counts the call in now (the breaker slot's exit)
	timed    bool
	due      bool // a breaker let the call through as its probe to be (takeProbes)
	issued   bool // made by the admission path
	finished bool // its outcome is counted
}

// grant is what one breaker gave a call.
type grant struct {
	c      *circuit // the breaker
	p      *period  // the period that admitted the call; nil: not admitted, or completed
	flight uint64   // the call's seat in the ring of calls in flight of p (response_time.go); 0: none
}

// newTicket returns a Ticket of the admission path, for a call that no breaker has seen yet.
func newTicket() Ticket { return Ticket{issued: true} }

// now returns when the call entered, reading the clock tl if no one has yet.
func (t *Ticket) now(tl *timeline) int64 {
	if !t.timed {
		t.start, t.timed = tl.now(), true
	}
	return t.start
}

// stripeFor returns the stripe the call writes in the counters of a period whose calls have
// contended for them (striped) or not: its own (stripeOf), or stripe 0, so that a call that
// runs alone on its resource does not choose one. It is small enough to inline.
func (t *Ticket) stripeFor(striped bool, tl *timeline) uint8 {
	if !striped {
		return 0
	}
	return t.stripeOf(tl)
}

// stripeOf returns the stripe of the counters the call writes, choosing it on first use, as tl
// says: the processor the call runs on, plus 1 (a stripe past a counter's stripes wraps round).
// It is kept out of line, so that stripeFor inlines.
//
//go:noinline
func (t *Ticket) stripeOf(tl *timeline) uint8 {
	if t.stripe == 0 {
		if tl.stripe == nil {
			t.stripe = window.Stripe() + 1
		} else {
			t.stripe = tl.stripe() + 1
		}
	}
	return t.stripe
}

// next returns the call's grant for its next breaker, c.
func (t *Ticket) next(c *circuit) *grant {
	var g *grant
	if t.n < len(t.inline) {
		g = &t.inline[t.n]
	} else {
		if t.more == nil {
			t.more = new([]grant)
		}
		*t.more = append(*t.more, grant{})
		g = &(*t.more)[len(*t.more)-1]
	}
	g.c = c
	t.n++
	return g
}

// grantBreaker returns the breaker of the call's i-th grant.
func (t *Ticket) grantBreaker(i int) *circuit {
	if i < len(t.inline) {
		return t.inline[i].c
	}
	return (*t.more)[i-len(t.inline)].c
}

// at returns the call's i-th grant.
func (t *Ticket) at(i int) *grant {
	if i < len(t.inline) {
		return &t.inline[i]
	}
	return &(*t.more)[i-len(t.inline)]
}

// Stats is what a breaker holds at one moment.
type Stats struct {
	// Rule is the rule the breaker enforces.
	Rule  Rule
	State State
	// Generation counts the breaker's transitions, as StateChange.Generation does.
	Generation uint64
	// Total is the calls in the window, and Bad those of them that were slow
	// (SlowRequestRatio) or failed (ErrorRatio, ErrorCount); for ConsecutiveErrors both are
	// the failures of the current run. Both are 0 unless CLOSED: the window starts empty after
	// each recovery.
	Total, Bad uint64
	// Refused is those of Bad that the dependency refused (Outcome Refused) rather than failed:
	// an ErrorRatio or ErrorCount window counts them apart, since a refusal is a live
	// dependency saying how much it takes. 0 for SlowRequestRatio, which judges a refused call
	// by its time, and for ConsecutiveErrors, whose run a refusal does not join.
	Refused uint64
	// RetryAt is, when OPEN, when the breaker lets a probe through; when HALF_OPEN, when it
	// did. Zero when CLOSED.
	RetryAt time.Time
	// ProbeDeadline is, when HALF_OPEN with a probe in flight, when the probe counts as
	// failed. Zero otherwise.
	ProbeDeadline time.Time
	// RampingUp is true while the breaker, CLOSED on a probe, paces its calls (Rule.RampUp).
	RampingUp bool
	// Pacing is true while the breaker, CLOSED, paces the calls of a dependency that fails
	// part of them, where it would have opened (Rule.Pace).
	Pacing bool
	// DryRun is true while the breaker rejects no call: its rule is DryRun, or its resource is
	// forced closed, by its settings or by an operator's override in force (StateChange.DryRun
	// says the same of a transition). An OPEN DryRun breaker only says what it would reject.
	DryRun bool
}

// Ratio is Bad over Total: the share of slow calls in the window of a SlowRequestRatio
// breaker, the share of failed ones for the others; 0 while the window is empty.
func (s Stats) Ratio() float64 {
	if s.Total == 0 {
		return 0
	}
	return float64(s.Bad) / float64(s.Total)
}

// circuit is the state machine both kinds of breaker share: the door, the periods and their
// transitions, probes, backoff, the ramp and pacing. What a call's outcome means for its rule,
// and when the rule trips, it asks its breaker (kind), never its rule's strategy.
//
// Its state is the current period, read with one atomic load and replaced by compare-and-swap,
// so exactly one goroutine makes each transition and reports it. A call keeps the period that
// admitted it; when it completes in a later period its outcome is ignored.
type circuit struct {
	tl       *timeline               // the clock its times are read from, and the sequence of transitions
	notify   func(StateChange)       // tells the observers of a transition
	instance string                  // the Manager's instance name, for the jitter of retry times
	name     string                  // the resource its calls are made under; for a template's breaker, not the rule's
	kind     kind                    // the breaker it is the machine of: a *ResponseTimeBreaker or an *ExceptionBreaker
	tune     atomic.Pointer[tuning]  // replaced whole when a reload changes the rule but not its window
	leap     LeapArray               // the shape of its window
	dryBy    syncatomic.Uint32       // why it may let through the calls it would reject (dry); 0: it does not
	forcing  atomic.Pointer[forcing] // what an operator's override of its resource means for it, while dryBy says dryOverridden
	cur      atomic.Pointer[period]
	veto     atomic.Pointer[BlockError] // a test's (export_test.go): TryPass rejects every call with it
}

// kind is what each type of breaker decides for the machine it shares with the other: what a
// call's outcome means for its rule, when its window trips, and what it counts its calls in.
// ResponseTimeBreaker (response_time.go) and ExceptionBreaker (exception.go) are the two.
type kind interface {
	CircuitBreaker
	// judged says how a call that ended as res counts: in the window or not, and, if it does,
	// how (good, bad, or refused: bad, and counted apart). It also judges a probe. (res is
	// passed by value: a pointer into the caller's call would make the call escape to the heap.)
	judged(res result) (counts bool, m window.Mark)
	// slow reports whether a call that ended as res was slow (CallInfo.Slow).
	slow(res result) bool
	// measure returns the ratio or count of bad calls of a window's counts all, and whether it
	// meets the threshold of the rule's tuning t.
	measure(t *tuning, all window.Counts) (float64, bool)
	// failedInFlight reports whether the probe of the HALF_OPEN period p, in flight at now, has
	// failed before it returns: a call still running past what makes a call bad.
	failedInFlight(p *period, now int64) bool
	// counters gives the CLOSED period q the counters its calls count in.
	counters(q *period)
	// retuned applies a reload's tuning t, which replaced old, to what the breaker holds beside
	// its tuning (its calls in flight).
	retuned(old, t *tuning)
}

// tuning is what a breaker reads of its rule: all of it but what shapes its window (the
// strategy, StatInterval, BucketCount). A reload that changes only these values keeps the
// breaker, its window and its state, and the new values apply from the next call. It is never
// changed after it is published, so each value a call reads is one its rule had.
type tuning struct {
	rule         *Rule // into the loaded rule set; never modified
	threshold    float64
	maxRT        int64
	minCalls     uint64
	retryTimeout int64
	maxRetry     int64   // the longest OPEN time; retryTimeout when there is no backoff
	jitter       float64 // Rule.RetryJitter
	jitterSeed   uint64  // a hash of the instance name and the rule, for the jitter
	probeNum     uint32
	probeTimeout int64
	fastSpan     int64   // how far back from the newest bucket's start FastBuckets reach; 0: off
	fastRatio    float64 // the ratio they trip at
	rampUp       int64   // Rule.RampUp
	pace         bool    // Rule.Pace
	procs        int     // the processors its counters are striped for: GOMAXPROCS when the rules were loaded, which the memory budget counted
}

// verdict is the first half of admission.
type verdict uint8

const (
	admitted verdict = iota
	probeDue         // OPEN and the retry time has come: the call may become the probe
	rejected
)

// init makes c, the machine of the breaker k, a CLOSED breaker for r with an empty window, its
// counters striped for procs.
func (c *circuit) init(k kind, tl *timeline, notify func(StateChange), instance string, r *Rule, name string, procs int) {
	c.kind, c.tl, c.notify, c.instance = k, tl, notify, instance
	c.name = name
	c.leap = newLeapArray(r)
	c.tune.Store(newTuning(c.instance, r, procs))
	c.setDry(dryRule, r.DryRun)
	c.cur.Store(c.closedPeriod(0, 0))
}

// newTuning reads what a breaker needs of r, loaded for procs processors.
func newTuning(instance string, r *Rule, procs int) *tuning {
	t := &tuning{
		rule:         r,
		threshold:    r.Threshold,
		maxRT:        int64(r.MaxAllowedRT),
		minCalls:     r.minRequestAmount(),
		retryTimeout: int64(r.RetryTimeout),
		jitter:       r.RetryJitter,
		probeNum:     r.probeNum(),
		probeTimeout: int64(r.probeTimeout()),
	}
	t.maxRetry = max(int64(r.MaxRetryTimeout), t.retryTimeout)
	t.rampUp, t.pace, t.procs = int64(r.RampUp), r.Pace, procs
	if r.FastBuckets > 0 {
		t.fastSpan = int64(r.FastBuckets) * (int64(r.statInterval()) / int64(r.bucketCount()))
		t.fastRatio = r.fastThreshold()
	}
	if t.jitter > 0 {
		t.jitterSeed = jitterSeed(instance, r)
	}
	return t
}

// Rule returns the rule the breaker enforces.
func (c *circuit) Rule() Rule { return *c.tune.Load().rule }

// State returns the breaker's state.
func (c *circuit) State() State { return c.cur.Load().state }

// knows reports whether the breaker holds at now what a fresh one would not: it is OPEN or
// HALF_OPEN, or CLOSED and ramping up or pacing. Eviction keeps such a breaker.
func (c *circuit) knows(now int64) bool {
	p := c.cur.Load()
	return p.state != Closed || p.ramp != nil && p.ramp.on(now, c.tune.Load())
}

// Stats reads the breaker's state and window; see CircuitBreaker.
func (c *circuit) Stats() Stats { return c.statsAt(c.tl.now()) }

// statsAt is Stats at now.
func (c *circuit) statsAt(now int64) Stats {
	p := c.cur.Load()
	st := Stats{Rule: c.Rule(), State: p.state, Generation: p.gen}
	switch {
	case p.state == HalfOpen:
		if p.probing {
			st.ProbeDeadline = c.tl.timeAt(p.deadline)
		}
		fallthrough
	case p.state == Open:
		st.RetryAt = c.tl.timeAt(p.retryAt)
	case p.window != nil:
		all, _ := p.window.Sums(p.window.HeadAt(now), 0)
		st.Total, st.Bad, st.Refused = all.Total, all.Bad, all.Refused
		if p.ramp != nil && p.ramp.on(now, c.tune.Load()) {
			st.RampingUp, st.Pacing = !p.ramp.paced, p.ramp.paced
		}
	case p.calls != nil:
		all := p.calls.Sum()
		st.Total, st.Bad, st.Refused = all.Total, all.Bad, all.Refused
	case !p.retired: // no window: a run of failures (ConsecutiveErrors)
		st.Bad = uint64(p.run.Load())
		st.Total = st.Bad
	}
	st.DryRun = c.dry(now)
	return st
}

// TryPass reports whether the breaker lets the call of t through; see CircuitBreaker. Its common
// case, a CLOSED breaker without a ramp, is written here, and counts the call among the calls in
// flight of a breaker that has them; pass takes the others.
func (c *circuit) TryPass(t *Ticket) bool {
	p := c.cur.Load()
	if t == nil || p.state != Closed || p.ramp != nil || t.n >= len(t.inline) || !t.issued {
		return c.pass(t, p)
	}
	g := &t.inline[t.n]
	t.n++
	g.c, g.p = c, p
	if f := p.flight; f != nil {
		if p.striped() {
			g.flight = f.TryEnterOn(t.start, t.stripeOf(c.tl))
		} else {
			g.flight = f.TryEnter(t.start)
		}
		if g.flight == 0 || f.Due(t.start) {
			g.enterFlight(t, t.start)
		}
	}
	return true
}

// pass is TryPass for the breaker's period p in every case but the common one. A Ticket the
// admission path did not make passes nothing.
func (c *circuit) pass(t *Ticket, p *period) bool {
	if t == nil || !t.issued {
		return false
	}
	if v := c.veto.Load(); v != nil {
		t.blocked = v
		return false
	}
	if p.state == Closed && p.ramp == nil {
		t.next(c).admitted(p, t.start, t)
		return true
	}
	now := t.now(c.tl)
	p, v := c.check(c.cur.Load(), now) // loaded after the reading: never older than it
	switch v {
	case admitted:
		t.next(c).admitted(p, now, t)
		return true
	case probeDue:
		t.next(c).p, t.due = p, true
		return true
	}
	err, at := p.blocked.Load(), p.retryAt // OPEN: its error and retry time
	if p.state == HalfOpen || p.ramp != nil {
		err, at = c.rejection(p, now)
	}
	if c.dry(now) {
		// It lets the call through uncounted, and call observers hear what it would have done.
		t.dry = err
		return true
	}
	// The latest retry time says when the resource can admit a call again.
	if t.blocked == nil || at-t.blocked.at > 0 {
		t.blocked = err
	}
	return false
}

// admitted notes that the CLOSED period p admitted the call of t, which started at start, and
// counts it among p's calls in flight when p has them.
func (g *grant) admitted(p *period, start int64, t *Ticket) {
	g.p = p
	if f := p.flight; f != nil {
		if p.striped() {
			g.flight = f.TryEnterOn(start, t.stripeOf(g.c.tl))
		} else {
			g.flight = f.TryEnter(start)
		}
		if g.flight == 0 || f.Due(start) {
			g.enterFlight(t, start)
		}
	}
}

// enterFlight is admitted's count of the call of t among the calls in flight of the CLOSED
// period g.p, when TryEnter did not take the call (g.flight is 0) or a slot is due: it judges
// the due slots and enters the call if it is not in yet.
func (g *grant) enterFlight(t *Ticket, start int64) {
	if g.flight != 0 {
		g.c.judgeFlight(g.p, start, t.stripe)
		return
	}
	g.p, g.flight = g.c.enterFlight(g.p, start, t.stripe)
}

// takeProbes makes the call the probe of each breaker that TryPass found due. A breaker whose
// probe another call took first, or that moved on meanwhile (closed by a probe, a Reset, an
// override), is judged as it stands now: it admits the call, takes it as its next probe, holds
// it back in a ramp, or rejects it with its current error, which takeProbes returns; the
// probes taken before it are then for the caller to give back.
func (t *Ticket) takeProbes() *BlockError {
	for i := 0; i < t.n; i++ {
		if blocked := t.at(i).takeProbe(t); blocked != nil {
			return blocked
		}
	}
	return nil
}

// takeProbe is takeProbes for the breaker of g.
func (g *grant) takeProbe(t *Ticket) *BlockError {
	c, now := g.c, t.start
	for g.p != nil && g.p.awaitsProbe() {
		q, ok := c.probe(g.p, now)
		if ok {
			g.p = q
			break
		}
		p, v := c.check(c.cur.Load(), now)
		if v == admitted {
			g.admitted(p, now, t)
			break
		}
		if v == probeDue {
			g.p = p // due again: the loop tries to take its probe
			continue
		}
		blocked, _ := c.rejection(p, now)
		if !c.dry(now) {
			return blocked
		}
		// The breaker rejects nothing: the call passes, and it does not count it.
		t.dry, g.p = blocked, nil
	}
	return nil
}

// holdsGrant reports whether the call is the probe of one of its breakers, or has a place in a
// ramp or among the calls in flight: what giveBack returns.
func (t *Ticket) holdsGrant() bool {
	for i := 0; i < t.n; i++ {
		if g := t.at(i); g.p != nil && (g.p.probing || g.p.ramp != nil) || g.flight != 0 {
			return true
		}
	}
	return false
}

// giveBack returns what the breakers gave the call, which was then blocked: every probe it
// holds to OPEN with its retry time unchanged (ProbeBlocked), its place in a ramp, and its place
// among the calls in flight, where it counts neither way.
func (t *Ticket) giveBack(now int64) {
	for i := 0; i < t.n; i++ {
		g := t.at(i)
		switch {
		case g.p == nil:
			continue
		case g.p.probing:
			g.c.releaseProbe(g.p, ProbeBlocked, now)
		case g.p.ramp != nil:
			g.p.ramp.giveBack(now)
		}
		if g.flight != 0 {
			g.p.flight.Leave(g.flight)
		}
	}
}

// slow reports whether a breaker of the call finds it slow, now that it has ended.
func (t *Ticket) slow() bool {
	for i := 0; i < t.n; i++ {
		if t.at(i).c.kind.slow(t.res) {
			return true
		}
	}
	return false
}

// check reads the breaker, whose period is p, for a call arriving at now. It changes nothing
// but a probe that has timed out, or a ramp's counts. An OPEN breaker before its retry time,
// the common case of a rejection, is judged here, in a small frame; checkMore judges the rest.
func (c *circuit) check(p *period, now int64) (*period, verdict) {
	if ahead := p.retryAt - now; p.state == Open && ahead > 0 && ahead <= p.openFor {
		return p, rejected // before the retry time: neither due nor a stepped-back clock (retryDue)
	}
	return c.checkMore(p, now)
}

// checkMore is check for every case but an OPEN breaker before its retry time.
func (c *circuit) checkMore(p *period, now int64) (*period, verdict) {
	for {
		switch p.state {
		case Closed:
			return c.checkRamp(p, now)
		case Open:
			if c.retryDue(p, now) {
				return p, probeDue
			}
			return p, rejected
		}
		// HALF_OPEN: between probes the next call probes; with a probe in flight every other
		// call is rejected, and a probe past its deadline counts as failed.
		if !p.probing {
			return p, probeDue
		}
		reason := ProbeTimedOut
		if !c.probeOverdue(p, now) {
			if !c.kind.failedInFlight(p, now) {
				return p, rejected
			}
			reason = ProbeFailed
		}
		q := c.reopen(p, now)
		if c.move(p, q, reason, 0, now) {
			return q, rejected
		}
		p = c.cur.Load()
	}
}

// rejection returns the error of a call that the period p rejects at now, and the time its
// RetryAt names, which is after now, and after the start of p, on every path. While OPEN that
// is the retry time. While HALF_OPEN it is the start of the bucket after next (at least one
// bucket after now, or after the probe was taken, for a reading older than that), or the
// deadline of the probe in flight if sooner: a caller that waits until then does not spin while
// the probe runs. That error is built once a bucket and kept in p.
func (c *circuit) rejection(p *period, now int64) (*BlockError, int64) {
	if p.ramp != nil {
		return c.rampRejection(p.ramp, now)
	}
	b := p.blocked.Load()
	if p.state != HalfOpen {
		return b, p.retryAt
	}
	if taken := p.deadline - p.probeFor; taken-now > 0 {
		now = taken // a stale reading is judged as of the probe it met
	}
	length := c.leap.bucketLen()
	at := now - window.FloorMod(now, length) + 2*length
	if p.probing && p.deadline-at < 0 {
		at = p.deadline
	}
	if b.at != at {
		b = c.blockError(HalfOpen, at)
		p.blocked.Store(b)
	}
	return b, at
}

// OnRequestComplete counts the outcome of the call of t (see CircuitBreaker), which ended at
// t.end as t.res, when this breaker admitted it: in the window while CLOSED, as the probe's
// result while HALF_OPEN. The breaker slot calls it for each grant of t in turn, the one its
// exit is at (Ticket.exiting). A failed call's retry hint lengthens the OPEN time it causes. It
// reads the tuning only for what the call needs: a good call over a window without bad calls
// needs none.
func (c *circuit) OnRequestComplete(t *Ticket) {
	if t == nil {
		return
	}
	a := t.at(int(t.exiting)) // the grant the slot is at; a Ticket the admission path did not make has none
	from := a.p
	if from == nil {
		return // not admitted by this breaker (a dry run's rejection)
	}
	now, res := t.end, &t.res
	p := c.current(from)
	if p == nil {
		return // admitted before the last transition
	}
	if p.state != Closed {
		if p.state == HalfOpen {
			c.decideProbe(p, c.tune.Load(), now, res)
		}
		return
	}
	if p.retired {
		return
	}
	if f := p.flight; f != nil && (a.flight == 0 || f.Due(now) || !from.flight.TryLeave(a.flight)) &&
		c.leaveFlight(p, from.flight, a.flight, now, t.stripeFor(p.striped(), c.tl)) {
		return // counted as slow while it was in flight
	}
	counts, m := c.kind.judged(*res)
	if !counts {
		return
	}
	if p.window == nil {
		if p.calls != nil {
			c.countCalls(p, 1, m, now, res.hint)
			return
		}
		c.countRun(p, c.tune.Load(), now, m, res.hint)
		return
	}
	head, counted := int64(0), false
	switch w := p.window; {
	case m != window.Good:
	case !w.Striped():
		head, counted = w.AddGood(now)
	default:
		head, counted = w.AddGoodOn(now, t.stripeOf(c.tl))
	}
	if !counted {
		head = t.add(p, c, m)
	}
	if p.ramp != nil && p.ramp.completed(now, c.tune.Load(), m, res.hint) == rampDead {
		c.died(p, now)
		return
	}
	if m == window.Good && !p.window.MayHoldBad(head) {
		return // a good call over a window with no bad call cannot trip
	}
	c.judge(p, head, now, res.hint, m)
}

// add is OnRequestComplete's step for a call of t, marked m, that AddGood or AddGoodOn did not
// count in the window of p, the CLOSED period of c: it returns the start of the bucket it
// counted in.
func (t *Ticket) add(p *period, c *circuit, m window.Mark) int64 {
	return p.window.Add(t.end, 1, m, t.stripeFor(p.window.Striped(), c.tl))
}

// judge trips the CLOSED period p if its window, whose newest bucket starts at head, meets the
// rule's threshold at now, or its newest buckets the fast threshold. A retry hint lengthens
// the OPEN time it causes.
func (c *circuit) judge(p *period, head, now, hint int64, m window.Mark) {
	t := c.tune.Load()
	all, newest := p.window.Sums(head, t.fastSpan)
	c.decide(p, t, all, newest, now, hint, m)
}

// decide trips the CLOSED period p at now if its window's counts, all, meet the rule's
// threshold, or those of its newest buckets the fast threshold. A rule that paces paces instead
// of tripping on the whole window while the window holds a good call: the dependency still
// serves some; its newest buckets still trip it. Pacing that holds no good call in its window
// trips it whatever the count: paced to a call a bucket, it may never reach MinRequestAmount.
// The fast threshold judges failures alone: a refusal is a live dependency saying how much it
// takes, not a hard outage. Newest buckets that fail like a hard outage's open the breaker
// rather than let it pace, however few calls they hold. The call that ended at now was marked m, with the retry hint hint:
// a trip stays OPEN at least hint, and pacing started by a refusal holds its calls back until
// the hint says the dependency takes calls again.
func (c *circuit) decide(p *period, t *tuning, all, newest window.Counts, now, hint int64, m window.Mark) {
	if all.Total < t.minCalls && (all.Bad < all.Total || !p.pacing()) {
		return
	}
	reason, measure, trips := ThresholdExceeded, 0.0, false
	measure, trips = c.kind.measure(t, all)
	paces := trips && t.pace && all.Bad < all.Total
	// Where the window would pace, the newest buckets need no MinRequestAmount of their own to
	// open it: the window met its own, and a low traffic's hard outage fills few buckets.
	if (!trips || paces) && t.fastSpan > 0 && (newest.Total >= t.minCalls || paces && newest.Total > 0) {
		if fast := float64(newest.Failed()) / float64(newest.Total); fast >= t.fastRatio {
			reason, measure, paces = FastTrip, fast, false
			trips = true
		}
	}
	switch {
	case paces:
		c.pace(p, now, measure, refusalHold(m, hint))
	case trips:
		c.trip(p, t, now, hint, reason, measure)
	}
}

// trip moves the CLOSED period p to OPEN at now, for reason, with the measure that met the
// threshold; or the copy of p that is current, if one replaced it meanwhile (withFlight: the
// end of a ramp, a ring of calls in flight started again), since it counts in the same window.
func (c *circuit) trip(p *period, t *tuning, now, hint int64, reason Reason, measure float64) {
	for from := p; from != nil && from.state == Closed; from = c.current(p) {
		if c.move(from, c.withHint(c.openPeriod(from, now, 0), t, now, hint), reason, measure, now) {
			return
		}
	}
}

func (c *circuit) decideProbe(p *period, t *tuning, now int64, res *result) {
	counts, m := c.kind.judged(*res)
	switch {
	case now-p.deadline >= 0: // a clock that stepped back does not stop the probe deciding
		c.move(p, c.reopen(p, now), ProbeTimedOut, 0, now)
	case !counts:
		c.releaseProbe(p, ProbeIgnored, now)
	case m != window.Good: // a refused probe failed too: the dependency does not take the calls yet
		c.move(p, c.withHint(c.reopen(p, now), t, now, res.hint), ProbeFailed, 0, now)
	case p.successes+1 < t.probeNum:
		// Not the last probe of the run: the next call is the next probe.
		q := p.sameState()
		q.successes++
		q.since = now
		c.cur.CompareAndSwap(p, q)
	default:
		q := c.newPeriod(p, Closed, 0)
		if t.rampUp > 0 {
			q.ramp = newRamp(now, c.leap.bucketLen(), int64(c.leap.interval))
		}
		c.move(p, q, ProbeSucceeded, 0, now)
	}
}

// blockError builds the error of the calls a period rejects, naming retryAt. It has its own
// copy of the rule, so a caller that changes it changes nothing else.
func (c *circuit) blockError(s State, retryAt int64) *BlockError {
	r := c.Rule()
	return &BlockError{Resource: c.name, Rule: &r, State: s, RetryAt: c.tl.timeAt(retryAt), at: retryAt}
}

// dry reports whether the breaker lets through at now the calls it would reject: its rule is
// DryRun, or its resource is ForceClosed, by its settings or by an operator's override in force.
// An override whose end has come counts for nothing, though the rule set still holds it until
// the next change. It is one load when the breaker is not dry, on the path of every rejection.
func (c *circuit) dry(now int64) bool {
	b := c.dryBy.Load()
	switch {
	case b == 0:
		return false
	case b&dryRule != 0:
		return true
	case b&dryOverridden != 0:
		if f := c.forcing.Load(); f != nil && !f.over(now) {
			return f.dry
		}
	}
	return b&dryForced != 0
}

// forcing is what an operator's override of its resource means for a breaker: that it lets
// every call through (ForceClosed), or not, for a span of the Manager's time, after which the
// resource's settings force it as they do.
type forcing struct {
	dry bool
	span
}

// The reasons a breaker may be dry, bits of circuit.dryBy.
const (
	dryRule       uint32 = 1 << iota // its rule is DryRun
	dryForced                        // its resource's settings force it closed
	dryOverridden                    // an override decides (forcing), until its end
)

// setDry notes whether the breaker is dry for the reason why.
func (c *circuit) setDry(why uint32, on bool) {
	if on {
		c.dryBy.Or(why)
	} else {
		c.dryBy.And(^why)
	}
}

// force notes how the resource's settings, forced (its own or a template setting's, without an
// override), and an operator's override of it (f; nil: none) force the breaker.
func (c *circuit) force(forced bool, f *forcing) {
	c.forcing.Store(f)
	c.setDry(dryForced, forced)
	c.setDry(dryOverridden, f != nil)
}

// reload points a kept breaker at its rule as reloaded, r, whose window has the same shape:
// it may differ by its ID, a default spelled out, or the values a tuning holds, which apply
// from the next call; the counters it makes from then on are striped for procs. The breaker
// keeps its period, so observers hear nothing; a period that rejects calls gets an error that
// names the new rule.
func (c *circuit) reload(r *Rule, procs int) {
	t := newTuning(c.instance, r, procs)
	old := c.tune.Swap(t)
	c.setDry(dryRule, r.DryRun)
	if *old.rule == *r {
		return
	}
	c.kind.retuned(old, t)
	switch p := c.cur.Load(); {
	case p.ramp != nil:
		p.ramp.blocked.Store(nil) // made again, naming the new rule, for the next call held back
	case p.state != Closed && !p.retired:
		p.blocked.Store(c.blockError(p.state, p.blocked.Load().at))
	}
}

// after returns the tick d after t. Ticks wrap (clock.go), so it does not saturate: a retry
// time or deadline past the largest int64 must still lie d after t.
func after(t, d int64) int64 { return t + d }

// later returns the later of the ticks a and b.
func later(a, b int64) int64 {
	if b-a > 0 {
		return b
	}
	return a
}

// countCalls counts n calls completed at now, bad or not, in the window of calls of the CLOSED
// period p, and trips p if the window then meets the rule's threshold. A good call over a
// window without bad calls cannot trip it.
func (c *circuit) countCalls(p *period, n uint64, m window.Mark, now, hint int64) {
	var all window.Counts
	for range n {
		all = p.calls.AddOne(m)
	}
	if m != window.Good || all.Bad > 0 {
		c.decide(p, c.tune.Load(), all, window.Counts{}, now, hint, m)
	}
}
