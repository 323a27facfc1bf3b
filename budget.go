package breaker

import (
	"fmt"
	"unsafe"
)

// DefaultMemoryBudget is how much memory the breakers of a Manager's rules may take unless
// WithMemoryBudget says otherwise: 256 MiB, about 14,000 rules of 1,000 buckets each, or
// 320,000 rules of the default 10.
const DefaultMemoryBudget = 256 << 20

// breakerBytes is what a breaker takes beside its buckets: the breaker, its period, its
// window's header and its rule, rounded up from what BenchmarkLoadRules measures.
const breakerBytes = 640

// WithMemoryBudget bounds the memory, in bytes, that the breakers of the loaded rules and the
// resource settings may take, so that a rule file or an etcd value cannot make a Manager take
// memory out of proportion. LoadRules, LoadResources and LoadDocument refuse what would pass
// it. The default is
// DefaultMemoryBudget; 0 or less removes the bound.
func WithMemoryBudget(bytes int64) Option {
	return optionFunc(func(m *Manager) { m.budget = bytes })
}

// breakerMemory is what the breaker of r takes at most, its window included. The buckets are
// counted an eighth larger, the most that rounding up to an allocation size can add.
func (r Rule) breakerMemory() int64 {
	if !r.Strategy.windowed() {
		return breakerBytes
	}
	buckets := int64(r.bucketCount()) * int64(unsafe.Sizeof(bucket{}))
	return breakerBytes + buckets + buckets/8
}

// dynamicBytes is what a resource's entry for its breakers from a template takes beside them,
// its name included, rounded up from what TestDynamicBound measures.
const dynamicBytes = 256

// settingsBytes is what one resource's installed settings take, rounded up.
const settingsBytes = 512

// checkBudget returns the error for the rule, or the resource settings, that take the
// Manager past its budget, or nil. What a load does not replace is counted as loaded now.
func (m *Manager) checkBudget(rules []Rule, withRules bool, settings int, withSettings bool) error {
	if m.budget <= 0 {
		return nil
	}
	if !withRules {
		rules = m.rules.Load().rules
	}
	if !withSettings {
		settings = len(m.rules.Load().settings)
	}
	sum := int64(settings) * settingsBytes
	if sum > m.budget {
		return &RuleError{Index: -1, Field: "Resources",
			Reason: fmt.Sprintf("%d resources with settings take %s, past the memory budget of %s (WithMemoryBudget)",
				settings, formatBytes(sum), formatBytes(m.budget))}
	}
	// Templates make breakers on demand, at most WithMaxDynamicBreakers of them: count them all
	// at the size of the largest.
	largest := -1
	for i := range rules {
		if rules[i].IsTemplate() && (largest < 0 || rules[i].breakerMemory() > rules[largest].breakerMemory()) {
			largest = i
		}
	}
	if largest >= 0 {
		if sum += int64(m.dyn.limit) * (rules[largest].breakerMemory() + dynamicBytes); sum > m.budget {
			return &RuleError{Index: largest, Resource: rules[largest].Resource, Field: "BucketCount",
				Reason: fmt.Sprintf("is a template whose %d dynamic breakers (WithMaxDynamicBreakers) could take "+
					"%s, past the memory budget of %s (WithMemoryBudget)", m.dyn.limit, formatBytes(sum),
					formatBytes(m.budget))}
		}
	}
	for i := range rules {
		if rules[i].IsTemplate() {
			continue
		}
		if sum += rules[i].breakerMemory(); sum > m.budget {
			return &RuleError{Index: i, Resource: rules[i].Resource, Field: "BucketCount",
				Reason: fmt.Sprintf("takes the rules past the memory budget of %s (WithMemoryBudget): "+
					"rules 0 to %d need %s", formatBytes(m.budget), i, formatBytes(sum))}
		}
	}
	return nil
}

// formatBytes writes n in MiB when it is a whole number of them, else in bytes.
func formatBytes(n int64) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}
