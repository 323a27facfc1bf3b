package breaker_test

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakertest"
)

// The pass path: one SlowRequestRatio and one ErrorRatio rule, CLOSED, calls succeed.
func passRules(resource string) []breaker.Rule {
	return []breaker.Rule{
		{Resource: resource, Strategy: breaker.SlowRequestRatio, Threshold: 0.5, MaxAllowedRT: time.Second, RetryTimeout: time.Hour},
		{Resource: resource, Strategy: breaker.ErrorRatio, Threshold: 0.5, RetryTimeout: time.Hour},
	}
}

func benchManager(b *testing.B, rules []breaker.Rule) *breaker.Manager {
	b.Helper()
	m := breaker.NewManager()
	if err := m.LoadRules(rules); err != nil {
		b.Fatal(err)
	}
	return m
}

func succeed(context.Context) error { return nil }
func fail(context.Context) error    { return errDown }

// openManager returns a manager whose "svc" breaker is OPEN for an hour.
func openManager(b *testing.B) *breaker.Manager {
	m := benchManager(b, []breaker.Rule{{Resource: "svc", Strategy: breaker.ErrorCount, Threshold: 1,
		MinRequestAmount: 1, RetryTimeout: time.Hour}})
	_ = m.Do(context.Background(), "svc", fail)
	if m.Breakers("svc")[0].State() != breaker.Open {
		b.Fatal("the breaker did not trip")
	}
	return m
}

// benchDo runs m.Do on resource serially or from RunParallel goroutines; wantErr says whether
// every call must be rejected.
func benchDo(b *testing.B, m *breaker.Manager, resource string, fn func(context.Context) error, parallel, wantErr bool) {
	ctx := context.Background()
	check := func(err error) bool { return (err != nil) == wantErr }
	b.ReportAllocs()
	b.ResetTimer()
	if !parallel {
		for range b.N {
			if !check(m.Do(ctx, resource, fn)) {
				b.Fatal("unexpected outcome")
			}
		}
		return
	}
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if !check(m.Do(ctx, resource, fn)) {
				b.Error("unexpected outcome")
				return
			}
		}
	})
}

func BenchmarkDoPass(b *testing.B) {
	benchDo(b, benchManager(b, passRules("svc")), "svc", succeed, false, false)
}

func BenchmarkDoPassParallel(b *testing.B) {
	benchDo(b, benchManager(b, passRules("svc")), "svc", succeed, true, false)
}

// The pass path of many resources, each goroutine calling its own: what the calls cost when
// they share no breaker, beside DoPassParallel, where they all share one.
func BenchmarkDoPassManyParallel(b *testing.B) {
	const resources = 64
	var rules []breaker.Rule
	for i := range resources {
		rules = append(rules, passRules("svc-"+strconv.Itoa(i))...)
	}
	m := benchManager(b, rules)
	ctx := context.Background()
	var next atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		resource := "svc-" + strconv.Itoa(int(next.Add(1))%resources)
		for pb.Next() {
			if m.Do(ctx, resource, succeed) != nil {
				b.Error("unexpected outcome")
				return
			}
		}
	})
}

// protectedRules are passRules with the protection the README recommends: the newest two
// buckets judged on their own, and a ramp after recovery.
func protectedRules(resource string) []breaker.Rule {
	rules := passRules(resource)
	for i := range rules {
		rules[i].FastBuckets, rules[i].RampUp = 2, time.Hour
	}
	return rules
}

// A CLOSED breaker with the recommended protection and no ramp on: what every call pays for it.
func BenchmarkDoPassProtected(b *testing.B) {
	benchDo(b, benchManager(b, protectedRules("svc")), "svc", succeed, false, false)
}

func BenchmarkDoPassProtectedParallel(b *testing.B) {
	benchDo(b, benchManager(b, protectedRules("svc")), "svc", succeed, true, false)
}

// rampingManager returns a manager on a fake clock that never moves, whose "svc" breakers
// (protectedRules) tripped and closed on a probe: their ramps stay on, in one bucket, and admit
// every call while every call succeeds.
func rampingManager(b *testing.B) *breaker.Manager {
	clock := breakertest.NewClock()
	m := breaker.NewManager(breaker.WithClock(clock))
	if err := m.LoadRules(protectedRules("svc")); err != nil {
		b.Fatal(err)
	}
	for range 5 {
		_ = m.Do(context.Background(), "svc", fail)
	}
	clock.Advance(time.Hour)
	if err := m.Do(context.Background(), "svc", succeed); err != nil || !m.Breakers("svc")[1].Stats().RampingUp {
		b.Fatalf("the breaker did not recover into a ramp: %v", err)
	}
	return m
}

// Calls through a ramp that admits them, beside the same rules on the same fake clock without
// one: what a call pays while a breaker ramps up.
func BenchmarkDoPassRamping(b *testing.B) {
	benchDo(b, rampingManager(b), "svc", succeed, false, false)
}

func BenchmarkDoPassRampingParallel(b *testing.B) {
	benchDo(b, rampingManager(b), "svc", succeed, true, false)
}

// pacingManager returns a manager on a fake clock that never moves, whose "svc" breakers
// (passRules with Pace) met their threshold with successes in the window: the error rule paces,
// and holds back every later call of its bucket.
func pacingManager(b *testing.B) *breaker.Manager {
	rules := passRules("svc")
	for i := range rules {
		rules[i].Pace = true
	}
	m := breaker.NewManager(breaker.WithClock(breakertest.NewClock()))
	if err := m.LoadRules(rules); err != nil {
		b.Fatal(err)
	}
	for _, fn := range []func(context.Context) error{succeed, succeed, succeed, fail, fail, fail} {
		_ = m.Do(context.Background(), "svc", fn)
	}
	if !m.Breakers("svc")[1].Stats().Pacing {
		b.Fatal("the error rule does not pace")
	}
	return m
}

// Calls a pacing breaker holds back: what a rejection costs while it paces.
func BenchmarkDoRejectPacing(b *testing.B) {
	benchDo(b, pacingManager(b), "svc", succeed, false, true)
}

func BenchmarkDoRejectPacingParallel(b *testing.B) {
	benchDo(b, pacingManager(b), "svc", succeed, true, true)
}

func BenchmarkDoPassFakeClock(b *testing.B) {
	m := breaker.NewManager(breaker.WithClock(breakertest.NewClock()))
	if err := m.LoadRules(protectedRules("svc")); err != nil {
		b.Fatal(err)
	}
	benchDo(b, m, "svc", succeed, false, false)
}

// The same through a Handle, which skips the lookup by name.
func benchResourceDo(b *testing.B, r *breaker.Handle, fn func(context.Context) error, parallel, wantErr bool) {
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	if !parallel {
		for range b.N {
			if err := r.Do(ctx, fn); (err != nil) != wantErr {
				b.Fatal("unexpected outcome")
			}
		}
		return
	}
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := r.Do(ctx, fn); (err != nil) != wantErr {
				b.Error("unexpected outcome")
				return
			}
		}
	})
}

func BenchmarkResourcePass(b *testing.B) {
	benchResourceDo(b, benchManager(b, passRules("svc")).Handle("svc"), succeed, false, false)
}

func BenchmarkResourcePassParallel(b *testing.B) {
	benchResourceDo(b, benchManager(b, passRules("svc")).Handle("svc"), succeed, true, false)
}

func BenchmarkResourceReject(b *testing.B) {
	benchResourceDo(b, openManager(b).Handle("svc"), succeed, false, true)
}

func BenchmarkResourceRejectParallel(b *testing.B) {
	benchResourceDo(b, openManager(b).Handle("svc"), succeed, true, true)
}

// The pass path with a call observer that counts, as a metrics exporter would.
func BenchmarkDoPassObserved(b *testing.B) {
	var calls atomic.Int64
	m := breaker.NewManager(breaker.WithCallObserver(func(breaker.CallInfo) { calls.Add(1) }))
	if err := m.LoadRules(passRules("svc")); err != nil {
		b.Fatal(err)
	}
	benchDo(b, m, "svc", succeed, false, false)
}

func BenchmarkDoReject(b *testing.B) { benchDo(b, openManager(b), "svc", succeed, false, true) }

func BenchmarkDoRejectParallel(b *testing.B) { benchDo(b, openManager(b), "svc", succeed, true, true) }

func BenchmarkDoNoRules(b *testing.B) {
	benchDo(b, benchManager(b, passRules("svc")), "other", succeed, false, false)
}

func BenchmarkDoNoRulesParallel(b *testing.B) {
	benchDo(b, benchManager(b, passRules("svc")), "other", succeed, true, false)
}

func errorCountRules() []breaker.Rule {
	return []breaker.Rule{{Resource: "svc", Strategy: breaker.ErrorCount, Threshold: 5, RetryTimeout: time.Hour}}
}

func BenchmarkDoErrorCount(b *testing.B) {
	benchDo(b, benchManager(b, errorCountRules()), "svc", succeed, false, false)
}

func BenchmarkDoErrorCountParallel(b *testing.B) {
	benchDo(b, benchManager(b, errorCountRules()), "svc", succeed, true, false)
}

func consecutiveRules() []breaker.Rule {
	return []breaker.Rule{{Resource: "svc", Strategy: breaker.ConsecutiveErrors, Threshold: 5, RetryTimeout: time.Hour}}
}

func BenchmarkDoConsecutiveErrors(b *testing.B) {
	benchDo(b, benchManager(b, consecutiveRules()), "svc", succeed, false, false)
}

func BenchmarkDoConsecutiveErrorsParallel(b *testing.B) {
	benchDo(b, benchManager(b, consecutiveRules()), "svc", succeed, true, false)
}

// statCallsRules are an ErrorRatio and a SlowRequestRatio rule over the last 100 calls each.
func statCallsRules() []breaker.Rule {
	return []breaker.Rule{
		{Resource: "svc", Strategy: breaker.ErrorRatio, Threshold: 0.5, StatCalls: 100, RetryTimeout: time.Second},
		{Resource: "svc", Strategy: breaker.SlowRequestRatio, Threshold: 0.5, MaxAllowedRT: time.Second,
			StatCalls: 100, RetryTimeout: time.Second},
	}
}

func BenchmarkDoStatCalls(b *testing.B) {
	benchDo(b, benchManager(b, statCallsRules()), "svc", succeed, false, false)
}

func BenchmarkDoStatCallsParallel(b *testing.B) {
	benchDo(b, benchManager(b, statCallsRules()), "svc", succeed, true, false)
}

func BenchmarkEnterExit(b *testing.B) {
	m := benchManager(b, passRules("svc"))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		e, err := m.Enter("svc")
		if err != nil {
			b.Fatal(err)
		}
		e.Exit()
	}
}

func BenchmarkEnterExitParallel(b *testing.B) {
	m := benchManager(b, passRules("svc"))
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			e, err := m.Enter("svc")
			if err != nil {
				b.Error(err)
				return
			}
			e.Exit()
		}
	})
}

func BenchmarkEnterReject(b *testing.B) {
	m := openManager(b)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if e, err := m.Enter("svc"); err == nil {
			b.Fatal("passed", e)
		}
	}
}

// BenchmarkLoadRules10k loads 10,000 new rules over 5,000 resources each time.
func BenchmarkLoadRules10k(b *testing.B) {
	sets := [2][]breaker.Rule{}
	for s := range sets {
		for i := 0; i < 5000; i++ {
			rules := passRules("resource-" + strconv.Itoa(i))
			rules[1].Threshold = 0.5 + float64(s)/10 // each load changes half the rules
			sets[s] = append(sets[s], rules...)
		}
	}
	m := breaker.NewManager()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if err := m.LoadRules(sets[i%2]); err != nil {
			b.Fatal(err)
		}
	}
}

// The floor: what any breaker that times calls must do at least, two clock reads and two
// atomic adds, so the other results can be read against it.
var floorStart = time.Now()

func BenchmarkFloor(b *testing.B) {
	var calls, slow atomic.Int64
	b.ReportAllocs()
	for range b.N {
		start := time.Since(floorStart)
		calls.Add(1)
		if time.Since(floorStart)-start > time.Second {
			slow.Add(1)
		} else {
			slow.Add(0)
		}
	}
}

func BenchmarkFloorParallel(b *testing.B) {
	var calls, slow atomic.Int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			start := time.Since(floorStart)
			calls.Add(1)
			if time.Since(floorStart)-start > time.Second {
				slow.Add(1)
			} else {
				slow.Add(0)
			}
		}
	})
}

// settingsManager returns a manager with passRules on "svc" and the settings cfg for it.
func settingsManager(b *testing.B, cfg breaker.ResourceConfig) *breaker.Manager {
	m := benchManager(b, passRules("svc"))
	if err := m.LoadResources(map[string]breaker.ResourceConfig{"svc": cfg}); err != nil {
		b.Fatal(err)
	}
	return m
}

// templateSettingsManager is a Manager with no rules and one template setting, a concurrency
// limit no call reaches, for every name under "svc-".
func templateSettingsManager(b *testing.B) *breaker.Manager {
	m := breaker.NewManager()
	if err := m.LoadResources(map[string]breaker.ResourceConfig{"svc-*": {MaxConcurrency: 1 << 20}}); err != nil {
		b.Fatal(err)
	}
	return m
}

// A name that takes a template setting's limit and has no rules: the lookup of its entry, the
// count of its calls in flight, and the clock read once to mark the entry used.
func BenchmarkDoTemplateSettings(b *testing.B) {
	benchDo(b, templateSettingsManager(b), "svc-a", succeed, false, false)
}

func BenchmarkDoTemplateSettingsParallel(b *testing.B) {
	benchDo(b, templateSettingsManager(b), "svc-a", succeed, true, false)
}

// The pass path with a concurrency limit no call reaches: one more atomic add and subtract.
func BenchmarkDoMaxConcurrency(b *testing.B) {
	benchDo(b, settingsManager(b, breaker.ResourceConfig{MaxConcurrency: 1 << 20}), "svc", succeed, false, false)
}

func BenchmarkDoMaxConcurrencyParallel(b *testing.B) {
	benchDo(b, settingsManager(b, breaker.ResourceConfig{MaxConcurrency: 1 << 20}), "svc", succeed, true, false)
}

// A call past the limit: the rejection.
func BenchmarkDoConcurrencyReject(b *testing.B) {
	m := settingsManager(b, breaker.ResourceConfig{MaxConcurrency: 1})
	if _, err := m.Enter("svc"); err != nil { // holds the one place for the whole benchmark
		b.Fatal(err)
	}
	benchDo(b, m, "svc", succeed, false, true)
}

func BenchmarkDoConcurrencyRejectParallel(b *testing.B) {
	m := settingsManager(b, breaker.ResourceConfig{MaxConcurrency: 1})
	if _, err := m.Enter("svc"); err != nil {
		b.Fatal(err)
	}
	benchDo(b, m, "svc", succeed, true, true)
}

// The pass path with a Timeout: fn gets a context with a deadline, which context allocates.
func BenchmarkDoTimeout(b *testing.B) {
	benchDo(b, settingsManager(b, breaker.ResourceConfig{Timeout: time.Minute}), "svc", succeed, false, false)
}

func BenchmarkDoTimeoutParallel(b *testing.B) {
	benchDo(b, settingsManager(b, breaker.ResourceConfig{Timeout: time.Minute}), "svc", succeed, true, false)
}

// A call to a resource forced open.
func BenchmarkDoForcedOpen(b *testing.B) {
	benchDo(b, settingsManager(b, breaker.ResourceConfig{Force: breaker.ForceOpen}), "svc", succeed, false, true)
}

func BenchmarkDoForcedOpenParallel(b *testing.B) {
	benchDo(b, settingsManager(b, breaker.ResourceConfig{Force: breaker.ForceOpen}), "svc", succeed, true, true)
}

// Template rules: the pass rules as a template "svc*", called under a name it already made
// breakers for.
func templateManager(b *testing.B) *breaker.Manager {
	m := benchManager(b, passRules("svc*"))
	if err := m.Do(context.Background(), "svc-a", succeed); err != nil || len(m.Breakers("svc-a")) != 2 {
		b.Fatal("the template made no breakers", err)
	}
	return m
}

// manyTemplatesManager is a Manager with n template patterns of one ErrorRatio rule each,
// "tenant0/*" to "tenant<n-1>/*", whose name "tenant0/x" has had its first call.
func manyTemplatesManager(b *testing.B, n int) *breaker.Manager {
	rules := make([]breaker.Rule, n)
	for i := range rules {
		rules[i] = breaker.Rule{Resource: fmt.Sprintf("tenant%d/*", i), Strategy: breaker.ErrorRatio,
			Threshold: 0.5, RetryTimeout: time.Hour}
	}
	m := benchManager(b, rules)
	if err := m.Do(context.Background(), "tenant0/x", succeed); err != nil || len(m.Breakers("tenant0/x")) != 1 {
		b.Fatal("the template made no breaker", err)
	}
	return m
}

// A call by a name a template matched before, and by one no template matches, with 1 to 1,000
// template patterns loaded: what a long list of templates costs each call.
func BenchmarkDoTemplatePatterns(b *testing.B) {
	for _, n := range []int{1, 10, 100, 1000} {
		m := manyTemplatesManager(b, n)
		b.Run(fmt.Sprintf("patterns=%d/matched", n), func(b *testing.B) { benchDo(b, m, "tenant0/x", succeed, false, false) })
		b.Run(fmt.Sprintf("patterns=%d/unmatched", n), func(b *testing.B) { benchDo(b, m, "other", succeed, false, false) })
	}
}

func BenchmarkDoTemplatePass(b *testing.B) {
	benchDo(b, templateManager(b), "svc-a", succeed, false, false)
}

func BenchmarkDoTemplatePassParallel(b *testing.B) {
	benchDo(b, templateManager(b), "svc-a", succeed, true, false)
}

func BenchmarkResourceTemplatePass(b *testing.B) {
	benchResourceDo(b, templateManager(b).Handle("svc-a"), succeed, false, false)
}

func BenchmarkResourceTemplatePassParallel(b *testing.B) {
	benchResourceDo(b, templateManager(b).Handle("svc-a"), succeed, true, false)
}

// A name no template matches, with a template loaded: the call is not protected, and pays for
// finding that out.
func BenchmarkDoTemplateNoMatch(b *testing.B) {
	benchDo(b, templateManager(b), "other", succeed, false, false)
}

func BenchmarkDoTemplateNoMatchParallel(b *testing.B) {
	benchDo(b, templateManager(b), "other", succeed, true, false)
}

// Parallel callers of 64 names of one template, each goroutine going through them all.
func BenchmarkDoTemplateManyNamesParallel(b *testing.B) {
	m := templateManager(b)
	names := make([]string, 64)
	for i := range names {
		names[i] = "svc-" + strconv.Itoa(i)
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			if err := m.Do(ctx, names[i%len(names)], succeed); err != nil {
				b.Error(err)
				return
			}
			i++
		}
	})
}

// Every call a new name, past the bound of 10,000: what making a template's breakers and
// dropping the idlest costs per new name.
func BenchmarkDoTemplateNewName(b *testing.B) {
	m := benchManager(b, passRules("svc*"))
	names := make([]string, 1<<16)
	for i := range names {
		names[i] = "svc-" + strconv.Itoa(i)
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if err := m.Do(ctx, names[i%len(names)], succeed); err != nil {
			b.Fatal(err)
		}
	}
}
