package breaker

import (
	"time"

	"github.com/halfopen/breaker/internal/window"
)

// LeapArray is the window a breaker counts its calls in, named as in Sentinel, whose sliding
// window it is: the shape its rule gives it (StatInterval in BucketCount equal buckets, or the
// last StatCalls calls, however long they took to come), over the lock-free counters of
// internal/window. Each breaker owns one. Each CLOSED period of the breaker counts in counters
// of its own, so the window starts empty after every recovery; Stats reads them.
type LeapArray struct {
	interval  time.Duration // StatInterval; for a window of calls, the default's, which paces retries
	buckets   uint32        // BucketCount
	statCalls uint32        // StatCalls: the window is the last statCalls calls; 0: a window of time
}

// newLeapArray returns the window of the rule r.
func newLeapArray(r *Rule) LeapArray {
	return LeapArray{interval: r.statInterval(), buckets: r.bucketCount(), statCalls: r.StatCalls}
}

// bucketLen is the length of a bucket of the window.
func (a *LeapArray) bucketLen() int64 { return int64(a.interval) / int64(a.buckets) }

// fill gives the CLOSED period q empty counters of the window's shape: a window of calls, or a
// window of buckets with stripes(buckets) stripes.
func (a *LeapArray) fill(q *period, stripes func(n int) int) {
	if a.statCalls > 0 {
		q.calls = window.NewCalls(a.statCalls)
		return
	}
	q.window = window.NewSliding(a.interval, a.buckets, stripes(int(a.buckets)))
}
