package breakerview

import (
	"maps"
	"strings"
	"sync"

	"go.uber.org/atomic"

	"github.com/halfopen/breaker"
)

// Calls is the bounded registry of the names a surface heard called, each with its label, its
// last minute of calls and a value of the surface's own (an exporter's series of the name), T.
// Record it every call a Manager reports (breaker.WithCallObserver(c.OnCall) does), and read
// a View from it.
//
// It keeps the names within its Limits, in the order first seen, and counts the calls of every
// other name in one entry, labelled Overflow. Record reads no clock (a call counts at
// CallInfo.At) and, for a name it keeps already or one it cannot keep, only adds to atomic
// counters: it takes no lock and allocates nothing. Make one with NewCalls; the zero value is
// not usable. A Calls is safe for concurrent use.
type Calls[T any] struct {
	limits   Limits
	build    func(label string) T
	overflow *Entry[T]

	names atomic.Pointer[map[string]*Entry[T]] // copied on write, under mu
	full  atomic.Bool                          // set once a new name found no room
	mu    sync.Mutex
	bytes int // of the names kept; under mu
}

// Entry is what a Calls keeps of one name, or of every name past its Limits (Overflow).
type Entry[T any] struct {
	label  string
	value  T
	minute minute
}

// Label is the entry's label: Label(name) for a name kept, Overflow for the others.
func (e *Entry[T]) Label() string { return e.label }

// Value is the surface's own value of the entry, as build made it from its label.
func (e *Entry[T]) Value() T { return e.value }

// NewCalls returns a Calls that has heard no call, within l (each field below 1 taken from
// DefaultLimits). build makes the value of each entry from its label, once, when the entry is
// made (with a lock held: it must not call the Calls).
func NewCalls[T any](l Limits, build func(label string) T) *Calls[T] {
	c := &Calls[T]{limits: l.Or(DefaultLimits()), build: build}
	c.overflow = &Entry[T]{label: Overflow, value: build(Overflow)}
	c.names.Store(&map[string]*Entry[T]{})
	return c
}

// Record counts the call info in the last minute of its name's entry, and returns the entry;
// nil for a call that was not made (CallInfo.NotCalled), which no surface counts.
func (c *Calls[T]) Record(info breaker.CallInfo) *Entry[T] {
	if info.NotCalled != nil {
		return nil
	}
	e := c.Entry(info.Resource)
	e.minute.record(&info)
	return e
}

// OnCall is Record without its result, for breaker.WithCallObserver(c.OnCall).
func (c *Calls[T]) OnCall(info breaker.CallInfo) { c.Record(info) }

// Entry returns the entry of name: its own, made now if the Limits leave room for it, or the
// Overflow entry.
func (c *Calls[T]) Entry(name string) *Entry[T] {
	if len(name) > c.limits.NameLength {
		return c.overflow // too long to keep: not even looked up
	}
	if e := (*c.names.Load())[name]; e != nil {
		return e
	}
	if c.full.Load() {
		return c.overflow
	}
	return c.add(name)
}

// Overflow returns the entry of the names past the Limits.
func (c *Calls[T]) Overflow() *Entry[T] { return c.overflow }

// add is the slow path of Entry: it makes name an entry of its own if the Limits allow, and
// otherwise marks c full. The entry keeps a copy of name, never the caller's string.
func (c *Calls[T]) add(name string) *Entry[T] {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := *c.names.Load()
	if e := old[name]; e != nil {
		return e
	}
	label := Label(name)
	size := len(name)
	if label != name {
		size += len(label) // a second string: the name rewritten
	}
	if len(old) >= c.limits.Names || size > c.limits.NameBytes-c.bytes {
		c.full.Store(true)
		return c.overflow
	}
	name = strings.Clone(name)
	if label == name {
		label = name
	} else {
		label = strings.Clone(label) // no spare capacity of the builder that made it
	}
	e := &Entry[T]{label: label, value: c.build(label)}
	names := maps.Clone(old)
	names[name] = e
	c.bytes += size
	c.names.Store(&names)
	return e
}

// each calls fn for every name c keeps, with its entry.
func (c *Calls[T]) each(fn func(name string, e *Entry[T])) {
	for name, e := range *c.names.Load() {
		fn(name, e)
	}
}
