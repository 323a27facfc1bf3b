package breakerview

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/halfopen/breaker"
)

// View is what every surface shows of a Manager at one instant: the rows of one Snapshot and
// the last minute of the calls a Calls heard, at the Snapshot's time. Calls.View makes it.
type View struct {
	// At is when it was read: the Snapshot's time, by the Manager's clock.
	At time.Time
	// Resources are the resources of the Snapshot, by name, in byte order.
	Resources []Resource
	// TemplateSettings are the settings loaded under keys ending in "*", by key in byte order.
	// A key is not a resource: each name it applies to is listed under its own name.
	TemplateSettings []TemplateSetting
	// Templates is what the template rules made, and TemplatesLoaded whether a template rule
	// or a template setting is loaded.
	Templates       breaker.TemplateStats
	TemplatesLoaded bool
	// Called are the names called in the minute, the most called first, then by name; the
	// calls of the names past the Limits among them, as Overflow.
	Called []Called
	// Uncalled are the names configured and not called in the minute, those with a Nearest
	// first, then in natural order (CompareNames). It is nil while it cannot be known: in the
	// first minute since the surface began to watch (a name may not have had its turn yet),
	// while calls past the Limits counted in the minute (any of them could be a configured
	// name's), or without a Calls.
	Uncalled []Uncalled
	// Series are what the exporters report, one for each resource label of the rows, of the
	// names called and of the names the Calls keeps, by label.
	Series []Series
}

// Resource is one resource of a View, its breakers and what applies to its calls.
type Resource struct {
	// Name is the resource's name, and Label its label on the exporters: Label(Name) for a
	// name with rules or settings of its own, which its operators chose; for another (one a
	// template made, or with only an override) the label of its entry in the Calls, Overflow
	// past the Limits.
	Name, Label string
	// Side is the side of its name: ServerSide for a route breakerhttp.Middleware serves,
	// ClientSide for any other.
	Side Side
	// Template is the Resource (ending in "*") of the template rules that made its breakers;
	// "" for a resource with rules of its own, or with none.
	Template string
	// Breakers are its breakers, in rule order.
	Breakers []Breaker
	// Settings are the settings loaded under SettingsFrom: its name for settings of its own, a
	// template key ending in "*" for a template setting's, "" for none (Settings is then zero).
	Settings     breaker.ResourceConfig
	SettingsFrom string
	// Force is the force in effect: an operator's override's, if one is in force, else its
	// settings'.
	Force breaker.Force
	// Override is the operator's override in force, or nil.
	Override *breaker.OverrideInfo
	// InFlight is its calls admitted and not yet exited, counted for a resource with settings.
	InFlight int64
	// Calls is its last minute, as its entry in the Calls counted it; zero for a name the Calls
	// does not keep.
	Calls Minute
}

// OwnRules reports whether r has rules of its own.
func (r *Resource) OwnRules() bool { return r.Template == "" && len(r.Breakers) > 0 }

// OwnSettings reports whether r has settings of its own.
func (r *Resource) OwnSettings() bool { return r.SettingsFrom != "" && r.SettingsFrom == r.Name }

// Breaker is one breaker of a Resource: its Stats (Stats.DryRun says whether it rejects no
// call), with its label.
type Breaker struct {
	breaker.Stats
	// Label is its rule's label among the breakers of its resource (RuleLabel, made unique);
	// "" for a rule whose label another rule of the resource has, which the exporters leave
	// out rather than fail a scrape.
	Label string
	// Windowed is false for a ConsecutiveErrors rule, whose Total and Bad are its current run
	// of failures and not a window, so that Ratio means nothing.
	Windowed bool
}

// TemplateSetting is the settings loaded under a key ending in "*".
type TemplateSetting struct {
	Key      string
	Settings breaker.ResourceConfig
	// Names is how many of the Snapshot's resources take them.
	Names int
}

// Called is a name called in the minute.
type Called struct {
	// Name is the name, or Overflow for the calls of the names past the Limits; Label its
	// label.
	Name, Label string
	// Side is the side of the name; NoSide for Overflow, whose names may be of either side.
	Side Side
	// Overflow reports that it counts the calls of the names past the Limits.
	Overflow bool
	// Unruled reports that it has neither rules, settings nor an override of its own, and that
	// no template rule matches it: a rule meant for it may be loaded under a misspelt name.
	// Overflow is always unruled.
	Unruled bool
	Minute
}

// View reads the rows of snap, and the last minute of c up to snap.At. since is when the
// surface began to watch the Manager, by its clock: Uncalled is known a minute after it. A
// nil c gives the rows alone, with their own labels. View adds to c the names of snap it
// labels (those with neither rules nor settings of their own), within c's Limits.
func (c *Calls[T]) View(snap *breaker.Snapshot, since time.Time) *View {
	v := &View{At: snap.At, Templates: snap.Templates, TemplatesLoaded: snap.Templates.Patterns > 0,
		Resources: make([]Resource, len(snap.Resources))}
	minutes := map[string]Minute{} // of the names c keeps, with calls in the minute
	var kept []string              // the labels of the names c keeps
	if c != nil {
		c.each(func(name string, e *Entry[T]) {
			kept = append(kept, e.label)
			if m := e.minute.read(snap.At); m.Calls > 0 {
				minutes[name] = m
			}
		})
	}
	for i := range snap.Resources {
		v.Resources[i] = c.resourceOf(&snap.Resources[i], snap, minutes)
	}
	v.TemplateSettings = templateSettingsOf(snap)
	v.TemplatesLoaded = v.TemplatesLoaded || len(v.TemplateSettings) > 0
	if c == nil {
		v.Series = seriesOf(v, nil, nil, nil)
		return v
	}
	over := c.overflow.minute.read(snap.At)
	v.Called = calledOf(snap, minutes, &over)
	if over.Calls == 0 && !snap.At.Before(since.Add(Seconds*time.Second)) {
		v.Uncalled = uncalledOf(v, snap, minutes)
	}
	longest := map[string]time.Duration{} // by label, of the names whose calls ran in the minute
	for _, called := range v.Called {
		if called.Ran() > 0 {
			longest[called.Label] = max(longest[called.Label], called.Longest)
		}
	}
	v.Series = seriesOf(v, longest, v.Uncalled, kept)
	return v
}

// resourceOf is the row of r, a resource of snap; minutes holds the last minute of the names c
// keeps.
func (c *Calls[T]) resourceOf(r *breaker.ResourceStatus, snap *breaker.Snapshot,
	minutes map[string]Minute) Resource {
	row := Resource{Name: r.Name, Side: SideOf(r.Name), Template: r.Template, SettingsFrom: r.SettingsFrom, Force: r.Settings.Force,
		Override: r.Override, InFlight: r.InFlight, Calls: minutes[r.Name],
		Breakers: make([]Breaker, len(r.Breakers))}
	if cfg, ok := snap.Settings[r.SettingsFrom]; ok && r.SettingsFrom != "" {
		row.Settings = cfg
	} else {
		row.SettingsFrom = ""
	}
	labels := ruleLabels(r.Breakers)
	for i, st := range r.Breakers {
		row.Breakers[i] = Breaker{Stats: st, Label: labels[i], Windowed: st.Rule.Strategy != breaker.ConsecutiveErrors}
	}
	if c == nil || row.OwnRules() || row.OwnSettings() {
		row.Label = Label(r.Name)
	} else {
		row.Label = c.Entry(r.Name).Label()
	}
	return row
}

// templateSettingsOf lists the template settings of snap by key, each with the number of
// names it applies to now.
func templateSettingsOf(snap *breaker.Snapshot) []TemplateSetting {
	names := map[string]int{} // by the key their settings come from
	for _, r := range snap.Resources {
		names[r.SettingsFrom]++
	}
	var out []TemplateSetting
	for key, cfg := range snap.Settings {
		if isTemplate(key) {
			out = append(out, TemplateSetting{Key: key, Settings: cfg, Names: names[key]})
		}
	}
	slices.SortFunc(out, func(a, b TemplateSetting) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// calledOf lists the names of minutes, and the overflow's minute over if it had calls, the
// most called first, then by name.
func calledOf(snap *breaker.Snapshot, minutes map[string]Minute, over *Minute) []Called {
	own := map[string]bool{} // the names with rules, settings or an override of their own
	var templates []string   // the templates' Resources without their "*"
	for _, r := range snap.Rules {
		if p, ok := strings.CutSuffix(r.Resource, "*"); ok {
			templates = append(templates, p)
		} else {
			own[r.Resource] = true
		}
	}
	for key := range snap.Settings {
		own[key] = true
	}
	for _, r := range snap.Resources {
		if r.Override != nil {
			own[r.Name] = true
		}
	}
	out := make([]Called, 0, len(minutes)+1)
	for name, m := range minutes {
		unruled := !own[name] && !slices.ContainsFunc(templates, func(p string) bool { return strings.HasPrefix(name, p) })
		out = append(out, Called{Name: name, Label: Label(name), Side: SideOf(name), Unruled: unruled, Minute: m})
	}
	if over.Calls > 0 {
		out = append(out, Called{Name: Overflow, Label: Overflow, Side: NoSide, Overflow: true, Unruled: true, Minute: *over})
	}
	slices.SortFunc(out, func(a, b Called) int {
		if c := cmp.Compare(b.Calls, a.Calls); c != 0 {
			return c
		}
		if a.Overflow != b.Overflow { // a name really called Overflow before the overflow
			if a.Overflow {
				return 1
			}
			return -1
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}

// isTemplate reports whether a resource name or a settings key is a template's.
func isTemplate(key string) bool { return strings.HasSuffix(key, "*") }
