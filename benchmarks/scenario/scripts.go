package scenario

import "time"

// The scripted scenarios, in real time scaled down so that all of them run in minutes: phases
// of 1 to 3 s where a service would see minutes, but for the three that are about what a long
// phase or little traffic does (a quota of 10 s, an overload of 20 s, an outage at 10 calls a
// second). The rules in package libs are scaled the same way (a 1 s window, a 500 ms retry
// timeout).

// The healed phases of the outages and of quota-429 last 3 s or more, longer than
// breaker+probes' longest OPEN time (2 s), so that every library's recovery can be seen; those
// of the scripts that model overloads and flaps more than outages (and of the 503 quota) last
// 2 s.

// healthy is the dependency's normal answer: 5 to 10 ms, no errors.
var healthy = Latency{Base: 5 * time.Millisecond, Jitter: 5 * time.Millisecond}

// Scripts returns the twelve scenarios.
func Scripts() []Script {
	return []Script{
		{Name: "hard-down", Phases: []Phase{
			{Name: "healthy", Duration: time.Second, Latency: healthy},
			{Name: "down", Duration: 2 * time.Second, Down: true, ErrorRate: 1, Latency: healthy},
			{Name: "healed", Duration: 3 * time.Second, Latency: healthy},
		}},
		// The same outage at 10 calls a second: one call per 100 ms bucket, ten in a 1 s
		// window, as a dependency called now and then sees it. The healed phase is longer, as
		// every bucket of it must admit its one call to count as recovered.
		{Name: "low-traffic-down", Rate: 10, Phases: []Phase{
			{Name: "healthy", Duration: time.Second, Latency: healthy},
			{Name: "down", Duration: 2 * time.Second, Down: true, ErrorRate: 1, Latency: healthy},
			{Name: "healed", Duration: 4 * time.Second, Latency: healthy},
		}},
		{Name: "slow-down", Phases: []Phase{
			{Name: "healthy", Duration: time.Second, Latency: healthy},
			// Slower than the slow threshold (50 ms) but within the timeout (150 ms).
			{Name: "slow", Duration: 2 * time.Second, Down: true, Latency: Latency{Base: 80 * time.Millisecond, Jitter: 20 * time.Millisecond}},
			// Every call would take 3 s: only a timeout ends it.
			{Name: "hung", Duration: 2 * time.Second, Down: true, Latency: Latency{Base: 3 * time.Second}},
			{Name: "healed", Duration: 3 * time.Second, Latency: healthy},
		}},
		{Name: "flapping", Phases: []Phase{
			{Name: "healthy", Duration: time.Second, Latency: healthy},
			{Name: "half", Duration: 3 * time.Second, Down: true, ErrorRate: 0.5, Latency: healthy},
			{Name: "healed", Duration: 3 * time.Second, Latency: healthy},
		}},
		{Name: "noise", Phases: []Phase{
			// 1% errors, and 2% of calls take 120 ms: slow, within the timeout.
			{Name: "noisy", Duration: 6 * time.Second, ErrorRate: 0.01,
				Latency: Latency{Base: healthy.Base, Jitter: healthy.Jitter, TailProb: 0.02, Tail: 120 * time.Millisecond}},
		}},
		{Name: "burst-after-recovery", Phases: []Phase{
			{Name: "healthy", Duration: time.Second, Latency: healthy},
			{Name: "down", Duration: 2 * time.Second, Down: true, ErrorRate: 1, Latency: healthy},
			// Healed, but it takes 40 calls/s at first, 200 (the offered rate) after 3 s of
			// warming up; calls beyond that fail at once, and more than twice that in 100 ms
			// knocks it over, so its warm-up starts again.
			{Name: "warming", Duration: 3 * time.Second, Latency: healthy, CapacityFrom: 40, CapacityTo: 200, CrashOnOverload: true},
			{Name: "healed", Duration: 2 * time.Second, Latency: healthy},
		}},
		{Name: "quota", Phases: []Phase{
			{Name: "healthy", Duration: time.Second, Latency: healthy},
			// A backend with a quota: the first 50 calls of each second (of the offered 200)
			// are answered in 5 ms, the later ones fail at once with a 503.
			{Name: "quota", Duration: 4 * time.Second, Down: true, QuotaPerSecond: 50, Latency: Latency{Base: 5 * time.Millisecond}},
			{Name: "healed", Duration: 2 * time.Second, Latency: healthy},
		}},
		{Name: "quota-429", Phases: []Phase{
			{Name: "healthy", Duration: time.Second, Latency: healthy},
			// A partner API's quota at a user's numbers: of the 200 calls offered a second, the
			// first 50 are answered in 5 ms, 2% of them with a plain 503 (no hint); the later
			// ones are refused at once with a 429 and Retry-After: 1. For 10 s, as the user's
			// run.
			{Name: "quota", Duration: 10 * time.Second, Down: true, QuotaPerSecond: 50, QuotaRetryAfter: time.Second,
				ErrorRate: 0.02, Latency: Latency{Base: 5 * time.Millisecond}},
			{Name: "healed", Duration: 3 * time.Second, Latency: healthy},
		}},
		{Name: "capacity", Phases: []Phase{
			{Name: "healthy", Duration: time.Second, Latency: healthy},
			// Overloaded: it takes 120 calls/s (12 per 100 ms) of the offered 200 and fails
			// the rest at once, without falling over.
			{Name: "overload", Duration: 4 * time.Second, Down: true, Latency: healthy, CapacityFrom: 120, CapacityTo: 120},
			{Name: "healed", Duration: 2 * time.Second, Latency: healthy},
		}},
		{Name: "long-overload", Phases: []Phase{
			{Name: "healthy", Duration: time.Second, Latency: healthy},
			// capacity's overload for 20 s: 120 calls/s of the 200 offered, the rest failing at
			// once, long enough that every window, the throttlers' 10 s and 3 s included, holds
			// nothing else.
			{Name: "overload", Duration: 20 * time.Second, Down: true, Latency: healthy, CapacityFrom: 120, CapacityTo: 120},
			{Name: "healed", Duration: 2 * time.Second, Latency: healthy},
		}},
		{Name: "deep-overload", Phases: []Phase{
			{Name: "healthy", Duration: time.Second, Latency: healthy},
			// Overloaded deeper: it takes 70 calls/s (7 per 100 ms) of the offered 200, so 65%
			// of the calls fail, past every guard's threshold but not a hard outage's.
			{Name: "overload", Duration: 4 * time.Second, Down: true, Latency: healthy, CapacityFrom: 70, CapacityTo: 70},
			{Name: "healed", Duration: 2 * time.Second, Latency: healthy},
		}},
		{Name: "rapid-flaps", Phases: []Phase{
			{Name: "healthy", Duration: time.Second, Latency: healthy},
			// Every call fails for 250 ms, then every call succeeds for 250 ms, and so on.
			{Name: "flaps", Duration: 4 * time.Second, Down: true, ErrorRate: 1, AlternateEvery: 250 * time.Millisecond, Latency: healthy},
			{Name: "healed", Duration: 2 * time.Second, Latency: healthy},
		}},
	}
}
