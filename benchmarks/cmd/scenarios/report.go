package main

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/halfopen/breaker/benchmarks/scenario"
)

const (
	beginMark = "<!-- scenario results: begin (written by cmd/scenarios) -->"
	endMark   = "<!-- scenario results: end -->"
)

// report renders the results section: the run's setting, then per scenario a table of the
// headline measures, one of the callers' view per phase and one of goodput per phase, all
// medians over the repetitions, for a scenario with a warming phase how breaker's guards
// compare with their best peer there, and who leads on each measure that ranks the guards.
func report(results []scenarioResult, reps int, sequential bool, wall time.Duration) string {
	var b strings.Builder
	mode := "side by side (each library with its own dependency, at the same time)"
	if sequential {
		mode = "one library after another"
	}
	fmt.Fprintf(&b, "Run of %s: %s/%s, %d CPUs (GOMAXPROCS %d), %s; %d repetitions, libraries %s, each repetition healing 0–400 ms later than scripted; medians over the repetitions; wall time %v.\n\n",
		time.Now().UTC().Format("2006-01-02"), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.GOMAXPROCS(0),
		runtime.Version(), reps, mode, wall.Round(time.Second))
	for _, r := range results {
		fmt.Fprintf(&b, "### %s\n\n", r.script.Name)
		fmt.Fprintf(&b, "%s\n\n![%s](docs/scenarios/%s.svg)\n\n", phaseLine(r.script), r.script.Name, r.script.Name)
		headline(&b, r)
		perPhase(&b, r)
		goodputTable(&b, r)
		callsTable(&b, r)
		warmingGoodput(&b, r)
		leaders(&b, r)
	}
	return b.String()
}

// phaseLine describes the script's rate and phases in one line.
func phaseLine(s scenario.Script) string {
	parts := make([]string, len(s.Phases))
	for i, p := range s.Phases {
		down := ""
		if p.Down {
			down = ", down"
		}
		parts[i] = fmt.Sprintf("%s (%v%s)", p.Name, p.Duration, down)
	}
	return fmt.Sprintf("%s calls/s offered. Phases: %s.", count(s.OfferedRate()), strings.Join(parts, " → "))
}

func headline(b *strings.Builder, r scenarioResult) {
	_, hasDown := r.script.DownStart()
	fmt.Fprintln(b, "| library | sent while down | good per sent | sent before trip | detection | recovery | trips (all phases) | state changes | peak goroutines |")
	fmt.Fprintln(b, "|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	for i, lib := range r.libs {
		ms := r.measures[i]
		sum := func(xs []int) float64 {
			t := 0
			for _, x := range xs {
				t += x
			}
			return float64(t)
		}
		row := []string{lib.Name}
		if hasDown {
			row = append(row,
				count(medianOf(ms, func(m scenario.Measures) float64 { return m.SentWhileDown })),
				share(medianOf(ms, func(m scenario.Measures) float64 { return m.GoodPerSent })),
				count(medianOf(ms, func(m scenario.Measures) float64 { return m.SentBeforeTrip })),
				millis(medianOf(ms, func(m scenario.Measures) float64 { return dur(m.Detection) })),
				millis(medianOf(ms, func(m scenario.Measures) float64 { return dur(m.Recovery) })))
		} else {
			row = append(row, "—", "—", "—", "—", "—")
		}
		row = append(row,
			count(medianOf(ms, func(m scenario.Measures) float64 { return sum(m.Trips) })),
			count(medianOf(ms, func(m scenario.Measures) float64 { return sum(m.Changes) })),
			count(medianOf(ms, func(m scenario.Measures) float64 { return float64(m.PeakGoroutines) })))
		fmt.Fprintf(b, "| %s |\n", strings.Join(row, " | "))
	}
	fmt.Fprintln(b)
}

// phaseHeader starts a table with a column per phase of s: its title, then each phase's name,
// each column aligned as align says ("---|" or "---:|").
func phaseHeader(b *strings.Builder, title, align string, s scenario.Script) {
	fmt.Fprintf(b, "| %s | ", title)
	for _, p := range s.Phases {
		fmt.Fprintf(b, "%s | ", p.Name)
	}
	fmt.Fprint(b, "\n|---|")
	for range s.Phases {
		fmt.Fprint(b, align)
	}
	fmt.Fprintln(b)
}

func perPhase(b *strings.Builder, r scenarioResult) {
	phaseHeader(b, "callers' view", "---|", r.script)
	for i, lib := range r.libs {
		ms := r.measures[i]
		fmt.Fprintf(b, "| %s | ", lib.Name)
		for k := range r.script.Phases {
			errRate := medianOf(ms, func(m scenario.Measures) float64 { return m.ErrorRate[k] })
			p50 := medianOf(ms, func(m scenario.Measures) float64 { return float64(m.P50[k]) })
			p99 := medianOf(ms, func(m scenario.Measures) float64 { return float64(m.P99[k]) })
			trips := medianOf(ms, func(m scenario.Measures) float64 { return float64(m.Trips[k]) })
			changes := medianOf(ms, func(m scenario.Measures) float64 { return float64(m.Changes[k]) })
			fmt.Fprintf(b, "%s · %s · %s · %s/%s | ", percent(errRate), short(p50), short(p99), count(trips), count(changes))
		}
		fmt.Fprintln(b)
	}
	fmt.Fprintln(b)
}

// goodputTable gives, per library and phase, the median of the calls per second that the
// library admitted and that succeeded.
func goodputTable(b *strings.Builder, r scenarioResult) {
	phaseHeader(b, "goodput (calls/s)", "---:|", r.script)
	for i, lib := range r.libs {
		fmt.Fprintf(b, "| %s | ", lib.Name)
		for k := range r.script.Phases {
			fmt.Fprintf(b, "%s | ", count(medianGoodput(r.measures[i], k)))
		}
		fmt.Fprintln(b)
	}
	fmt.Fprintln(b)
}

// callsTable gives, per library and phase, the medians of the calls sent to the dependency
// (admitted) and of those that failed, and, for a script whose dependency refuses calls, of
// those it refused (a 429; refusals are failures to their callers, so they are counted in
// both).
func callsTable(b *strings.Builder, r scenarioResult) {
	refuses := slices.ContainsFunc(r.script.Phases, func(p scenario.Phase) bool { return p.QuotaRetryAfter > 0 })
	head := "calls: sent · failed"
	if refuses {
		head += " · refused (429)"
	}
	phaseHeader(b, head, "---:|", r.script)
	for i, lib := range r.libs {
		ms := r.measures[i]
		fmt.Fprintf(b, "| %s | ", lib.Name)
		for k := range r.script.Phases {
			cell := count(medianOf(ms, func(m scenario.Measures) float64 { return float64(m.Sent[k]) })) + " · " +
				count(medianOf(ms, func(m scenario.Measures) float64 { return float64(m.Failed[k]) }))
			if refuses {
				cell += " · " + count(medianOf(ms, func(m scenario.Measures) float64 { return float64(m.Refused[k]) }))
			}
			fmt.Fprintf(b, "%s | ", cell)
		}
		fmt.Fprintln(b)
	}
	fmt.Fprintln(b)
}

func medianGoodput(ms []scenario.Measures, phase int) float64 {
	return medianOf(ms, func(m scenario.Measures) float64 { return m.Goodput[phase] })
}

const (
	// warmingPhase names the phase in which a healed dependency takes only part of the flow:
	// how much goodput a guard gets out of it is how well it ramps up after a recovery.
	warmingPhase = "warming"
	// ownPrefix starts the names of the guards built on breaker; the others are its peers.
	ownPrefix = "breaker"
)

// warmingGoodput writes, for a scenario with a warming phase, each breaker guard's median
// goodput there divided by the best of its peers' medians; nothing for other scenarios.
func warmingGoodput(b *strings.Builder, r scenarioResult) {
	phase := slices.IndexFunc(r.script.Phases, func(p scenario.Phase) bool { return p.Name == warmingPhase })
	if phase < 0 {
		return
	}
	best, bestName := math.NaN(), ""
	for i, lib := range r.libs {
		g := medianGoodput(r.measures[i], phase)
		if !strings.HasPrefix(lib.Name, ownPrefix) && !math.IsNaN(g) && (bestName == "" || g > best) {
			best, bestName = g, lib.Name
		}
	}
	if bestName == "" {
		return // no peer to compare with
	}
	fmt.Fprintf(b, "Goodput while %s, relative to the best peer (%s, %s calls/s):\n\n", warmingPhase, bestName, count(best))
	for i, lib := range r.libs {
		if !strings.HasPrefix(lib.Name, ownPrefix) {
			continue
		}
		g := medianGoodput(r.measures[i], phase)
		fmt.Fprintf(b, "- %s: %s (%s calls/s)\n", lib.Name, ratio(g, best), count(g))
	}
	fmt.Fprintln(b)
}

// ratio prints x/y to two decimals, or "—" where it means nothing.
func ratio(x, y float64) string {
	if math.IsNaN(x) || !(y > 0) {
		return "—"
	}
	return fmt.Sprintf("%.2f", x/y)
}

// count prints x to one decimal, without it for a whole number (once rounded, so that a
// goodput of 51.99999 prints as 52).
func count(x float64) string {
	switch {
	case math.IsNaN(x):
		return "—"
	case math.IsInf(x, 1):
		return "never"
	case math.Round(x*10) == math.Round(x)*10:
		return fmt.Sprintf("%.0f", x)
	}
	return fmt.Sprintf("%.1f", x)
}

// share prints a share in [0, 1] to two decimals.
func share(x float64) string {
	if math.IsNaN(x) {
		return "—"
	}
	return fmt.Sprintf("%.2f", x)
}

func millis(x float64) string {
	switch {
	case math.IsNaN(x):
		return "—"
	case math.IsInf(x, 1):
		return "never"
	}
	return fmt.Sprintf("%.0f ms", x/float64(time.Millisecond))
}

// short prints a latency compactly: µs below a millisecond, ms otherwise.
func short(x float64) string {
	d := time.Duration(x)
	if d < time.Millisecond {
		return fmt.Sprintf("%.0fµs", x/float64(time.Microsecond))
	}
	return fmt.Sprintf("%.0fms", x/float64(time.Millisecond))
}

func percent(x float64) string {
	if math.IsNaN(x) {
		return "—"
	}
	return fmt.Sprintf("%.1f%%", 100*x)
}

// rewriteSection replaces what lies between the markers in path with section; a file without
// the markers gets them, with the section, at its end.
func rewriteSection(path, section string) error {
	old, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	block := beginMark + "\n\n" + section + endMark
	i, j := bytes.Index(old, []byte(beginMark)), bytes.Index(old, []byte(endMark))
	var out []byte
	if i >= 0 && j > i {
		out = append(append(append([]byte{}, old[:i]...), block...), old[j+len(endMark):]...)
	} else {
		out = append(append(old, '\n'), block+"\n"...)
	}
	return os.WriteFile(path, out, 0o644)
}
