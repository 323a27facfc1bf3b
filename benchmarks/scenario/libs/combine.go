package libs

import (
	"sync"

	"github.com/halfopen/breaker/benchmarks/scenario"
)

// combined turns the states of several breakers guarding one resource (breaker's and
// sentinel's two rules) into the resource's state: OPEN if any is open, else HALF_OPEN if any
// is, else CLOSED. It reports only changes of that, so one outage that trips both rules is one
// trip, as for the libraries with a single breaker.
type combined struct {
	mu      sync.Mutex
	states  map[any]scenario.State
	last    scenario.State
	changed func(scenario.State)
}

func newCombined(changed func(scenario.State)) *combined {
	return &combined{states: map[any]scenario.State{}, changed: changed}
}

// set records that breaker key is now in state s.
func (c *combined) set(key any, s scenario.State) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.states[key] = s
	agg := scenario.Closed
	for _, st := range c.states {
		if st == scenario.Open || (st == scenario.HalfOpen && agg == scenario.Closed) {
			agg = st
		}
	}
	if agg != c.last {
		c.last = agg
		c.changed(agg) // under c.mu, so changes are reported in the order they were made
	}
}
