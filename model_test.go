package breaker_test

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakertest"
)

// model is a reference implementation of the breakers' behaviour for one goroutine, written for
// plainness rather than speed: every call is kept in a slice and the window is summed from
// scratch. The state-machine fuzzer runs it beside the library and compares them after every
// operation.
type model struct {
	now       time.Duration // since breakertest.Start
	rules     []breaker.Rule
	resources map[string][]*modelBreaker     // of the resources with rules of their own
	templates []modelTemplate                // longest prefix first
	templated map[string]*modelTemplateEntry // the breakers templates made, by resource
	limit     int                            // of template breakers
	made      uint64                         // template entries made so far
	dropped   uint64                         // template entries dropped for room
	changes   []breaker.StateChange
	blocking  bool // the test slot blocks calls
	// resetOnProbe names a resource that an observer resets as the next probe of one of its
	// breakers is taken, on the goroutine taking it: the call then meets its other breakers
	// as they stand after the reset, as a call that lost a race for a probe does.
	resetOnProbe string
	// stream is what a call observer and a state observer hear together, in order: a call is
	// heard of before the transitions its outcome makes, and a blocked one before the probes
	// it took go back.
	stream   []string
	settings map[string]breaker.ResourceConfig
	inflight map[string]*int // calls in flight per resource name with settings, or with calls
	// in flight since it had them
	overrides map[string]*modelOverride // operators' overrides, until the change after their end
}

// modelOverride is an operator's override of a resource's Force, from its start to its end.
type modelOverride struct {
	force       breaker.Force
	from, until time.Duration
}

// over reports whether o has ended at now: its end has come, or the clock stepped back further
// than o lasts.
func (o *modelOverride) over(now time.Duration) bool {
	ahead, lasts := o.until-now, o.until-o.from
	return ahead <= 0 || ahead-lasts > lasts
}

// modelTemplate is the rules of one Resource pattern ending in "*".
type modelTemplate struct {
	prefix string
	rules  []breaker.Rule
}

// modelTemplateEntry is the breakers a template made for one resource.
type modelTemplateEntry struct {
	breakers []*modelBreaker
	used     int64 // when a call last completed or a breaker rejected one, in 2^20 ns
	made     uint64
}

type modelBreaker struct {
	name      string // the resource its calls are made under
	rule      breaker.Rule
	state     breaker.State
	gen       uint64
	epoch     uint64 // counts every change of period, silent ones too: what makes a call stale
	retryAt   time.Duration
	openFor   time.Duration // the OPEN time of the last trip or failed probe, backed off
	failures  int           // probes failed in a row since the trip, for the backoff
	probing   bool          // HALF_OPEN: a probe is in flight (one at a time)
	successes uint32        // HALF_OPEN: probes of this run that succeeded (of ProbeNum)
	deadline  time.Duration
	probeFor  time.Duration // the ProbeTimeout of the probe in flight
	since     time.Duration // HALF_OPEN between probes: when the last probe succeeded
	calls     []modelCall   // of the current CLOSED period
	run       int           // ConsecutiveErrors: failures in a row
	ramp      *modelRamp    // CLOSED after a probe closed it, with RampUp, or pacing (Pace)
	flight    *modelFlight  // CLOSED, SlowRequestRatio: its calls in flight
	oldFlight *modelFlight  // CLOSED: the ring flight replaced at a reload, whose calls are judged with its
	head      time.Duration
	retired   bool
}

type modelCall struct {
	bucket  time.Duration
	bad     bool
	refused bool // bad, and counted apart
}

// modelEntry is a call the model let through: the generation of each breaker that admitted it.
type modelEntry struct {
	resource string
	due      bool                // a breaker found it due for its probe: it marks the context it hands its function
	dyn      *modelTemplateEntry // the template's breakers that admitted it, if any
	start    time.Duration
	admitted []modelAdmission
	inflight *int // the count the call is in, if any
}

type modelAdmission struct {
	b      *modelBreaker
	epoch  uint64
	ticket uint64       // its place among the breaker's calls in flight
	f      *modelFlight // the ring that holds ticket
}

// modelOutcome mirrors how the library classifies a call's error.
type modelOutcome int

const (
	modelSuccess modelOutcome = iota
	modelFailure
	modelIgnored
	modelOutlived      // ran past the resource's Timeout: failed, and slow, whatever it returned
	modelRefused       // refused by a live dependency, without a retry hint
	modelRefusedHinted // refused, with the retry hint modelRefusalHint
)

// modelRefusalHint is the retry hint of a modelRefusedHinted call.
const modelRefusalHint = 700 * time.Millisecond

// hint is the retry hint of a call that ended as o.
func (o modelOutcome) hint() time.Duration {
	if o == modelRefusedHinted {
		return modelRefusalHint
	}
	return 0
}

func newModel(limit int) *model {
	return &model{resources: map[string][]*modelBreaker{}, templated: map[string]*modelTemplateEntry{},
		inflight: map[string]*int{}, overrides: map[string]*modelOverride{}, limit: limit}
}

// breakersOf returns the breakers of resource: its own, or those a template made for it. With
// call, it is a call's lookup, which makes them on the first call, dropping the idlest to stay
// within the limit of template breakers.
func (m *model) breakersOf(resource string, call bool) []*modelBreaker {
	if own := m.resources[resource]; own != nil {
		return own
	}
	if d := m.templated[resource]; d != nil {
		return d.breakers
	}
	t := m.match(resource)
	if !call || t == nil && m.settingsUnit(resource) == 0 {
		return nil
	}
	units := m.settingsUnit(resource)
	if t != nil {
		units += len(t.rules)
	}
	m.makeRoom(units)
	m.made++
	d := &modelTemplateEntry{used: int64(m.now) >> 20, made: m.made}
	if t != nil {
		for _, r := range t.rules {
			d.breakers = append(d.breakers, newModelBreaker(resource, r))
		}
	}
	m.templated[resource] = d
	return d.breakers
}

// settingsOf returns the settings of resource: its own, or else those of the template setting
// with the longest prefix of it, with the Force of an override in force; ok is false when it has
// none of these.
func (m *model) settingsOf(resource string) (c breaker.ResourceConfig, ok bool) {
	c, ok = m.plainSettingsOf(resource)
	if o := m.overrides[resource]; o != nil && !o.over(m.now) {
		c.Force, ok = o.force, true
	}
	return c, ok
}

// plainSettingsOf is settingsOf without overrides.
func (m *model) plainSettingsOf(resource string) (c breaker.ResourceConfig, ok bool) {
	if c, ok := m.settings[resource]; ok && !strings.HasSuffix(resource, "*") {
		return c, true
	}
	best := -1
	for key := range m.settings {
		if prefix, ok := strings.CutSuffix(key, "*"); ok && strings.HasPrefix(resource, prefix) && len(prefix) > best {
			best, c = len(prefix), m.settings[key]
		}
	}
	return c, best >= 0
}

// settingsUnit is 1 when resource, without rules or settings of its own, takes a template
// setting's: what its entry counts against the limit beside its breakers, for its own count of
// calls in flight.
func (m *model) settingsUnit(resource string) int {
	if m.resources[resource] != nil || m.overrides[resource] != nil {
		return 0 // an override, until the change that removes it, is settings of the name's own
	}
	if _, own := m.settings[resource]; own {
		return 0
	}
	if _, ok := m.plainSettingsOf(resource); ok {
		return 1
	}
	return 0
}

// inflightOf returns the count of calls in flight of resource, made if it has none.
func (m *model) inflightOf(resource string) *int {
	if m.inflight[resource] == nil {
		m.inflight[resource] = new(int)
	}
	return m.inflight[resource]
}

// touch marks d used now, when a call of its completes or a breaker rejects one.
func (m *model) touch(d *modelTemplateEntry) {
	if d != nil {
		d.used = int64(m.now) >> 20
	}
}

// match returns the template with the longest prefix of resource.
func (m *model) match(resource string) *modelTemplate {
	for i, t := range m.templates {
		if strings.HasPrefix(resource, t.prefix) {
			return &m.templates[i]
		}
	}
	return nil
}

func (m *model) templateBreakers() int {
	n := 0
	for _, d := range m.templated {
		n += len(d.breakers)
	}
	return n
}

// templateSettings counts the entries that take a template setting's settings.
func (m *model) templateSettings() int {
	n := 0
	for name := range m.templated {
		n += m.settingsUnit(name)
	}
	return n
}

// templateUnits counts what the entries hold against the limit: their breakers, and one for
// each that takes a template setting's settings.
func (m *model) templateUnits() int { return m.templateBreakers() + m.templateSettings() }

// makeRoom drops the idlest entries until n more units fit: at least a sixteenth of the limit
// of the idle ones (all CLOSED, none ramping or pacing, no call in flight under a template
// setting's limit), then the
// others only while there is still no room.
func (m *model) makeRoom(n int) {
	if m.templateUnits()+n <= m.limit {
		return
	}
	var names []string
	for name := range m.templated {
		names = append(names, name)
	}
	// Idle is measured back from now: a use after now (the clock stepped back) was before the
	// step, and counts as the longest ago.
	idle := func(name string) uint64 { return uint64(int64(m.now) - m.templated[name].used<<20) }
	slices.SortFunc(names, func(a, b string) int {
		return cmp.Or(cmp.Compare(idle(b), idle(a)), cmp.Compare(m.templated[a].made, m.templated[b].made))
	})
	closed := func(name string) bool {
		if m.settingsUnit(name) == 1 && m.inflight[name] != nil && *m.inflight[name] > 0 {
			return false
		}
		return !slices.ContainsFunc(m.templated[name].breakers, func(b *modelBreaker) bool {
			return b.state != breaker.Closed || b.ramp != nil && b.ramp.on(m.now, b.rule) // ramping or pacing: kept too
		})
	}
	room := func() bool { return m.templateUnits()+n <= m.limit }
	dropped := 0
	for _, name := range names { // a batch of CLOSED ones
		if dropped >= max(1, m.limit/16) && room() {
			break
		}
		if closed(name) {
			m.drop(name, breaker.Evicted)
			dropped++
		}
	}
	for _, name := range names { // tripped ones only while there is still no room
		if room() {
			break
		}
		if m.templated[name] != nil {
			m.drop(name, breaker.Evicted)
			dropped++
		}
	}
	m.dropped += uint64(dropped)
}

// drop retires the breakers a template made for resource.
func (m *model) drop(resource string, reason breaker.Reason) {
	for _, b := range m.templated[resource].breakers {
		m.retire(b, reason)
	}
	delete(m.templated, resource)
}

func (m *model) retire(b *modelBreaker, reason breaker.Reason) {
	from, pacing := b.state, b.pacing()
	b.retired, b.state = true, breaker.Closed
	b.gen++
	if from != breaker.Closed || pacing {
		m.report(b, from, reason, 0)
	}
}

// loadSettings replaces the resource settings (Force, MaxConcurrency), keys ending in "*"
// included, and rebinds the template entries to them: an entry that neither a template rule nor
// (without settings of its own) a template setting matches any more goes. A count of calls in
// flight belongs to the name: it is kept while it is not 0.
func (m *model) loadSettings(cfg map[string]breaker.ResourceConfig) {
	m.expire()
	for name, n := range m.inflight {
		if *n == 0 {
			delete(m.inflight, name)
		}
	}
	m.settings = cfg
	m.rebindSettings()
}

// rebindSettings drops the template entries that neither a template rule nor (without settings
// of their own) a template setting matches after a change of settings, then makes room for the
// units the others take now.
func (m *model) rebindSettings() {
	for _, name := range slices.Sorted(maps.Keys(m.templated)) {
		if m.match(name) == nil && m.settingsUnit(name) == 0 {
			m.drop(name, breaker.RuleChanged)
		}
	}
	m.makeRoom(0)
}

// expire removes the overrides whose end has come, as every change does first, reports each,
// in name order, and reports whether there were any. The change then rebinds the template
// entries once, for all it changed.
func (m *model) expire() (any bool) {
	for _, name := range slices.Sorted(maps.Keys(m.overrides)) {
		if m.overrides[name].over(m.now) {
			delete(m.overrides, name)
			m.overrideHeard(name, "expired")
			any = true
		}
	}
	return any
}

// override sets an override of resource to force for d; its start is heard with note.
func (m *model) override(resource string, force breaker.Force, d time.Duration, note string) {
	m.expire()
	m.overrides[resource] = &modelOverride{force: force, from: m.now, until: m.now + d}
	m.rebindSettings()
	m.overrideHeard(resource, note)
}

// endOverride ends the override of resource, and reports whether one was in force. Those that
// expired go first, which is a change of its own.
func (m *model) endOverride(resource string) bool {
	expired := m.expire()
	ended := m.overrides[resource] != nil
	delete(m.overrides, resource)
	if expired || ended { // else nothing changed: nothing is published
		m.rebindSettings()
	}
	if ended {
		m.overrideHeard(resource, "ended")
	}
	return ended
}

// overrideHeard is what observers hear when an override of resource begins or ends: a change
// with Reason Override from each of its breakers, in its state, or one with a zero Rule.
func (m *model) overrideHeard(resource, note string) {
	breakers := m.breakersOf(resource, false)
	if len(breakers) == 0 {
		cfg, _ := m.settingsOf(resource)
		c := breaker.StateChange{Resource: resource, Reason: breaker.Override, Note: note,
			At: breakertest.Start.Add(m.now), DryRun: cfg.Force == breaker.ForceClosed}
		m.changes = append(m.changes, c)
		m.stream = append(m.stream, "change "+describe(c))
		return
	}
	for _, b := range breakers {
		c := breaker.StateChange{Resource: resource, Rule: b.rule, From: b.state, To: b.state,
			Reason: breaker.Override, Note: note, Generation: b.gen, At: breakertest.Start.Add(m.now), DryRun: m.dry(b)}
		m.changes = append(m.changes, c)
		m.stream = append(m.stream, "change "+describe(c))
	}
}

// dry reports whether b lets through the calls it would reject (ForceClosed, DryRun).
func (m *model) dry(b *modelBreaker) bool {
	c, _ := m.settingsOf(b.name)
	return b.rule.DryRun || c.Force == breaker.ForceClosed
}

// reset closes every breaker of resource with an empty window.
func (m *model) reset(resource string) {
	for _, b := range m.breakersOf(resource, false) {
		if b.state != breaker.Closed || b.pacing() {
			m.move(b, breaker.Closed, breaker.Reset, 0)
		} else {
			b.gen++
			b.epoch++
			b.calls, b.head, b.run, b.ramp = nil, 0, 0, nil // a ramp ends: the full flow at once
			b.flight, b.oldFlight = newModelFlight(b.rule), nil
		}
	}
}

func identityOf(r breaker.Rule) breaker.Rule {
	r.ID = ""
	if r.MinRequestAmount == 0 {
		r.MinRequestAmount = 5
		if r.StatCalls > 0 {
			r.MinRequestAmount = uint64(r.StatCalls) // a window of calls: all of them
		} else if r.Strategy == breaker.ErrorCount && r.Threshold < 5 {
			r.MinRequestAmount = uint64(r.Threshold) // ErrorCount's default: no more than Threshold
		}
	}
	if r.ProbeNum == 0 {
		r.ProbeNum = 1
	}
	if r.StatInterval == 0 {
		r.StatInterval = time.Second
	}
	if r.BucketCount == 0 {
		r.BucketCount = 10
	}
	if r.ProbeTimeout == 0 {
		r.ProbeTimeout = r.RetryTimeout
	}
	if r.FastBuckets > 0 && r.FastThreshold == 0 {
		r.FastThreshold = max(0.8, r.Threshold)
	}
	if r.Strategy != breaker.SlowRequestRatio {
		r.MaxAllowedRT = 0
	}
	if r.Strategy == breaker.ConsecutiveErrors {
		r.MinRequestAmount, r.StatInterval, r.BucketCount = 0, 0, 0 // ConsecutiveErrors has no window
	}
	return r
}

// openTime is the OPEN time after failures failed probes in a row, backed off, without jitter.
func openTime(r breaker.Rule, failures int) time.Duration {
	d, limit := r.RetryTimeout, max(r.MaxRetryTimeout, r.RetryTimeout)
	for range failures {
		d = min(2*d, limit)
	}
	return d
}

// shapeOf is what gives a rule's window its form: a reloaded rule of the same shape keeps its
// breaker, and only tunes it.
func shapeOf(r breaker.Rule) breaker.Rule {
	id := identityOf(r)
	return breaker.Rule{Resource: id.Resource, Strategy: id.Strategy, StatInterval: id.StatInterval,
		BucketCount: id.BucketCount, StatCalls: id.StatCalls}
}

// pair matches reloaded rules with the breakers of their resource or template: an identical
// rule first, then the first one left of the same shape. It returns the breaker each rule
// keeps, nil for a new one.
func pair(old []*modelBreaker, rules []breaker.Rule) []*modelBreaker {
	kept := make([]*modelBreaker, len(rules))
	taken := map[*modelBreaker]bool{}
	for _, same := range []func(a, b breaker.Rule) bool{
		func(a, b breaker.Rule) bool { return identityOf(a) == identityOf(b) },
		func(a, b breaker.Rule) bool { return shapeOf(a) == shapeOf(b) },
	} {
		for j, r := range rules {
			for _, b := range old {
				if kept[j] == nil && !taken[b] && same(b.rule, r) {
					kept[j], taken[b] = b, true
				}
			}
		}
	}
	return kept
}

// load replaces the rules. A rule whose window keeps its shape keeps its breaker, state and
// window, whatever else changed (the new values apply from the next call); the others are
// retired.
func (m *model) load(rules []breaker.Rule) {
	m.expire()
	var oldOrder []*modelBreaker
	seen := map[string]int{}
	for _, r := range m.rules {
		if bs := m.resources[r.Resource]; bs != nil {
			oldOrder = append(oldOrder, bs[seen[r.Resource]])
			seen[r.Resource]++
		}
	}
	oldResources := m.resources
	m.rules = append([]breaker.Rule(nil), rules...)
	m.resources = map[string][]*modelBreaker{}
	m.templates = nil
	byName := map[string][]breaker.Rule{}
	var names []string
	for _, r := range rules {
		if prefix, ok := strings.CutSuffix(r.Resource, "*"); ok {
			i := slices.IndexFunc(m.templates, func(t modelTemplate) bool { return t.prefix == prefix })
			if i < 0 {
				m.templates = append(m.templates, modelTemplate{prefix: prefix})
				i = len(m.templates) - 1
			}
			m.templates[i].rules = append(m.templates[i].rules, r)
			continue
		}
		if byName[r.Resource] == nil {
			names = append(names, r.Resource)
		}
		byName[r.Resource] = append(byName[r.Resource], r)
	}
	kept := map[*modelBreaker]bool{}
	for _, name := range names {
		for j, b := range pair(oldResources[name], byName[name]) {
			if b == nil {
				b = newModelBreaker(name, byName[name][j])
			}
			m.retuneFlight(b, byName[name][j])
			b.rule = byName[name][j]
			kept[b] = true
			m.resources[name] = append(m.resources[name], b)
		}
	}
	slices.SortStableFunc(m.templates, func(a, b modelTemplate) int { return len(b.prefix) - len(a.prefix) })

	// A template's breakers stay while the name has no rule of its own and its template, the
	// longest match, keeps at least one of them; each follows its rule as reloaded.
	var dynNames []string
	for name := range m.templated {
		dynNames = append(dynNames, name)
	}
	slices.Sort(dynNames)
	for _, name := range dynNames {
		d := m.templated[name]
		t := m.match(name)
		if m.resources[name] != nil || t == nil && m.settingsUnit(name) == 0 {
			m.drop(name, breaker.RuleChanged)
			continue
		}
		var keep []*modelBreaker
		if t != nil {
			keep = pair(d.breakers, t.rules)
		}
		if len(d.breakers) > 0 && !slices.ContainsFunc(keep, func(b *modelBreaker) bool { return b != nil }) &&
			m.settingsUnit(name) == 0 {
			m.drop(name, breaker.RuleChanged) // the template changed whole: its next call makes new breakers
			continue
		}
		old := d.breakers
		d.breakers = nil
		for j, b := range keep {
			if b == nil {
				b = newModelBreaker(name, t.rules[j])
			}
			m.retuneFlight(b, t.rules[j])
			b.rule = t.rules[j]
			d.breakers = append(d.breakers, b)
		}
		for _, b := range old {
			if !slices.Contains(keep, b) {
				m.retire(b, breaker.RuleChanged)
			}
		}
	}
	m.makeRoom(0)

	for _, b := range oldOrder {
		if !kept[b] {
			m.retire(b, breaker.RuleChanged)
		}
	}
}

func (m *model) report(b *modelBreaker, from breaker.State, reason breaker.Reason, snapshot float64) {
	c := breaker.StateChange{
		Resource: b.name, Rule: b.rule, From: from, To: b.state,
		Reason: reason, Snapshot: snapshot, Generation: b.gen, At: breakertest.Start.Add(m.now),
		DryRun: m.dry(b),
	}
	m.changes = append(m.changes, c)
	m.stream = append(m.stream, "change "+describe(c))
}

// heard adds a call to resource, as a call observer hears it, to the stream.
func (m *model) heard(resource, what string) { m.stream = append(m.stream, "call "+resource+" "+what) }

// notCalled is a call whose context was done before it was admitted: nothing counts it, and
// call observers hear it as not called.
func (m *model) notCalled(resource string) { m.heard(resource, "not called") }

func (m *model) move(b *modelBreaker, to breaker.State, reason breaker.Reason, snapshot float64) {
	from := b.state
	b.state = to
	b.gen++
	b.epoch++
	b.probing, b.successes = false, 0
	b.ramp, b.flight, b.oldFlight = nil, nil, nil
	switch to {
	case breaker.Closed:
		b.calls, b.head, b.run = nil, 0, 0
		b.flight = newModelFlight(b.rule)
		if id := identityOf(b.rule); reason == breaker.ProbeSucceeded && id.RampUp > 0 {
			b.ramp = newModelRamp(m.now, id.StatInterval/time.Duration(id.BucketCount), id.StatInterval)
		}
	case breaker.Open:
		switch reason {
		case breaker.ProbeBlocked, breaker.ProbeIgnored: // the retry time stays
		case breaker.ThresholdExceeded, breaker.FastTrip:
			b.failures = 0
			b.openFor = openTime(b.rule, 0)
			b.retryAt = m.now + b.openFor
		default: // the probe failed or timed out
			b.failures++
			b.openFor = openTime(b.rule, b.failures)
			b.retryAt = m.now + b.openFor
		}
	}
	m.report(b, from, reason, snapshot)
}

// modelBlock is what the model expects of a *BlockError.
type modelBlock struct {
	rule    *breaker.Rule
	state   breaker.State
	retryAt time.Duration
	ramping bool // the rule's ramp held the call back (ErrRampingUp)
	pacing  bool // the rule's pacing held the call back (ErrPacing)
	bySlot  bool
	cause   error // ErrForcedOpen or ErrConcurrencyLimit, when the settings block
}

// newModelBreaker is a CLOSED breaker for r, new.
func newModelBreaker(name string, r breaker.Rule) *modelBreaker {
	b := &modelBreaker{name: name, rule: r}
	b.flight = newModelFlight(r)
	return b
}

// modelFlight mirrors the ring in which a SlowRequestRatio breaker counts its calls in flight
// by start: slots as wide as a bucket, enough of them to span MaxAllowedRT and two slots; a
// slot over for MaxAllowedRT is due, and its calls still in flight then count as slow, once.
type modelFlight struct {
	width, dueIn time.Duration
	slots        []modelSlot
	head         int
	judged       time.Duration
}

type modelSlot struct {
	start            time.Duration
	lap              uint64
	waiting, counted int
}

const modelLapMask = 1<<24 - 1

func newModelFlight(r breaker.Rule) *modelFlight {
	id := identityOf(r)
	if id.Strategy != breaker.SlowRequestRatio {
		return nil
	}
	width, n := modelFlightShape(id)
	f := &modelFlight{width: width, dueIn: width + id.MaxAllowedRT, slots: make([]modelSlot, n)}
	noStart := -(1 << 62) / width * width
	for i := range f.slots {
		f.slots[i].start = noStart - time.Duration(n-i)*width
	}
	f.slots[0].start = noStart
	for i := range f.slots {
		f.slots[i].lap = f.lapOf(f.slots[i].start)
	}
	f.judged = noStart - width
	return f
}

// modelFlightShape is the slot width and the number of slots of the ring of the slow rule id:
// slots as wide as a bucket (wider past 1024 of them), enough to span MaxAllowedRT and two more.
func modelFlightShape(id breaker.Rule) (time.Duration, int) {
	width := id.StatInterval / time.Duration(id.BucketCount)
	for id.MaxAllowedRT/width+3 > 1024 {
		width *= 2
	}
	return width, int(id.MaxAllowedRT/width + 3)
}

// retuneFlight applies the MaxAllowedRT of r, reloaded, to the calls in flight of b, CLOSED:
// its rings judge them by it from now on, and when it needs a larger ring, a new ring counts
// the calls from now on while the old one's are judged with it; a ring an earlier reload
// replaced is let go, its calls counted when they return.
func (m *model) retuneFlight(b *modelBreaker, r breaker.Rule) {
	id := identityOf(r)
	if b.flight == nil || b.retired || id.MaxAllowedRT == identityOf(b.rule).MaxAllowedRT {
		return
	}
	for _, f := range []*modelFlight{b.flight, b.oldFlight} {
		if f != nil {
			f.dueIn = f.width + id.MaxAllowedRT
		}
	}
	if width, n := modelFlightShape(id); width != b.flight.width || n > len(b.flight.slots) {
		b.flight, b.oldFlight = newModelFlight(r), b.flight
	}
}

func (f *modelFlight) lapOf(start time.Duration) uint64 { return uint64(start/f.width) & modelLapMask }

func (f *modelFlight) floor(t time.Duration) time.Duration { return t - ((t%f.width)+f.width)%f.width }

func (f *modelFlight) due(now time.Duration) bool { return now-f.judged-f.width >= f.dueIn }

// judge moves the calls in flight of the slots due at now to counted, and returns how many.
func (f *modelFlight) judge(now time.Duration) int {
	last := f.floor(now - f.dueIn)
	if last-f.judged <= 0 {
		return 0
	}
	after := f.judged
	f.judged = last
	slow := 0
	for i := range f.slots {
		s := &f.slots[i]
		if s.start-after <= 0 || s.start-last > 0 || s.lap != f.lapOf(s.start) {
			continue
		}
		slow += s.waiting
		s.counted += s.waiting
		s.waiting = 0
	}
	return slow
}

// enter returns the ticket of a call that starts at now (0: not held), and the calls in flight
// of the slot it took over that no judgement counted; again when the clock stepped back past
// the ring (or the ticks wrapped) while it holds calls, which then stay in it.
func (f *modelFlight) enter(now time.Duration) (ticket uint64, slow int, again bool) {
	h := &f.slots[f.head]
	d, n := now-h.start, len(f.slots)
	slow, idx := 0, f.head
	switch {
	case d >= 0 && d < f.width:
	case d < 0 && d > -time.Duration(n)*f.width:
		back := int((-d + f.width - 1) / f.width)
		idx = (f.head - back%n + n) % n
		if f.slots[idx].start != h.start-time.Duration(back)*f.width {
			return 0, 0, false
		}
	case d < 0 || d >= 1<<62:
		for i := range f.slots {
			if f.slots[i].waiting+f.slots[i].counted > 0 {
				return 0, 0, true // the ring holds calls: a new ring must count from now on
			}
		}
		for i := range f.slots {
			f.slots[i].lap = f.lapOf(f.slots[i].start) + 1
		}
		h.start = f.floor(now)
		h.lap = f.lapOf(h.start)
		f.judged = h.start - f.width
	default:
		steps := int(d / f.width)
		f.head = (f.head + steps%n) % n
		idx = f.head
		s := &f.slots[idx]
		start := h.start + time.Duration(steps)*f.width
		if s.lap == f.lapOf(s.start) {
			slow = s.waiting
		}
		*s = modelSlot{start: start, lap: f.lapOf(start)}
	}
	s := &f.slots[idx]
	s.waiting++
	return 1<<63 | uint64(idx)<<24 | s.lap, slow, false
}

// leave takes the call with ticket out of flight, and reports whether it was counted as slow.
func (f *modelFlight) leave(ticket uint64) bool {
	if ticket == 0 {
		return false
	}
	s := &f.slots[ticket>>24&2047]
	switch {
	case s.lap != ticket&modelLapMask:
		return true
	case s.counted > 0:
		s.counted--
		return true
	case s.waiting > 0:
		s.waiting--
		return false
	}
	return true
}

// fly counts a call that b admitted now among b's calls in flight, first counting as slow those
// due, and returns the ring that holds it and its ticket. When the clock stepped back past a
// ring that holds calls, a new ring counts the call, and the old one's calls count when they
// return, by their response time.
func (m *model) fly(b *modelBreaker) (*modelFlight, uint64) {
	f, old := b.flight, b.oldFlight
	for {
		m.judgeFlight(b, f, old)
		ticket, slow, again := f.enter(m.now)
		m.countSlow(b, f, slow)
		if !again {
			return f, ticket
		}
		if b.flight != f {
			return f, 0 // a judgement tripped b: the call counts nothing
		}
		b.flight, b.oldFlight = newModelFlight(b.rule), nil
		f, old = b.flight, nil
	}
}

// judgeFlight counts as slow the calls in flight of b's ring f that are due, once f is due, with
// those of old, the ring a reload replaced.
func (m *model) judgeFlight(b *modelBreaker, f, old *modelFlight) {
	if !f.due(m.now) {
		return
	}
	slow := f.judge(m.now)
	if old != nil {
		slow += old.judge(m.now)
	}
	m.countSlow(b, f, slow)
}

// countSlow counts n calls of b's flight f as slow, if f is still b's: a trip since leaves it
// counting nothing.
func (m *model) countSlow(b *modelBreaker, f *modelFlight, n int) {
	if n == 0 || b.flight != f {
		return
	}
	if b.ramp != nil && b.ramp.completed(m.now, b.rule, true, false, 0) == modelRampDead {
		m.move(b, breaker.Open, breaker.ThresholdExceeded, 1) // a loss, and it died while paced
		return
	}
	m.countN(b, n, true, false, 0)
}

// modelRamp paces a breaker's calls after a probe closed it: within each bucket of its window,
// the k-th call offered is admitted while fewer than max(1, k/10, 1.5 S) were, S the successes
// of the bucket before or of this one so far; once a call of this one failed (or was counted
// slow in flight), while fewer than max(1, 1.5 S) were, S the fewer of the two, or the bucket
// before's spread over the bucket so far. It ends at the end of a bucket that held nothing back,
// or once the rule's RampUp, as loaded now, has passed since the close. A reading before the
// current bucket counts in it.
// Pacing is the same ramp without the k/10, started when the window trips while it holds a
// success, from the counts of its newest bucket (all admitted, with a loss) and the one before;
// it lasts while the rule paces, and the bucket it started in does not end it. Pacing also ends
// once its last bucket lies a window back, and a bucket of pacing (not its first) that ended
// with a loss and no success opens the breaker.
// Buckets are known by their start, however far apart.
// A refusal is a loss that keeps pacing's bucket alive. Its hint holds calls back until it ends
// (within a window), as their RetryAt, but for the first call of each bucket; a success ends
// the hold; after the hold pacing admits every call; and while a hold ended less than a window
// before a bucket, that bucket taking the whole flow does not end pacing.
type modelRamp struct {
	closed, length, span         time.Duration
	paced                        bool // pacing: entered on a trip, it lasts while the rule paces
	start                        time.Duration
	offered, admitted, succeeded int
	lost, refused, hinted        bool
	before                       int           // the successes of the bucket before, when this one began
	resume                       time.Duration // the end of the last refusal's hold
	done                         bool
}

// What a ramp finds when a call comes.
const (
	modelRampOn = iota
	modelRampOver
	modelRampDead
)

func newModelRamp(now, length, span time.Duration) *modelRamp {
	r := &modelRamp{closed: now, length: length, span: span, resume: now - 2*span}
	r.start, r.succeeded = r.floor(now), 1 // the probe, a success of its own bucket
	return r
}

// newModelPace starts pacing; a refusal that started it holds the calls back for hold (-1:
// the call was no refusal with a hint).
func newModelPace(now, length, span time.Duration, calls, succeeded, before int, refused bool, hold time.Duration) *modelRamp {
	r := &modelRamp{closed: now, length: length, span: span, paced: true, resume: now - 2*span}
	r.start = r.floor(now)
	r.offered, r.admitted, r.succeeded, r.lost, r.refused = calls, calls, succeeded, true, refused
	r.before = before
	if hold >= 0 {
		r.refuse(now, hold)
	}
	return r
}

// refuse notes a refusal now with the retry hint hint.
func (r *modelRamp) refuse(now, hint time.Duration) { r.resume = max(r.resume, now+min(hint, r.span)) }

// holds reports whether pacing holds calls back at now for a refusal's hint.
func (r *modelRamp) holds(now time.Duration) bool { return r.paced && r.resume > now }

// followsHints reports whether a hold lasted less than a window before at.
func (r *modelRamp) followsHints(at time.Duration) bool { return r.paced && at-r.resume < r.span }

// over reports whether the ramp is over at now by the rule as loaded now.
func (r *modelRamp) over(now time.Duration, rule breaker.Rule) bool {
	if r.paced {
		return !rule.Pace
	}
	return now >= r.closed+rule.RampUp
}

func (r *modelRamp) floor(now time.Duration) time.Duration {
	return now - ((now%r.length)+r.length)%r.length
}

// step says what the ramp finds at now, moving it to now's bucket if that is later; a ramp
// found over stays over.
func (r *modelRamp) step(now time.Duration, rule breaker.Rule) int {
	start := r.floor(now)
	switch {
	case r.done:
		return modelRampOver
	case r.over(now, rule):
		r.done = true
		return modelRampOver
	case start <= r.start:
		return modelRampOn
	case r.paced && now-r.start >= r.span:
		r.done = true
		return modelRampOver
	case r.paced && r.start == r.floor(r.closed): // pacing's first bucket neither ends nor dies
	case r.paced && r.lost && r.succeeded == 0 && !r.refused && !r.hinted:
		return modelRampDead
	case r.offered > 0 && r.admitted == r.offered && !r.followsHints(r.start):
		r.done = true
		return modelRampOver
	}
	before := 0
	if start-r.start == r.length {
		before = r.succeeded
	}
	*r = modelRamp{closed: r.closed, length: r.length, span: r.span, paced: r.paced, start: start, before: before,
		resume: r.resume}
	return modelRampOn
}

// on reports whether the ramp still paces calls at now, without moving it.
func (r *modelRamp) on(now time.Duration, rule breaker.Rule) bool {
	copied := *r
	return copied.step(now, rule) != modelRampOver
}

// admit reports whether the ramp admits a call now, and what it found.
func (r *modelRamp) admit(now time.Duration, rule breaker.Rule) (bool, int) {
	if step := r.step(now, rule); step != modelRampOn {
		return true, step
	}
	r.offered++
	if at := max(now, r.start); r.holds(at) {
		r.hinted = true
		if r.admitted > 0 {
			return false, modelRampOn
		}
		r.admitted++ // the first call of the bucket, which may end the hold
		return true, modelRampOn
	} else if r.followsHints(at) {
		r.admitted++
		return true, modelRampOn
	}
	s := max(r.before, r.succeeded)
	// after a loss, the fewer successes of the two buckets, or the bucket before's spread
	// over the bucket so far
	spread := false
	if r.lost {
		s = min(r.before, r.succeeded)
		spread = time.Duration(r.admitted)*r.length < time.Duration(r.before)*(now-r.floor(now))
	}
	if r.admitted == 0 || !r.lost && !r.paced && 10*r.admitted < r.offered || 2*r.admitted < 3*s || spread {
		r.admitted++
		return true, modelRampOn
	}
	return false, modelRampOn
}

// giveBack returns, whole, the place of a call admitted now that was then blocked.
func (r *modelRamp) giveBack(now time.Duration) {
	if !r.done && r.start == r.floor(now) && r.admitted > 0 && r.offered > 0 {
		r.admitted--
		r.offered--
	}
}

func (r *modelRamp) completed(now time.Duration, rule breaker.Rule, bad, refused bool, hint time.Duration) int {
	switch {
	case !r.paced:
	case !bad:
		r.resume = min(r.resume, now) // a success ends a hold
	case refused && hint > 0:
		r.refuse(now, hint)
	}
	if step := r.step(now, rule); step != modelRampOn {
		return step
	}
	switch {
	case refused:
		r.lost, r.refused = true, true
	case bad:
		r.lost = true
	default:
		r.succeeded++
	}
	return modelRampOn
}

// retryAt is when a call the ramp held back now may try again: the bucket after the one that
// judged it (now's, or the current one for a reading before it), or the ramp's end if that falls
// within that bucket.
func (r *modelRamp) retryAt(now time.Duration, rule breaker.Rule) time.Duration {
	start := max(r.floor(now), r.start)
	if r.holds(max(now, start)) {
		return r.resume
	}
	at := start + r.length
	if end := r.closed + identityOf(rule).RampUp; !r.paced && end < at && end > start {
		return end
	}
	return at
}

// enter checks a call (retry time, probe, probe timeout, every breaker, slots, force, limit)
// and returns the entry or the block.
func (m *model) enter(resource string) (*modelEntry, *modelBlock) { return m.enterIn(resource, nil) }

// enterIn is enter for a call made with the context of the call outer (nil: none): when the
// breakers reject it for a HALF_OPEN one, and outer, due for a probe, is let through by each
// breaker in its current period, or the breaker lets every call through, it passes uncounted.
func (m *model) enterIn(resource string, outer *modelEntry) (*modelEntry, *modelBlock) {
	e := &modelEntry{resource: resource, start: m.now}
	breakers := m.breakersOf(resource, true) // made before the settings are read, as the library does
	if m.resources[resource] == nil {
		e.dyn = m.templated[resource]
	}
	settings, set := m.settingsOf(resource)
	if settings.Force == breaker.ForceOpen {
		m.heard(resource, "blocked")
		return nil, &modelBlock{cause: breaker.ErrForcedOpen}
	}
	var block *modelBlock
	var due []*modelBreaker
	for _, b := range breakers {
		if b.state == breaker.HalfOpen && b.probing {
			switch {
			case m.probeOverdue(b):
				m.move(b, breaker.Open, breaker.ProbeTimedOut, 0)
			case b.rule.Strategy == breaker.SlowRequestRatio && m.now-(b.deadline-b.probeFor) > b.rule.MaxAllowedRT:
				m.move(b, breaker.Open, breaker.ProbeFailed, 0) // a probe in flight past MaxAllowedRT is slow
			}
		}
		switch {
		case b.state == breaker.Closed && m.rampAdmits(b):
			a := modelAdmission{b: b, epoch: b.epoch}
			if b.flight != nil {
				a.f, a.ticket = m.fly(b)
			}
			e.admitted = append(e.admitted, a)
			continue
		case b.state == breaker.Open && m.retryDue(b), b.state == breaker.HalfOpen && !b.probing:
			due = append(due, b)
			continue
		case m.dry(b):
			continue // lets the call through, uncounted
		}
		if at := m.retryAt(b); block == nil || at > block.retryAt { // the latest retry time
			r := b.rule
			block = &modelBlock{rule: &r, state: b.state, retryAt: at,
				ramping: b.state == breaker.Closed && !b.ramp.paced, pacing: b.state == breaker.Closed && b.ramp.paced}
		}
	}
	if block != nil && outer != nil && outer.due && block.state == breaker.HalfOpen && m.nestedOK(breakers, outer) {
		m.giveBack(e) // part of outer's probe: no breaker counts it
		e.admitted, block, due = nil, nil, nil
	}
	if block != nil {
		m.heard(resource, "blocked")
		m.giveBack(e)
		m.touch(e.dyn) // a breaker rejected the call: the resource is not idle
		return nil, block
	}
	e.due = len(due) > 0
	// The probes are taken in rule order, and the call is admitted by every breaker in rule
	// order, the order its completion reaches them.
	var probes []modelAdmission
	closed := e.admitted
	e.admitted = nil
	for _, b := range breakers {
		if slices.Contains(due, b) {
			a, probe := m.takeProbe(b, resource)
			e.admitted = append(e.admitted, a)
			if probe {
				probes = append(probes, a)
			}
		}
		for _, a := range closed {
			if a.b == b {
				e.admitted = append(e.admitted, a)
			}
		}
	}
	if set { // only a resource with settings, its own or a template's, counts its calls
		n := m.inflightOf(resource)
		if limit := settings.MaxConcurrency; limit > 0 && *n >= limit {
			m.heard(resource, "blocked")
			m.releaseProbes(probes)
			m.giveBack(e)
			return nil, &modelBlock{cause: breaker.ErrConcurrencyLimit}
		}
		*n++
		e.inflight = n
	}
	if m.blocking {
		m.heard(resource, "blocked")
		m.releaseProbes(probes)
		m.giveBack(e)
		if e.inflight != nil {
			*e.inflight--
		}
		return nil, &modelBlock{bySlot: true}
	}
	return e, nil
}

// nestedOK reports whether each of breakers let outer through in its current period, or lets
// every call through (CLOSED without a ramp, or dry).
func (m *model) nestedOK(breakers []*modelBreaker, outer *modelEntry) bool {
	for _, b := range breakers {
		held := slices.ContainsFunc(outer.admitted, func(a modelAdmission) bool { return a.b == b && a.epoch == b.epoch })
		if !(b.state == breaker.Closed && b.ramp == nil || held || m.dry(b)) {
			return false
		}
	}
	return true
}

// takeProbe makes the call the probe of b, which was due when the call checked it, and reports
// whether it did: b's probe is still to be taken, unless an observer reset the resource as the
// probe of another of its breakers was taken; then the call is admitted by b as it stands,
// CLOSED.
func (m *model) takeProbe(b *modelBreaker, resource string) (modelAdmission, bool) {
	if b.state == breaker.Closed { // reset meanwhile: no ramp, the call is admitted
		a := modelAdmission{b: b, epoch: b.epoch}
		if b.flight != nil {
			a.f, a.ticket = m.fly(b)
		}
		return a, false
	}
	moved := b.state == breaker.Open
	if moved {
		m.move(b, breaker.HalfOpen, breaker.RetryTimeoutElapsed, 0)
	} else {
		b.epoch++ // the next probe of the run: no transition
	}
	b.probing = true
	b.probeFor = identityOf(b.rule).ProbeTimeout
	start := m.now
	if by := b.since - start; !moved && by > 0 && by <= staleness(b.rule) {
		start = b.since // a reading before the period's start (the clock stepped back a little)
	}
	b.deadline = start + b.probeFor
	a := modelAdmission{b: b, epoch: b.epoch}
	if moved && m.resetOnProbe == resource {
		m.resetOnProbe = ""
		m.reset(resource)
	}
	return a, true
}

// releaseProbes returns the probes a blocked call took to OPEN, with their retry times (those
// the breaker still has: a reset since leaves it as it is).
func (m *model) releaseProbes(probes []modelAdmission) {
	for _, a := range probes {
		if a.b.epoch == a.epoch {
			m.move(a.b, breaker.Open, breaker.ProbeBlocked, 0)
		}
	}
}

// exit completes a call: it counts in the window and may trip the breaker, decides a probe,
// and is ignored when stale or late.
func (m *model) exit(e *modelEntry, o modelOutcome) {
	if e.inflight != nil {
		*e.inflight--
	}
	m.touch(e.dyn) // a call of it completed, also one its breakers let through uncounted: not idle
	m.heard(e.resource, "ran "+[]string{"Success", "Failure", "Ignore", "Failure", "Refused", "Refused"}[o])
	rt := m.now - e.start
	for _, a := range e.admitted {
		b := a.b
		if b.retired || b.epoch != a.epoch {
			continue
		}
		refused := o == modelRefused || o == modelRefusedHinted
		bad := o == modelFailure || o == modelOutlived || refused
		ignored := o == modelIgnored
		if b.rule.Strategy == breaker.SlowRequestRatio {
			bad = rt > b.rule.MaxAllowedRT || o == modelOutlived // a refusal is judged by its time
			ignored = ignored && !bad                            // a canceled call that was already slow is slow
			refused = false
		}
		hint := o.hint()
		switch b.state {
		case breaker.Closed:
			if b.flight != nil {
				m.judgeFlight(b, b.flight, b.oldFlight)
				if a.f.leave(a.ticket) || b.epoch != a.epoch {
					continue // counted as slow while in flight, or that tripped the breaker
				}
			}
			if ignored {
				continue
			}
			if b.ramp != nil && b.ramp.completed(m.now, b.rule, bad, refused, hint) == modelRampDead {
				m.move(b, breaker.Open, breaker.ThresholdExceeded, 1) // died while paced
				continue
			}
			m.countN(b, 1, bad, refused, hint)
		case breaker.HalfOpen:
			switch {
			case m.now >= b.deadline: // its own completion decides however the clock moved
				m.move(b, breaker.Open, breaker.ProbeTimedOut, 0)
			case ignored:
				m.move(b, breaker.Open, breaker.ProbeIgnored, 0)
			case bad: // a refused probe failed too
				m.move(b, breaker.Open, breaker.ProbeFailed, 0)
				m.lengthen(b, hint)
			case b.successes+1 < identityOf(b.rule).ProbeNum:
				b.successes++ // not the last of the run: the next call probes
				b.probing = false
				b.since = m.now
				b.epoch++
			default:
				m.move(b, breaker.Closed, breaker.ProbeSucceeded, 0)
			}
		}
	}
}

// retryAt is what the BlockError of a call that b rejects now names: its retry time while
// OPEN; with a probe in flight, the start of the bucket after next, or the probe's deadline
// if sooner, so that a caller who waits for it never spins.
// giveBack returns the places the ramps of its breakers gave the call e, which was then
// blocked.
func (m *model) giveBack(e *modelEntry) {
	for _, a := range e.admitted {
		if a.b.state == breaker.Closed && a.b.ramp != nil {
			a.b.ramp.giveBack(m.now)
		}
		if a.ticket != 0 && a.b.epoch == a.epoch {
			a.f.leave(a.ticket) // blocked: out of flight, counted neither way
		}
	}
}

func (m *model) retryAt(b *modelBreaker) time.Duration {
	if b.state == breaker.Closed { // held back by its ramp
		return b.ramp.retryAt(m.now, b.rule)
	}
	if b.state != breaker.HalfOpen {
		return b.retryAt
	}
	interval, buckets := b.rule.StatInterval, time.Duration(b.rule.BucketCount)
	if interval == 0 {
		interval = time.Second
	}
	if buckets == 0 {
		buckets = 10
	}
	length := interval / buckets
	now := max(m.now, b.deadline-b.probeFor) // a reading older than the probe is judged as of the probe
	return min(now-((now%length)+length)%length+2*length, b.deadline)
}

// retryDue: the retry time has come, or the clock stepped back further than a stale reading
// can lie before the OPEN period's start.
func (m *model) retryDue(b *modelBreaker) bool {
	return m.now >= b.retryAt || b.retryAt-m.now-b.openFor > staleness(b.rule)
}

// probeOverdue: the probe's deadline has passed, or the clock stepped back further than a
// stale reading can lie before the probe's admission.
func (m *model) probeOverdue(b *modelBreaker) bool {
	return m.now >= b.deadline || b.deadline-m.now-b.probeFor > staleness(b.rule)
}

// staleness is how far before a period's start a reading of the fake clock is taken for a
// stale one rather than a step back: the rule's StatInterval, at least a second.
func staleness(r breaker.Rule) time.Duration { return max(r.StatInterval, time.Second) }

// lengthen keeps the breaker b, OPEN now, OPEN at least hint, within its longest OPEN time.
func (m *model) lengthen(b *modelBreaker, hint time.Duration) {
	if hint > b.openFor {
		b.openFor = min(hint, max(b.rule.MaxRetryTimeout, b.rule.RetryTimeout))
		b.retryAt = m.now + b.openFor
	}
}

// countN counts n calls, all bad or all good (refused ones among the bad, with the retry hint
// hint), at now, then judges the window once.
func (m *model) countN(b *modelBreaker, n int, bad, refused bool, hint time.Duration) {
	id := identityOf(b.rule)
	if id.Strategy == breaker.ConsecutiveErrors { // no window: a run of failures
		if refused {
			return // neither lengthens the run nor ends it
		}
		if !bad {
			b.run = 0
			return
		}
		if b.run++; float64(b.run) >= id.Threshold {
			m.move(b, breaker.Open, breaker.ThresholdExceeded, float64(b.run))
			m.lengthen(b, hint)
		}
		return
	}
	if id.StatCalls > 0 { // a window of the last StatCalls calls, whenever they came
		for range n {
			b.calls = append(b.calls, modelCall{bad: bad, refused: refused})
		}
		b.calls = b.calls[max(0, len(b.calls)-int(id.StatCalls)):]
		var bads uint64
		for _, c := range b.calls {
			if c.bad {
				bads++
			}
		}
		m.judgeCounts(b, id, uint64(len(b.calls)), bads, hint)
		return
	}
	length := id.StatInterval / time.Duration(id.BucketCount)
	bucket := m.now - ((m.now%length)+length)%length
	if len(b.calls) > 0 && bucket < b.head {
		if m.now-b.head > -id.StatInterval {
			bucket = b.head // the clock went back a little: the newest bucket counts it
		} else {
			b.calls = nil // back a whole window or more: the window starts again, empty
		}
	}
	b.head = bucket
	for range n {
		b.calls = append(b.calls, modelCall{bucket, bad, refused})
	}
	all := b.countsSince(b.head - id.StatInterval)
	if all.Total < id.MinRequestAmount && (all.Bad < all.Total || !b.pacing()) {
		return // pacing that holds no success judges however few calls it holds
	}
	measure := float64(all.Bad)
	if id.Strategy != breaker.ErrorCount {
		measure /= float64(all.Total)
	}
	trips := measure >= id.Threshold
	paces := trips && id.Pace && all.Bad < all.Total // the window holds a success
	if (!trips || paces) && id.FastBuckets > 0 {
		// The newest FastBuckets buckets, judged on their own.
		// The newest FastBuckets buckets, judged on their own, by their failures alone.
		fast := b.countsSince(b.head - time.Duration(id.FastBuckets)*length)
		enough := fast.Total >= id.MinRequestAmount || paces && fast.Total > 0 // the window met its own
		if ratio := float64(fast.Bad-fast.Refused) / float64(fast.Total); enough && ratio >= id.FastThreshold {
			m.move(b, breaker.Open, breaker.FastTrip, ratio)
			m.lengthen(b, hint)
			return
		}
	}
	switch {
	case paces && b.ramp == nil: // a ramp or pacing already on goes on
		newest, two := b.countsSince(b.head-length), b.countsSince(b.head-2*length)
		hold := time.Duration(-1)
		if refused && hint > 0 {
			hold = hint
		}
		b.ramp = newModelPace(m.now, length, id.StatInterval, int(newest.Total), int(newest.Total-newest.Bad),
			int(two.Total-two.Bad-(newest.Total-newest.Bad)), newest.Refused > 0, hold)
		m.changeClosed(b, breaker.PacingStarted, measure)
	case trips && !paces:
		m.move(b, breaker.Open, breaker.ThresholdExceeded, measure)
		m.lengthen(b, hint)
	}
}

// countsSince counts the calls of b's window in the buckets after from.
func (b *modelBreaker) countsSince(from time.Duration) (c struct{ Total, Bad, Refused uint64 }) {
	for _, call := range b.calls {
		if call.bucket > from {
			c.Total++
			if call.bad {
				c.Bad++
			}
			if call.refused {
				c.Refused++
			}
		}
	}
	return c
}

// pacing reports whether b paces its calls (a ramp entered on a trip), ended or not.
func (b *modelBreaker) pacing() bool { return b.ramp != nil && b.ramp.paced }

// rampAdmits reports whether b, CLOSED, admits a call now: it has no ramp, or its ramp admits
// it. A ramp found over ends there, and the end of pacing is heard.
func (m *model) rampAdmits(b *modelBreaker) bool {
	if b.ramp == nil {
		return true
	}
	admitted, step := b.ramp.admit(m.now, b.rule)
	switch step {
	case modelRampOver:
		if b.ramp.paced {
			m.changeClosed(b, breaker.PacingEnded, 0)
		}
		b.ramp = nil
	case modelRampDead: // a bucket of pacing ended with a loss and no success: it opens
		m.move(b, breaker.Open, breaker.ThresholdExceeded, 1)
		return false
	}
	return admitted
}

// changeClosed reports a change of the CLOSED breaker b that keeps its window and its calls:
// pacing starts or ends.
func (m *model) changeClosed(b *modelBreaker, reason breaker.Reason, snapshot float64) {
	b.gen++
	m.report(b, breaker.Closed, reason, snapshot)
}

// judgeCounts trips b if a window of total calls, bads of them bad, meets its threshold, and
// reports whether b is still CLOSED with the window judged (so that its newest buckets may be).
func (m *model) judgeCounts(b *modelBreaker, id breaker.Rule, total, bads uint64, hint time.Duration) bool {
	if total < id.MinRequestAmount {
		return false
	}
	measure := float64(bads)
	if id.Strategy != breaker.ErrorCount && id.Strategy != breaker.ConsecutiveErrors {
		measure /= float64(total)
	}
	if measure >= id.Threshold {
		m.move(b, breaker.Open, breaker.ThresholdExceeded, measure)
		m.lengthen(b, hint)
		return false
	}
	return true
}

func (m *model) states() string {
	s := ""
	for _, r := range []string{"a", "b", "c"} {
		s += r + ":"
		for _, b := range m.resources[r] {
			s += " " + b.state.String()
		}
		s += "; "
	}
	return s
}

func describe(c breaker.StateChange) string {
	return fmt.Sprintf("%s %q %v->%v %v snapshot=%v gen=%d dry=%v note=%q", c.Resource, c.Rule.ID, c.From, c.To,
		c.Reason, c.Snapshot, c.Generation, c.DryRun, c.Note)
}
