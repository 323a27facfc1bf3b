package breaker

import (
	"time"

	"go.uber.org/atomic"
)

// CircuitBreaker is the breaker of one rule. The Manager makes one for each loaded rule: a
// *ResponseTimeBreaker for SlowRequestRatio, an *ExceptionBreaker for ErrorRatio, ErrorCount
// and ConsecutiveErrors. Every method is safe for concurrent use.
type CircuitBreaker interface {
	// Rule returns the rule the breaker enforces.
	Rule() Rule
	// State returns the breaker's state. It changes only when a call arrives or completes.
	State() State
	// TryPass reports whether the breaker admits the call of e, and records the admission in e
	// so that OnRequestComplete can tell this call from one admitted before a state change.
	// It may move the breaker from OPEN to HALF_OPEN, making the call its probe. The Manager
	// calls it for every call; call it yourself only for an Entry the Manager did not check
	// with this breaker.
	TryPass(e *Entry) bool
	// OnRequestComplete counts the outcome of e's call, if this breaker admitted it in its
	// current period, and moves the breaker if the outcome calls for it. Entry.Exit calls it.
	OnRequestComplete(e *Entry)
	// Stats reads the breaker's state and window now, for dashboards and status pages.
	Stats() Stats
}

// Stats is what a breaker holds at one moment.
type Stats struct {
	State State
	// Generation counts the breaker's transitions, as StateChange.Generation does.
	Generation uint64
	// Total is the calls in the window, and Bad those of them that were slow
	// (SlowRequestRatio) or failed (ErrorRatio, ErrorCount); for ConsecutiveErrors both are
	// the failures of the current run. Both are 0 unless CLOSED: the window starts empty after
	// each recovery.
	Total, Bad uint64
	// RetryAt is, when OPEN, when the breaker lets a probe through; when HALF_OPEN, when it
	// did. Zero when CLOSED.
	RetryAt time.Time
	// ProbeDeadline is, when HALF_OPEN with a probe in flight, when the probe counts as
	// failed. Zero otherwise.
	ProbeDeadline time.Time
}

// circuit is the state machine shared by both kinds of breaker.
//
// Its state is the current period, read with one atomic load and replaced by compare-and-swap,
// so exactly one goroutine makes each transition and reports it. A call keeps the period that
// admitted it; when it completes in a later period its outcome is ignored.
type circuit struct {
	m            *Manager
	name         string               // the resource its calls are made under; for a template's breaker, not the rule's
	owner        *dynamic             // the entry of a template's breaker, which its calls mark used; else nil
	rule         atomic.Pointer[Rule] // into the loaded rule set; never modified
	strategy     Strategy
	threshold    float64
	maxRT        int64
	minCalls     uint64
	retryTimeout int64
	maxRetry     int64   // the longest OPEN time; retryTimeout when there is no backoff
	jitter       float64 // Rule.RetryJitter
	jitterSeed   uint64  // a hash of the instance name and the rule, for the jitter
	probeNum     uint32
	probeTimeout int64
	interval     time.Duration
	buckets      uint32
	dryRun       bool        // the rule is DryRun
	forcedClosed atomic.Bool // the resource is ForceClosed
	cur          atomic.Pointer[period]
}

// period is one stretch of a breaker's life in one state. Only blocked changes after it is
// published.
type period struct {
	state     State
	gen       uint64                     // counts the breaker's transitions
	seq       uint64                     // the Manager-wide sequence number of the transition to it
	retired   bool                       // the final period of a dropped breaker: it counts nothing
	retryAt   int64                      // OPEN, HALF_OPEN: when a probe may pass
	openFor   int64                      // OPEN, HALF_OPEN: how long OPEN lasts, from the trip or failed probe
	failures  uint32                     // OPEN, HALF_OPEN: probes failed in a row since the trip
	probing   bool                       // HALF_OPEN: a probe is in flight; else the next call probes
	successes uint32                     // HALF_OPEN: probes that succeeded in this run
	deadline  int64                      // HALF_OPEN: when the probe in flight counts as failed
	window    *leapArray                 // CLOSED: the calls of this period (windowed strategies)
	run       atomic.Int64               // CLOSED: failures in a row (ConsecutiveErrors)
	blocked   atomic.Pointer[BlockError] // OPEN, HALF_OPEN: the error of rejected calls
}

// awaitsProbe reports whether the period lets its next call through as a probe, once its
// retry time has come (OPEN) or at once (HALF_OPEN between probes).
func (p *period) awaitsProbe() bool {
	return p.state == Open || p.state == HalfOpen && !p.probing
}

// verdict is the first half of admission.
type verdict uint8

const (
	admitted verdict = iota
	probeDue         // OPEN and the retry time has come: the call may become the probe
	rejected
)

// init makes c a CLOSED breaker for r with an empty window.
func (c *circuit) init(m *Manager, r *Rule, name string) {
	c.m = m
	c.name = name
	c.strategy = r.Strategy
	c.threshold = r.Threshold
	c.maxRT = int64(r.MaxAllowedRT)
	c.minCalls = r.minRequestAmount()
	c.retryTimeout = int64(r.RetryTimeout)
	c.maxRetry = max(int64(r.MaxRetryTimeout), c.retryTimeout)
	c.jitter = r.RetryJitter
	if c.jitter > 0 {
		c.jitterSeed = jitterSeed(m.instance, r)
	}
	c.probeNum = r.probeNum()
	c.probeTimeout = int64(r.probeTimeout())
	c.interval = r.statInterval()
	c.buckets = r.bucketCount()
	c.dryRun = r.DryRun
	c.rule.Store(r)
	c.cur.Store(c.closedPeriod(0, 0))
}

// Rule returns the rule the breaker enforces.
func (c *circuit) Rule() Rule { return *c.rule.Load() }

// State returns the breaker's state.
func (c *circuit) State() State { return c.cur.Load().state }

// Stats reads the breaker's state and window; see CircuitBreaker.
func (c *circuit) Stats() Stats {
	p := c.cur.Load()
	st := Stats{State: p.state, Generation: p.gen}
	switch {
	case p.state == HalfOpen:
		if p.probing {
			st.ProbeDeadline = c.m.timeAt(p.deadline)
		}
		fallthrough
	case p.state == Open:
		st.RetryAt = c.m.timeAt(p.retryAt)
	case p.window != nil:
		st.Total, st.Bad = p.window.sum(p.window.headAt(c.m.now()))
	case c.strategy == ConsecutiveErrors && !p.retired:
		st.Bad = uint64(p.run.Load())
		st.Total = st.Bad
	}
	return st
}

// TryPass reports whether the breaker admits e's call; see CircuitBreaker.
func (c *circuit) TryPass(e *Entry) bool {
	now := lazyNow{m: c.m}
	p, v := c.check(&now)
	switch v {
	case rejected:
		return false
	case probeDue:
		q, ok := c.probe(p, now.get())
		if !ok {
			return false
		}
		p = q
	}
	if e != nil {
		if c.strategy == SlowRequestRatio && !e.call.timed {
			e.call.start, e.call.timed = now.get(), true
		}
		e.call.record(c, p)
	}
	return true
}

// OnRequestComplete counts the outcome of e's call; see CircuitBreaker.
func (c *circuit) OnRequestComplete(e *Entry) {
	if e == nil {
		return
	}
	a := e.call.find(c)
	if a == nil {
		return
	}
	now := c.m.now()
	c.complete(a.p, now, now-e.call.start, c.m.classify(e.Err()), retryHint(e.Err()))
	a.p = nil
}

// check reads the breaker for a call arriving at now. It changes nothing but a probe that
// has timed out.
func (c *circuit) check(now *lazyNow) (*period, verdict) {
	p := c.cur.Load()
	if p.state == Closed {
		return p, admitted
	}
	return c.checkNotClosed(p, now.get())
}

func (c *circuit) checkNotClosed(p *period, now int64) (*period, verdict) {
	for {
		switch p.state {
		case Closed:
			return p, admitted
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
		if !c.probeOverdue(p, now) {
			return p, rejected
		}
		q := c.reopen(p, now)
		if c.move(p, q, ProbeTimedOut, 0, now) {
			return q, rejected
		}
		p = c.cur.Load()
	}
}

// probe tries to make the call the probe of p, OPEN or HALF_OPEN between probes. Only one
// caller wins. The first probe of a run is a transition; the next ones of the run are not.
func (c *circuit) probe(p *period, now int64) (*period, bool) {
	if p.state == HalfOpen {
		q := p.sameState()
		q.probing, q.deadline = true, satAdd(now, c.probeTimeout)
		return q, c.cur.CompareAndSwap(p, q)
	}
	q := c.newPeriod(p, HalfOpen, p.retryAt)
	q.openFor, q.failures = p.openFor, p.failures
	q.probing, q.deadline = true, satAdd(now, c.probeTimeout)
	return q, c.move(p, q, RetryTimeoutElapsed, 0, now)
}

// sameState returns a copy of the HALF_OPEN period p, as a new period, so that results of the
// calls p admitted are stale for it; it is not a transition, so it keeps p's generation.
func (p *period) sameState() *period {
	q := &period{state: p.state, gen: p.gen, seq: p.seq, retryAt: p.retryAt, openFor: p.openFor,
		failures: p.failures, successes: p.successes}
	q.blocked.Store(p.blocked.Load())
	return q
}

// releaseProbe returns a probe that will not run to OPEN, with the retry time unchanged, so
// the next call may probe.
func (c *circuit) releaseProbe(p *period, reason Reason, now int64) {
	q := c.newPeriod(p, Open, p.retryAt)
	q.openFor, q.failures = p.openFor, p.failures
	c.move(p, q, reason, 0, now)
}

// reopen builds the OPEN period that follows the HALF_OPEN period p when its probe failed or
// timed out at now: one more failure in a row, and an OPEN time backed off for it.
func (c *circuit) reopen(p *period, now int64) *period {
	return c.openPeriod(p, now, p.failures+1)
}

// openPeriod builds the OPEN period that follows p at now after failures probes failed in a
// row (0 on a trip).
func (c *circuit) openPeriod(p *period, now int64, failures uint32) *period {
	gen := p.gen + 1
	openFor := c.openTime(failures, gen)
	q := c.newPeriod(p, Open, satAdd(now, openFor))
	q.openFor, q.failures = openFor, failures
	return q
}

// complete counts a call that the period p admitted and that completed at now after rt.
// A failed call's retry hint (RetryAfter), in nanoseconds, lengthens the OPEN time it causes.
func (c *circuit) complete(p *period, now, rt int64, o Outcome, hint int64) {
	if p == nil || c.cur.Load() != p {
		return // admitted before the last transition
	}
	switch p.state {
	case Closed:
		c.count(p, now, rt, o, hint)
	case HalfOpen:
		c.decideProbe(p, now, rt, o, hint)
	}
}

func (c *circuit) count(p *period, now, rt int64, o Outcome, hint int64) {
	if p.retired || o == Ignore && !c.slowIgnored(rt, o) {
		return
	}
	if p.window == nil {
		c.countRun(p, now, o == Failure, hint)
		return
	}
	bad := c.isBad(rt, o)
	head := p.window.add(now, bad)
	if !bad && !p.window.mayHoldBad(head) {
		return // a good call over a window with no bad call cannot trip
	}
	total, badCalls := p.window.sum(head)
	if total < c.minCalls {
		return
	}
	if measure, trips := c.measure(total, badCalls); trips {
		c.move(p, c.withHint(c.openPeriod(p, now, 0), now, hint), ThresholdExceeded, measure, now)
	}
}

// countRun counts a call for ConsecutiveErrors: a failure lengthens the run of failures, a
// success ends it.
func (c *circuit) countRun(p *period, now int64, failed bool, hint int64) {
	if !failed {
		p.run.Store(0)
		return
	}
	if run := p.run.Inc(); float64(run) >= c.threshold {
		c.move(p, c.withHint(c.openPeriod(p, now, 0), now, hint), ThresholdExceeded, float64(run), now)
	}
}

func (c *circuit) decideProbe(p *period, now, rt int64, o Outcome, hint int64) {
	switch {
	case now-p.deadline >= 0: // a clock that stepped back does not stop the probe deciding
		c.move(p, c.reopen(p, now), ProbeTimedOut, 0, now)
	case o == Ignore && !c.slowIgnored(rt, o):
		c.releaseProbe(p, ProbeIgnored, now)
	case c.isBad(rt, o):
		c.move(p, c.withHint(c.reopen(p, now), now, hint), ProbeFailed, 0, now)
	case p.successes+1 < c.probeNum:
		// Not the last probe of the run: the next call is the next probe.
		q := p.sameState()
		q.successes++
		c.cur.CompareAndSwap(p, q)
	default:
		c.move(p, c.newPeriod(p, Closed, 0), ProbeSucceeded, 0, now)
	}
}

// isBad reports whether a call counts against the rule: slow for SlowRequestRatio (whatever
// its error), failed for the error strategies. It also judges the probe.
func (c *circuit) isBad(rt int64, o Outcome) bool {
	if c.strategy == SlowRequestRatio {
		return isSlow(rt, c.maxRT)
	}
	return o == Failure
}

// slowIgnored reports whether a call that counts neither way by its error was already slow:
// SlowRequestRatio counts it as slow, since a caller that gave up on a slow call does not make
// it fast.
func (c *circuit) slowIgnored(rt int64, o Outcome) bool {
	return o == Ignore && c.strategy == SlowRequestRatio && isSlow(rt, c.maxRT)
}

// retryDue reports whether the OPEN period p lets a probe through at now: its retry time has
// come, or lies further ahead than p's OPEN time, which only a clock that stepped back (or
// jumped so far that the ticks wrapped) can make.
func (c *circuit) retryDue(p *period, now int64) bool {
	ahead := p.retryAt - now
	return ahead <= 0 || ahead > p.openFor
}

// probeOverdue reports whether the probe of the HALF_OPEN period p counts as failed at now:
// its deadline has passed, or lies further ahead than ProbeTimeout, which only a clock that
// stepped back (or jumped so far that the ticks wrapped) can make.
func (c *circuit) probeOverdue(p *period, now int64) bool {
	ahead := p.deadline - now
	return ahead <= 0 || ahead > c.probeTimeout
}

// measure returns the ratio or count of bad calls and whether it meets the threshold.
// Ratios are divided, not multiplied out: 12/15 and 0.8 round to the same float64, so they
// compare equal as the user meant.
func (c *circuit) measure(total, bad uint64) (float64, bool) {
	var m float64
	if c.strategy.isCount() {
		m = float64(bad)
	} else {
		m = float64(bad) / float64(total)
	}
	return m, m >= c.threshold
}

// newPeriod builds the period that follows p.
func (c *circuit) newPeriod(p *period, s State, retryAt int64) *period {
	if s == Closed {
		return c.closedPeriod(p.gen+1, c.m.seq.Inc())
	}
	q := &period{state: s, gen: p.gen + 1, seq: c.m.seq.Inc(), retryAt: retryAt}
	q.blocked.Store(c.blockError(s, retryAt))
	return q
}

// closedPeriod builds a CLOSED period with an empty window.
func (c *circuit) closedPeriod(gen, seq uint64) *period {
	q := &period{state: Closed, gen: gen, seq: seq}
	if c.strategy.windowed() {
		q.window = newLeapArray(c.interval, c.buckets)
	}
	return q
}

// blockError builds the error of the calls a period rejects. It has its own copy of the rule,
// so a caller that changes it changes nothing else.
func (c *circuit) blockError(s State, retryAt int64) *BlockError {
	r := c.Rule()
	return &BlockError{Resource: c.name, Rule: &r, State: s, RetryAt: c.m.timeAt(retryAt)}
}

// move replaces the period from with to, and reports the transition if it won.
func (c *circuit) move(from, to *period, reason Reason, snapshot float64, now int64) bool {
	if !c.cur.CompareAndSwap(from, to) {
		return false
	}
	r := c.rule.Load()
	c.m.notify(StateChange{
		Resource:   c.name,
		Rule:       *r,
		From:       from.state,
		To:         to.state,
		Reason:     reason,
		Snapshot:   snapshot,
		At:         c.m.timeAt(now),
		Generation: to.gen,
		Seq:        to.seq,
		DryRun:     c.dry(),
	})
	return true
}

// dry reports whether the breaker lets through the calls it would reject: its rule is DryRun,
// or its resource is ForceClosed.
func (c *circuit) dry() bool { return c.dryRun || c.forcedClosed.Load() }

// reset moves the breaker to a fresh CLOSED period with an empty window, and reports the
// transition if it was not CLOSED. A retired breaker stays retired.
func (c *circuit) reset(now int64) {
	for {
		p := c.cur.Load()
		if p.retired {
			return
		}
		q := c.newPeriod(p, Closed, 0)
		if p.state != Closed {
			if c.move(p, q, Reset, 0, now) {
				return
			}
		} else if c.cur.CompareAndSwap(p, q) {
			return
		}
	}
}

// retire replaces the breaker's period with a final CLOSED one that counts nothing, so calls
// still in flight under a dropped rule change nothing. It returns the transition to report,
// for reason, when the breaker was not CLOSED.
func (c *circuit) retire(now int64, reason Reason) (StateChange, bool) {
	for {
		p := c.cur.Load()
		q := &period{state: Closed, gen: p.gen + 1, seq: c.m.seq.Inc(), retired: true}
		if c.cur.CompareAndSwap(p, q) {
			r := c.rule.Load()
			return StateChange{
				Resource: c.name, Rule: *r, From: p.state, To: Closed,
				Reason: reason, At: c.m.timeAt(now), Generation: q.gen, Seq: q.seq, DryRun: c.dry(),
			}, p.state != Closed
		}
	}
}

// reload points a kept breaker at its rule as reloaded, which may differ by its ID or by a
// default spelled out, so that the old rule set can be collected.
func (c *circuit) reload(r *Rule) {
	if old := c.rule.Swap(r); *old != *r {
		if p := c.cur.Load(); p.state != Closed {
			p.blocked.Store(c.blockError(p.state, p.retryAt))
		}
	}
}

// satAdd returns the tick d after t. It no longer saturates: ticks wrap (clock.go), and a
// retry time or deadline past the largest int64 must still lie d after t.
func satAdd(t, d int64) int64 { return t + d }
