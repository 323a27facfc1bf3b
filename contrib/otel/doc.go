// Package breakerotel reports the calls and breakers of a [breaker.Manager] as OpenTelemetry
// metrics: calls by outcome and cause, their durations and the longest of the last minute, each
// breaker's state and window, every state change, each resource's settings and calls in
// flight, the operators' overrides in force, the template counts, and the names configured and
// not called. It formats the rows of package breakerview, as the status page (breakerdebug)
// and contrib/prometheus do, so the three agree. Call observers are fixed when a Manager is
// created, so setting up takes two steps:
//
//	ins, err := breakerotel.New(provider) // a metric.MeterProvider; nil means the global one
//	if err != nil {
//		return err
//	}
//	m := breaker.NewManager(ins.Option())
//	if err := ins.Watch(m); err != nil {
//		return err
//	}
//	defer ins.Close()
//
// The README lists every instrument and attribute. Every exported method is safe for
// concurrent use. The package starts no goroutines.
package breakerotel
