package breakerotel

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/atomic"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakerview"
)

// ScopeName is the instrumentation scope of the Meter that New takes from its MeterProvider.
const ScopeName = "github.com/halfopen/breaker/contrib/otel"

// Names of the instruments.
const (
	CallsName    = "breaker.calls"
	DurationName = "breaker.call.duration"
	StateName    = "breaker.state"
	// StatusName is observed three times for each breaker that breaker.state reports, once
	// for each value of StateKey: 1 in the series of the breaker's state, 0 in the others, so
	// that a sum over breakers counts the breakers in each state.
	StatusName = "breaker.status"
	// RampingUpName is observed for each breaker whose rule has RampUp: 1 while it paces its
	// calls after a probe closed it, else 0.
	RampingUpName = "breaker.ramping_up"
	// PacingName is observed for each breaker whose rule has Pace: 1 while, CLOSED where it
	// would have opened, it paces the calls of a dependency that still serves part of them,
	// else 0.
	PacingName      = "breaker.pacing"
	TransitionsName = "breaker.transitions"
	// The window of each breaker that breaker.state reports, with its ResourceKey and RuleKey
	// (breaker.Stats): WindowCallsName its calls, WindowBadName the slow ones
	// (SlowRequestRatio) or the failed ones (ErrorRatio, ErrorCount) among them, and
	// WindowRatioName bad over calls (Stats.Ratio), the window's slow-call rate or failure
	// rate, 0 while the window is empty. For ConsecutiveErrors, which keeps no window, calls and
	// bad are its current run of failures, and there is no ratio. All are 0 unless CLOSED.
	WindowCallsName = "breaker.window.calls"
	WindowBadName   = "breaker.window.bad"
	WindowRatioName = "breaker.window.ratio"
	// WindowRefusedName is, of a window's bad calls, those the dependency refused rather
	// than failed (Stats.Refused): ErrorRatio and ErrorCount count them apart; 0 for
	// SlowRequestRatio and ConsecutiveErrors, and unless CLOSED.
	WindowRefusedName = "breaker.window.refused"
	// The settings that apply to each resource that has them (breaker.Manager.LoadResources),
	// its own or a template setting's, with SettingsFromKey, unless they are all zero; and its
	// calls in flight. Observed when the reader collects; a template setting's key is no
	// resource.
	ForceName            = "breaker.force"
	InFlightName         = "breaker.in_flight"
	ConcurrencyLimitName = "breaker.concurrency.limit"
	TimeoutName          = "breaker.timeout"
	// OverrideName is observed for each resource that an operator's override
	// (breaker.Manager.Override) forces now, with ForceKey: 1, or for breakerview.Overflow how many
	// of the names past the bound. OverrideEndName is when that override ends, in seconds
	// since the Unix epoch by the Manager's clock (for breakerview.Overflow, the latest end).
	OverrideName    = "breaker.override"
	OverrideEndName = "breaker.override.end"
	// The breakers that template rules (a Resource ending in "*") made, the resources that
	// hold settings from a template setting (a settings key ending in "*"), their bound and
	// the drops (breaker.Manager.TemplateStats), observed while the Manager has a template
	// rule or a template setting.
	TemplateBreakersName = "breaker.template.breakers"
	TemplateSettingsName = "breaker.template.settings"
	TemplateLimitName    = "breaker.template.limit"
	TemplateDroppedName  = "breaker.template.dropped"
	// CallDurationMaxName is observed for each resource with a call that ran in the last
	// minute: the longest response time of those calls, in seconds. The minute moves in
	// one-second steps, so a call counts for between 59 and 60 seconds, on every surface.
	CallDurationMaxName = "breaker.call.duration.max"
	// UncalledName is observed, 1, for each resource with rules, settings or an override of its
	// own that had no call in the last minute, with NearestKey; nothing in the first minute
	// after Watch, nor while breakerview.Overflow had calls in it.
	UncalledName = "breaker.uncalled"
	// ResourceInfoName is observed, 1, for each resource the Instruments report, with SideKey:
	// the side of its name, a function of the name, which the other instruments leave out so
	// that their series stay as they were.
	ResourceInfoName = "breaker.resource.info"
)

// Attribute keys.
const (
	ResourceKey  = attribute.Key("breaker.resource")
	OutcomeKey   = attribute.Key("breaker.outcome")
	RuleKey      = attribute.Key("breaker.rule")
	StateFromKey = attribute.Key("breaker.state.from")
	StateToKey   = attribute.Key("breaker.state.to")
	ReasonKey    = attribute.Key("breaker.reason")
	// CauseKey says who rejected a blocked call: the String of its breaker.BlockKind, "open",
	// "forced_open", "concurrency_limit", "slot", "name_too_long", "ramping_up" or "pacing"
	// (breakerview.Causes).
	CauseKey = attribute.Key("breaker.cause")
	// ModeKey says why a breaker let through a call it would have rejected: the String of a
	// breakerview.DryMode, "dry_run" (its rule is DryRun) or "force_closed" (its resource is
	// forced closed).
	ModeKey = attribute.Key("breaker.mode")
	// DryRunKey, on the state gauge, breaker.status and the transitions counter, is true for
	// a breaker that rejects no call: its rule is DryRun, or its resource is ForceClosed.
	DryRunKey = attribute.Key("breaker.dry_run")
	// StateKey, on breaker.status, is the state that a series counts; see the State
	// constants.
	StateKey = attribute.Key("breaker.state")
	// ForceKey, on breaker.override and breaker.override.end, is the override's force as
	// breaker.Force.String spells it: "open", "closed" or "auto".
	ForceKey = attribute.Key("breaker.force")
	// SettingsFromKey, on breaker.force, breaker.concurrency.limit and breaker.timeout, is the
	// key the resource's settings come from: breakerview.SettingsOwn ("own") for its own, else
	// the template setting's key (breaker.ResourceStatus.SettingsFrom), such as "*" or "GET *".
	SettingsFromKey = attribute.Key("breaker.settings.from")
	// NearestKey, on breaker.uncalled, is the name called in the last minute nearest to the
	// uncalled one by edit distance, "" when none is near enough.
	NearestKey = attribute.Key("breaker.nearest")
	// SideKey, on breaker.resource.info, is the side of the resource's name as
	// breakerview.Side.String spells it: "server" for a route breakerhttp.Middleware serves (a
	// name beginning with breakerhttp.ServerPrefix), "client" for a call the program makes.
	// breakerview.Overflow has none: its names may be of either side.
	SideKey = attribute.Key("breaker.side")
)

// Values of StateKey, one for each breaker.State.
const (
	StateClosed   = "closed"
	StateOpen     = "open"
	StateHalfOpen = "half_open"
)

// Values of OutcomeKey. Every call that ran counts as OutcomePassed; those that failed count also
// as OutcomeFailed, those the dependency refused (breaker.Refused) also as OutcomeRefused, never
// as failed, those that were slow also as OutcomeSlow, and those that a breaker would have
// rejected also as OutcomeWouldReject (with ModeKey). A rejected call counts as OutcomeBlocked
// only (with CauseKey). So passed + blocked is every call, and failed, refused, slow and
// would_reject are subsets of passed that may overlap, but for failed and refused.
const (
	OutcomePassed      = "passed"
	OutcomeBlocked     = "blocked"
	OutcomeFailed      = "failed"
	OutcomeRefused     = "refused"
	OutcomeSlow        = "slow"
	OutcomeWouldReject = "would_reject"
)

// DurationBoundaries are the bucket boundaries, in seconds, that the duration histogram
// advises; a View of the MeterProvider can replace them. They are OpenTelemetry's
// semantic-convention boundaries for request durations.
var DurationBoundaries = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10}

var (
	// ErrWatching is returned by Watch when the Instruments already watch a Manager.
	ErrWatching = errors.New("breakerotel: the Instruments already watch a Manager")
	// ErrClosed is returned by Watch after Close.
	ErrClosed = errors.New("breakerotel: the Instruments are closed")
)

// Instruments are the OpenTelemetry instruments of one breaker.Manager. Create them with New or
// NewWithMeter, pass Option to breaker.NewManager, and then give the Manager to Watch;
// Close stops them.
//
// The calls counter and the duration histogram hear the Manager's calls from Option on;
// the state gauge and the transitions counter work from Watch on. Give Option to the
// same Manager as Watch: the Instruments cannot tell.
//
// Every method is safe for concurrent use. The zero value is not usable.
type Instruments struct {
	meter         metric.Meter
	attrs         []attribute.KeyValue // from WithAttributes; never modified after New
	callsTotal    metric.Int64Counter
	duration      metric.Float64Histogram
	state         metric.Int64ObservableGauge
	status        metric.Int64ObservableUpDownCounter
	rampingUp     metric.Int64ObservableGauge
	pacing        metric.Int64ObservableGauge
	windowCalls   metric.Int64ObservableGauge
	windowBad     metric.Int64ObservableGauge
	windowRefused metric.Int64ObservableGauge
	windowRatio   metric.Float64ObservableGauge
	transitions   metric.Int64Counter
	force         metric.Int64ObservableGauge
	inFlight      metric.Int64ObservableGauge
	limit         metric.Int64ObservableGauge
	timeout       metric.Float64ObservableGauge
	override      metric.Int64ObservableGauge
	overrideEnd   metric.Float64ObservableGauge
	tmplBreakers  metric.Int64ObservableGauge
	tmplSettings  metric.Int64ObservableGauge
	tmplLimit     metric.Int64ObservableGauge
	tmplDropped   metric.Int64ObservableCounter
	callMax       metric.Float64ObservableGauge
	uncalled      metric.Int64ObservableGauge
	resourceInfo  metric.Int64ObservableGauge

	// calls keeps the resource names with attribute sets of their own, within the Limits, each
	// with its last minute.
	calls *breakerview.Calls[*resourceSets]

	closed atomic.Bool

	mu        sync.Mutex // serialises Watch and Close
	watching  bool
	callback  metric.Registration
	unobserve func()
}

// New returns the instruments of one Manager, made with a Meter of provider named ScopeName.
// A nil provider means otel.GetMeterProvider(). It returns the errors of the instrument
// constructors, joined.
func New(provider metric.MeterProvider, opts ...Option) (*Instruments, error) {
	if provider == nil {
		provider = otel.GetMeterProvider()
	}
	return NewWithMeter(provider.Meter(ScopeName), opts...)
}

// NewWithMeter is New with instruments made by meter.
func NewWithMeter(meter metric.Meter, opts ...Option) (*Instruments, error) {
	if meter == nil {
		return nil, errors.New("breakerotel: NewWithMeter(nil)")
	}
	var cfg config
	for _, o := range opts {
		o.apply(&cfg)
	}
	ins := &Instruments{meter: meter, attrs: cfg.attrs}
	var errs [24]error
	ins.callsTotal, errs[0] = meter.Int64Counter(CallsName,
		metric.WithUnit("{call}"),
		metric.WithDescription("Calls made through the breakers, by outcome: passed, blocked (by cause), and of the passed ones failed, refused (by the dependency, apart from failed), slow and would_reject (by mode)."))
	ins.duration, errs[1] = meter.Float64Histogram(DurationName,
		metric.WithUnit("s"),
		metric.WithDescription("Response time of the calls that the breakers let through."),
		metric.WithExplicitBucketBoundaries(DurationBoundaries...))
	ins.state, errs[2] = meter.Int64ObservableGauge(StateName,
		metric.WithUnit("1"),
		metric.WithDescription("State of each breaker: 0 CLOSED, 1 OPEN, 2 HALF_OPEN; breaker.dry_run when it rejects no call."))
	ins.status, errs[12] = meter.Int64ObservableUpDownCounter(StatusName,
		metric.WithUnit("1"),
		metric.WithDescription("1 for the state each breaker is in and 0 for the two others, by breaker.state (closed, open, half_open): summed over breakers, how many are in each state."))
	ins.rampingUp, errs[11] = meter.Int64ObservableGauge(RampingUpName,
		metric.WithUnit("1"),
		metric.WithDescription("1 while the breaker of a rule with RampUp, closed on a probe, paces its calls; else 0."))
	ins.pacing, errs[19] = meter.Int64ObservableGauge(PacingName,
		metric.WithUnit("1"),
		metric.WithDescription("1 while the breaker of a rule with Pace, CLOSED where it would have opened, paces its calls; else 0."))
	ins.windowCalls, errs[16] = meter.Int64ObservableGauge(WindowCallsName,
		metric.WithUnit("{call}"),
		metric.WithDescription("Calls in the window of each breaker; for ConsecutiveErrors, its current run of failures. 0 unless CLOSED."))
	ins.windowBad, errs[17] = meter.Int64ObservableGauge(WindowBadName,
		metric.WithUnit("{call}"),
		metric.WithDescription("Of the calls in the window of each breaker, the slow ones (SlowRequestRatio) or the failed ones (ErrorRatio, ErrorCount); for ConsecutiveErrors, its current run of failures. 0 unless CLOSED."))
	ins.windowRefused, errs[22] = meter.Int64ObservableGauge(WindowRefusedName,
		metric.WithUnit("{call}"),
		metric.WithDescription("Of breaker.window.bad, the calls the dependency refused (Outcome Refused) rather than failed: ErrorRatio and ErrorCount count them apart; 0 for SlowRequestRatio and ConsecutiveErrors, and unless CLOSED."))
	ins.windowRatio, errs[18] = meter.Float64ObservableGauge(WindowRatioName,
		metric.WithUnit("1"),
		metric.WithDescription("breaker.window.bad over breaker.window.calls, from 0 to 1: the slow-call rate (SlowRequestRatio) or the failure rate (ErrorRatio, ErrorCount) of the window of each breaker; 0 while the window is empty, as it is unless CLOSED. None for ConsecutiveErrors."))
	ins.transitions, errs[3] = meter.Int64Counter(TransitionsName,
		metric.WithUnit("{transition}"),
		metric.WithDescription("State changes of the breakers."))
	ins.force, errs[4] = meter.Int64ObservableGauge(ForceName,
		metric.WithUnit("1"),
		metric.WithDescription("Force of each resource with settings, as loaded, by the key they come from (breaker.settings.from: own, or a template key such as *): 0 auto, 1 forced open, 2 forced closed."))
	ins.inFlight, errs[5] = meter.Int64ObservableGauge(InFlightName,
		metric.WithUnit("{call}"),
		metric.WithDescription("Calls admitted and not yet exited, of each resource with settings, its own or a template's."))
	ins.limit, errs[6] = meter.Int64ObservableGauge(ConcurrencyLimitName,
		metric.WithUnit("{call}"),
		metric.WithDescription("MaxConcurrency of each resource with settings, by the key they come from (breaker.settings.from: own, or a template key such as *); 0 means no limit."))
	ins.timeout, errs[7] = meter.Float64ObservableGauge(TimeoutName,
		metric.WithUnit("s"),
		metric.WithDescription("Timeout of each resource with settings, by the key they come from (breaker.settings.from: own, or a template key such as *); 0 means none."))
	ins.override, errs[13] = meter.Int64ObservableGauge(OverrideName,
		metric.WithUnit("{override}"),
		metric.WithDescription("1 for each resource that an operator's override forces now, by breaker.force: open, closed or auto; for _other, how many of the names past the bound."))
	ins.overrideEnd, errs[14] = meter.Float64ObservableGauge(OverrideEndName,
		metric.WithUnit("s"),
		metric.WithDescription("When each override in force ends, in seconds since the Unix epoch by the Manager's clock; for _other, the latest end of those counted there."))
	ins.tmplBreakers, errs[8] = meter.Int64ObservableGauge(TemplateBreakersName,
		metric.WithUnit("{breaker}"),
		metric.WithDescription("Breakers that template rules (Resource ending in *) made and the Manager holds."))
	ins.tmplSettings, errs[15] = meter.Int64ObservableGauge(TemplateSettingsName,
		metric.WithUnit("{resource}"),
		metric.WithDescription("Resources that hold settings from a template setting (a key ending in *), each with its own calls in flight."))
	ins.tmplLimit, errs[9] = meter.Int64ObservableGauge(TemplateLimitName,
		metric.WithUnit("{breaker}"),
		metric.WithDescription("The most template breakers and template settings the Manager may hold together (WithMaxTemplateBreakers)."))
	ins.tmplDropped, errs[10] = meter.Int64ObservableCounter(TemplateDroppedName,
		metric.WithUnit("{resource}"),
		metric.WithDescription("Resources whose template breakers were dropped to stay within the limit."))
	ins.callMax, errs[20] = meter.Float64ObservableGauge(CallDurationMaxName,
		metric.WithUnit("s"),
		metric.WithDescription("The longest response time of the calls of each resource that ran in the last minute (60 one-second steps: a call counts for 59 to 60 seconds); none while no call ran."))
	ins.uncalled, errs[21] = meter.Int64ObservableGauge(UncalledName,
		metric.WithUnit("1"),
		metric.WithDescription("1 for each resource with rules, settings or an override of its own and no call in the last minute, most often a misspelt name, with the called name nearest to it by edit distance (breaker.nearest, empty when none is near). None in the first minute after Watch, nor while _other had calls in it."))
	ins.resourceInfo, errs[23] = meter.Int64ObservableGauge(ResourceInfoName,
		metric.WithUnit("{resource}"),
		metric.WithDescription("1 for each resource the Instruments report, with its breaker.side: server for a route breakerhttp.Middleware serves (a name beginning with breakerhttp.ServerPrefix), client for a call the program makes; none for _other, whose names may be of either."))
	if err := errors.Join(errs[:]...); err != nil {
		return nil, fmt.Errorf("breakerotel: creating instruments: %w", err)
	}
	// The overflow's sets make no series until a call is measured with them.
	ins.calls = breakerview.NewCalls(cfg.limits.Or(DefaultLimits()), ins.buildSets)
	return ins, nil
}

// Option returns the option that makes a Manager report its calls to the Instruments.
// Pass it to breaker.NewManager of the Manager given to Watch.
func (ins *Instruments) Option() breaker.Option {
	return breaker.WithCallObserver(callObserver{ins}.OnCall)
}

// Watch reports each resource's side through breaker.resource.info, the state of m's breakers
// through the state gauge and breaker.status, their windows
// through the window gauges, their state changes through the transitions counter, the settings of
// m's resources through the force, in-flight, concurrency-limit and timeout gauges, the overrides
// in force through the override gauges, its template breakers through the template instruments,
// and the last minute of its calls through breaker.call.duration.max and breaker.uncalled, until
// Close. It returns ErrWatching after an earlier Watch succeeded, ErrClosed after Close, and
// the error of the Meter's RegisterCallback.
func (ins *Instruments) Watch(m *breaker.Manager) error {
	if m == nil {
		return errors.New("breakerotel: Watch(nil)")
	}
	ins.mu.Lock()
	defer ins.mu.Unlock()
	switch {
	case ins.closed.Load():
		return ErrClosed
	case ins.watching:
		return ErrWatching
	}
	since := m.Now() // breaker.uncalled waits a minute from it
	reg, err := ins.meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		snap := m.Snapshot() // one read: every instrument below reports one rule set, at one instant
		ins.observeView(o, ins.calls.View(&snap, since))
		return nil
	}, ins.state, ins.status, ins.rampingUp, ins.pacing, ins.windowCalls, ins.windowBad, ins.windowRefused, ins.windowRatio, ins.force,
		ins.inFlight, ins.limit, ins.timeout, ins.override, ins.overrideEnd, ins.tmplBreakers, ins.tmplSettings, ins.tmplLimit,
		ins.tmplDropped, ins.callMax, ins.uncalled, ins.resourceInfo)
	if err != nil {
		return fmt.Errorf("breakerotel: registering the state callback: %w", err)
	}
	ins.callback = reg
	ins.unobserve = m.AddObserver(breaker.ObserverFunc(ins.onStateChange))
	ins.watching = true
	return nil
}

// Close stops the Instruments: they count no more calls or transitions, and the state gauge
// reports nothing for the Manager. It returns the error of unregistering the gauge's callback.
// Calling it again does nothing.
func (ins *Instruments) Close() error {
	ins.mu.Lock()
	defer ins.mu.Unlock()
	if ins.closed.Swap(true) || !ins.watching {
		return nil
	}
	ins.unobserve()
	if err := ins.callback.Unregister(); err != nil {
		return fmt.Errorf("breakerotel: unregistering the state callback: %w", err)
	}
	return nil
}

// set returns the attribute set of kvs after the attributes of WithAttributes, which kvs
// override.
func (ins *Instruments) set(kvs ...attribute.KeyValue) attribute.Set {
	all := make([]attribute.KeyValue, 0, len(ins.attrs)+len(kvs))
	all = append(all, ins.attrs...)
	return attribute.NewSet(append(all, kvs...)...)
}
