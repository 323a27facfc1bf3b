package breakerotel

import (
	"context"
	"strconv"

	"go.opentelemetry.io/otel/metric"

	"github.com/halfopen/breaker"
)

// observeStates reports the state of every loaded breaker of m to the state gauge, as
// breaker.State's value (0 CLOSED, 1 OPEN, 2 HALF_OPEN), with its resource and rule.
func (ins *Instruments) observeStates(o metric.Observer, m *breaker.Manager) {
	seen := make(map[string]bool)
	for _, r := range m.Rules() {
		if seen[r.Resource] {
			continue
		}
		seen[r.Resource] = true
		// One Breakers call reads one rule set, so the indexes agree with the rules even if
		// LoadRules runs meanwhile.
		for i, b := range m.Breakers(r.Resource) {
			set := ins.set(ResourceKey.String(r.Resource), RuleKey.String(RuleName(b.Rule(), i)))
			o.ObserveInt64(ins.state, int64(b.State()), metric.WithAttributeSet(set))
		}
	}
}

// onStateChange counts c in the transitions counter, under the resource name its calls are
// counted under: OverflowResource for a name past the bound.
func (ins *Instruments) onStateChange(c breaker.StateChange) {
	if ins.closed.Load() {
		return // a change that raced with Close
	}
	set := ins.set(
		ResourceKey.String(ins.resourceSets(c.Resource).name),
		StateFromKey.String(c.From.String()),
		StateToKey.String(c.To.String()),
		ReasonKey.String(c.Reason.String()),
	)
	ins.transitions.Add(context.Background(), 1, metric.WithAttributeSet(set))
}

// RuleName is the value of the breaker.rule attribute for r, the i-th rule of its resource
// (counting from 0): r.ID if it is set, else the strategy's name, "#" and i, as "ErrorRatio#0".
// Give the rules of a resource distinct IDs, or none: two breakers with one name share a
// series of the state gauge.
func RuleName(r breaker.Rule, i int) string {
	if r.ID != "" {
		return r.ID
	}
	return r.Strategy.String() + "#" + strconv.Itoa(i)
}
