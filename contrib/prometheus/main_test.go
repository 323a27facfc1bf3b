package breakerprom_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakertest"
	breakerprom "github.com/halfopen/breaker/contrib/prometheus"
)

// The collector starts no goroutines either: every test of the package proves it.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// newClock returns a fake clock that moves only when told to.
func newClock() *breakertest.Clock { return breakertest.NewClock() }

// testBuckets keep the expected histograms short.
var testBuckets = breakerprom.WithBuckets(.01, .05, .1)

// fixture is a watched Manager on a fake clock, counted by a Collector.
type fixture struct {
	t     *testing.T
	clock *breakertest.Clock
	m     *breaker.Manager
	c     *breakerprom.Collector
}

func newFixture(t *testing.T, rules ...breaker.Rule) *fixture {
	t.Helper()
	return newFixtureWith(t, nil, nil, rules...)
}

// newFixtureWith is newFixture with options for the Collector and the Manager too. The
// Collector's last minute goes by the Manager's fake clock.
func newFixtureWith(t *testing.T, opts []breakerprom.Option, managerOpts []breaker.Option, rules ...breaker.Rule) *fixture {
	t.Helper()
	clock := newClock()
	f := &fixture{t: t, clock: clock,
		c: breakerprom.New(append([]breakerprom.Option{testBuckets}, opts...)...)}
	f.m = breaker.NewManager(append([]breaker.Option{breaker.WithClock(f.clock), f.c.Option()}, managerOpts...)...)
	f.c.Watch(f.m)
	require.NoError(t, f.m.LoadRules(rules))
	return f
}

var errDown = errors.New("service down")

// call makes one call to resource through Do that takes rt and returns err. It returns Do's
// error: err, or the block error when the call was not let through.
func (f *fixture) call(resource string, rt time.Duration, err error) error {
	return f.m.Do(context.Background(), resource, func(context.Context) error {
		f.clock.Advance(rt)
		return err
	})
}

// assertMetrics checks the exposition of the named families of c against want, which holds
// their sample lines only, each family's together: the HELP and TYPE lines are added. A family
// without lines in want must have no samples.
func assertMetrics(t *testing.T, c *breakerprom.Collector, want string, names ...string) {
	t.Helper()
	var text strings.Builder
	family := ""
	for line := range strings.Lines(want) {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		name := familyOf(line, names)
		require.NotEmpty(t, name, "want line %q is of none of the families %v", line, names)
		if name != family {
			text.WriteString(headers[name])
			family = name
		}
		text.WriteString(line + "\n")
	}
	if err := testutil.CollectAndCompare(c, strings.NewReader(text.String()), names...); err != nil {
		t.Error(err)
	}
}

// familyOf returns the name of the family of the sample line, one of names, or "".
func familyOf(line string, names []string) string {
	metric, _, _ := strings.Cut(line, "{")
	metric, _, _ = strings.Cut(metric, " ")
	for _, name := range names {
		switch metric {
		case name, name + "_bucket", name + "_sum", name + "_count":
			return name
		}
	}
	return ""
}

// headers are the HELP and TYPE lines of each family, as the collector writes them.
var headers = map[string]string{
	"breaker_calls_total": `# HELP breaker_calls_total Calls by outcome: passed (every call that ran), failed, refused (by the dependency, apart from failed) and slow (of those), blocked (rejected).
# TYPE breaker_calls_total counter
`,
	"breaker_rejected_total": `# HELP breaker_rejected_total Blocked calls by cause: open (a breaker), forced_open, concurrency_limit, slot, name_too_long, ramping_up, pacing.
# TYPE breaker_rejected_total counter
`,
	"breaker_would_reject_total": `# HELP breaker_would_reject_total Calls that ran although a breaker would have rejected them, by mode: dry_run (DryRun rule) or force_closed.
# TYPE breaker_would_reject_total counter
`,
	"breaker_rt_seconds": `# HELP breaker_rt_seconds Response time of the calls that ran, from Enter to Exit.
# TYPE breaker_rt_seconds histogram
`,
	"breaker_ramping_up": `# HELP breaker_ramping_up 1 while the breaker of a rule with RampUp, closed on a probe, paces its calls; else 0.
# TYPE breaker_ramping_up gauge
`,
	"breaker_pacing": `# HELP breaker_pacing 1 while the breaker of a rule with Pace, CLOSED where it would have opened, paces its calls; else 0.
# TYPE breaker_pacing gauge
`,
	"breaker_state": `# HELP breaker_state State of the breaker of each loaded rule: 0 CLOSED, 1 OPEN, 2 HALF_OPEN; dry_run="true" when it rejects no call (DryRun rule or ForceClosed resource).
# TYPE breaker_state gauge
`,
	"breaker_window_calls": `# HELP breaker_window_calls Calls in the window of the breaker of each loaded rule; for ConsecutiveErrors, its current run of failures. 0 unless CLOSED.
# TYPE breaker_window_calls gauge
`,
	"breaker_window_bad": `# HELP breaker_window_bad Of the calls in the window of the breaker of each loaded rule, the slow ones (SlowRequestRatio) or the failed ones (ErrorRatio, ErrorCount); for ConsecutiveErrors, its current run of failures. 0 unless CLOSED.
# TYPE breaker_window_bad gauge
`,
	"breaker_window_refused": `# HELP breaker_window_refused Of breaker_window_bad, the calls the dependency refused (Outcome Refused) rather than failed: ErrorRatio and ErrorCount count them apart; 0 for SlowRequestRatio and ConsecutiveErrors, and unless CLOSED.
# TYPE breaker_window_refused gauge
`,
	"breaker_resource_info": `# HELP breaker_resource_info 1 for each resource the Collector reports, with its side: server for a route breakerhttp.Middleware serves (a name beginning with breakerhttp.ServerPrefix), client for a call the program makes; no side for resource="_other", whose names may be of either. Join on resource for it.
# TYPE breaker_resource_info gauge
`,
	"breaker_window_ratio": `# HELP breaker_window_ratio breaker_window_bad over breaker_window_calls, from 0 to 1: the slow-call rate (SlowRequestRatio) or the failure rate (ErrorRatio, ErrorCount) of the window of each breaker; 0 while the window is empty, as it is unless CLOSED. None for ConsecutiveErrors.
# TYPE breaker_window_ratio gauge
`,
	"breaker_transitions_total": `# HELP breaker_transitions_total State changes of the breakers; dry_run="true" for a breaker that rejects no call.
# TYPE breaker_transitions_total counter
`,
	"breaker_force": `# HELP breaker_force Force of each resource with settings, as loaded, by the key they come from (settings_from: own, or a template key such as *): 0 auto, 1 forced open (every call rejected), 2 forced closed (no call rejected by the breakers).
# TYPE breaker_force gauge
`,
	"breaker_in_flight": `# HELP breaker_in_flight Calls admitted and not yet exited, of each resource with settings, its own or a template's.
# TYPE breaker_in_flight gauge
`,
	"breaker_max_concurrency": `# HELP breaker_max_concurrency MaxConcurrency of each resource with settings, by the key they come from (settings_from: own, or a template key such as *); 0 means no limit.
# TYPE breaker_max_concurrency gauge
`,
	"breaker_timeout_seconds": `# HELP breaker_timeout_seconds Timeout of each resource with settings, by the key they come from (settings_from: own, or a template key such as *); 0 means none.
# TYPE breaker_timeout_seconds gauge
`,
	"breaker_override": `# HELP breaker_override 1 for each resource that an operator's override (Manager.Override) forces now, by force: open, closed or auto; under resource="_other", how many of the names past the bound.
# TYPE breaker_override gauge
`,
	"breaker_override_end_timestamp_seconds": `# HELP breaker_override_end_timestamp_seconds When each override in force ends, in seconds since the Unix epoch by the Manager's clock; under resource="_other", the latest end of those counted there.
# TYPE breaker_override_end_timestamp_seconds gauge
`,
	"breaker_template_breakers": `# HELP breaker_template_breakers Breakers that template rules (Resource ending in *) made and the Manager holds.
# TYPE breaker_template_breakers gauge
`,
	"breaker_template_settings": `# HELP breaker_template_settings Resources that hold settings from a template setting (a key ending in *), each with its own calls in flight.
# TYPE breaker_template_settings gauge
`,
	"breaker_template_limit": `# HELP breaker_template_limit The most template breakers and template settings the Manager may hold together (WithMaxTemplateBreakers).
# TYPE breaker_template_limit gauge
`,
	"breaker_template_dropped_total": `# HELP breaker_template_dropped_total Resources whose template breakers were dropped to stay within the limit.
# TYPE breaker_template_dropped_total counter
`,
	"breaker_call_duration_max_seconds": `# HELP breaker_call_duration_max_seconds The longest response time of the calls of each resource that ran in the last minute (60 one-second steps: a call counts for 59 to 60 seconds); none while no call ran.
# TYPE breaker_call_duration_max_seconds gauge
`,
	"breaker_uncalled": `# HELP breaker_uncalled 1 for each resource with rules, settings or an override of its own and no call in the last minute, most often a misspelt name, with the called name nearest to it by edit distance (nearest, empty when none is near). None in the first minute after Watch, nor while resource="_other" had calls in it.
# TYPE breaker_uncalled gauge
`,
}
