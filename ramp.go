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
// the calls that succeeded in the bucket before, or so far in this bucket, whichever is more.
// So a dependency that answers fast takes the whole flow within about a bucket, and one that
// serves C calls a bucket is offered at most 1.5 C: its failures stay at most a third. That
// is the ceiling; the pace below it shrinks on a loss, as TCP's does: once a call the ramp
// admitted fails in a bucket, the rest of that bucket is paced by the fewer of the successes
// of the bucket before and of this one, so a dependency that has just run out of capacity is
// offered little more until it answers again; or by the successes of the bucket before,
// spread evenly over the bucket, where that admits more. A dependency counts its capacity in
// windows of its own, which need not start with the ramp's buckets: one that ran out early in
// a bucket may have room again later in it, and is then offered the rate it served in the
// bucket before, at an even pace rather than in a burst, and never above the ceiling.
//
// The ramp ends at the end of a bucket in which calls were offered and none was held back, or
// once RampUp has passed since the close: the RampUp loaded now, so that a reload that shortens
// it ends a ramp in progress no later than the new end. The breaker stays CLOSED throughout.
//
// Pacing (Rule.Pace) is the same ramp, entered when the window trips while the dependency still
// serves calls rather than after a probe: it starts from what the window saw in its newest
// bucket and the one before, as a bucket that has just lost calls, and has no time limit (a
// reload that turns Pace off ends it).
//
// A reading of the clock that lies before the current bucket (stale, or a clock that stepped
// back a little) counts in the current bucket, as the window counts it.
//
// A bucket's counts are one word, changed by compare-and-swap, so no bucket admits more than
// its ceiling whatever the interleaving. The bucket before is a second word, written after a
// new bucket's word: a call that reads it in between sees no successes there, and admits
// fewer, never more.
type ramp struct {
	closed  int64 // when the probe closed the breaker, or pacing started
	length  int64 // the bucket length of the rule's window
	paced   bool  // entered on a trip (Rule.Pace), not after a probe
	current atomic.Uint64
	before  atomic.Uint64 // the bucket before current: its seq and successes
	done    atomic.Bool
	blocked atomic.Pointer[BlockError] // the error of the calls held back in the newest bucket
}

// rampBucket is one bucket of a ramp, unpacked. seq is the bucket's index on the grid of
// bucket starts, modulo 2^16; the counts saturate.
type rampBucket struct {
	seq               uint16
	offered, admitted uint16
	succeeded         uint16 // at most maxRampCount
	lost              bool   // a call the ramp admitted failed in this bucket
}

const maxRampCount = 1<<15 - 1

func (b rampBucket) pack() uint64 {
	w := uint64(b.seq)<<48 | uint64(b.offered)<<32 | uint64(b.admitted)<<16 | uint64(b.succeeded)<<1
	if b.lost {
		w |= 1
	}
	return w
}

func unpackRamp(w uint64) rampBucket {
	return rampBucket{seq: uint16(w >> 48), offered: uint16(w >> 32), admitted: uint16(w >> 16),
		succeeded: uint16(w>>1) & maxRampCount, lost: w&1 == 1}
}

func packBefore(seq, succeeded uint16) uint64 { return uint64(seq)<<16 | uint64(succeeded) }

// newRamp starts a ramp for a breaker that closed at now on a probe, over buckets of length.
// The probe, which succeeded at now, is the first success of now's bucket; the bucket before
// had none.
func newRamp(now, length int64) *ramp {
	r := &ramp{closed: now, length: length}
	seq := r.seqAt(now)
	r.current.Store(rampBucket{seq: seq, succeeded: 1}.pack())
	r.before.Store(packBefore(seq-1, 0))
	return r
}

// newPace starts pacing at now, over buckets of length, for a breaker whose window tripped:
// the bucket of now has seen newest (its calls, all admitted, and their successes, with a
// loss among them), and the bucket before it before.
func newPace(now, length int64, newest, before window.Counts) *ramp {
	r := &ramp{closed: now, length: length, paced: true}
	seq := r.seqAt(now)
	calls := rampCount(newest.Total)
	r.current.Store(rampBucket{seq: seq, offered: calls, admitted: calls,
		succeeded: rampCount(newest.Total - newest.Bad), lost: true}.pack())
	r.before.Store(packBefore(seq-1, rampCount(before.Total-before.Bad)))
	return r
}

// rampCount is n as a ramp counts it, saturated.
func rampCount(n uint64) uint16 { return uint16(min(n, maxRampCount)) }

// seqAt returns the index, modulo 2^16, of the bucket that holds now.
func (r *ramp) seqAt(now int64) uint16 {
	q := now / r.length
	if now%r.length < 0 {
		q-- // floor, for a tick before the epoch
	}
	return uint16(q)
}

// bucketAt returns the word of the bucket that holds now, starting that bucket if it is later
// than the current one (an earlier reading counts in the current one). It reports false when
// the ramp has ended: it is over as t says, or the bucket before ended with every offered call
// admitted.
func (r *ramp) bucketAt(now int64, t *tuning) (uint64, rampBucket, bool) {
	seq := r.seqAt(now)
	for {
		if r.done.Load() {
			return 0, rampBucket{}, false
		}
		if r.over(now, t) {
			r.done.Store(true)
			return 0, rampBucket{}, false
		}
		old := r.current.Load()
		b := unpackRamp(old)
		if int16(seq-b.seq) <= 0 {
			return old, b, true
		}
		if b.offered > 0 && b.admitted == b.offered && !(r.paced && b.seq == r.seqAt(r.closed)) {
			// A whole bucket took the flow; not the bucket pacing started in, whose calls
			// before the start it did not pace.
			r.done.Store(true)
			return 0, rampBucket{}, false
		}
		next := rampBucket{seq: seq}
		if r.current.CompareAndSwap(old, next.pack()) {
			succeeded := uint16(0)
			if b.seq == seq-1 {
				succeeded = b.succeeded
			}
			r.before.Store(packBefore(seq-1, succeeded))
		}
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
func (r *ramp) on(now int64, t *tuning) bool { return !r.done.Load() && !r.over(now, t) }

// admit counts a call offered at now and reports whether the ramp lets it through, and
// whether the ramp is still on (false: it ended, and the call passes).
func (r *ramp) admit(now int64, t *tuning) (admitted, on bool) {
	for {
		old, b, on := r.bucketAt(now, t)
		if !on {
			return true, false
		}
		b.offered = min(b.offered+1, maxRampCount)
		admitted := b.allows(r.successesBefore(b.seq), now, r.length)
		if admitted {
			b.admitted = min(b.admitted+1, maxRampCount)
		}
		if r.current.CompareAndSwap(old, b.pack()) {
			return admitted, true
		}
	}
}

// allows reports whether the bucket b, with its offered call counted, admits that call at
// now, given the successes of the bucket before and the bucket length.
func (b rampBucket) allows(before uint16, now, length int64) bool {
	a, k := uint64(b.admitted), uint64(b.offered)
	if a == 0 || !b.lost && 10*a < k {
		return true // at least one call a bucket; before a loss, a tenth of those offered
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

// successesBefore returns the successes of the bucket before the one numbered seq, or 0 if the
// ramp has not recorded them yet.
func (r *ramp) successesBefore(seq uint16) uint16 {
	w := r.before.Load()
	if uint16(w>>16) != seq-1 {
		return 0
	}
	return uint16(w)
}

// giveBack returns the place of a call the ramp admitted at now that a later rule, the
// resource's limit or a slot then blocked.
func (r *ramp) giveBack(now int64) {
	seq := r.seqAt(now)
	for {
		old := r.current.Load()
		b := unpackRamp(old)
		if r.done.Load() || b.seq != seq || b.admitted == 0 {
			return
		}
		b.admitted--
		if r.current.CompareAndSwap(old, b.pack()) {
			return
		}
	}
}

// completed counts the end, at now, of a call the breaker counted good or bad.
func (r *ramp) completed(now int64, t *tuning, bad bool) {
	for {
		old, b, on := r.bucketAt(now, t)
		if !on {
			return
		}
		if bad {
			b.lost = true
		} else {
			b.succeeded = min(b.succeeded+1, maxRampCount)
		}
		if r.current.CompareAndSwap(old, b.pack()) {
			return
		}
	}
}

// retryAt returns when a call the ramp holds back at now may try again: the next bucket's
// start, or the ramp's end if sooner (pacing has no set end).
func (r *ramp) retryAt(now int64, t *tuning) int64 {
	at := now - window.FloorMod(now, r.length) + r.length
	if end := after(r.closed, t.rampUp); !r.paced && end-at < 0 {
		return end
	}
	return at
}
