package breaker_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakertest"
)

// The concurrent property tests check, under many goroutines, what must hold in every
// interleaving, rather than totals at the end: a tripping ratio is never above 1, an
// ErrorCount snapshot never above the failures made, Stats never shows Bad > Total or more
// calls than completed (than entered, for a slow rule, which counts a call in flight), and no rule trips while the true failure ratio stays below its
// threshold. Each runs for PROPERTY_TIME (default 1s each in make test; make stress runs them
// longer) and logs the episodes it ran.

// propertyTime is how long each property test runs.
func propertyTime(t *testing.T) time.Duration {
	v := os.Getenv("PROPERTY_TIME")
	if v == "" {
		return time.Second
	}
	d, err := time.ParseDuration(v)
	require.NoError(t, err, "PROPERTY_TIME")
	return d
}

// runFor runs episode until d has passed by the wall clock, at least once, and returns how many
// episodes ran. The wall clock only bounds the test's length: every time the library sees
// comes from a fake clock.
func runFor(t *testing.T, d time.Duration, episode func(n int) bool) int {
	deadline := time.Now().Add(d)
	n := 0
	for n == 0 || time.Now().Before(deadline) {
		if !episode(n) {
			break
		}
		n++
	}
	return n
}

// Twelve goroutines each make success, failure, success, failure inside one bucket: the
// window never holds more failures than successes, so an ErrorRatio rule with Threshold 0.6
// must never trip. A window read half before and half after a completion did trip it.
func TestPropertyNoTripBelowThreshold(t *testing.T) {
	const goroutines, callsEach = 12, 4
	rule := breaker.Rule{Resource: "svc", Strategy: breaker.ErrorRatio, Threshold: 0.6,
		MinRequestAmount: 3, StatInterval: 30 * time.Second, RetryTimeout: time.Second}
	episodes := runFor(t, propertyTime(t), func(int) bool {
		m := breaker.NewManager(breaker.WithClock(breakertest.NewClock()))
		var trips atomic.Int64
		var snapshot atomic.Value
		m.AddObserver(breaker.ObserverFunc(func(c breaker.StateChange) {
			trips.Add(1)
			snapshot.Store(c.Snapshot)
		}))
		require.NoError(t, m.LoadRules([]breaker.Rule{rule}))
		var wg sync.WaitGroup
		for g := 0; g < goroutines; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < callsEach; i++ {
					e, err := m.Enter("svc")
					if err != nil {
						return // only after a false trip, which the check below reports
					}
					if i%2 == 1 {
						e.SetError(errDown)
					}
					e.Exit()
				}
			}()
		}
		wg.Wait()
		if !t.Failed() && trips.Load() != 0 {
			t.Errorf("tripped at a failure ratio of at most 0.5, snapshot %v", snapshot.Load())
			return false
		}
		st := m.Breakers("svc")[0].Stats()
		if st.Total != goroutines*callsEach || st.Bad != goroutines*callsEach/2 {
			t.Errorf("window holds %d calls, %d bad; want %d, %d", st.Total, st.Bad,
				goroutines*callsEach, goroutines*callsEach/2)
			return false
		}
		return true
	})
	t.Logf("%d episodes of %d goroutines", episodes, goroutines)
}

// Four goroutines make 40 calls a bucket together: a bucket of successes, eight buckets of
// noise with k random up to 35 failing (0.875), then two buckets of failures. Whatever order
// a bucket's calls complete in, the newest two buckets reach FastThreshold 0.95 only in the
// second bucket of failures ((35 + 40) / 80 is below it), and the window never reaches 0.9:
// in every interleaving, the rule trips exactly once, there, with Reason FastTrip and a ratio
// the buckets really held.
func TestPropertyFastTripOnlyOnItsBuckets(t *testing.T) {
	const goroutines, callsEach, noise = 4, 10, 8
	rule := breaker.Rule{Resource: "svc", Strategy: breaker.ErrorRatio, Threshold: 0.9, MinRequestAmount: 5,
		FastBuckets: 2, FastThreshold: 0.95, RetryTimeout: time.Hour}
	episodes := runFor(t, propertyTime(t), func(n int) bool {
		clock := breakertest.NewClock()
		m := breaker.NewManager(breaker.WithClock(clock))
		var mu sync.Mutex
		var trips []breaker.StateChange
		m.AddObserver(breaker.ObserverFunc(func(c breaker.StateChange) {
			mu.Lock()
			trips = append(trips, c)
			mu.Unlock()
		}))
		require.NoError(t, m.LoadRules([]breaker.Rule{rule}))
		rng := rand.New(rand.NewPCG(uint64(n), 7))
		for bucket := 0; bucket < noise+3; bucket++ {
			k := rng.IntN(36)
			switch {
			case bucket == 0:
				k = 0
			case bucket > noise:
				k = goroutines * callsEach
			}
			var wg sync.WaitGroup
			for g := 0; g < goroutines; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < callsEach; i++ {
						err := m.Do(context.Background(), "svc", func(context.Context) error {
							return failIf(g*callsEach+i < k)
						})
						if errors.Is(err, breaker.ErrOpen) {
							return
						}
					}
				}()
			}
			wg.Wait()
			mu.Lock()
			got := slices.Clone(trips)
			mu.Unlock()
			switch {
			case bucket < noise+2 && len(got) != 0:
				t.Errorf("episode %d: tripped in bucket %d, before the second bucket of failures: %+v", n, bucket, got[0])
				return false
			case bucket == noise+2 && (len(got) != 1 || got[0].Reason != breaker.FastTrip ||
				got[0].Snapshot < 0.95 || got[0].Snapshot > 1):
				t.Errorf("episode %d: want one FastTrip at a ratio in [0.95, 1] in the second bucket of failures, got %+v", n, got)
				return false
			}
			clock.Advance(100 * time.Millisecond)
		}
		return true
	})
	t.Logf("%d episodes of %d goroutines", episodes, goroutines)
}

// After a probe closes a breaker with RampUp, eight goroutines offer 200 calls a bucket
// together. While every call is canceled (it counts neither way, so no success lets the ramp
// grow), each bucket admits exactly what the ramp's rule gives for 200 calls in a row, in
// every interleaving. Then the dependency serves 30 calls a bucket and fails the rest, half of
// the calls coming at the bucket's start and half 60ms into it: no bucket admits more than the
// ceiling max(200/10, 1.5 × 30) = 45, and the rule (0.5) does not trip again.
func TestPropertyRampAdmitsNoMoreThanItsCeiling(t *testing.T) {
	const goroutines, callsEach, serves = 8, 25, 30
	const offered = goroutines * callsEach
	rule := breaker.Rule{Resource: "svc", Strategy: breaker.ErrorRatio, Threshold: 0.5, MinRequestAmount: 3,
		RetryTimeout: time.Second, RampUp: time.Hour}
	// paced is what the ramp admits of n calls in a row when none succeeds: the bucket before
	// holds the probe's one success.
	paced := func(n int) int {
		a := 0
		for k := 1; k <= n; k++ {
			if a == 0 || 10*a < k || 2*a < 3 {
				a++
			}
		}
		return a
	}
	episodes := runFor(t, propertyTime(t), func(n int) bool {
		clock := breakertest.NewClock()
		m := breaker.NewManager(breaker.WithClock(clock))
		var trips atomic.Int64
		m.AddObserver(breaker.ObserverFunc(func(breaker.StateChange) { trips.Add(1) }))
		require.NoError(t, m.LoadRules([]breaker.Rule{rule}))
		ctx := context.Background()
		for range 3 {
			_ = m.Do(ctx, "svc", func(context.Context) error { return errDown })
		}
		clock.Advance(time.Second)
		require.NoError(t, m.Do(ctx, "svc", succeed), "the probe")
		require.True(t, m.Breakers("svc")[0].Stats().RampingUp)
		trips.Store(0)
		var drift time.Duration // how far into its bucket the clock was moved
		for bucket := range 10 {
			clock.Advance(100*time.Millisecond - drift)
			drift = 0
			var admitted, served atomic.Int64
			var wg sync.WaitGroup
			offer := func(calls int) {
				for range goroutines {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for range calls {
							_ = m.Do(ctx, "svc", func(context.Context) error {
								admitted.Add(1)
								switch {
								case bucket < 5:
									return context.Canceled
								case served.Add(1) > serves:
									return errDown
								}
								return nil
							})
						}
					}()
				}
				wg.Wait()
			}
			if bucket < 5 {
				offer(callsEach)
			} else {
				// the second half of the calls come 60ms into the bucket, where a loss in
				// the first half lets the bucket before's successes be spread over it
				offer(callsEach / 2)
				drift = 60 * time.Millisecond
				clock.Advance(drift)
				offer(callsEach - callsEach/2)
			}
			got := int(admitted.Load())
			switch {
			case bucket < 5 && got != paced(offered):
				t.Errorf("episode %d, bucket %d: admitted %d of %d canceled calls, want %d", n, bucket, got, offered, paced(offered))
				return false
			case bucket >= 5 && got > max(offered/10, serves*3/2):
				t.Errorf("episode %d, bucket %d: admitted %d in front of a dependency that serves %d, past the ceiling %d",
					n, bucket, got, serves, max(offered/10, serves*3/2))
				return false
			case trips.Load() != 0:
				t.Errorf("episode %d, bucket %d: tripped while ramping", n, bucket)
				return false
			}
		}
		return true
	})
	t.Logf("%d episodes of %d goroutines", episodes, goroutines)
}

// Eight goroutines make ten calls each in one bucket, every other one failing, in front of a
// rule that paces: whichever completions race to meet the threshold, pacing starts exactly once
// and the breaker never opens. Then the dependency serves 30 calls a bucket of the 200 offered:
// no bucket admits more than the ceiling max(200/10, 1.5 × 30) = 45, and pacing goes on. Then
// it serves nothing: no bucket admits more than 200/10, and the breaker opens exactly once,
// within the eleven buckets it takes the window's successes to age out.
func TestPropertyPaceStartsOnceAndHoldsItsCeiling(t *testing.T) {
	const goroutines, callsEach, serves = 8, 25, 30
	const offered = goroutines * callsEach
	rule := breaker.Rule{Resource: "svc", Strategy: breaker.ErrorRatio, Threshold: 0.5, MinRequestAmount: 20,
		RetryTimeout: time.Second, Pace: true}
	ctx := context.Background()
	episodes := runFor(t, propertyTime(t), func(n int) bool {
		clock := breakertest.NewClock()
		m := breaker.NewManager(breaker.WithClock(clock))
		events := &recorder{}
		m.AddObserver(events)
		require.NoError(t, m.LoadRules([]breaker.Rule{rule}))
		// offer has every goroutine make calls calls, the i-th of which ends with outcome(i),
		// and returns how many were admitted.
		offer := func(calls int, outcome func(i int64) error) int {
			var admitted atomic.Int64
			var wg sync.WaitGroup
			for range goroutines {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for j := range calls {
						_ = m.Do(ctx, "svc", func(context.Context) error {
							i := admitted.Add(1)
							if outcome == nil {
								return failIf(j%2 == 1)
							}
							return outcome(i)
						})
					}
				}()
			}
			wg.Wait()
			return int(admitted.Load())
		}
		offer(10, nil)
		if got := events.transitions(); !slices.Equal(got, []string{"CLOSED->CLOSED PacingStarted"}) {
			t.Errorf("episode %d: racing to the threshold: %v, want pacing started once", n, got)
			return false
		}
		for bucket := 1; bucket <= 10; bucket++ {
			clock.Advance(100 * time.Millisecond)
			if got := offer(callsEach, func(i int64) error { return failIf(i > serves) }); got > max(offered/10, serves*3/2) {
				t.Errorf("episode %d, bucket %d: admitted %d in front of a dependency that serves %d", n, bucket, got, serves)
				return false
			}
		}
		if got := events.transitions(); len(got) != 1 || !m.Breakers("svc")[0].Stats().Pacing {
			t.Errorf("episode %d: pacing a dependency that serves %d a bucket: %v", n, serves, got)
			return false
		}
		for bucket := 1; bucket <= 2; bucket++ {
			clock.Advance(100 * time.Millisecond)
			if got := offer(callsEach, func(int64) error { return errDown }); got > serves*3/2 {
				t.Errorf("episode %d, dead bucket %d: admitted %d", n, bucket, got)
				return false
			}
		}
		if got := events.transitions(); !slices.Equal(got, []string{"CLOSED->CLOSED PacingStarted", tripped}) {
			t.Errorf("episode %d: a dependency that serves nothing: %v, want one trip within two buckets", n, got)
			return false
		}
		return true
	})
	t.Logf("%d episodes of %d goroutines", episodes, goroutines)
}

// Eight goroutines enter 40 calls each, half of which hang; once the hung calls have run past
// MaxAllowedRT, the goroutines make 40 more calls each while the hung calls return, so that
// calls judging the hung ones slow race with their returns. In every interleaving each call
// counts once: the window holds every call, and exactly the hung ones as slow.
func TestPropertyHungCallCountsOnce(t *testing.T) {
	const goroutines, callsEach = 8, 40
	rule := breaker.Rule{Resource: "svc", Strategy: breaker.SlowRequestRatio, Threshold: 1,
		MaxAllowedRT: 50 * time.Millisecond, MinRequestAmount: 1 << 20, RetryTimeout: time.Second}
	episodes := runFor(t, propertyTime(t), func(n int) bool {
		clock := breakertest.NewClock()
		m := breaker.NewManager(breaker.WithClock(clock))
		require.NoError(t, m.LoadRules([]breaker.Rule{rule}))
		hung := make([][]*breaker.Entry, goroutines)
		var wg sync.WaitGroup
		for g := range goroutines {
			wg.Go(func() {
				for i := range callsEach {
					e, err := m.Enter("svc")
					if err != nil {
						t.Error(err)
						return
					}
					if i%2 == 0 {
						hung[g] = append(hung[g], e)
					} else {
						e.Exit()
					}
				}
			})
		}
		wg.Wait()
		clock.Advance(rule.MaxAllowedRT + 200*time.Millisecond)
		for g := range goroutines {
			wg.Go(func() {
				for _, e := range hung[g] {
					e.Exit()
				}
			})
			wg.Go(func() {
				for range callsEach {
					if err := m.Do(context.Background(), "svc", succeed); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		st := m.Breakers("svc")[0].Stats()
		if want := uint64(2 * goroutines * callsEach); st.Total != want || st.Bad != want/4 {
			t.Errorf("episode %d: window holds %d calls, %d slow; want %d, %d", n, st.Total, st.Bad, want, want/4)
			return false
		}
		return true
	})
	t.Logf("%d episodes of %d goroutines", episodes, goroutines)
}

// Goroutines make calls with random outcomes and response times while others move the fake
// clock across bucket boundaries, reload the rules, change the resource's concurrency limit and
// force, and read Stats. No more calls are ever in flight than the highest limit set, and none
// are counted in flight once all have exited. Every transition and every
// Stats read is checked against what the calls made could produce, and each breaker's
// transitions, ordered by Seq, must chain.
func TestPropertyInvariantsUnderConcurrency(t *testing.T) {
	rules := []breaker.Rule{
		{ID: "ratio", Resource: "svc", Strategy: breaker.ErrorRatio, Threshold: 1, MinRequestAmount: 1,
			StatInterval: 4 * time.Millisecond, BucketCount: 4, RetryTimeout: 2 * time.Millisecond},
		{ID: "half", Resource: "svc", Strategy: breaker.ErrorRatio, Threshold: 0.5, MinRequestAmount: 2,
			StatInterval: 10 * time.Millisecond, BucketCount: 2, RetryTimeout: 3 * time.Millisecond},
		{ID: "count", Resource: "svc", Strategy: breaker.ErrorCount, Threshold: 4, ProbeNum: 2,
			StatInterval: 2 * time.Millisecond, BucketCount: 2, RetryTimeout: time.Millisecond},
		{ID: "run", Resource: "svc", Strategy: breaker.ConsecutiveErrors, Threshold: 3, ProbeNum: 3,
			RetryTimeout: time.Millisecond, MaxRetryTimeout: 8 * time.Millisecond, RetryJitter: 0.5},
		{ID: "slow", Resource: "svc", Strategy: breaker.SlowRequestRatio, Threshold: 0.8, MinRequestAmount: 2,
			MaxAllowedRT: time.Millisecond, StatInterval: 3 * time.Millisecond, BucketCount: 3,
			RetryTimeout: time.Millisecond, ProbeTimeout: 2 * time.Millisecond},
		{ID: "last-calls", Resource: "svc", Strategy: breaker.ErrorRatio, Threshold: 0.5, StatCalls: 6,
			MinRequestAmount: 2, RetryTimeout: 2 * time.Millisecond},
		{ID: "slow-calls", Resource: "svc", Strategy: breaker.SlowRequestRatio, Threshold: 0.5,
			MaxAllowedRT: time.Millisecond, StatCalls: 4, RetryTimeout: time.Millisecond},
	}
	changes := 0
	episodes := runFor(t, propertyTime(t), func(n int) bool {
		changes += propertyEpisode(t, rules, uint64(n))
		return !t.Failed()
	})
	t.Logf("%d episodes, %d transitions checked", episodes, changes)
}

// propertyEpisode runs one episode on a fresh Manager and returns the transitions it checked.
func propertyEpisode(t *testing.T, rules []breaker.Rule, seed uint64) int {
	const goroutines, callsEach, maxLimit = 6, 200, 4
	clock := breakertest.NewClock()
	m := breaker.NewManager(breaker.WithClock(clock))
	require.NoError(t, m.LoadResources(map[string]breaker.ResourceConfig{"svc": {MaxConcurrency: maxLimit}}))
	var running atomic.Int64 // calls between a successful Enter and Exit
	// completed and failed count calls before they exit, so they are never behind the windows;
	// entering counts calls before they enter, as a slow rule counts a call still in flight.
	var completed, failed, entering atomic.Uint64
	log := &episodeLog{}
	violate := log.violate
	m.AddObserver(breaker.ObserverFunc(func(c breaker.StateChange) { log.record(c, failed.Load()) }))
	require.NoError(t, m.LoadRules(rules))

	checkStats := func() {
		for _, b := range m.Breakers("svc") {
			st := b.Stats()
			done := completed.Load()
			if b.Rule().Strategy == breaker.SlowRequestRatio {
				done = entering.Load() // a call in flight past MaxAllowedRT counts before it ends
			}
			if st.Bad > st.Total || st.Total > done {
				violate("%s: Stats Total %d, Bad %d after %d calls", b.Rule().ID, st.Total, st.Bad, done)
			}
		}
	}
	var wg sync.WaitGroup
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(g)))
			for i := 0; i < callsEach; i++ {
				switch k := rng.IntN(10); {
				case k == 0:
					clock.Advance(time.Duration(rng.IntN(3000)) * time.Microsecond)
				case k == 1:
					checkStats()
				case k == 2 && g == 0:
					// Reload a subset; kept rules keep their breakers, dropped ones retire.
					_ = m.LoadRules(rules[:1+rng.IntN(len(rules))])
				case k == 2 && g == 1:
					// A limit of 1 to maxLimit, and any force.
					cfg := breaker.ResourceConfig{MaxConcurrency: 1 + rng.IntN(maxLimit),
						Force: breaker.Force(rng.IntN(3))}
					_ = m.LoadResources(map[string]breaker.ResourceConfig{"svc": cfg})
				}
				entering.Add(1)
				e, err := m.Enter("svc")
				if err != nil {
					continue
				}
				if n := running.Add(1); n > maxLimit {
					violate("%d calls in flight, above every limit set (%d)", n, maxLimit)
				}
				if rng.IntN(3) == 0 {
					clock.Advance(time.Duration(rng.IntN(2000)) * time.Microsecond)
				}
				if rng.IntN(2) == 0 {
					failed.Add(1)
					e.SetError(errDown)
				}
				completed.Add(1)
				running.Add(-1)
				e.Exit()
			}
		}()
	}
	wg.Wait()
	checkStats()
	if n := m.InFlight("svc"); n != 0 {
		violate("%d calls in flight after every call exited", n)
	}
	return log.check(t)
}

// episodeLog collects the transitions of an episode and what its goroutines found wrong.
type episodeLog struct {
	mu         sync.Mutex
	changes    []breaker.StateChange
	violations []string
}

func (l *episodeLog) violate(format string, args ...any) {
	l.mu.Lock()
	l.violations = append(l.violations, fmt.Sprintf(format, args...))
	l.mu.Unlock()
}

// record keeps c, after checking that a trip's snapshot is one the calls could produce: a
// ratio within [Threshold, 1], a count within [Threshold, failures made].
func (l *episodeLog) record(c breaker.StateChange, failed uint64) {
	if c.Reason == breaker.ThresholdExceeded {
		switch c.Rule.Strategy {
		case breaker.ErrorCount, breaker.ConsecutiveErrors:
			if c.Snapshot > float64(failed) || c.Snapshot < c.Rule.Threshold {
				l.violate("%s of %s tripped on %v failures, %d made", c.Rule.ID, c.Resource, c.Snapshot, failed)
			}
		default:
			if c.Snapshot > 1 || c.Snapshot < c.Rule.Threshold {
				l.violate("%s of %s tripped on a ratio of %v", c.Rule.ID, c.Resource, c.Snapshot)
			}
		}
	}
	l.mu.Lock()
	l.changes = append(l.changes, c)
	l.mu.Unlock()
}

// check reports the violations, checks that the transitions chain, and returns their number.
func (l *episodeLog) check(t *testing.T) int {
	t.Helper()
	return l.checkWith(t)
}

// checkWith is check with more checks of the transitions.
func (l *episodeLog) checkWith(t *testing.T, checks ...func(*testing.T, []breaker.StateChange)) int {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, v := range l.violations {
		t.Error(v)
	}
	checkChains(t, l.changes)
	for _, check := range checks {
		check(t, l.changes)
	}
	return len(l.changes)
}

// checkChains orders the transitions by Seq and checks that each breaker's (a resource's and
// rule's, whatever its ID, which a reload may change) form a chain: each starts where the one
// before ended, with the next Generation, and Seq never repeats.
func checkChains(t *testing.T, all []breaker.StateChange) {
	t.Helper()
	sort.Slice(all, func(i, j int) bool { return all[i].Seq < all[j].Seq })
	type breakerKey struct {
		resource string
		rule     breaker.Rule // without its ID
	}
	last := map[breakerKey]breaker.StateChange{}
	for i, c := range all {
		if i > 0 && all[i-1].Seq == c.Seq {
			t.Errorf("two transitions have Seq %d", c.Seq)
			return
		}
		key := breakerKey{c.Resource, c.Rule}
		key.rule.ID = ""
		if c.Reason == breaker.RuleChanged || c.Reason == breaker.Evicted {
			delete(last, key) // the breaker is gone; one made again starts CLOSED
			continue
		}
		prev, seen := last[key]
		from, gen := breaker.Closed, uint64(1)
		if seen {
			from, gen = prev.To, prev.Generation+1
		}
		// A breaker retired while CLOSED is not reported: the next one of its rule starts at 1.
		fresh := seen && prev.To == breaker.Closed && c.From == breaker.Closed && c.Generation == 1
		if c.From != from || (seen && c.Generation != gen && !fresh) {
			t.Errorf("%s: %v->%v %v (gen %d, seq %d) follows %v (gen %d, seq %d)", c.Rule.ID, c.From, c.To,
				c.Reason, c.Generation, c.Seq, prev.To, prev.Generation, prev.Seq)
			return
		}
		last[key] = c
	}
}

// Template breakers under concurrency: goroutines call a dozen names that two templates match,
// with random outcomes and times, while others reload the templates (the same under new IDs, or
// changed), force names open and closed, and read the template breakers. At every read the
// Manager holds no more template breakers than its limit; every transition names the resource
// called and a template that matches it, within the ratio and count bounds; each breaker's
// transitions chain; and the call observer hears exactly the calls that ran or were blocked.
func TestPropertyTemplates(t *testing.T) {
	const limit = 7
	ruleSets := [][]breaker.Rule{
		{
			{ID: "t-count", Resource: "t*", Strategy: breaker.ErrorCount, Threshold: 2, StatInterval: 2 * time.Millisecond,
				BucketCount: 2, RetryTimeout: time.Millisecond, ProbeNum: 2},
			{ID: "t-slow", Resource: "t*", Strategy: breaker.SlowRequestRatio, Threshold: 0.5, MinRequestAmount: 2,
				MaxAllowedRT: time.Millisecond, StatInterval: 3 * time.Millisecond, BucketCount: 3, RetryTimeout: time.Millisecond},
			{ID: "all", Resource: "*", Strategy: breaker.ConsecutiveErrors, Threshold: 2, RetryTimeout: time.Millisecond,
				MaxRetryTimeout: 4 * time.Millisecond},
		},
		{
			{ID: "t-count-2", Resource: "t*", Strategy: breaker.ErrorCount, Threshold: 2, StatInterval: 2 * time.Millisecond,
				BucketCount: 2, RetryTimeout: time.Millisecond, ProbeNum: 2},
			{ID: "t-slow", Resource: "t*", Strategy: breaker.SlowRequestRatio, Threshold: 0.5, MinRequestAmount: 2,
				MaxAllowedRT: time.Millisecond, StatInterval: 3 * time.Millisecond, BucketCount: 3, RetryTimeout: time.Millisecond},
			{ID: "all-ratio", Resource: "*", Strategy: breaker.ErrorRatio, Threshold: 0.5, MinRequestAmount: 2,
				StatInterval: 2 * time.Millisecond, BucketCount: 2, RetryTimeout: time.Millisecond},
		},
	}
	names := []string{"t1", "t2", "t3", "t4", "t5", "u1", "u2", "u3", "u4", "x", "y", "z"}
	changes, calls := 0, 0
	episodes := runFor(t, propertyTime(t), func(n int) bool {
		const goroutines, callsEach = 6, 200
		clock := breakertest.NewClock()
		var heard atomic.Int64
		m := breaker.NewManager(breaker.WithClock(clock), breaker.WithMaxTemplateBreakers(limit),
			breaker.WithCallObserver(func(breaker.CallInfo) { heard.Add(1) }))
		var failed atomic.Uint64
		var made atomic.Int64
		log := &episodeLog{}
		violate := log.violate
		m.AddObserver(breaker.ObserverFunc(func(c breaker.StateChange) {
			prefix, template := strings.CutSuffix(c.Rule.Resource, "*")
			if !template || !strings.HasPrefix(c.Resource, prefix) || strings.HasSuffix(c.Resource, "*") {
				violate("%s of %s: not a template's breaker of the name called", c.Rule.ID, c.Resource)
			}
			log.record(c, failed.Load())
		}))
		require.NoError(t, m.LoadRules(ruleSets[0]))
		checkHeld := func() {
			st := m.TemplateStats()
			if st.Breakers > limit || st.Resources > st.Breakers || st.Limit != limit {
				violate("template breakers: %+v, limit %d", st, limit)
			}
			for _, name := range m.TemplateResources() {
				for _, b := range m.Breakers(name) {
					if !strings.HasSuffix(b.Rule().Resource, "*") {
						violate("%s listed as dynamic has the rule %+v", name, b.Rule())
					}
				}
			}
		}
		var wg sync.WaitGroup
		for g := range goroutines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(uint64(n), uint64(g)))
				for range callsEach {
					switch k := rng.IntN(12); {
					case k == 0:
						clock.Advance(time.Duration(rng.IntN(3000)) * time.Microsecond)
					case k == 1:
						checkHeld()
					case k == 2 && g == 0:
						_ = m.LoadRules(ruleSets[rng.IntN(len(ruleSets))])
					case k == 2 && g == 1:
						cfg := map[string]breaker.ResourceConfig{names[rng.IntN(len(names))]: {Force: breaker.Force(rng.IntN(3)),
							MaxConcurrency: rng.IntN(3)}}
						_ = m.LoadResources(cfg)
					}
					made.Add(1)
					e, err := m.Enter(names[rng.IntN(len(names))])
					if err != nil {
						continue
					}
					if rng.IntN(3) == 0 {
						clock.Advance(time.Duration(rng.IntN(2000)) * time.Microsecond)
					}
					if rng.IntN(2) == 0 {
						failed.Add(1)
						e.SetError(errDown)
					}
					e.Exit()
				}
			}()
		}
		wg.Wait()
		checkHeld()
		for _, name := range names {
			if n := m.InFlight(name); n != 0 {
				violate("%s: %d calls in flight after every call exited", name, n)
			}
		}
		if heard.Load() != made.Load() {
			violate("the call observer heard %d calls of %d", heard.Load(), made.Load())
		}
		changes += log.check(t)
		calls += int(made.Load())
		return !t.Failed()
	})
	t.Logf("%d episodes, %d calls, %d transitions checked", episodes, calls, changes)
}

// With ProbeNum above 1, goroutines keep calling a breaker in HALF_OPEN whose probes all
// succeed but that needs more of them than the episode makes: every call it admits is a probe,
// and at no moment may two be in flight.
func TestPropertyOneProbeInFlight(t *testing.T) {
	const goroutines, callsEach = 8, 50
	rule := breaker.Rule{Resource: "svc", Strategy: breaker.ErrorCount, Threshold: 1, MinRequestAmount: 1,
		ProbeNum: breaker.MaxProbeNum, RetryTimeout: time.Second, ProbeTimeout: time.Hour}
	probes := 0
	episodes := runFor(t, propertyTime(t), func(int) bool {
		h := newHarness(t, rule)
		h.completeN("svc", 1, errDown)
		h.clock.Advance(time.Second)
		var inFlight, admitted atomic.Int64
		var wg sync.WaitGroup
		for g := 0; g < goroutines; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < callsEach; i++ {
					e, err := h.m.Enter("svc")
					if err != nil {
						continue
					}
					admitted.Add(1)
					if n := inFlight.Add(1); n != 1 {
						t.Errorf("%d probes in flight", n)
					}
					inFlight.Add(-1)
					e.Exit()
				}
			}()
		}
		wg.Wait()
		probes += int(admitted.Load())
		if h.state("svc", 0) != breaker.HalfOpen || len(h.events.all()) != 2 {
			t.Errorf("after %d probes: %v, %v", admitted.Load(), h.state("svc", 0), h.events.transitions())
		}
		return !t.Failed()
	})
	t.Logf("%d episodes, %d probes", episodes, probes)
}

// Goroutines trip some template names and stream new names that succeed, past the bound,
// while another reloads rule sets that only tune or reorder the template's rules. In every
// interleaving: a tripped breaker is never evicted while there are fewer tripped names than
// the bound (a CLOSED one could always go), no reload resets a breaker (none of them changes
// a window's shape), and a tripped name keeps its very breakers through every reload.
func TestPropertyEvictionAndTuning(t *testing.T) {
	const limit, tripped = 32, 24 // a batch of 2; there is always room for CLOSED names
	count := breaker.Rule{ID: "count", Resource: "n*", Strategy: breaker.ErrorCount, Threshold: 1,
		RetryTimeout: time.Hour}
	ratio := breaker.Rule{ID: "ratio", Resource: "n*", Strategy: breaker.ErrorRatio, Threshold: 0.9,
		MinRequestAmount: 100, RetryTimeout: time.Hour}
	tunedCount, tunedRatio := count, ratio
	tunedCount.ID, tunedCount.Threshold, tunedCount.RetryTimeout = "count-tuned", 1, 2*time.Hour
	tunedRatio.ID, tunedRatio.Threshold, tunedRatio.DryRun = "ratio-tuned", 0.95, true
	ruleSets := [][]breaker.Rule{{count, ratio}, {ratio, count}, {tunedRatio, tunedCount}, {tunedCount, ratio}}
	changes := 0
	episodes := runFor(t, propertyTime(t), func(n int) bool {
		clock := breakertest.NewClock()
		m := breaker.NewManager(breaker.WithClock(clock), breaker.WithMaxTemplateBreakers(2*limit))
		log := &episodeLog{}
		var failed atomic.Uint64
		m.AddObserver(breaker.ObserverFunc(func(c breaker.StateChange) {
			switch {
			case c.Reason == breaker.Evicted && c.From != breaker.Closed:
				log.violate("%s evicted while %v", c.Resource, c.From)
			case c.Reason == breaker.RuleChanged:
				log.violate("%s %s reset by a reload that keeps its window", c.Resource, c.Rule.ID)
			}
			log.record(c, failed.Load())
		}))
		require.NoError(t, m.LoadRules(ruleSets[0]))
		held := make([][]breaker.CircuitBreaker, tripped)
		for i := range tripped {
			name := fmt.Sprintf("n-down-%d", i)
			failed.Add(1)
			_ = m.Do(context.Background(), name, func(context.Context) error { return errDown })
			held[i] = m.Breakers(name)
			require.Len(t, held[i], 2)
		}
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(uint64(n), uint64(g)))
				for i := range 150 {
					switch {
					case g == 0 && i%10 == 0:
						require.NoError(t, m.LoadRules(ruleSets[rng.IntN(len(ruleSets))]))
					case g == 1 && i%7 == 0:
						clock.Advance(time.Millisecond)
						k := rng.IntN(tripped)
						err := m.Do(context.Background(), fmt.Sprintf("n-down-%d", k), func(context.Context) error { return nil })
						if !errors.Is(err, breaker.ErrOpen) {
							log.violate("n-down-%d let a call through: %v", k, err)
						}
					}
					_ = m.Do(context.Background(), fmt.Sprintf("n-%d-%d-%d", n, g, i), func(context.Context) error { return nil })
				}
			}()
		}
		wg.Wait()
		for i := range tripped {
			bs := m.Breakers(fmt.Sprintf("n-down-%d", i))
			if len(bs) != 2 || !slices.ContainsFunc(bs, func(b breaker.CircuitBreaker) bool { return b == held[i][0] }) ||
				!slices.ContainsFunc(bs, func(b breaker.CircuitBreaker) bool { return b == held[i][1] }) {
				log.violate("n-down-%d lost its breakers", i)
			}
		}
		if st := m.TemplateStats(); st.Breakers > 2*limit {
			log.violate("%d breakers past the bound of %d", st.Breakers, 2*limit)
		}
		changes += log.check(t)
		return !t.Failed()
	})
	t.Logf("%d episodes, %d transitions checked", episodes, changes)
}

// pausingClock is a fake clock whose readings go stale: after it reads the time it may yield
// the processor a few times before it returns the reading, as a goroutine preempted or paused
// between reading the clock and using the reading does, while others move the clock on and
// change the breakers.
type pausingClock struct {
	*breakertest.Clock
	pauses atomic.Uint64 // a counter that picks which readings pause
}

func (c *pausingClock) Now() time.Time {
	t := c.Clock.Now()
	for range c.pauses.Add(1) % 4 {
		runtime.Gosched()
	}
	return t
}

// Goroutines make calls with random outcomes and hold some in flight, others move a clock whose
// readings go stale, and one resets the resource now and then, so that calls lose probes to
// breakers that have just closed, meet ramps and pacing, and read the clock before others
// change the state. In every interleaving: no OPEN period ends before its OPEN time (a probe comes no sooner than
// RetryTimeout after the transition that set the retry time), no probe times out before its
// ProbeTimeout, and no rejection names a RetryAt that has already passed.
func TestPropertyStaleReadingsAndLostProbes(t *testing.T) {
	rules := []breaker.Rule{
		{ID: "count", Resource: "svc", Strategy: breaker.ErrorCount, Threshold: 1, MinRequestAmount: 1,
			RetryTimeout: 3 * time.Millisecond, ProbeTimeout: 2 * time.Millisecond},
		{ID: "ratio", Resource: "svc", Strategy: breaker.ErrorRatio, Threshold: 0.5, MinRequestAmount: 2,
			StatInterval: 4 * time.Millisecond, BucketCount: 2, RetryTimeout: 2 * time.Millisecond, ProbeNum: 2},
		{ID: "slow", Resource: "svc", Strategy: breaker.SlowRequestRatio, Threshold: 0.5, MinRequestAmount: 2,
			MaxAllowedRT: time.Millisecond, StatInterval: 4 * time.Millisecond, BucketCount: 4,
			RetryTimeout: 2 * time.Millisecond, ProbeTimeout: 3 * time.Millisecond},
		{ID: "pace", Resource: "svc", Strategy: breaker.ErrorRatio, Threshold: 0.4, MinRequestAmount: 3,
			StatInterval: 6 * time.Millisecond, BucketCount: 3, RetryTimeout: 2 * time.Millisecond,
			RampUp: 4 * time.Millisecond, Pace: true},
	}
	changes := 0
	episodes := runFor(t, propertyTime(t), func(n int) bool {
		changes += staleEpisode(t, rules, uint64(n))
		return !t.Failed()
	})
	t.Logf("%d episodes, %d transitions checked", episodes, changes)
}

// staleEpisode runs one episode of TestPropertyStaleReadingsAndLostProbes and returns the
// transitions it checked.
func staleEpisode(t *testing.T, rules []breaker.Rule, seed uint64) int {
	const goroutines, callsEach = 6, 150
	clock := &pausingClock{Clock: breakertest.NewClock()}
	m := breaker.NewManager(breaker.WithClock(clock))
	log := &episodeLog{}
	m.AddObserver(breaker.ObserverFunc(func(c breaker.StateChange) { log.record(c, math.MaxUint64) }))
	require.NoError(t, m.LoadRules(rules))
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(g)))
			var held []*breaker.Entry
			for range callsEach {
				switch k := rng.IntN(12); {
				case k < 3:
					clock.Advance(time.Duration(rng.IntN(1500)) * time.Microsecond)
				case k == 3 && g == 0:
					m.Reset("svc")
				case k == 4 && len(held) > 0:
					held[0].Exit()
					held = held[1:]
				}
				before := clock.Clock.Now() // no later than the reading the call makes
				e, err := m.Enter("svc")
				var be *breaker.BlockError
				if errors.As(err, &be) && !be.RetryAt.After(before) {
					log.violate("%s rejected with RetryAt %v, not after %v", be.Rule.ID, be.RetryAt, before)
				}
				if err != nil {
					continue
				}
				if rng.IntN(2) == 0 {
					e.SetError(errDown)
				}
				if rng.IntN(4) == 0 {
					held = append(held, e) // in flight until a later step
					continue
				}
				e.Exit()
			}
			exitAll(held)
		}()
	}
	wg.Wait()
	l := log
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, v := range l.violations {
		t.Error(v)
	}
	checkPeriodsLast(t, l.changes)
	return len(l.changes)
}

// checkPeriodsLast checks, in Seq order, that each breaker's probe came no sooner than
// RetryTimeout after the transition that set its retry time (a trip, a failed or timed out
// probe), and that a probe timed out no sooner than ProbeTimeout after it was taken. The rules
// have no backoff and no jitter, so the OPEN time is always RetryTimeout.
func checkPeriodsLast(t *testing.T, all []breaker.StateChange) {
	t.Helper()
	sort.Slice(all, func(i, j int) bool { return all[i].Seq < all[j].Seq })
	retryAt := map[string]time.Time{} // by rule ID
	probedAt := map[string]time.Time{}
	for _, c := range all {
		id, probeTimeout := c.Rule.ID, c.Rule.ProbeTimeout
		if probeTimeout == 0 {
			probeTimeout = c.Rule.RetryTimeout
		}
		switch c.Reason {
		case breaker.ThresholdExceeded, breaker.ProbeFailed:
			retryAt[id] = c.At.Add(c.Rule.RetryTimeout)
		case breaker.ProbeTimedOut:
			if at := probedAt[id].Add(probeTimeout); c.At.Before(at) {
				t.Errorf("%s: probe taken at %v timed out at %v, before its ProbeTimeout", id, probedAt[id], c.At)
			}
			retryAt[id] = c.At.Add(c.Rule.RetryTimeout)
		case breaker.RetryTimeoutElapsed:
			if c.At.Before(retryAt[id]) {
				t.Errorf("%s: probed at %v, before its retry time %v", id, c.At, retryAt[id])
			}
			probedAt[id] = c.At
		}
	}
}

// Goroutines, each writing a stripe of its own (from the first call, or once they contend for
// the window, as the Manager stripes it), race the judgements of one breaker with calls that
// together just meet its threshold, or fall one short: a threshold met is never missed, though
// no goroutine's stripe holds it (the last judgement sees the base words and every stripe), and
// one not met never trips. ErrorCount counts 64 failures; ErrorRatio 64 of 128 calls, successes
// and failures interleaved, whose last may be a success that brings the calls to
// MinRequestAmount.
func TestPropertyStripesMeetTheThresholdTogether(t *testing.T) {
	const stripes, failures = 4, 64
	rules := map[string]breaker.Rule{
		"count": {Resource: "svc", Strategy: breaker.ErrorCount, Threshold: failures, MinRequestAmount: 1,
			StatInterval: time.Hour, RetryTimeout: time.Hour},
		"ratio": {Resource: "svc", Strategy: breaker.ErrorRatio, Threshold: 0.5, MinRequestAmount: 2 * failures,
			StatInterval: time.Hour, RetryTimeout: time.Hour},
	}
	episodes := runFor(t, propertyTime(t), func(n int) bool {
		name := []string{"count", "ratio"}[n%2]
		short := n/2%2 == 1 // one failure short of the threshold, or for the ratio one call short of MinRequestAmount
		opts := []breaker.Option{breaker.WithClock(breakertest.NewClock())}
		if n/4%2 == 1 {
			opts = append(opts, breaker.WithStripes(stripes, func() uint8 { return 0 }))
		}
		m := breaker.NewManager(opts...)
		events := &recorder{}
		m.AddObserver(events)
		require.NoError(t, m.LoadRules([]breaker.Rule{rules[name]}))
		b := m.Breakers("svc")[0]
		calls := make([][]error, stripes) // each stripe's share, in a shuffled order
		for i := range failures {
			calls[i%stripes] = append(calls[i%stripes], errDown)
			if name == "ratio" {
				calls[(i+1)%stripes] = append(calls[(i+1)%stripes], nil)
			}
		}
		if short {
			calls[0] = calls[0][1:]
		}
		var wg sync.WaitGroup
		start := make(chan struct{})
		for st, share := range calls {
			rand.Shuffle(len(share), func(i, j int) { share[i], share[j] = share[j], share[i] })
			wg.Go(func() {
				r := breaker.NewRivalOn(m, uint8(st))
				<-start
				for _, err := range share {
					if r.Pass(b) {
						r.Complete(b, err)
					}
				}
			})
		}
		close(start)
		wg.Wait()
		want := []string{"CLOSED->OPEN ThresholdExceeded"}
		if short {
			want = nil
		}
		if got := events.transitions(); !slices.Equal(got, want) {
			t.Errorf("%s, episode %d, short %v: transitions %q, want %q", name, n, short, got, want)
			return false
		}
		return true
	})
	t.Logf("%d episodes", episodes)
}
