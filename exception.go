package breaker

import "github.com/halfopen/breaker/internal/window"

// ExceptionBreaker is the breaker of an ErrorRatio, ErrorCount or ConsecutiveErrors rule. It
// counts a call as failed when it ends with an error that the Manager classifies as a failure,
// and trips when failed calls / calls (ErrorRatio) or failed calls (ErrorCount) in its window,
// or failed calls in a row (ConsecutiveErrors), reach the threshold. A probe succeeds when it
// does not fail.
type ExceptionBreaker struct {
	circuit
	strategy Strategy // its rule's, which its window's shape keeps while the breaker lives
}

var _ CircuitBreaker = (*ExceptionBreaker)(nil)

// judged: a call counts unless its outcome is Ignore, and against the rule when it failed or
// was refused, a refusal apart.
func (b *ExceptionBreaker) judged(res result) (bool, window.Mark) {
	switch res.o {
	case Failure:
		return true, window.Bad
	case Refused:
		return true, window.Refused
	}
	return res.o != Ignore, window.Good
}

// slow: a call is never slow to an error rule.
func (b *ExceptionBreaker) slow(result) bool { return false }

// measure: the share of failed calls for ErrorRatio, their count for ErrorCount (and the run of
// failures for ConsecutiveErrors, which countRun judges on its own). Ratios are divided, not
// multiplied out: 12/15 and 0.8 round to the same float64, so they compare equal as the user
// meant.
func (b *ExceptionBreaker) measure(t *tuning, all window.Counts) (float64, bool) {
	m := float64(all.Bad)
	if b.strategy == ErrorRatio {
		m /= float64(all.Total)
	}
	return m, m >= t.threshold
}

// failedInFlight: a probe of an error rule fails only when it returns.
func (b *ExceptionBreaker) failedInFlight(*period, int64) bool { return false }

// counters: a window of the rule's shape; none for ConsecutiveErrors, which counts a run.
func (b *ExceptionBreaker) counters(q *period) {
	if b.strategy != ConsecutiveErrors {
		b.leap.fill(q, b.stripes)
	}
}

// retuned: an error rule holds nothing beside its tuning.
func (b *ExceptionBreaker) retuned(_, _ *tuning) {}

// countRun counts a call for ConsecutiveErrors: a failure lengthens the run of failures, a
// success ends it, a refusal does neither. A success after a success writes nothing, so parallel callers of a healthy
// resource share the run's cache line read-only.
func (c *circuit) countRun(p *period, t *tuning, now int64, m window.Mark, hint int64) {
	if m == window.Refused {
		return // a live dependency's refusal: the run neither grows nor ends
	}
	if m == window.Good {
		if p.run.Load() != 0 {
			p.run.Store(0)
		}
		return
	}
	if run := p.run.Inc(); float64(run) >= t.threshold {
		c.trip(p, t, now, hint, ThresholdExceeded, float64(run))
	}
}
