package breakerdebug

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/halfopen/breaker"
)

// describe says in one line what r trips on and how its breaker recovers, with the values the
// library uses for the fields left at zero, for the page to show beside the rule:
//
//	errors ≥ 3 · min 3 calls in 1s · retry 3s, doubling per failed probe up to 30s · 2 probes in a row to close
func describe(r breaker.Rule) string {
	var parts []string
	switch r.Strategy {
	case breaker.SlowRequestRatio:
		parts = append(parts, "slow ≥ "+percent(r.Threshold)+" (RT > "+r.MaxAllowedRT.String()+")")
	case breaker.ErrorRatio:
		parts = append(parts, "errors ≥ "+percent(r.Threshold))
	case breaker.ErrorCount:
		parts = append(parts, "errors ≥ "+number(r.Threshold))
	case breaker.ConsecutiveErrors:
		parts = append(parts, number(r.Threshold)+" failures in a row") // it keeps no window
	default:
		parts = append(parts, r.Strategy.String()+" ≥ "+number(r.Threshold))
	}
	if r.Strategy != breaker.ConsecutiveErrors {
		d := r.WithDefaults() // the minimum the library uses, also for an ErrorCount rule's 0
		if d.StatCalls > 0 {
			parts = append(parts, "of the last "+plural(uint64(d.StatCalls), "call")+", min "+
				strconv.FormatUint(d.MinRequestAmount, 10))
		} else {
			parts = append(parts, "min "+plural(d.MinRequestAmount, "call")+" in "+d.StatInterval.String())
		}
		if d.FastBuckets > 0 {
			newest := d.StatInterval / time.Duration(d.BucketCount) * time.Duration(d.FastBuckets)
			parts = append(parts, "or ≥ "+percent(d.FastThreshold)+" in the last "+newest.String())
		}
	}
	retry := "retry " + r.RetryTimeout.String()
	if r.MaxRetryTimeout > 0 {
		retry += ", doubling per failed probe up to " + r.MaxRetryTimeout.String()
	}
	if r.RetryJitter > 0 {
		retry += ", up to " + percent(r.RetryJitter) + " sooner (jitter)"
	}
	parts = append(parts, retry)
	if r.ProbeTimeout > 0 {
		parts = append(parts, "probe timeout "+r.ProbeTimeout.String())
	}
	if r.ProbeNum > 1 {
		parts = append(parts, strconv.FormatUint(uint64(r.ProbeNum), 10)+" probes in a row to close")
	}
	if r.RampUp > 0 {
		parts = append(parts, "ramp up for "+r.RampUp.String()+" after recovery")
	}
	if r.Pace {
		parts = append(parts, "pace instead of opening while calls still succeed")
	}
	return strings.Join(parts, " · ")
}

// percent writes a ratio as a percentage to at most two decimals: 0.5 is "50%".
func percent(ratio float64) string {
	return strconv.FormatFloat(math.Round(ratio*10000)/100, 'f', -1, 64) + "%"
}

func number(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func plural(n uint64, word string) string {
	s := strconv.FormatUint(n, 10) + " " + word
	if n != 1 {
		s += "s"
	}
	return s
}
