package breaker

// ExceptionBreaker is the breaker of an ErrorRatio, ErrorCount or ConsecutiveErrors rule. It
// counts a call as failed when it ends with an error that the Manager classifies as a failure,
// and trips when failed calls / calls (ErrorRatio) or failed calls (ErrorCount) in its window,
// or failed calls in a row (ConsecutiveErrors), reach the threshold. A probe succeeds when it
// does not fail.
type ExceptionBreaker struct{ circuit }

var _ CircuitBreaker = (*ExceptionBreaker)(nil)

// countRun counts a call for ConsecutiveErrors: a failure lengthens the run of failures, a
// success ends it. A success after a success writes nothing, so parallel callers of a healthy
// resource share the run's cache line read-only.
func (c *circuit) countRun(p *period, t *tuning, now int64, failed bool, hint int64) {
	if !failed {
		if p.run.Load() != 0 {
			p.run.Store(0)
		}
		return
	}
	if run := p.run.Inc(); float64(run) >= t.threshold {
		c.trip(p, t, now, hint, ThresholdExceeded, float64(run))
	}
}
