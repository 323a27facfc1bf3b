// Package breakerotel reports the calls and breakers of a [breaker.Manager] as OpenTelemetry
// metrics: calls by outcome, their durations, each breaker's state and every state change.
//
// Call observers are fixed when a Manager is created, so setting up takes two steps: create the
// [Instruments], pass [Instruments.ManagerOption] to [breaker.NewManager], then hand the Manager
// to [Instruments.Observe]:
//
//	ins, err := breakerotel.New(provider) // a metric.MeterProvider; nil means the global one
//	if err != nil {
//		return err
//	}
//	m := breaker.NewManager(ins.ManagerOption())
//	if err := ins.Observe(m); err != nil {
//		return err
//	}
//	defer ins.Close()
//
// Each call costs a map lookup and one to four instrument updates, and allocates nothing once
// its resource has been seen: the attribute sets of each resource are built on its first call
// and kept.
//
// The names kept are bounded: the first [DefaultMaxResources] (400) resource names get
// attribute sets of their own, and the calls and transitions of every later name are counted
// with breaker.resource [OverflowResource], so callers who make up names cannot grow the map
// or the SDK's series without end. [WithMaxResources] sets another bound. The state gauge
// reads the loaded rules at each collection and keeps nothing per name.
//
// Every exported method is safe for concurrent use. The package starts no goroutines.
package breakerotel
