package breaker

import (
	"go.uber.org/atomic"

	"github.com/halfopen/breaker/internal/window"
)

// A ramp paces the calls of a breaker that has just closed on a probe (Rule.RampUp), as TCP's
// slow start grows with acknowledgements: a dependency that answered one probe may still be
// warming up, and the full flow at once could knock it over again.
//
// Within each bucket of the rule's window, the k-th call offered (from 1) is admitted only if
// the calls admitted so far in that bucket are fewer than max(1, k/10, 1.5 × S), where S is
// the calls that succeeded in the bucket before, or so far in this bucket, whichever is more
// (pacing has no k/10: see below).
// So a dependency that answers fast takes the whole flow within about a bucket, and one that
// serves C calls a bucket is offered at most 1.5 C: its failures stay at most a third. That
// is the ceiling; the pace below it shrinks on a loss, as TCP's does: once a call the ramp
// admitted fails in a bucket (or is counted slow while still in flight), the rest of that
// bucket is paced by the fewer of the successes of the bucket before and of this one, so a
// dependency that has just run out of capacity is offered little more until it answers again;
// or by the successes of the bucket before, spread evenly over the bucket, where that admits
// more. A dependency counts its capacity in windows of its own, which need not start with the
// ramp's buckets: one that ran out early in a bucket may have room again later in it, and is
// then offered the rate it served in the bucket before, at an even pace rather than in a
// burst, and never above the ceiling.
//
// The ramp ends at the end of a bucket in which calls were offered and none was held back, or
// once RampUp has passed since the close: the RampUp loaded now, so that a reload that shortens
// it ends a ramp in progress no later than the new end. The breaker stays CLOSED throughout.
//
// Pacing (Rule.Pace) is the same ramp, entered when the window trips while the dependency still
// serves calls rather than after a probe: it starts from what the window saw in its newest
// bucket and the one before, as a bucket that has just lost calls, and has no time limit (a
// reload that turns Pace off ends it). It admits max(1, 1.5 × S) a bucket, without the ramp's
// k/10: the dependency has shown it fails part of its calls, and a share of the calls offered
// would go into a hang whole before its first call is known to be slow. Pacing also ends once
// its last bucket lies a whole window back, however long the quiet spell since: nothing in the
// window was held back. And a bucket of pacing in which calls ended and none succeeded nor was
// refused (not the bucket it started in) is a dependency that died while paced: at its end the
// breaker opens (ThresholdExceeded), however few calls that was.
//
// A refusal (Outcome Refused) is a live dependency saying how much it takes, as a quota does,
// and a bucket whose calls it refused is alive. Without a retry hint it is a loss, as a
// failure is. With one (RetryAfter), the dependency said when it takes calls again: pacing
// holds calls back until then (within a window), with that time as their RetryAt, and admits
// the first call of each bucket meanwhile, as it always admits one; the first of them to
// succeed ends the hold, since a quota's Retry-After is a whole number of seconds that may
// outlast the quota's period. Once the hold ends, pacing admits every call until the next
// refusal: the dependency says itself how much it takes. While a hold ended within the last
// window, pacing goes on: a quota takes the whole flow at the start of each of its periods.
//
// Buckets are known by their start, on the window's grid of bucket starts, never by a number
// that wraps: after any quiet spell, the first call finds its bucket fresh. A reading of the
// clock that lies before the current bucket (stale, or a clock that stepped back a little)
// counts in the current bucket, as the window counts it.
//
// A bucket's counts are one word, changed by compare-and-swap, so no bucket admits more than
// its ceiling whatever the interleaving. Moving to a new bucket swaps in a new one (a small
// allocation once a bucket, while the ramp lasts), which holds the successes of the bucket
// before as they stood then: a call of that bucket that ends later is not among them, and the
// new bucket admits fewer, never more.
type ramp struct {
	closed  int64 // when the probe closed the breaker, or pacing started
	length  int64 // the bucket length of the rule's window
	span    int64 // the rule's window: a bucket this far behind a reading is out of it
	paced   bool  // entered on a trip (Rule.Pace), not after a probe
	current atomic.Pointer[rampBucket]
	done    atomic.Bool
	blocked atomic.Pointer[BlockError] // the error of the calls held back in the newest bucket
	resume  atomic.Int64               // pacing: the end of the last refusal's hold; a window before the start while none came
}

// rampBucket is one bucket of a ramp: its start and the successes of the bucket before, fixed,
// and its counts, packed in one word (rampCounts).
type rampBucket struct {
	start  int64
	before uint16 // the successes of the bucket before, when this one began; 0 if none came
	counts atomic.Uint64
}

// rampCounts are a bucket's counts, unpacked. They saturate at maxRampCount.
type rampCounts struct {
	offered, admitted uint16
	succeeded         uint16
	lost              bool // a call the ramp admitted failed or was refused in this bucket, or was counted slow in flight
	refused           bool // a call the ramp admitted was refused in this bucket: the dependency is alive
	hinted            bool // calls were held back in this bucket for a refusal's hint: the dependency is alive
}

const maxRampCount = 1<<15 - 1

// rampRefused and rampHinted are the bits of a packed bucket that say it saw a refusal, and
// held a call back for a refusal's hint.
const (
	rampRefused = 1 << 48
	rampHinted  = 1 << 49
)

func (b rampCounts) pack() uint64 {
	w := uint64(b.offered)<<32 | uint64(b.admitted)<<16 | uint64(b.succeeded)<<1
	if b.lost {
		w |= 1
	}
	if b.refused {
		w |= rampRefused
	}
	if b.hinted {
		w |= rampHinted
	}
	return w
}

func unpackRamp(w uint64) rampCounts {
	return rampCounts{offered: uint16(w >> 32), admitted: uint16(w >> 16),
		succeeded: uint16(w>>1) & maxRampCount, lost: w&1 == 1, refused: w&rampRefused != 0,
		hinted: w&rampHinted != 0}
}

// newBucket returns a bucket that starts at start with counts b, after a bucket whose
// successes were before.
func newBucket(start int64, before uint16, b rampCounts) *rampBucket {
	q := &rampBucket{start: start, before: before}
	q.counts.Store(b.pack())
	return q
}

// newRamp starts a ramp for a breaker that closed at now on a probe, over buckets of length in
// a window of span. The probe, which succeeded at now, is the first success of now's bucket;
// the bucket before had none.
func newRamp(now, length, span int64) *ramp {
	r := &ramp{closed: now, length: length, span: span}
	r.resume.Store(now - 2*span) // no hold: a reading of the ramp's time is never a window before it
	r.current.Store(newBucket(r.startOf(now), 0, rampCounts{succeeded: 1}))
	return r
}

// newPace starts pacing at now, over buckets of length in a window of span, for a breaker whose
// window tripped: the bucket of now has seen newest (its calls, all admitted, and their
// successes, with a loss among them), and the bucket before it before. A refusal that tripped
// it holds the calls back for hold (refusalHold; noRefusal when the call was no refusal with a
// hint).
func newPace(now, length, span int64, newest, before window.Counts, hold int64) *ramp {
	r := &ramp{closed: now, length: length, span: span, paced: true}
	r.resume.Store(now - 2*span) // no hold: a reading of the ramp's time is never a window before it
	if hold != noRefusal {
		r.refuse(now, hold)
	}
	calls := rampCount(newest.Total)
	r.current.Store(newBucket(r.startOf(now), rampCount(before.Total-before.Bad),
		rampCounts{offered: calls, admitted: calls, succeeded: rampCount(newest.Total - newest.Bad), lost: true,
			refused: newest.Refused > 0}))
	return r
}

// noRefusal is the hold of a call that was no refusal with a retry hint (refusalHold).
const noRefusal = -1

// refusalHold is how long pacing holds its calls back after a call marked m with the retry hint
// hint: the hint of a refusal that gave one, else noRefusal.
func refusalHold(m window.Mark, hint int64) int64 {
	if m != window.Refused || hint <= 0 {
		return noRefusal
	}
	return hint
}

// refuse notes a refusal at now whose retry hint is hint: pacing holds calls back until
// now+hint, within a window, and follows the dependency's word for a window after (followsHints).
func (r *ramp) refuse(now, hint int64) {
	end := after(now, min(hint, r.span))
	for {
		old := r.resume.Load()
		if end-old <= 0 || r.resume.CompareAndSwap(old, end) {
			return
		}
	}
}

// resumeAt ends a hold at now, if one lasts: a call succeeded, so the dependency takes calls.
func (r *ramp) resumeAt(now int64) {
	for {
		old := r.resume.Load()
		if old-now <= 0 || r.resume.CompareAndSwap(old, now) {
			return
		}
	}
}

// holds reports whether pacing holds calls back at now, for a refusal's hint.
func (r *ramp) holds(now int64) bool { return r.paced && r.resume.Load()-now > 0 }

// followsHints reports whether a refusal's hold lasted less than a window before at: pacing then goes
// by the dependency's hints.
func (r *ramp) followsHints(at int64) bool { return r.paced && at-r.resume.Load() < r.span }

// rampCount is n as a ramp counts it, saturated.
func rampCount(n uint64) uint16 { return uint16(min(n, maxRampCount)) }

// startOf returns the start of the bucket that holds now, on the grid through tick 0.
func (r *ramp) startOf(now int64) int64 { return now - window.FloorMod(now, r.length) }

// rampStep is what a ramp finds when a call comes.
type rampStep uint8

const (
	rampOn   rampStep = iota // the call counts in the current bucket, or a new one
	rampOver                 // the ramp has ended: the call passes, and the period goes on without it
	rampDead                 // a bucket of pacing ended with calls and no success: the breaker opens
)

// next says what the ramp finds at now, whose bucket starts at start, when its current bucket
// is q with counts b, by the rule's tuning t; it changes nothing.
func (r *ramp) next(now, start int64, q *rampBucket, b rampCounts, t *tuning) rampStep {
	switch {
	case r.over(now, t):
		return rampOver
	case start-q.start <= 0:
		return rampOn // now's bucket, or a reading before it
	case r.paced && now-q.start >= r.span:
		return rampOver // pacing that held nothing back in the window, however long ago its last bucket
	case r.paced && q.start == r.startOf(r.closed):
		// The bucket pacing started in, whose calls before the start it did not pace, neither
		// took the whole flow nor died.
	case r.paced && b.lost && b.succeeded == 0 && !b.refused && !b.hinted:
		return rampDead
	case b.offered > 0 && b.admitted == b.offered && !r.followsHints(q.start):
		return rampOver // a whole bucket took the flow
	}
	return rampOn
}

// bucketAt returns the bucket that counts a call at now and its counts, starting now's bucket
// if it is later than the current one, and what the ramp found (next). Once the ramp is over it
// stays over.
func (r *ramp) bucketAt(now int64, t *tuning) (*rampBucket, uint64, rampStep) {
	start := r.startOf(now)
	for {
		if r.done.Load() {
			return nil, 0, rampOver
		}
		q := r.current.Load()
		old := q.counts.Load()
		b := unpackRamp(old)
		switch r.next(now, start, q, b, t) {
		case rampOver:
			r.done.Store(true)
			return nil, 0, rampOver
		case rampDead:
			return nil, 0, rampDead
		}
		if start-q.start <= 0 {
			return q, old, rampOn
		}
		before := uint16(0)
		if start-q.start == r.length {
			before = b.succeeded
		}
		r.current.CompareAndSwap(q, newBucket(start, before, rampCounts{}))
	}
}

// over reports whether the ramp is over at now by the rule's tuning t: RampUp has passed since
// the close, or, for pacing, the rule no longer paces.
func (r *ramp) over(now int64, t *tuning) bool {
	if r.paced {
		return !t.pace
	}
	return now-after(r.closed, t.rampUp) >= 0
}

// on reports whether the ramp still paces calls at now, without moving it: for Stats.
func (r *ramp) on(now int64, t *tuning) bool {
	if r.done.Load() {
		return false
	}
	q := r.current.Load()
	return r.next(now, r.startOf(now), q, unpackRamp(q.counts.Load()), t) != rampOver
}

// admit counts a call offered at now and reports whether the ramp lets it through, and what it
// found: rampOver, the call passes; rampDead, the breaker opens.
func (r *ramp) admit(now int64, t *tuning) (bool, rampStep) {
	for {
		q, old, step := r.bucketAt(now, t)
		if step != rampOn {
			return true, step
		}
		b := unpackRamp(old)
		b.offered = min(b.offered+1, maxRampCount)
		at := later(now, q.start)
		var admitted bool
		switch hold := r.holds(at); {
		case hold:
			admitted, b.hinted = b.admitted == 0, true // one call a bucket, which may end the hold
		case r.followsHints(at):
			admitted = true // until the next refusal says otherwise
		default:
			admitted = b.allows(q.before, now, r.length, r.paced)
		}
		if admitted {
			b.admitted = min(b.admitted+1, maxRampCount)
		}
		if q.counts.CompareAndSwap(old, b.pack()) {
			return admitted, rampOn
		}
	}
}

// allows reports whether the bucket b, with its offered call counted, admits that call at
// now, given the successes of the bucket before and the bucket length. Pacing, entered on a
// trip, admits by the successes it has seen alone: a dependency that has shown it fails part of
// its calls is never offered a share of the calls offered, which a hung one would swallow.
func (b rampCounts) allows(before uint16, now, length int64, paced bool) bool {
	a, k := uint64(b.admitted), uint64(b.offered)
	if a == 0 || !b.lost && !paced && 10*a < k {
		return true // at least one call a bucket; before a loss in a ramp, a tenth of those offered
	}
	s := uint64(b.succeeded)
	if b.lost {
		// After a loss: no growth beyond what both buckets showed, or the rate the bucket
		// before served, spread over the bucket, if that admits more. A dependency whose
		// capacity ran out early in the bucket may take more later in it (its own window
		// need not start with the ramp's), but not in a burst. (Counts below 2^15 times a
		// bucket of at most a day stay below 2^62.)
		elapsed := uint64(window.FloorMod(now, length))
		return 2*a < 3*min(s, uint64(before)) || a*uint64(length) < uint64(before)*elapsed
	}
	return 2*a < 3*max(s, uint64(before))
}

// giveBack returns, whole, the place of a call the ramp admitted at now that a later rule, the
// resource's limit or a slot then blocked: it was neither held back nor served by this ramp.
// A bucket that has ended since keeps it.
func (r *ramp) giveBack(now int64) {
	if r.done.Load() {
		return
	}
	q := r.current.Load()
	if q.start != r.startOf(now) {
		return
	}
	for {
		old := q.counts.Load()
		b := unpackRamp(old)
		if b.admitted == 0 || b.offered == 0 {
			return
		}
		b.offered--
		b.admitted--
		if q.counts.CompareAndSwap(old, b.pack()) {
			return
		}
	}
}

// completed counts the end, at now, of a call the breaker counted as m, with the retry hint
// hint, or of calls counted slow while still in flight (bad), and reports what the ramp found
// (admit). A refusal with a hint holds pacing's calls back for it (refuse); a success ends a
// hold (resumeAt).
func (r *ramp) completed(now int64, t *tuning, m window.Mark, hint int64) rampStep {
	switch {
	case !r.paced:
	case m == window.Good:
		r.resumeAt(now)
	case m == window.Refused && hint > 0:
		r.refuse(now, hint)
	}
	for {
		q, old, step := r.bucketAt(now, t)
		if step != rampOn {
			return step
		}
		b := unpackRamp(old)
		switch m {
		case window.Good:
			b.succeeded = min(b.succeeded+1, maxRampCount)
		case window.Refused:
			b.lost, b.refused = true, true
		default:
			b.lost = true
		}
		if q.counts.CompareAndSwap(old, b.pack()) {
			return rampOn
		}
	}
}

// retryAt returns when a call the ramp holds back at now may try again: when a refusal's hold
// ends, or else the start of the bucket after the one that judged it (now's, or the current
// one for a stale reading), or the ramp's end if that falls within that bucket (pacing has no
// set end). So it is after the start of the bucket the call counted in, also for a stale
// reading.
func (r *ramp) retryAt(now int64, t *tuning) int64 {
	start := r.startOf(now)
	if q := r.current.Load(); q.start-start > 0 {
		start = q.start
	}
	if r.holds(later(now, start)) {
		return r.resume.Load()
	}
	at := start + r.length
	if end := after(r.closed, t.rampUp); !r.paced && end-at < 0 && end-start > 0 {
		return end
	}
	return at
}
