// Package breakerotel reports the calls and breakers of a [breaker.Manager] as OpenTelemetry
// metrics: calls by outcome (blocked calls by cause), their durations and the longest of the
// last minute, each breaker's state (breaker.state, and breaker.status, whose sum counts the
// breakers in each state) and its window (breaker.window.calls, breaker.window.bad and
// breaker.window.ratio), every state change, each resource's settings (force, concurrency limit,
// timeout) with its calls in flight, the operators' overrides in force with their ends, how many
// breakers template rules made, and the configured names that had no call in the last minute.
//
// Call observers are fixed when a Manager is created, so setting up takes two steps: create the
// [Instruments], pass [Instruments.Option] to [breaker.NewManager], then hand the Manager
// to [Instruments.Watch]:
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
// A blocked call carries breaker.cause: "open" (a breaker), "forced_open" (the resource is
// ForceOpen), "concurrency_limit", "slot", "name_too_long", "ramping_up" or "pacing" (a breaker
// ramping up after recovery, or pacing a dependency that fails part of its calls, held it back),
// so an operator's switch is never read as a tripped breaker. breaker.ramping_up and
// breaker.pacing are 1 while such a breaker, CLOSED, paces its calls. A call that ran although
// a DryRun rule or a ForceClosed resource's breaker would have rejected it counts also as
// outcome "would_reject", with breaker.mode "dry_run" or "force_closed"; the state gauge and the
// transitions counter carry breaker.dry_run.
//
// breaker.window.calls and breaker.window.bad are each breaker's window as its
// [breaker.Stats] read it: its calls, and the slow ones (SlowRequestRatio) or the failed ones
// (ErrorRatio, ErrorCount) among them; for ConsecutiveErrors, which keeps no window, both are
// its current run of failures. breaker.window.ratio is bad over calls ([breaker.Stats.Ratio]):
// the window's slow-call rate or failure rate, which a ratio rule compares with its Threshold,
// 0 while the window is empty; a ConsecutiveErrors breaker, whose count is a run, has none. All
// three are 0 unless the breaker is CLOSED, and carry the breaker.resource and breaker.rule of
// its breaker.state; like it, they are reported for the breakers a template made only for the
// names within the bounds below.
//
// breaker.override is 1 for each resource that an operator's override (breaker.Manager.Override)
// forces now, with breaker.force "open", "closed" or "auto", and breaker.override.end is when
// the override ends; while it lasts, the state gauge's breaker.dry_run follows its force. An
// override beginning or ending moves no breaker, so the transitions counter does not count it.
//
// breaker.call.duration.max is the longest response time, in seconds, of the resource's calls
// that ran in the last minute, which the histogram's sum and count cannot tell (a Micrometer
// timer's max): kept in a ring of 10-second steps per resource, so a spike counts for 60 to 70
// seconds, then ages out; no data point while no call ran in it. breaker.uncalled is 1 for each
// resource with rules, settings or an override of its own that had no call in the last minute,
// most often a misspelt name, which protects nothing, with breaker.nearest the called name
// nearest to it by edit distance, "" when none is near ([breakerdebug.Uncalled], as the status
// page lists them); nothing in the first minute after [Instruments.Watch], nor while calls
// were measured as "_other" in the minute, which may be any name's. Both are observed from
// Watch on, by the Manager's clock: each call at the time the Manager reports it
// (breaker.CallInfo.At), each collection at its Snapshot's; the Instruments read no clock of
// their own.
//
// breaker.resource is the resource's name with the bytes that are not UTF-8 replaced by U+FFFD,
// as OTLP and Prometheus require; names that then share it have one data point for each
// attribute set: a gauge reports the first of them in byte order, and their calls, transitions
// and overrides add up.
//
// breaker.force, breaker.concurrency.limit and breaker.timeout are the settings that apply to
// each resource (breaker.Manager.LoadResources), unless they are all zero, with
// breaker.settings.from the key they come from: "own" ([SettingsOwn]) for the resource's own
// settings, or the template setting's key, such as "*" or "GET *", for a resource that takes a
// template setting's. A template key is never a breaker.resource. Each name that holds a
// template setting's settings reports its own calls in flight in breaker.in_flight;
// breaker.template.settings counts those names beside breaker.template.breakers.
//
// Each call costs a map lookup and one to five instrument updates, and allocates nothing once
// its resource has been seen: the attribute sets of each resource are built on its first call
// and kept. They are bounded: the first 180 resource names ([WithMaxResources]) get their own,
// as long as each is at most 1 KiB ([WithMaxNameLength]) and together they take at most 25 KiB
// ([WithMaxNameBytes]), and every other name is measured as breaker.resource "_other"
// ([OverflowResource]), in the calls counter, the duration histogram and the transitions
// counter, so callers that make up names cannot grow the Instruments or the MeterProvider
// without end. The Instruments keep their own copy of each name. The gauges are read at each
// collection from one Manager.Snapshot, so that they agree with each other: the Manager's rules
// and settings, which operators, not callers, write. An override may name any resource, so the
// override gauges take names of the bound too: those past it are counted together as "_other",
// by force, with the latest end. So do the names that hold template settings: past the bound,
// the settings gauges report them as "_other", once for each template key, and
// breaker.in_flight adds up their calls in flight there.
//
// Every exported method is safe for concurrent use. The package starts no goroutines.
package breakerotel
