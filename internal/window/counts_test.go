package window

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// A sliding window counts refusals among its bad calls, apart from failures, in every stripe,
// in the newest buckets as in the whole window, and forgets them with their bucket.
func TestSlidingCountsRefusalsApart(t *testing.T) {
	ms := int64(time.Millisecond)
	w := NewSliding(time.Second, 10, 4)
	w.Add(0, 1, Refused, 0)
	w.Add(0, 1, Bad, 0)
	w.Stripe()
	w.Add(150*ms, 2, Refused, 3)
	w.Add(150*ms, 1, Good, 1)

	all, newest := w.Sums(w.HeadAt(150*ms), 100*ms)
	assert.Equal(t, Counts{Total: 5, Bad: 4, Refused: 3}, all)
	assert.Equal(t, uint64(1), all.Failed())
	assert.Equal(t, Counts{Total: 3, Bad: 2, Refused: 2}, newest, "the newest bucket: refusals only")
	assert.Zero(t, newest.Failed())

	w.Add(1050*ms, 1, Good, 0) // the bucket at 0 is out of the window, and its lap is reset
	all, _ = w.Sums(w.HeadAt(1050*ms), 0)
	assert.Equal(t, Counts{Total: 4, Bad: 2, Refused: 2}, all)
}

// A window of calls counts the refusals among its last n calls, and a place that a later call
// takes forgets its refusal.
func TestCallsCountRefusalsApart(t *testing.T) {
	w := NewCalls(3)
	assert.Equal(t, Counts{Total: 1, Bad: 1, Refused: 1}, w.AddOne(Refused))
	assert.Equal(t, Counts{Total: 2, Bad: 2, Refused: 1}, w.AddOne(Bad))
	assert.Equal(t, Counts{Total: 3, Bad: 3, Refused: 2}, w.AddOne(Refused))
	assert.Equal(t, Counts{Total: 3, Bad: 2, Refused: 1}, w.AddOne(Good), "the first refusal left")
	assert.Equal(t, Counts{Total: 3, Bad: 2, Refused: 1}, w.AddOne(Bad), "a failure took a failure's place")
	assert.Equal(t, Counts{Total: 3, Bad: 2, Refused: 0}, w.AddOne(Bad), "a failure took a refusal's place")
	assert.Equal(t, Counts{Total: 3, Bad: 2, Refused: 0}, w.Sum())
}
