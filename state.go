package breaker

import (
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"strconv"
	"time"

	"go.uber.org/atomic"

	"github.com/halfopen/breaker/internal/window"
)

// State is the state of one breaker.
type State int32

const (
	// Closed lets calls pass and counts their outcomes.
	Closed State = iota
	// Open rejects every call until the breaker's retry time.
	Open
	// HalfOpen has one probe call in flight and rejects every other call.
	HalfOpen
)

// String returns "CLOSED", "OPEN" or "HALF_OPEN".
func (s State) String() string {
	switch s {
	case Closed:
		return "CLOSED"
	case Open:
		return "OPEN"
	case HalfOpen:
		return "HALF_OPEN"
	}
	return "State(" + strconv.Itoa(int(s)) + ")"
}

// A breaker lives through periods, each in one state. Its current period is read with one
// atomic load and replaced by compare-and-swap, so exactly one goroutine makes each transition
// and reports it. A call keeps the period that admitted it; when it completes in a later
// period its outcome is ignored. The functions below build the periods and make the
// transitions; breaker.go decides when.

// period is one stretch of a breaker's life in one state. Only blocked changes after it is
// published.
type period struct {
	state     State
	failures  uint32                     // OPEN, HALF_OPEN: probes failed in a row since the trip
	successes uint32                     // HALF_OPEN: probes that succeeded in this run
	probing   bool                       // HALF_OPEN: a probe is in flight; else the next call probes
	retired   bool                       // the final period of a dropped breaker: it counts nothing
	gen       uint64                     // counts the breaker's transitions
	seq       uint64                     // the Manager-wide sequence number of the transition to it
	retryAt   int64                      // OPEN, HALF_OPEN: when a probe may pass
	openFor   int64                      // OPEN, HALF_OPEN: how long OPEN lasts, from the trip or failed probe
	deadline  int64                      // HALF_OPEN: when the probe in flight counts as failed
	probeFor  int64                      // HALF_OPEN: the ProbeTimeout its probe was given
	since     int64                      // HALF_OPEN between probes: when the last probe of the run succeeded
	window    *window.Sliding            // CLOSED: the calls of this period (windowed strategies)
	calls     *window.Calls              // CLOSED: instead of window, the last StatCalls calls
	ramp      *ramp                      // CLOSED after a probe closed it (RampUp), or pacing (Pace): the pace of its calls
	flight    *window.Flight             // CLOSED, SlowRequestRatio: its calls in flight, by start
	oldFlight *window.Flight             // CLOSED: the ring flight replaced at a reload, whose calls it judges too
	run       atomic.Int64               // CLOSED: failures in a row (ConsecutiveErrors)
	blocked   atomic.Pointer[BlockError] // OPEN, HALF_OPEN: the error of rejected calls
}

// striped reports whether the calls of the CLOSED period p have contended for its window's
// words, and so write stripes of their own in its counters.
func (p *period) striped() bool { return p.window != nil && p.window.Striped() }

// pacing reports whether the CLOSED period p paces its calls (Rule.Pace).
func (p *period) pacing() bool { return p.ramp != nil && p.ramp.paced }

// awaitsProbe reports whether the period lets its next call through as a probe, once its
// retry time has come (OPEN) or at once (HALF_OPEN between probes).
func (p *period) awaitsProbe() bool {
	return p.state == Open || p.state == HalfOpen && !p.probing
}

// probe tries to make the call the probe of p, OPEN or HALF_OPEN between probes. Only one
// caller wins. The first probe of a run is a transition; the next ones of the run are not.
func (c *circuit) probe(p *period, now int64) (*period, bool) {
	timeout := c.tune.Load().probeTimeout
	if p.state == HalfOpen {
		if by := p.since - now; by > 0 && !c.stepBack(by) {
			now = p.since // a stale reading: the probe's time runs from the period's start
		}
		q := p.sameState()
		q.probing, q.deadline, q.probeFor = true, after(now, timeout), timeout
		return q, c.cur.CompareAndSwap(p, q)
	}
	q := c.newPeriod(p, HalfOpen, p.retryAt)
	q.openFor, q.failures = p.openFor, p.failures
	q.probing, q.deadline, q.probeFor = true, after(now, timeout), timeout
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
	openFor := c.openTime(c.tune.Load(), failures, gen)
	q := c.newPeriod(p, Open, after(now, openFor))
	q.openFor, q.failures = openFor, failures
	return q
}

// newPeriod builds the period that follows p.
func (c *circuit) newPeriod(p *period, s State, retryAt int64) *period {
	if s == Closed {
		return c.closedPeriod(p.gen+1, c.tl.seq.Inc())
	}
	q := &period{state: s, gen: p.gen + 1, seq: c.tl.seq.Inc(), retryAt: retryAt}
	q.blocked.Store(c.blockError(s, retryAt))
	return q
}

// closedPeriod builds a CLOSED period with empty counters, as the breaker's kind has them.
func (c *circuit) closedPeriod(gen, seq uint64) *period {
	q := &period{state: Closed, gen: gen, seq: seq}
	c.kind.counters(q)
	if q.window != nil && c.tl.stripes > 1 {
		q.window.Stripe() // a test's: its calls write their stripes from the first
	}
	return q
}

// stripes returns how many stripes a counter of n words of the breaker has: as many as the
// memory budget counted when its rules were loaded, whatever GOMAXPROCS is now.
func (c *circuit) stripes(n int) int {
	if c.tl.stripes > 0 {
		return c.tl.stripes
	}
	return window.Stripes(n, c.tune.Load().procs)
}

// endRamp replaces the CLOSED period p, whose ramp has ended at now, with the same period
// without it, so that its calls pass without a check. The end of pacing is a transition that
// observers hear; a ramp's end is not.
func (c *circuit) endRamp(p *period, now int64) {
	q := p.withFlight(p.flight, p.oldFlight)
	q.ramp = nil
	if !p.ramp.paced {
		c.cur.CompareAndSwap(p, q)
		return
	}
	q.gen, q.seq = p.gen+1, c.tl.seq.Inc()
	c.move(p, q, PacingEnded, 0, now)
}

// pace makes the CLOSED period p, whose window met the rule's threshold at now with measure
// while the dependency still served calls, pace them (Rule.Pace); or the copy of p that is
// current, as trip does. A period that paces, or ramps up, already goes on as it is. Pacing
// starts from the calls of the window's newest bucket and the one before, holding its calls
// back for hold when a refusal started it (refusalHold).
func (c *circuit) pace(p *period, now int64, measure float64, hold int64) {
	for from := p; from != nil && from.state == Closed && from.ramp == nil; from = c.current(p) {
		length := c.leap.bucketLen()
		head := from.window.HeadAt(now)
		_, newest := from.window.Sums(head, length)
		_, two := from.window.Sums(head, 2*length)
		before := window.Counts{Total: two.Total - newest.Total, Bad: two.Bad - newest.Bad}
		q := from.withFlight(from.flight, from.oldFlight)
		q.gen, q.seq = from.gen+1, c.tl.seq.Inc()
		q.ramp = newPace(now, length, int64(c.leap.interval), newest, before, hold)
		if c.move(from, q, PacingStarted, measure, now) {
			return
		}
	}
}

// withFlight returns a copy of the CLOSED period p whose calls in flight are counted in f, and
// judged with those of old. It is not a transition: the copy keeps p's generation and counts
// in p's window, where the calls p admitted count too (see current).
func (p *period) withFlight(f, old *window.Flight) *period {
	return &period{state: Closed, gen: p.gen, seq: p.seq, window: p.window, calls: p.calls, ramp: p.ramp,
		flight: f, oldFlight: old}
}

// current returns the breaker's period if the call that p admitted counts in it: p is the
// current period, or a copy of it (withFlight) that counts in the same window. Else nil: the
// call was admitted before the last transition.
func (c *circuit) current(p *period) *period {
	if cur := c.cur.Load(); cur == p || p != nil && (cur.window != nil && cur.window == p.window ||
		cur.calls != nil && cur.calls == p.calls) {
		return cur
	}
	return nil
}

// move replaces the period from with to, and reports the transition if it won.
func (c *circuit) move(from, to *period, reason Reason, snapshot float64, now int64) bool {
	if !c.cur.CompareAndSwap(from, to) {
		return false
	}
	c.notify(StateChange{
		Resource:   c.name,
		Rule:       c.Rule(),
		From:       from.state,
		To:         to.state,
		Reason:     reason,
		Snapshot:   snapshot,
		At:         c.tl.timeAt(now),
		Generation: to.gen,
		Seq:        to.seq,
		DryRun:     c.dry(now),
	})
	return true
}

// reset moves the breaker to a fresh CLOSED period with an empty window, and reports the
// transition if it was not CLOSED, or was pacing. A retired breaker stays retired.
func (c *circuit) reset(now int64) {
	for {
		p := c.cur.Load()
		if p.retired {
			return
		}
		q := c.newPeriod(p, Closed, 0)
		if p.state != Closed || p.pacing() {
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
// for reason, when the breaker was not CLOSED, or was pacing.
func (c *circuit) retire(now int64, reason Reason) (StateChange, bool) {
	for {
		p := c.cur.Load()
		q := &period{state: Closed, gen: p.gen + 1, seq: c.tl.seq.Inc(), retired: true}
		if c.cur.CompareAndSwap(p, q) {
			return StateChange{
				Resource: c.name, Rule: c.Rule(), From: p.state, To: Closed,
				Reason: reason, At: c.tl.timeAt(now), Generation: q.gen, Seq: q.seq, DryRun: c.dry(now),
			}, p.state != Closed || p.pacing()
		}
	}
}

// retryDue reports whether the OPEN period p lets a probe through at now: its retry time has
// come, or the clock stepped back (or jumped so far that the ticks wrapped), see stepBack.
func (c *circuit) retryDue(p *period, now int64) bool {
	ahead := p.retryAt - now
	return ahead <= 0 || c.stepBack(ahead-p.openFor)
}

// probeOverdue reports whether the probe of the HALF_OPEN period p counts as failed at now: its
// deadline has passed, or the clock stepped back (or the ticks wrapped), see stepBack.
func (c *circuit) probeOverdue(p *period, now int64) bool {
	ahead := p.deadline - now
	return ahead <= 0 || c.stepBack(ahead-p.probeFor)
}

// stepBack reports whether a reading of the clock that lies by (> 0) before the start of a
// period means that the clock stepped back, rather than that the reading is stale: taken before
// another call started the period with a later reading, and used after a pause (preemption, a
// collection). A stale reading is read as the period's start, so it never shortens an OPEN time
// or a probe's time. The runtime's monotonic clock never steps back, so with it every such
// reading is stale; another clock's counts as a step back only when it lies further back than
// staleness explains. A step back makes the retry time or deadline due at once, so
// that no breaker is stuck on it.
func (c *circuit) stepBack(by int64) bool {
	return by > 0 && by > staleness(c.tl.steady, c.leap.interval)
}

// staleness is how far before a period's start a reading may lie and still be taken for a stale
// one: any distance for the runtime's monotonic clock (steady); for another clock, the
// breaker's StatInterval, and at least a second.
func staleness(steady bool, interval time.Duration) int64 {
	if steady {
		return math.MaxInt64
	}
	return int64(max(interval, time.Second))
}

// defaultInstance is the host name and the process id.
func defaultInstance() string {
	host, _ := os.Hostname()
	return host + "/" + strconv.Itoa(os.Getpid())
}

// jitterSeed hashes the instance name and the rule's identity, the parts of the jitter that do
// not change while the breaker lives.
func jitterSeed(instance string, r *Rule) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s\x00%+v", instance, r.identity())
	return h.Sum64()
}

// openTime is how long the breaker stays OPEN after failures probes failed in a row (0 on a
// trip), for the OPEN period of generation gen: RetryTimeout doubled for each failure, up to
// MaxRetryTimeout, shortened by a fraction in [0, RetryJitter).
func (c *circuit) openTime(t *tuning, failures uint32, gen uint64) int64 {
	d := t.retryTimeout
	for range min(failures, 63) {
		if d >= t.maxRetry/2 {
			d = t.maxRetry
			break
		}
		d *= 2
	}
	d = min(d, t.maxRetry)
	if t.jitter > 0 {
		d -= int64(float64(d) * t.jitter * unitHash(t.jitterSeed^gen))
	}
	return max(d, 1)
}

// unitHash maps x to [0, 1), evenly for nearby x (the finaliser of SplitMix64).
func unitHash(x uint64) float64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return float64(x>>11) / (1 << 53)
}

// rampRejection returns the error of a call the ramp r holds back at now, and its retry time
// (retryAt). The error is built once for each retry time.
func (c *circuit) rampRejection(r *ramp, now int64) (*BlockError, int64) {
	at := r.retryAt(now, c.tune.Load())
	b := r.blocked.Load()
	if b == nil || b.at != at {
		rule := c.Rule()
		cause := ErrRampingUp
		if r.paced {
			cause = ErrPacing
		}
		b = &BlockError{Resource: c.name, Rule: &rule, State: Closed, RetryAt: c.tl.timeAt(at),
			Cause: cause, at: at}
		r.blocked.Store(b)
	}
	return b, at
}

// checkRamp is check for a CLOSED period, which may be ramping up or pacing. A bucket of
// pacing that ended with calls and no success opens the breaker, and the call is judged by it.
func (c *circuit) checkRamp(p *period, now int64) (*period, verdict) {
	if p.ramp == nil {
		return p, admitted
	}
	ok, step := p.ramp.admit(now, c.tune.Load())
	switch step {
	case rampOver:
		// The call is admitted by the period that follows, not by p: its calls in flight are
		// judged there, where pacing no longer trips the window whatever its count.
		c.endRamp(p, now)
		return c.checkMore(c.cur.Load(), now)
	case rampDead:
		c.died(p, now)
		return c.checkMore(c.cur.Load(), now)
	}
	if !ok {
		return p, rejected
	}
	return p, admitted
}

// died opens the CLOSED period p, whose ramp found at now that a bucket of pacing ended with
// calls and none of them a success: the dependency died while paced, however few calls pacing
// let it have.
func (c *circuit) died(p *period, now int64) {
	c.trip(p, c.tune.Load(), now, 0, ThresholdExceeded, 1)
}

// withHint makes the OPEN period q stay OPEN at least hint, within the breaker's longest OPEN
// time, from now.
func (c *circuit) withHint(q *period, t *tuning, now, hint int64) *period {
	if hint > q.openFor {
		q.openFor = min(hint, t.maxRetry)
		q.retryAt = after(now, q.openFor)
		q.blocked.Store(c.blockError(Open, q.retryAt))
	}
	return q
}
