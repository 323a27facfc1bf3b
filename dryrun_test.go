package breaker_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakertest"
)

func dryRun(r breaker.Rule) breaker.Rule {
	r.DryRun = true
	return r
}

func (l *callLog) last() breaker.CallInfo {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.calls[len(l.calls)-1]
}

// A DryRun rule trips, reports with DryRun set and rejects nothing; call observers see
// what it would have rejected; the calls it would have rejected are not counted by it.
func TestDryRunTripsButRejectsNothing(t *testing.T) {
	calls := &callLog{}
	clock := breakertest.NewClock()
	m := breaker.NewManager(breaker.WithClock(clock), breaker.WithCallObserver(calls.OnCall))
	events := &recorder{}
	m.AddObserver(events)
	require.NoError(t, m.LoadRules([]breaker.Rule{dryRun(errorCount(3, 1))}))
	fail := func(context.Context) error { return errDown }

	for i := 0; i < 3; i++ {
		require.ErrorIs(t, m.Do(context.Background(), "svc", fail), errDown)
	}
	require.Equal(t, []string{tripped}, events.transitions())
	assert.True(t, events.last().DryRun)
	assert.Equal(t, 3.0, events.last().Snapshot)
	assert.Nil(t, calls.last().DryRun, "the call that tripped it was let through by a CLOSED breaker")

	require.ErrorIs(t, m.Do(context.Background(), "svc", fail), errDown, "OPEN, but it rejects nothing")
	would := calls.last().DryRun
	require.NotNil(t, would)
	assert.Equal(t, breaker.Open, would.State)
	assert.Equal(t, breakertest.Start.Add(5*time.Second), would.RetryAt)
	assert.Nil(t, calls.last().Blocked)

	// The would-be probe is the first call after the retry time, judged as a probe.
	clock.Advance(5 * time.Second)
	require.ErrorIs(t, m.Do(context.Background(), "svc", fail), errDown)
	assert.Equal(t, []string{tripped, probing, reopened}, events.transitions())
	clock.Advance(5 * time.Second)
	require.NoError(t, m.Do(context.Background(), "svc", func(context.Context) error { return nil }))
	assert.Equal(t, []string{tripped, probing, reopened, probing, recovered}, events.transitions())
	for _, c := range events.all() {
		assert.True(t, c.DryRun)
	}
}

// While a DryRun breaker's probe is in flight, other calls pass and are not counted: the
// probe alone decides.
func TestDryRunProbeDecidesAlone(t *testing.T) {
	h := newHarness(t, dryRun(errorCount(1, 1)))
	h.completeN("svc", 1, errDown)
	h.clock.Advance(5 * time.Second)
	probe, err := h.m.Enter("svc")
	require.NoError(t, err)
	h.completeN("svc", 3, errDown) // would be rejected: pass, uncounted
	assert.Equal(t, breaker.HalfOpen, h.state("svc", 0))
	probe.Exit()
	assert.Equal(t, []string{tripped, probing, recovered}, h.events.transitions())
	assert.Zero(t, h.m.Breakers("svc")[0].Stats().Total)
}

// An enforced rule beside a DryRun one still rejects, and the DryRun breaker does not take a
// call the other rejects as its probe.
func TestDryRunBesideAnEnforcedRule(t *testing.T) {
	enforced := errorCount(2, 1)
	enforced.RetryTimeout = time.Minute
	h := newHarness(t, dryRun(errorCount(1, 1)), enforced)
	h.completeN("svc", 2, errDown) // the dry rule trips on the first, the enforced on the second
	require.Equal(t, breaker.Open, h.state("svc", 0))
	require.Equal(t, breaker.Open, h.state("svc", 1))
	h.clock.Advance(5 * time.Second)
	err := h.complete("svc", 0, nil)
	be := blockOf(t, err)
	assert.False(t, be.Rule.DryRun, "the enforced rule rejects")
	assert.Equal(t, breaker.Open, h.state("svc", 0), "no probe taken for a rejected call")
}

// DryRun is part of a rule's identity, and of its JSON; turning it on or off tunes the breaker
// and keeps it.
func TestDryRunIdentityAndJSON(t *testing.T) {
	h := newHarness(t, errorCount(1, 1))
	before := h.m.Breakers("svc")[0]
	require.NoError(t, h.m.LoadRules([]breaker.Rule{dryRun(errorCount(1, 1))}))
	assert.Same(t, before, h.m.Breakers("svc")[0])
	assert.True(t, h.m.Breakers("svc")[0].Rule().DryRun)
	require.NoError(t, h.m.LoadRules([]breaker.Rule{errorCount(1, 1), dryRun(errorCount(1, 1))}),
		"an enforced rule and its DryRun twin are two rules")

	rules, err := breaker.ParseRules([]byte(`[{"resource":"svc","strategy":"ErrorCount","threshold":1,
		"retryTimeout":"5s","dryRun":true}]`))
	require.NoError(t, err)
	assert.True(t, rules[0].DryRun)
	out, err := rules[0].MarshalJSON()
	require.NoError(t, err)
	assert.Contains(t, string(out), `"dryRun":true`)
}

// Under -race, 32 goroutines arrive at once when a DryRun breaker's retry time has come.
// One becomes the probe; the others, including those that lost the race for it, pass.
func TestDryRunNeverRejectsUnderConcurrency(t *testing.T) {
	for round := 0; round < 50; round++ {
		h := newHarness(t, dryRun(errorCount(1, 1)))
		h.completeN("svc", 1, errDown)
		h.clock.Advance(5 * time.Second)
		var wg sync.WaitGroup
		entries := make(chan *breaker.Entry, 32)
		start := make(chan struct{})
		for g := 0; g < 32; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				e, err := h.m.Enter("svc")
				if err != nil {
					t.Errorf("round %d: a DryRun breaker rejected a call: %v", round, err)
					return
				}
				entries <- e
			}()
		}
		close(start)
		wg.Wait()
		close(entries)
		require.Len(t, entries, 32)
		require.Equal(t, []string{tripped, probing}, h.events.transitions(), "one probe")
		for e := range entries {
			e.Exit()
		}
		require.Equal(t, breaker.Closed, h.state("svc", 0), "the probe succeeded")
	}
}

// Stats says DryRun exactly while the breaker rejects no call, for each way a breaker becomes
// dry: its rule, its resource's settings or a template setting forcing it closed, and an
// operator's override (an override to auto lifts the settings' force); so no reader has to
// work it out from the rule and the settings.
func TestStatsSayDryRun(t *testing.T) {
	tests := []struct {
		name       string
		give       breaker.Rule
		settings   map[string]breaker.ResourceConfig
		override   breaker.Force // with Auto and no override, none
		overrideOn bool
		want       bool
	}{
		{name: "enforced", give: errorCount(1, 1)},
		{name: "DryRun rule", give: dryRun(errorCount(1, 1)), want: true},
		{name: "settings force closed", give: errorCount(1, 1),
			settings: map[string]breaker.ResourceConfig{"svc": {Force: breaker.ForceClosed}}, want: true},
		{name: "template setting forces closed", give: errorCount(1, 1),
			settings: map[string]breaker.ResourceConfig{"*": {Force: breaker.ForceClosed}}, want: true},
		{name: "override closed", give: errorCount(1, 1), override: breaker.ForceClosed, overrideOn: true, want: true},
		{name: "override auto lifts the settings' force", give: errorCount(1, 1),
			settings: map[string]breaker.ResourceConfig{"svc": {Force: breaker.ForceClosed}},
			override: breaker.Auto, overrideOn: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := breakertest.NewClock()
			m := breaker.NewManager(breaker.WithClock(clock))
			require.NoError(t, m.LoadRules([]breaker.Rule{tt.give}))
			require.NoError(t, m.LoadResources(tt.settings))
			if tt.overrideOn {
				_, err := m.Override("svc", tt.override, time.Minute, "")
				require.NoError(t, err)
			}
			stats := func() breaker.Stats {
				snap := m.Snapshot()
				return snap.Resource("svc").Breakers[0]
			}
			assert.Equal(t, tt.want, stats().DryRun, "CLOSED")
			_ = m.Do(context.Background(), "svc", func(context.Context) error { return errDown })
			require.Equal(t, breaker.Open, stats().State)
			assert.Equal(t, tt.want, stats().DryRun, "OPEN")
			assert.Equal(t, tt.want, m.Breakers("svc")[0].Stats().DryRun, "through the door")
			if tt.overrideOn {
				clock.Advance(time.Minute)
				assert.Equal(t, tt.settings["svc"].Force == breaker.ForceClosed, m.Breakers("svc")[0].Stats().DryRun,
					"the override's end has come: the settings again")
			}
		})
	}
}
