package breaker

import (
	"log/slog"
	"math"
)

// Option configures a Manager.
type Option interface {
	apply(*Manager)
}

type optionFunc func(*Manager)

func (f optionFunc) apply(m *Manager) { f(m) }

// WithClock makes the Manager read time from c instead of the system clock; a nil c keeps the
// system clock. Tests use it with a fake clock.
func WithClock(c Clock) Option {
	return optionFunc(func(m *Manager) {
		if c != nil {
			m.clock, m.system = c, false
		}
	})
}

// WithSlots adds slots that every call goes through after the built-in breaker check, in the
// order given.
func WithSlots(slots ...Slot) Option {
	return optionFunc(func(m *Manager) { m.slots = append(m.slots, slots...) })
}

// WithClassifier sets how the Manager counts a call that ended with a non-nil error; see
// Classifier. A nil c keeps DefaultClassifier.
func WithClassifier(c Classifier) Option {
	return optionFunc(func(m *Manager) {
		if c != nil {
			m.classifier = c
		}
	})
}

// WithLogger sets where the Manager logs what it cannot return, such as a panicking observer.
// The default, and what a nil l means, is slog.Default().
func WithLogger(l *slog.Logger) Option {
	return optionFunc(func(m *Manager) {
		if l != nil {
			m.logger = l
		}
	})
}

// defaultMemoryBudget is how much memory the breakers of a Manager's rules may take unless
// WithMemoryBudget says otherwise: 256 MiB, about 9,600 rules of 1,000 buckets each, or
// 120,000 to 250,000 rules of the default 10, whose stripes follow GOMAXPROCS.
const defaultMemoryBudget = 256 << 20

// WithMemoryBudget bounds the memory, in bytes, that the breakers of the loaded rules and the
// resource settings may take, so that a rule file or an etcd value cannot make a Manager take
// memory out of proportion. LoadRules, LoadResources and LoadDocument refuse what would pass
// it. The default is
// 256 MiB; 0 or less removes the bound.
func WithMemoryBudget(bytes int64) Option {
	return optionFunc(func(m *Manager) { m.budget = bytes })
}

// DefaultMaxNameLength is the longest resource name, in bytes, that a Manager keeps unless
// WithMaxNameLength says otherwise.
const DefaultMaxNameLength = 1024

// WithMaxNameLength bounds the names, in bytes, that a Manager keeps: LoadRules and
// LoadResources refuse a rule or settings for a longer name, and a call to a longer name that
// a template rule matches is rejected with ErrNameTooLong instead of getting breakers. Names
// no rule or template matches are not kept, and not bounded. The default is
// DefaultMaxNameLength; n <= 0 removes the bound (the memory budget still counts every name).
func WithMaxNameLength(n int) Option {
	return optionFunc(func(m *Manager) {
		if n <= 0 {
			n = math.MaxInt
		}
		m.maxName = n
	})
}

// WithCallObserver has the Manager call hear with every call, passed or blocked, for metrics;
// it may be given more than once, and a nil hear is ignored. hear runs synchronously on the
// caller's goroutine, once per call, at Exit or at the block: keep it as quick as an atomic
// add. A panic is recovered and logged.
//
// Unlike a Slot, a call observer also hears calls the breakers rejected. A Manager with one
// reads the clock when each call enters, also for resources whose rules do not need it.
func WithCallObserver(hear func(CallInfo)) Option {
	return optionFunc(func(m *Manager) {
		if hear != nil {
			m.calls = append(m.calls, hear)
		}
	})
}

// WithInstanceName names this process among the instances of a service, for the jitter of
// retry times (Rule.RetryJitter): instances with different names that trip together probe at
// different times, and the same name gives the same times, as a test wants. The default is the
// host name and the process id.
func WithInstanceName(name string) Option {
	return optionFunc(func(m *Manager) { m.instance = name })
}

// defaultMaxTemplateBreakers is how many breakers made from template rules a Manager holds at
// most, unless WithMaxTemplateBreakers says otherwise.
const defaultMaxTemplateBreakers = 10_000

// WithMaxTemplateBreakers bounds the breakers that template rules (a Resource ending in "*")
// make, over all templates: a template of two rules makes two per resource. A resource that
// takes settings from a template setting (a ResourceConfig key ending in "*") counts as one
// more, for its count of calls in flight. When a new
// resource needs breakers past the bound, the Manager first drops the breakers of the
// resources idle the longest whose breakers are all CLOSED, then, if that is not enough, the
// longest idle of the others, which observers hear of as a change to CLOSED with Reason
// Evicted. It drops at least a sixteenth of the bound at once, so a stream of new names costs
// little per name. TemplateStats counts the drops.
//
// The default is 10,000. With n <= 0 templates make no breakers, and
// LoadRules and LoadResources refuse them. Where WithMemoryBudget(0) and WithMaxNameLength(0) remove a bound,
// this 0 does not: template breakers are made for names that callers choose, so they are
// never unbounded.
func WithMaxTemplateBreakers(n int) Option {
	return optionFunc(func(m *Manager) { m.tmpl.limit = max(n, 0) })
}
