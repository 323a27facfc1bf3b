package breaker

import "context"

// Calls inside calls. The library's entry points may nest on one resource of one Manager: a
// Retry or a Do around an integration's call (breakerhttp's transport, a gRPC client
// interceptor), a Do around a Do. While the resource's breakers are CLOSED, each nested call is a
// call of its own, and counts as one. But the outer call may hold a breaker's probe: a nested
// call would then be rejected for that very probe, the outer call would end with the rejection,
// its probe would count neither way, and a retry loop around it would go round with the
// dependency never called again. So a call that holds a probe marks the context it hands its
// function, and a nested call made with that context (or one derived from it) that the breakers
// reject only for what the outer call holds passes as part of it: uncounted by every breaker of
// the resource, since the outer call's outcome judges the probe, once. Only a probe's call marks
// its context (an allocation, as a probe is rare), so a plain call pays nothing. A function that
// drops the context it is given cannot be recognised.

type probeKey struct{}

// probeMark is what a call that holds a probe puts in its function's context: its Manager, the
// resource it was made under, and what each breaker of the resource gave it.
type probeMark struct {
	m      *Manager
	name   string
	grants []grant
}

// withProbe returns ctx marked with what the breakers gave the call c, which holds a probe.
func (c *call) withProbe(ctx context.Context) context.Context {
	mark := &probeMark{m: c.m, name: c.name, grants: make([]grant, c.n)}
	for i := range c.n {
		mark.grants[i] = *c.at(i)
	}
	return context.WithValue(ctx, probeKey{}, mark)
}

// nestedInProbe reports whether the call c, made with ctx to a resource whose breakers are res
// and rejected by them at its start, is nested in a call that holds a probe of them: ctx
// carries that call's mark, of the same Manager and name, and each breaker either let that call
// through in the period it is in now (its probe, or its place in a ramp), or lets every call
// through (CLOSED, or dry).
func (c *call) nestedInProbe(ctx context.Context, res *resource) bool {
	mark, _ := ctx.Value(probeKey{}).(*probeMark)
	if mark == nil || mark.m != c.m || mark.name != c.name {
		return false
	}
	for _, b := range res.breakers {
		if p := b.cur.Load(); !(p.state == Closed && p.ramp == nil || mark.admittedIn(b, p) || b.dry(c.start)) {
			return false
		}
	}
	return true
}

// admittedIn reports whether the marked call was let through by the breaker c in its period p,
// or in the period p copied (withFlight).
func (mark *probeMark) admittedIn(c *circuit, p *period) bool {
	for _, g := range mark.grants {
		if g.c == c && g.p != nil && c.current(g.p) == p {
			return true
		}
	}
	return false
}

// passNested lets the call c through as part of the call it is nested in: the breakers get back
// what they gave it, and none will count it.
func (c *call) passNested() {
	if c.n > 0 {
		c.giveBack(c.start)
	}
	c.n, c.blocked, c.due = 0, nil, false
}
