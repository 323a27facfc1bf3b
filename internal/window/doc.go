// Package window holds the counters a breaker writes on every call: a sliding window of
// buckets (Sliding), a window of the last n calls (Calls), and a ring of the calls in flight
// by their start (Flight). It knows nothing of breakers, rules or Managers.
//
// Times are ticks: nanoseconds in an int64 that wraps, as TCP sequence numbers do. Two ticks
// are only ever compared through their difference (a-b > 0 for "a is later"), which is right
// while they are less than 2^63 ns, about 292 years, apart.
//
// Every counter is lock-free on the path of a call and allocates nothing; each is safe for
// concurrent use. Sliding and Flight stripe what a call writes by the processor it runs on
// (stripes.go), so that calls on different cores write different cache lines.
package window
