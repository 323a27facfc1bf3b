package breakerdebug

import (
	"cmp"
	"slices"
	"sync"

	"github.com/halfopen/breaker"
)

// keep is how many state changes the status shows, and a new subscriber of the event stream
// is sent first.
const keep = 100

// defaultSubscribers is how many subscribers the event stream serves at once by default.
const defaultSubscribers = 16

// changes is the handler's Observer: it keeps the last keep state changes, whatever resources
// they are of, a bound that no number of names can grow, and hands each new one to the
// subscribers of the event stream. It runs on the goroutine of the call that made each
// transition, so it only copies the change, and sends it to each subscriber without waiting:
// a subscriber whose buffer is full (it fell keep changes behind) is dropped and counted, and
// its stream ends. It is safe for concurrent use.
type changes struct {
	mu      sync.Mutex
	buf     [keep]breaker.StateChange
	next    int // where the next change goes
	n       int // how many of buf hold changes
	subs    map[*subscriber]struct{}
	limit   int    // of subs
	dropped uint64 // subscribers dropped for falling behind
}

// subscriber is one subscriber of the event stream: the changes it has yet to be sent. The
// observer closes ch when it drops the subscriber.
type subscriber struct {
	ch chan breaker.StateChange
}

var _ breaker.Observer = (*changes)(nil)

// OnStateChange keeps c, dropping the oldest change once keep are held, and sends it to every
// subscriber that has room for it.
func (cs *changes) OnStateChange(c breaker.StateChange) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.buf[cs.next] = c
	cs.next = (cs.next + 1) % keep
	cs.n = min(cs.n+1, keep)
	for s := range cs.subs {
		select {
		case s.ch <- c:
		default: // it fell behind: never wait for it
			delete(cs.subs, s)
			close(s.ch)
			cs.dropped++
		}
	}
}

// newestFirst returns a copy of the kept changes, the latest first by Seq: changes made on
// different goroutines may be reported out of order, and Seq puts them back in the order they
// happened.
func (cs *changes) newestFirst() []breaker.StateChange {
	cs.mu.Lock()
	out := cs.kept()
	cs.mu.Unlock()
	slices.SortStableFunc(out, func(a, b breaker.StateChange) int { return cmp.Compare(b.Seq, a.Seq) })
	return out
}

// kept returns a copy of the kept changes, as they came. It requires mu held.
func (cs *changes) kept() []breaker.StateChange {
	out := make([]breaker.StateChange, cs.n)
	for i := range out {
		out[i] = cs.buf[(cs.next-cs.n+i+keep)%keep]
	}
	return out
}

// subscribe makes a subscriber of the changes from now on, and returns it with the kept changes
// whose Seq is after since (0: all of them), the oldest first by Seq; ok is false when the
// stream serves its limit of subscribers already.
func (cs *changes) subscribe(since uint64) (s *subscriber, replay []breaker.StateChange, ok bool) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if len(cs.subs) >= cs.limit {
		return nil, nil, false
	}
	s = &subscriber{ch: make(chan breaker.StateChange, keep)}
	if cs.subs == nil {
		cs.subs = map[*subscriber]struct{}{}
	}
	cs.subs[s] = struct{}{}
	replay = slices.DeleteFunc(cs.kept(), func(c breaker.StateChange) bool { return c.Seq <= since })
	slices.SortStableFunc(replay, func(a, b breaker.StateChange) int { return cmp.Compare(a.Seq, b.Seq) })
	return s, replay, true
}

// unsubscribe ends s, unless the observer dropped it already.
func (cs *changes) unsubscribe(s *subscriber) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	delete(cs.subs, s)
}

// stats returns how many subscribers the stream serves, its limit, and how many it dropped.
func (cs *changes) stats() eventsStatus {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return eventsStatus{Subscribers: len(cs.subs), Limit: cs.limit, Dropped: cs.dropped}
}
