package breaker

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"go.uber.org/atomic"
)

// Manager holds the rules and breakers of a set of resources and checks every call made
// through it. Create one with NewManager, or use Default.
//
// Every method is safe for concurrent use. A Manager starts no goroutines and no timers: its
// breakers change state only when calls arrive or complete.
type Manager struct {
	timeline   // the clock, as the breakers read it, and the sequence of transitions
	slots      []Slot
	logger     *slog.Logger
	classifier Classifier // nil: DefaultClassifier
	calls      []func(CallInfo)
	budget     int64  // bytes the breakers may take; <= 0: no bound
	maxName    int    // the longest resource name kept, in bytes
	instance   string // this process's name, for the jitter of retry times

	rules     atomic.Pointer[ruleSet]
	changing  atomic.Uint64    // counts changes begun and ended: odd while apply makes one, for Snapshot
	tmpl      templateBreakers // the breakers template rules made, and the settings of template settings
	counts    flightCounts     // calls in flight by name, for MaxConcurrency
	loadMu    sync.Mutex       // serialises LoadRules
	observers observers
}

// resource is the breakers of one resource, in rule order, and its settings.
type resource struct {
	breakers []*circuit
	timed    bool           // a breaker needs each call's response time
	set      *settings      // nil: the zero ResourceConfig
	owner    *templateEntry // the entry of a resource made from templates, which its calls mark used; else nil
}

// NewManager returns a Manager with no rules: every call passes until LoadRules.
func NewManager(opts ...Option) *Manager {
	m := &Manager{timeline: timeline{clock: systemClock{}, system: true}, logger: slog.Default(),
		budget: defaultMemoryBudget, maxName: DefaultMaxNameLength, instance: defaultInstance()}
	m.tmpl.init()
	for _, o := range opts {
		o.apply(m)
	}
	m.startClock()
	m.startRules()
	return m
}

// Rules returns the loaded rules, in the order given to LoadRules.
func (m *Manager) Rules() []Rule {
	return slices.Clone(m.rules.Load().rules)
}

// Breakers returns the breakers of resource, in rule order: those of its own rules, or else
// those a template made for it (none before its first call); none when it has neither.
func (m *Manager) Breakers(resource string) []CircuitBreaker {
	if res := m.existing(resource); res != nil {
		out := make([]CircuitBreaker, len(res.breakers))
		for i, c := range res.breakers {
			out[i] = c.kind
		}
		return out
	}
	return nil
}

// existing returns the breakers resource has now, its own or a template's, without making any.
func (m *Manager) existing(resource string) *resource {
	if res := m.rules.Load().resources[resource]; res != nil && res.breakers != nil {
		return res
	}
	if e := m.tmpl.find(resource); e != nil {
		return e.res.Load()
	}
	return nil
}

var defaultManager = NewManager()

// Default returns the process-wide Manager that the package-level functions use.
func Default() *Manager { return defaultManager }

// LoadRules replaces the rules of the default Manager; see Manager.LoadRules.
func LoadRules(rules []Rule) error { return defaultManager.LoadRules(rules) }

// Enter checks a call with the default Manager; see Manager.Enter.
func Enter(resource string) (*Entry, error) { return defaultManager.Enter(resource) }

// Do runs fn through the default Manager; see Manager.Do.
func Do(ctx context.Context, resource string, fn func(context.Context) error) error {
	return defaultManager.Do(ctx, resource, fn)
}

// AddObserver registers o with the default Manager; see Manager.AddObserver.
func AddObserver(o Observer) (remove func()) { return defaultManager.AddObserver(o) }

// Now returns the time by the Manager's clock, the one BlockError.RetryAt and StateChange.At
// are read from: for example, to turn RetryAt into a Retry-After header.
func (m *Manager) Now() time.Time { return m.timeAt(m.now()) }

// Reset moves every breaker of resource to a fresh CLOSED period with an empty window, as if
// its rules had just been loaded, for an operator who knows the dependency is back. Observers
// hear Reason Reset from each breaker that was not CLOSED. A resource without rules is left as
// it is; its settings (Force) are not changed.
func (m *Manager) Reset(resource string) {
	res := m.existing(resource)
	if res == nil {
		return
	}
	now := m.now()
	for _, c := range res.breakers {
		c.reset(now)
	}
}

// Handle returns a handle on the resource name. It may be taken before any rule for it is
// loaded.
func (m *Manager) Handle(name string) *Handle {
	return &Handle{m: m, name: name}
}
