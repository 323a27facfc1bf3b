package breakerview

import (
	"slices"
	"strings"
	"time"

	"github.com/halfopen/breaker"
)

// Series is what the exporters report under one resource label. Names that share a label
// (names that differ only in bytes that are not UTF-8, or the names past the Limits under
// Overflow) share its series: a gauge reports one of them, the first in byte order among
// those it could report, so that no scrape fails on two series with one label set and none
// moves between scrapes; counts of them add up.
type Series struct {
	Label string
	// Side is the side of the names with the label (SideOf, which the label keeps); NoSide for
	// Overflow, whose names may be of either side.
	Side Side
	// Breakers are the breakers of the name the label's breaker gauges report: one with rules
	// of its own, or with breakers a template made if it is within the Limits (none are
	// reported under Overflow, since callers choose those names). Nil for none.
	Breakers []Breaker
	// Settings are the settings reported under the label, by the key they come from. A name
	// with settings of its own reports them From SettingsOwn, and its label no template
	// setting's; the names past the Limits that take a template setting report it under
	// Overflow once for each key. Settings that are all zero are not reported.
	Settings []SeriesSettings
	// InFlight is the calls in flight under the label, of the one name whose settings are its
	// own or, failing that, a template setting's; added up for the names under Overflow.
	// HasInFlight is false where no name with settings has the label.
	InFlight    int64
	HasInFlight bool
	// Overrides are the operators' overrides in force of the names with the label, by force.
	Overrides []SeriesOverride
	// Longest is the longest call of the minute of the names with the label whose calls ran;
	// Ran is false where none ran.
	Longest time.Duration
	Ran     bool
	// Uncalled holds, for the names with the label configured and not called in the minute,
	// the label of the nearest name called ("" for none near), each once.
	Uncalled []string
}

// SeriesSettings are settings reported under a resource label, with the key they come from:
// SettingsOwn, or a template key (ending in "*") made valid UTF-8.
type SeriesSettings struct {
	From   string
	Config breaker.ResourceConfig
}

// SeriesOverride counts the overrides of one force under a resource label: one for a name
// within the Limits, any number under Overflow, with the latest end.
type SeriesOverride struct {
	Force breaker.Force
	Count int
	Until time.Time
}

// seriesOf is the Series of v, with the longest call of each label whose calls ran, the
// names configured and not called, uncalled, and the labels of the names a Calls keeps, kept:
// every label of v's rows, of its names called and of kept has a Series, its Side at least.
func seriesOf(v *View, longest map[string]time.Duration, uncalled []Uncalled, kept []string) []Series {
	byLabel := map[string]*Series{}
	series := func(label string) *Series {
		s := byLabel[label]
		if s == nil {
			s = &Series{Label: label, Side: labelSide(label)}
			byLabel[label] = s
		}
		return s
	}
	for _, label := range kept {
		series(label)
	}
	for i := range v.Called {
		series(v.Called[i].Label)
	}
	rows := map[string]*Resource{}
	breakers := map[string]string{} // label → the name whose breakers it reports
	own := map[string]string{}      // label → the name whose own settings it reports
	type keyed struct{ label, from string }
	templated := map[keyed]string{} // label and key → the name whose template setting it reports
	inFlight := map[string]string{} // label → the name of a template setting whose calls in flight it reports
	type forced struct {
		label string
		force breaker.Force
	}
	overrides := map[forced]*SeriesOverride{}
	for i := range v.Resources {
		r := &v.Resources[i]
		rows[r.Name] = r
		series(r.Label)
		if len(r.Breakers) > 0 && r.Label != Overflow {
			claim(breakers, r.Label, r.Name)
		}
		if r.OwnSettings() {
			claim(own, r.Label, r.Name)
		}
		if o := r.Override; o != nil {
			k := forced{r.Label, o.Force}
			if overrides[k] == nil {
				overrides[k] = &SeriesOverride{Force: o.Force}
			}
			overrides[k].Count++
			if o.Until.After(overrides[k].Until) {
				overrides[k].Until = o.Until
			}
		}
	}
	for i := range v.Resources {
		r := &v.Resources[i]
		if !isTemplate(r.SettingsFrom) {
			continue
		}
		if _, ok := own[r.Label]; ok {
			continue // settings of its own report under the label
		}
		if r.Settings != (breaker.ResourceConfig{}) {
			claim(templated, keyed{r.Label, keyLabel(r.SettingsFrom)}, r.Name)
		}
		if r.Label == Overflow {
			s := series(Overflow)
			s.InFlight += r.InFlight
			s.HasInFlight = true
		} else {
			claim(inFlight, r.Label, r.Name)
		}
	}
	for label, name := range breakers {
		series(label).Breakers = rows[name].Breakers
	}
	for label, name := range own {
		s := series(label)
		s.InFlight, s.HasInFlight = rows[name].InFlight, true
		if cfg := rows[name].Settings; cfg != (breaker.ResourceConfig{}) {
			s.Settings = append(s.Settings, SeriesSettings{From: SettingsOwn, Config: cfg})
		}
	}
	for k, name := range templated {
		s := series(k.label)
		s.Settings = append(s.Settings, SeriesSettings{From: k.from, Config: rows[name].Settings})
	}
	for label, name := range inFlight {
		s := series(label)
		s.InFlight, s.HasInFlight = rows[name].InFlight, true
	}
	for k, o := range overrides {
		s := series(k.label)
		s.Overrides = append(s.Overrides, *o)
	}
	for label, d := range longest {
		s := series(label)
		s.Longest, s.Ran = d, true
	}
	for _, u := range uncalled {
		s := series(u.Label)
		if !slices.Contains(s.Uncalled, u.NearestLabel) {
			s.Uncalled = append(s.Uncalled, u.NearestLabel)
		}
	}
	out := make([]Series, 0, len(byLabel))
	for _, s := range byLabel {
		slices.SortFunc(s.Settings, func(a, b SeriesSettings) int { return strings.Compare(a.From, b.From) })
		slices.SortFunc(s.Overrides, func(a, b SeriesOverride) int { return int(a.Force) - int(b.Force) })
		slices.Sort(s.Uncalled)
		out = append(out, *s)
	}
	slices.SortFunc(out, func(a, b Series) int { return strings.Compare(a.Label, b.Label) })
	return out
}
