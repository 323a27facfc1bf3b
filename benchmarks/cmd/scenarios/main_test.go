package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/halfopen/breaker/benchmarks/scenario"
)

func TestMedian(t *testing.T) {
	cases := []struct {
		xs   []float64
		want float64
	}{
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{1, math.Inf(1), math.Inf(1)}, math.Inf(1)},
		{[]float64{1, 2, math.Inf(1), math.Inf(1)}, math.Inf(1)},
	}
	for _, c := range cases {
		if got := median(c.xs); got != c.want {
			t.Errorf("median(%v) = %v, want %v", c.xs, got, c.want)
		}
	}
	if !math.IsNaN(median([]float64{1, math.NaN()})) || !math.IsNaN(median(nil)) {
		t.Error("median of a measure that does not apply should be NaN")
	}
}

func TestRewriteSection(t *testing.T) {
	path := filepath.Join(t.TempDir(), "doc.md")
	if err := os.WriteFile(path, []byte("intro\n"+beginMark+"\nold\n"+endMark+"\noutro\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := rewriteSection(path, "new\n"); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if want := "intro\n" + beginMark + "\n\nnew\n" + endMark + "\noutro\n"; string(got) != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// warmingResult is a made-up result: two breaker guards and two peers through a healthy and a
// warming phase, three repetitions each, goodput given per repetition and phase.
func warmingResult(goodput map[string][][]float64) scenarioResult {
	r := scenarioResult{script: scenario.Script{Name: "burst", Phases: []scenario.Phase{
		{Name: "healthy", Duration: time.Second},
		{Name: "warming", Duration: 3 * time.Second},
	}}}
	for _, name := range []string{"breaker", "breaker+protect", "gobreaker", "hystrix"} {
		r.libs = append(r.libs, scenario.Library{Name: name})
		var ms []scenario.Measures
		for _, g := range goodput[name] {
			ms = append(ms, scenario.Measures{Goodput: g})
		}
		r.measures = append(r.measures, ms)
	}
	return r
}

// threeRuns are three repetitions of healthy and warming goodput per guard.
var threeRuns = map[string][][]float64{
	"breaker":         {{200, 50}, {198, 40}, {199, 45.5}},
	"breaker+protect": {{200, 90}, {200, 80}, {200, 100}},
	"gobreaker":       {{200, 60}, {200, 70}, {200, 65}},
	"hystrix":         {{200, 20}, {200, 75}, {200, 30}},
}

// TestGoodputTable: each cell is the median over the repetitions of one phase's goodput.
func TestGoodputTable(t *testing.T) {
	r := warmingResult(threeRuns)
	var b strings.Builder
	goodputTable(&b, r)
	want := "| goodput (calls/s) | healthy | warming | \n|---|---:|---:|\n" +
		"| breaker | 199 | 45.5 | \n" +
		"| breaker+protect | 200 | 90 | \n" +
		"| gobreaker | 200 | 65 | \n" +
		"| hystrix | 200 | 30 | \n\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// TestWarmingGoodput: each breaker guard's median warming goodput is divided by the best of the
// peers' medians (gobreaker's 65, not hystrix's single 75).
func TestWarmingGoodput(t *testing.T) {
	r := warmingResult(threeRuns)
	var b strings.Builder
	warmingGoodput(&b, r)
	want := "Goodput while warming, relative to the best peer (gobreaker, 65 calls/s):\n\n" +
		"- breaker: 0.70 (45.5 calls/s)\n" +
		"- breaker+protect: 1.38 (90 calls/s)\n\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// TestWarmingGoodputNeedsItsPhaseAndAPeer: a scenario without a warming phase, or whose peers
// got no goodput there, gets no comparison or no meaningless ratio.
func TestWarmingGoodputNeedsItsPhaseAndAPeer(t *testing.T) {
	r := warmingResult(map[string][][]float64{
		"breaker":         {{200, 50}},
		"breaker+protect": {{200, 90}},
		"gobreaker":       {{200, 0}},
		"hystrix":         {{200, 0}},
	})
	var b strings.Builder
	warmingGoodput(&b, r)
	if want := "- breaker: — (50 calls/s)\n"; !strings.Contains(b.String(), want) {
		t.Errorf("peers without goodput: got\n%s\nwant a line %q", b.String(), want)
	}
	r.script.Phases[1].Name = "healed"
	b.Reset()
	warmingGoodput(&b, r)
	if b.String() != "" {
		t.Errorf("a scenario without a warming phase got %q", b.String())
	}
}

// TestLeaders: a guard leads a measure on its median; guards on the same median lead
// together; breaker+protect's own value follows where it does not lead; a guard that never
// tripped takes no part in recovery (hystrix recovered "at once" from an outage it never saw);
// the fewest failed calls lead in a down phase, and only there.
func TestLeaders(t *testing.T) {
	ms := time.Millisecond
	r := scenarioResult{script: scenario.Script{Name: "outage", Phases: []scenario.Phase{
		{Name: "down", Duration: time.Second, Down: true},
		{Name: "healed", Duration: time.Second},
	}}}
	runs := map[string][]scenario.Measures{
		"breaker": {
			{SentBeforeTrip: 90, Detection: 450 * ms, Recovery: 200 * ms, Failed: []int{90, 0}, Goodput: []float64{0, 180}},
			{SentBeforeTrip: 96, Detection: 470 * ms, Recovery: 400 * ms, Failed: []int{96, 0}, Goodput: []float64{0, 170}},
			{SentBeforeTrip: 94, Detection: 460 * ms, Recovery: 100 * ms, Failed: []int{94, 0}, Goodput: []float64{0, 175}},
		},
		"breaker+protect": {
			{SentBeforeTrip: 30, Detection: 140 * ms, Recovery: 300 * ms, Failed: []int{30, 0}, Goodput: []float64{0, 182}},
			{SentBeforeTrip: 28, Detection: 130 * ms, Recovery: 300 * ms, Failed: []int{28, 0}, Goodput: []float64{0, 186}},
			{SentBeforeTrip: 29, Detection: 150 * ms, Recovery: 500 * ms, Failed: []int{29, 0}, Goodput: []float64{0, 181}},
		},
		"gobreaker": {
			{SentBeforeTrip: 93, Detection: 466 * ms, Recovery: 200 * ms, Failed: []int{93, 0}, Goodput: []float64{0, 186}},
			{SentBeforeTrip: 95, Detection: 470 * ms, Recovery: 100 * ms, Failed: []int{95, 0}, Goodput: []float64{0, 186}},
			{SentBeforeTrip: 94, Detection: 468 * ms, Recovery: 300 * ms, Failed: []int{94, 0}, Goodput: []float64{0, 190}},
		},
		"hystrix": {
			{SentBeforeTrip: 200, Detection: scenario.Inf, Recovery: 0, Failed: []int{200, 0}, Goodput: []float64{0, 200}},
			{SentBeforeTrip: 200, Detection: scenario.Inf, Recovery: 0, Failed: []int{200, 0}, Goodput: []float64{0, 200}},
			{SentBeforeTrip: 200, Detection: scenario.Inf, Recovery: 0, Failed: []int{200, 0}, Goodput: []float64{0, 186}},
		},
	}
	for _, name := range []string{"breaker", "breaker+protect", "gobreaker", "hystrix"} {
		r.libs = append(r.libs, scenario.Library{Name: name})
		r.measures = append(r.measures, runs[name])
	}
	var b strings.Builder
	leaders(&b, r)
	want := "Who leads (medians; ties lead together; breaker+protect's own value where it does not):\n\n" +
		"- sent before trip: breaker+protect (29)\n" +
		"- detection: breaker+protect (140 ms)\n" +
		"- recovery: breaker, gobreaker (200 ms); breaker+protect 300 ms\n" +
		"- goodput in down: every guard (0)\n" +
		"- goodput in healed: hystrix (200); breaker+protect 182\n" +
		"- failed calls in down: breaker+protect (29)\n\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// TestLeadersNoTrip: where no guard tripped, none leads on the calls sent before a trip (one
// that rejected a call or two sent fewer, but still the whole outage) or on recovery.
func TestLeadersNoTrip(t *testing.T) {
	r := scenarioResult{script: scenario.Script{Name: "overload", Phases: []scenario.Phase{
		{Name: "overload", Duration: time.Second, Down: true},
	}}}
	for _, name := range []string{"breaker+protect", "kratos-sre"} {
		sent := map[string]float64{"breaker+protect": 200, "kratos-sre": 199}[name]
		r.libs = append(r.libs, scenario.Library{Name: name})
		r.measures = append(r.measures, []scenario.Measures{{SentBeforeTrip: sent, Detection: scenario.Inf, Recovery: 0,
			Goodput: []float64{120}, Failed: []int{int(sent) - 120}}})
	}
	var b strings.Builder
	leaders(&b, r)
	for _, want := range []string{"- sent before trip: —\n", "- detection: every guard (never)\n", "- recovery: —\n",
		"- failed calls in overload: kratos-sre (79); breaker+protect 80\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("got\n%s\nwant a line %q", b.String(), want)
		}
	}
}

func TestCount(t *testing.T) {
	for x, want := range map[float64]string{52: "52", 51.99999999: "52", 52.04: "52", 52.06: "52.1", 30.6: "30.6", math.NaN(): "—", math.Inf(1): "never"} {
		if got := count(x); got != want {
			t.Errorf("count(%v) = %q, want %q", x, got, want)
		}
	}
}

// TestCallsTable: each cell is the medians of the calls sent and failed in the phase, and of
// those refused where the script's dependency refuses calls.
func TestCallsTable(t *testing.T) {
	r := scenarioResult{script: scenario.Script{Name: "quota", Phases: []scenario.Phase{
		{Name: "healthy", Duration: time.Second},
		{Name: "quota", Duration: time.Second, Down: true, QuotaPerSecond: 50},
	}}, libs: []scenario.Library{{Name: "breaker"}, {Name: "gobreaker"}}}
	r.measures = [][]scenario.Measures{
		{
			{Sent: []int{200, 90}, Failed: []int{0, 40}, Refused: []int{0, 38}},
			{Sent: []int{200, 70}, Failed: []int{1, 20}, Refused: []int{0, 19}},
			{Sent: []int{198, 80}, Failed: []int{0, 30}, Refused: []int{0, 29}},
		},
		{{Sent: []int{200, 200}, Failed: []int{0, 150}, Refused: []int{0, 147}}},
	}
	var b strings.Builder
	callsTable(&b, r)
	want := "| calls: sent · failed | healthy | quota | \n|---|---:|---:|\n" +
		"| breaker | 200 · 0 | 80 · 30 | \n" +
		"| gobreaker | 200 · 0 | 200 · 150 | \n\n"
	if b.String() != want {
		t.Errorf("a quota that answers with 503s: got\n%s\nwant\n%s", b.String(), want)
	}
	r.script.Phases[1].QuotaRetryAfter = time.Second
	b.Reset()
	callsTable(&b, r)
	want = "| calls: sent · failed · refused (429) | healthy | quota | \n|---|---:|---:|\n" +
		"| breaker | 200 · 0 · 0 | 80 · 30 · 29 | \n" +
		"| gobreaker | 200 · 0 · 0 | 200 · 150 · 147 | \n\n"
	if b.String() != want {
		t.Errorf("a quota that refuses: got\n%s\nwant\n%s", b.String(), want)
	}
}

// TestPhaseLine: the line under each scenario's title gives its offered rate and phases.
func TestPhaseLine(t *testing.T) {
	s := scenario.Script{Name: "low", Rate: 10, Phases: []scenario.Phase{
		{Name: "healthy", Duration: time.Second},
		{Name: "down", Duration: 2 * time.Second, Down: true},
	}}
	if got, want := phaseLine(s), "10 calls/s offered. Phases: healthy (1s) → down (2s, down)."; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	s.Rate = 0
	if got := phaseLine(s); !strings.HasPrefix(got, "200 calls/s offered.") {
		t.Errorf("a script at the default rate: %q", got)
	}
}
