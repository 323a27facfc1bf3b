// Command scenarios runs every scripted outage against breaker and its peers, in real time,
// and writes a plot per scenario and a results section into SCENARIOS.md.
//
//	go run ./cmd/scenarios -reps 5 -out ../docs/scenarios -doc ../SCENARIOS.md
package main

import (
	"flag"
	"fmt"
	"hash/fnv"
	"log"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/halfopen/breaker/benchmarks/scenario"
	"github.com/halfopen/breaker/benchmarks/scenario/libs"
)

// bucket is the recorder's bucket.
const bucket = 100 * time.Millisecond

func main() {
	reps := flag.Int("reps", 5, "repetitions of each scenario; the table gives medians")
	out := flag.String("out", "../docs/scenarios", "directory for the plots")
	doc := flag.String("doc", "../SCENARIOS.md", "markdown file whose results section is rewritten (empty: print it)")
	sequential := flag.Bool("sequential", false, "run the libraries one after another instead of side by side")
	format := flag.String("format", "svg", "plot format: svg or png")
	only := flag.String("only", "", "run only the scenario of this name")
	probeNum := flag.Int("probe-num", libs.Rule.ProbeNum, "ProbeNum of the breaker+probes variant")
	maxRetry := flag.Duration("max-retry", libs.Rule.MaxRetryTimeout, "MaxRetryTimeout of the breaker+probes variant")
	verbose := flag.Bool("v", false, "log each repetition's detection and recovery per library")
	flag.Uint64Var(&seedSalt, "salt", 0, "changes every seed (the default 0 gives the committed results)")
	retry := flag.Duration("retry", libs.Rule.RetryTimeout, "RetryTimeout of the breaker+probes variant")
	flag.Parse()
	variant := libs.Rule
	variant.ProbeNum, variant.MaxRetryTimeout, variant.RetryTimeout = *probeNum, *maxRetry, *retry

	began := time.Now()
	defer libs.CleanupSentinel()
	libraries := []scenario.Library{
		libs.Breaker(libs.Rule, false),
		libs.Breaker(variant, true),
		libs.Recommended(libs.Rule),
		libs.Gobreaker(libs.Rule),
		libs.Sentinel(libs.Rule),
		libs.Failsafe(libs.Rule),
		libs.Hystrix(libs.Rule),
		libs.GoZero(libs.Rule),
		libs.KratosSRE(libs.Rule),
	}

	var results []scenarioResult
	for _, script := range scenario.Scripts() {
		if *only != "" && script.Name != *only {
			continue
		}
		if err := script.Validate(bucket); err != nil {
			log.Fatal(err)
		}
		res := scenarioResult{script: script, libs: libraries, measures: make([][]scenario.Measures, len(libraries))}
		for rep := range *reps {
			// Outages do not end in step with a retry timeout: each repetition heals 0 to
			// 400 ms later (the same for every library), so the medians cover the retry cycle.
			shift := time.Duration(seedOf(script.Name, rep)/100%5) * bucket
			tls := runAll(script.HealLater(shift), libraries, rep, *sequential)
			for i, tl := range tls {
				if tl.Dropped > 0 {
					log.Fatalf("%s/%s: %d events beyond the recorder's bound", script.Name, libraries[i].Name, tl.Dropped)
				}
				m := libraries[i].Measure(tl)
				res.measures[i] = append(res.measures[i], m)
				if *verbose {
					log.Printf("%s/%d/%s: sent while down %v, detection %v, recovery %v, trips %v",
						script.Name, rep, libraries[i].Name, m.SentWhileDown, m.Detection, m.Recovery, m.Trips)
				}
			}
			if rep == 0 {
				res.first = tls
			}
			log.Printf("%s: repetition %d of %d done", script.Name, rep+1, *reps)
		}
		results = append(results, res)
	}

	if err := os.MkdirAll(*out, 0o755); err != nil {
		log.Fatal(err)
	}
	for _, r := range results {
		path := filepath.Join(*out, r.script.Name+"."+*format)
		if err := plotScenario(path, r); err != nil {
			log.Fatal(err)
		}
	}
	section := report(results, *reps, *sequential, time.Since(began))
	if *doc == "" {
		fmt.Print(section)
		return
	}
	if err := rewriteSection(*doc, section); err != nil {
		log.Fatal(err)
	}
	log.Printf("wrote %s and %d plots in %v", *doc, len(results), time.Since(began).Round(time.Second))
}

// scenarioResult is one scenario's measures, per library and repetition, and the first
// repetition's timelines for the plot.
type scenarioResult struct {
	script   scenario.Script
	libs     []scenario.Library
	measures [][]scenario.Measures // [library][repetition]
	first    []scenario.Timeline
}

// runAll runs every library through script once, side by side (each with its own dependency
// and recorder, all with the same seed) or one after another.
func runAll(script scenario.Script, libraries []scenario.Library, rep int, sequential bool) []scenario.Timeline {
	tls := make([]scenario.Timeline, len(libraries))
	seed := seedOf(script.Name, rep)
	var wg sync.WaitGroup
	for i, lib := range libraries {
		one := func() {
			name := fmt.Sprintf("%s/%s/%d/%d", script.Name, lib.Name, rep, time.Now().UnixNano())
			tls[i] = runOne(script, lib, name, seed)
		}
		if sequential {
			// Alone in the process, the run's goroutines can be counted directly too, as a
			// check on the harness's own count (callers plus orphaned dependency calls).
			peak := watchGoroutines()
			one()
			log.Printf("%s/%s: peak goroutines %d by the harness, %d more than before by the runtime",
				script.Name, lib.Name, tls[i].PeakGoroutines, peak())
			continue
		}
		wg.Go(one)
	}
	wg.Wait()
	return tls
}

// runOne runs one library through script on the real clock.
func runOne(script scenario.Script, lib scenario.Library, name string, seed uint64) scenario.Timeline {
	rec := scenario.NewRecorder(script, bucket)
	var clock *scenario.RealClock
	guard := lib.New(name, func(s scenario.State) { rec.Changed(clock.Now(), s) })
	defer guard.Close()
	// Libraries whose window buckets start when the breaker is made (breaker, gobreaker) would
	// otherwise see every phase begin exactly on a bucket edge; a seeded pause of up to a
	// bucket puts the edges where an outage would find them, anywhere.
	time.Sleep(time.Duration(seed%uint64(bucket/time.Millisecond)) * time.Millisecond)
	clock = scenario.NewRealClock()
	run := scenario.Run{Script: script, Seed: seed, Clock: clock} // at the script's rate
	return run.Execute(guard, rec)
}

// seedSalt, when set, changes every seed, to see how much the results owe to the seeds.
var seedSalt uint64

// seedOf gives every library the same draws within a repetition, and each repetition its own.
func seedOf(name string, rep int) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%d", name, rep)
	if seedSalt != 0 {
		fmt.Fprintf(h, "/%d", seedSalt)
	}
	return h.Sum64()
}

// watchGoroutines samples runtime.NumGoroutine every millisecond until the returned function
// is called, which gives the most seen above the count at the start.
func watchGoroutines() func() int {
	base := runtime.NumGoroutine()
	done, result := make(chan struct{}), make(chan int)
	go func() {
		most := base
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				result <- most - base
				return
			case <-t.C:
				most = max(most, runtime.NumGoroutine()-1) // less the watcher itself
			}
		}
	}()
	return func() int { close(done); return <-result }
}
