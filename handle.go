package breaker

import (
	"context"

	"go.uber.org/atomic"
)

// Handle is a handle on one resource of a Manager, for hot paths: its calls do what the
// Manager's methods of the same name do, without looking the resource up by name each time.
// It follows every change of rules and settings. It is safe for concurrent use; keep one per
// resource.
type Handle struct {
	m     *Manager
	name  string
	found atomic.Pointer[lookup] // the resource's breakers under one rule set
}

type lookup struct {
	set   *ruleSet
	res   *resource
	entry *templateEntry // res was made from a template: until it is dropped, res is entry's
}

// Enter checks a call to the resource; see Manager.Enter.
func (h *Handle) Enter() (*Entry, error) {
	return h.m.enter(context.Background(), h.name, h.breakers())
}

// Do calls fn if the breakers of the resource let the call through; see Manager.Do.
func (h *Handle) Do(ctx context.Context, fn func(context.Context) error) error {
	return h.m.do(ctx, h.name, h, fn)
}

// breakers returns the resource's breakers under the rules loaded now, looking them up by name
// only after a reload, or after its breakers from a template were dropped.
func (h *Handle) breakers() *resource {
	set := h.m.rules.Load()
	if f := h.found.Load(); f != nil && f.set == set {
		if f.entry == nil {
			return f.res
		}
		if !f.entry.dropped.Load() {
			return f.entry.res.Load()
		}
	}
	res := h.m.find(set, h.name)
	f := &lookup{set: set, res: res}
	if e := h.m.tmpl.find(h.name); e != nil && e.res.Load() == res {
		f.entry = e
	}
	h.found.Store(f)
	return res
}
