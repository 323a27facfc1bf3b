package breaker

import (
	"fmt"
	"math"

	"github.com/halfopen/breaker/internal/window"
)

// breakerBytes is what a breaker takes beside its buckets: the breaker, its period, its
// window's header and its rule, rounded up from what BenchmarkLoadRules measures.
const breakerBytes = 640

// breakerMemory is what the breaker of r takes at most, its window included. The buckets are
// counted an eighth larger, the most that rounding up to an allocation size can add.
func (r Rule) breakerMemory() int64 {
	if !r.Strategy.windowed() {
		return breakerBytes
	}
	if r.StatCalls > 0 {
		mem := breakerBytes + window.CallsBytes(r.StatCalls)
		if r.Strategy == SlowRequestRatio { // and its calls in flight
			mem += window.FlightBytes(int64(r.statInterval())/int64(r.bucketCount()), int64(r.MaxAllowedRT))
		}
		return mem
	}
	buckets := window.SlidingBytes(r.bucketCount())
	mem := breakerBytes + buckets + buckets/8
	if r.Strategy == SlowRequestRatio && r.MaxAllowedRT > 0 { // and its calls in flight
		mem += window.FlightBytes(int64(r.statInterval())/int64(r.bucketCount()), int64(r.MaxAllowedRT))
	}
	return mem
}

// ruleMemory is what a rule of a named resource takes: its breaker and its name.
func (r Rule) ruleMemory() int64 { return r.breakerMemory() + int64(len(r.Resource)) }

// templateEntryBytes is what a resource's entry for its breakers from a template takes beside them
// and its name, rounded up from what TestTemplateBound measures. The names are charged as they
// come, by their length, against what the budget leaves.
const templateEntryBytes = 256

// settingsBytes is what one resource's installed settings take, its entry in the rule set's
// map and index (up to four slots of 40 bytes) included, rounded up.
const settingsBytes = 640

// checkBudget returns the bytes that the rules and resource settings take, counting every
// template's breakers at the bound, or the error for the rule or settings that take the
// Manager past its budget. What a load does not replace is counted as loaded now. Every sum
// saturates, so no bound can overflow it.
func (m *Manager) checkBudget(old *ruleSet, rules []Rule, withRules bool, cfg map[string]ResourceConfig, withSettings bool) (int64, error) {
	if !withRules {
		rules = old.rules
	}
	if !withSettings {
		cfg = old.configs()
	}
	var sum int64
	for name := range cfg {
		sum = satSum(sum, settingsBytes+int64(len(name)))
	}
	named, templates := splitSettings(cfg)
	if len(templates) > 0 {
		// A resource with rules and no settings of its own has a template setting's, if one matches.
		rs := &ruleSet{settingTemplates: templates}
		for i := range rules {
			if name := rules[i].Resource; !isTemplate(name) && rs.matchSettings(name) != nil {
				if _, own := named[name]; !own {
					sum = satSum(sum, settingsBytes)
				}
			}
		}
	}
	if over(m.budget, sum) {
		return sum, &RuleError{Index: -1, Field: "Resources",
			Reason: fmt.Sprintf("%d resources with settings take %s, past the memory budget of %s (WithMemoryBudget)",
				len(cfg), formatBytes(sum), formatBytes(m.budget))}
	}
	// Templates make breakers and settings on demand, at most WithMaxTemplateBreakers of them:
	// count them all at the size of the largest.
	largest := -1
	for i := range rules {
		if rules[i].IsTemplate() && (largest < 0 || rules[i].breakerMemory() > rules[largest].breakerMemory()) {
			largest = i
		}
	}
	if largest < 0 && len(templates) > 0 {
		if sum = satSum(sum, satMul(int64(m.tmpl.limit), settingsBytes+templateEntryBytes)); over(m.budget, sum) {
			return sum, &RuleError{Index: -1, Field: "Resources",
				Reason: fmt.Sprintf("template settings for %d resources (WithMaxTemplateBreakers) could take %s, "+
					"past the memory budget of %s (WithMemoryBudget)", m.tmpl.limit, formatBytes(sum), formatBytes(m.budget))}
		}
	}
	if largest >= 0 {
		unit := rules[largest].breakerMemory()
		if len(templates) > 0 {
			unit = max(unit, settingsBytes)
		}
		if sum = satSum(sum, satMul(int64(m.tmpl.limit), unit+templateEntryBytes)); over(m.budget, sum) {
			return sum, &RuleError{Index: largest, Resource: rules[largest].Resource, Field: "BucketCount",
				Reason: fmt.Sprintf("is a template whose %d template breakers (WithMaxTemplateBreakers) could take "+
					"%s, past the memory budget of %s (WithMemoryBudget)", m.tmpl.limit, formatBytes(sum),
					formatBytes(m.budget))}
		}
	}
	for i := range rules {
		if rules[i].IsTemplate() {
			continue
		}
		if sum = satSum(sum, rules[i].ruleMemory()); over(m.budget, sum) {
			return sum, &RuleError{Index: i, Resource: rules[i].Resource, Field: "BucketCount",
				Reason: fmt.Sprintf("takes the rules past the memory budget of %s (WithMemoryBudget): "+
					"rules 0 to %d need %s", formatBytes(m.budget), i, formatBytes(sum))}
		}
	}
	return sum, nil
}

// over reports whether sum is past budget; a budget <= 0 is no bound.
func over(budget, sum int64) bool { return budget > 0 && sum > budget }

// nameBudget is what the budget leaves for the names of template resources once the rules
// and settings take used.
func (m *Manager) nameBudget(used int64) int64 {
	if m.budget <= 0 {
		return math.MaxInt64
	}
	return max(m.budget-used, 0)
}

// satSum adds two non-negative numbers, saturating instead of overflowing.
func satSum(a, b int64) int64 {
	if b > math.MaxInt64-a {
		return math.MaxInt64
	}
	return a + b
}

// satMul multiplies two non-negative numbers without overflow.
func satMul(a, b int64) int64 {
	if a != 0 && b > math.MaxInt64/a {
		return math.MaxInt64
	}
	return a * b
}

// formatBytes writes n in MiB when it is a whole number of them, else in bytes.
func formatBytes(n int64) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}
