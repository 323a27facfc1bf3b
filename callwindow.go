package breaker

import "github.com/halfopen/breaker/internal/window"

// maxStatCalls bounds Rule.StatCalls, so that one rule cannot claim memory out of proportion.
const maxStatCalls = 10000

// countCalls counts n calls completed at now, bad or not, in the window of calls of the CLOSED
// period p, and trips p if the window then meets the rule's threshold. A good call over a
// window without bad calls cannot trip it.
func (c *circuit) countCalls(p *period, n uint64, bad bool, now, hint int64) {
	var all window.Counts
	for range n {
		all = p.calls.AddOne(bad)
	}
	if bad || all.Bad > 0 {
		c.decide(p, c.tune.Load(), all, window.Counts{}, now, hint)
	}
}
