package breakerdebug

import (
	"cmp"
	"slices"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakerview"
)

// worst is the worst a resource's row has to tell an operator, by which the status orders its
// rows: a breaker that rejects calls OPEN, then one HALF_OPEN, then one pacing, then one ramping
// up, then a resource forced open or closed or under an operator's override, then the rest. A
// pacing breaker comes before a ramping one: its dependency fails calls now, while a ramp
// follows a recovery. A breaker that rejects nothing (its rule is DryRun, or its resource is
// forced closed) orders no row: its OPEN only says what it would reject.
type worst int

const (
	worstOpen       worst = iota // a breaker that rejects calls is OPEN
	worstHalfOpen                // one is HALF_OPEN
	worstPacing                  // one paces its calls where it would have opened (Rule.Pace)
	worstRampingUp               // one paces its calls after a probe closed it (Rule.RampUp)
	worstForced                  // its settings or its override force it open or closed
	worstOverridden              // an override lifts the Force of its settings (auto)
	worstDryRun                  // the rest: a breaker that rejects nothing is not CLOSED
	worstClosed                  // the rest: every breaker CLOSED, or none
)

// String is how the JSON's "worst" and the page name w.
func (w worst) String() string {
	switch w {
	case worstOpen:
		return "OPEN"
	case worstHalfOpen:
		return "HALF_OPEN"
	case worstPacing:
		return "PACING"
	case worstRampingUp:
		return "RAMPING_UP"
	case worstForced:
		return "FORCED"
	case worstOverridden:
		return "OVERRIDDEN"
	case worstDryRun:
		return "DRY_RUN"
	default:
		return "CLOSED"
	}
}

// rank is w's place in the order of the rows: forced and overridden resources share one, and
// so does the rest.
func (w worst) rank() int {
	switch w {
	case worstOverridden:
		return int(worstForced)
	case worstClosed:
		return int(worstDryRun)
	}
	return int(w)
}

// worstOf is the worst r has to tell.
func worstOf(r *breakerview.Resource) worst {
	w := worstClosed
	for _, b := range r.Breakers {
		var bw worst
		switch {
		case b.DryRun:
			if b.State == breaker.Closed {
				continue
			}
			bw = worstDryRun
		case b.State == breaker.Open:
			bw = worstOpen
		case b.State == breaker.HalfOpen:
			bw = worstHalfOpen
		case b.Pacing:
			bw = worstPacing
		case b.RampingUp:
			bw = worstRampingUp
		default:
			continue
		}
		w = min(w, bw)
	}
	switch {
	case w < worstForced:
		return w
	case r.Force != breaker.Auto:
		return worstForced
	case r.Override != nil:
		return worstOverridden
	}
	return w
}

// traffic is the calls in r's breakers' windows, which orders rows of one rank: the busiest
// first. A breaker that is not CLOSED counts none.
func traffic(r *breakerview.Resource) uint64 {
	var n uint64
	for _, b := range r.Breakers {
		n += b.Total
	}
	return n
}

// worstFirst orders rows for an operator mid-incident: by the rank of their worst, then the
// busiest first, then by name in natural order (shard-2 before shard-10). The names one
// template rule made (Resource.Template) then move up to their worst member, in that
// order, so that the page shows them as one group where that member would be. It sorts rows
// in place and returns them.
func worstFirst(rows []*breakerview.Resource) []*breakerview.Resource {
	type keyed struct {
		r       *breakerview.Resource
		rank    int
		traffic uint64
	}
	all := make([]keyed, len(rows))
	for i, r := range rows {
		all[i] = keyed{r, worstOf(r).rank(), traffic(r)}
	}
	slices.SortFunc(all, func(a, b keyed) int {
		if c := cmp.Compare(a.rank, b.rank); c != 0 {
			return c
		}
		if c := cmp.Compare(b.traffic, a.traffic); c != 0 {
			return c
		}
		return breakerview.CompareNames(a.r.Name, b.r.Name)
	})
	members := map[string][]*breakerview.Resource{} // by template, worst first
	for _, k := range all {
		if t := k.r.Template; t != "" {
			members[t] = append(members[t], k.r)
		}
	}
	rows = rows[:0]
	for _, k := range all {
		switch t := k.r.Template; {
		case t == "":
			rows = append(rows, k.r)
		case members[t] != nil: // its worst member: the whole group goes here
			rows = append(rows, members[t]...)
			members[t] = nil
		}
	}
	return rows
}
