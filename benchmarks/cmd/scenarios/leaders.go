package main

import (
	"fmt"
	"math"
	"strings"

	"github.com/halfopen/breaker/benchmarks/scenario"
)

// recommended is the guard with the settings the README recommends, whose place is given
// under every measure it does not lead.
const recommended = "breaker+protect"

// ranking is one measure that orders the guards: each guard's median, and whether less is
// better. A NaN value takes no part.
type ranking struct {
	name   string
	values []float64 // per library
	less   bool
	format func(float64) string
}

// leaders writes, for each measure that ranks the guards, who leads: the fewest calls sent
// before the trip and the soonest recovery, both among the guards that tripped (one that
// never did sent the whole outage and recovered from nothing), the soonest detection, the
// most goodput in each phase and the fewest failed calls in each down phase. Guards on the
// same median lead together; the recommended guard's own value follows where it does not
// lead.
func leaders(b *strings.Builder, r scenarioResult) {
	fmt.Fprintf(b, "Who leads (medians; ties lead together; %s's own value where it does not):\n\n", recommended)
	for _, k := range rankings(r) {
		fmt.Fprintf(b, "- %s: %s\n", k.name, k.describe(r.libs))
	}
	fmt.Fprintln(b)
}

// rankings returns the measures of r that order its guards.
func rankings(r scenarioResult) []ranking {
	per := func(f func(scenario.Measures) float64) []float64 {
		vs := make([]float64, len(r.libs))
		for i := range r.libs {
			vs[i] = medianOf(r.measures[i], f)
		}
		return vs
	}
	var ks []ranking
	if _, ok := r.script.DownStart(); ok {
		detection := per(func(m scenario.Measures) float64 { return dur(m.Detection) })
		recovery := per(func(m scenario.Measures) float64 { return dur(m.Recovery) })
		sent := per(func(m scenario.Measures) float64 { return m.SentBeforeTrip })
		for i, d := range detection {
			if math.IsInf(d, 1) {
				// It never tripped: it sent the whole outage, and recovered from nothing.
				recovery[i], sent[i] = math.NaN(), math.NaN()
			}
		}
		ks = append(ks,
			ranking{"sent before trip", sent, true, count},
			ranking{"detection", detection, true, millis},
			ranking{"recovery", recovery, true, millis})
	}
	for p, phase := range r.script.Phases {
		ks = append(ks, ranking{"goodput in " + phase.Name, per(func(m scenario.Measures) float64 { return m.Goodput[p] }), false, count})
	}
	// Failed calls rank only where the dependency is down: elsewhere they are its noise,
	// the same whoever sends them.
	for p, phase := range r.script.Phases {
		if phase.Down {
			ks = append(ks, ranking{"failed calls in " + phase.Name, per(func(m scenario.Measures) float64 { return float64(m.Failed[p]) }), true, count})
		}
	}
	return ks
}

// describe names the guards that lead k, with their value, then the recommended guard's if it
// is not among them.
func (k ranking) describe(libs []scenario.Library) string {
	best := math.NaN()
	for _, v := range k.values {
		if !math.IsNaN(v) && (math.IsNaN(best) || k.less && v < best || !k.less && v > best) {
			best = v
		}
	}
	if math.IsNaN(best) {
		return "—"
	}
	var lead []string
	own := -1
	for i, v := range k.values {
		if v == best {
			lead = append(lead, libs[i].Name)
		}
		if libs[i].Name == recommended {
			own = i
		}
	}
	s := strings.Join(lead, ", ")
	if len(lead) == len(libs) {
		s = "every guard"
	}
	s += " (" + k.format(best) + ")"
	if own >= 0 && k.values[own] != best {
		s += "; " + recommended + " " + k.format(k.values[own])
	}
	return s
}
