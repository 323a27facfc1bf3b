// Package breaker is an in-process circuit breaker with the semantics of Alibaba Sentinel's
// degrade rules. Wrap each call to a dependency in [Manager.Do] or [Execute] (or
// [Manager.Enter] and [Entry.Exit]); each [Rule] of the call's resource has its own breaker,
// which counts the call's outcome in a sliding window and, when the rule trips, rejects calls
// with a [*BlockError] matching [ErrOpen] until one probe succeeds.
//
//	m := breaker.NewManager()
//	err := m.LoadRules([]breaker.Rule{{Resource: "payments", Strategy: breaker.ErrorRatio,
//		Threshold: 0.5, RetryTimeout: 10 * time.Second}})
//	...
//	err = m.Do(ctx, "payments", func(ctx context.Context) error { return pay(ctx) })
//
// A call goes through, in order: the lookup of its resource (its own rules, or a template
// rule's, whose Resource ends in "*"), the resource's settings ([ResourceConfig]: a force, the
// breakers, a concurrency limit), the slots given to [WithSlots], the call itself with the
// resource's Timeout, and its completion, which every breaker that admitted it counts.
//
// Three rule fields protect beyond a sliding window: FastBuckets trips on the newest buckets
// alone (a hard outage within two buckets), a SlowRequestRatio rule counts a call still in
// flight past MaxAllowedRT as slow (a hang with no timeout), and RampUp paces the calls after
// a probe closes a breaker, bucket by bucket, by what the dependency has shown it can take.
// StatCalls makes the window the last calls instead of the last seconds.
//
// Settings keys ending in "*" are template settings: every name they match gets the Timeout,
// the Force and a MaxConcurrency of its own. [Manager.Override] lets an operator force a
// resource open or closed for a while, over its settings and across reloads.
//
// Observers ([Manager.AddObserver]) hear every state change; call observers
// ([WithCallObserver]) hear every call, for metrics. Rules and settings reload at runtime
// ([Manager.LoadRules], [Manager.LoadResources], [Manager.LoadDocument]) without losing the
// state of the rules whose window keeps its shape.
//
// Every exported method is safe for concurrent use. The package starts no goroutines and no
// timers: breakers change state only when calls arrive or complete, and time comes from a
// [Clock] ([WithClock]; the package breakertest has a fake one for tests).
package breaker
