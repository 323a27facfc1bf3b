// Command quickstart shows a circuit breaker trip and recover, offline, in about two seconds.
//
// A fake inventory service is healthy, then down, then healthy again. Every 100ms the program
// sends it a burst of calls through Manager.Do under an ErrorRatio rule, and prints what
// happened: the calls that passed, failed or were rejected, and each state change of the
// breaker as an observer hears it.
//
//	go run ./examples/quickstart
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/halfopen/breaker"
)

const resource = "inventory"

// The schedule of the run. The outage starts and ends halfway between steps, and the retry
// timeout is not a whole number of steps, so that the real run, whose steps start a little
// late, takes the same path as the fake-clock test.
const (
	step         = 100 * time.Millisecond
	steps        = 20
	callsPerStep = 10
	outageFrom   = 250 * time.Millisecond
	outageTo     = 1150 * time.Millisecond
)

// rule trips the breaker when at least half the calls of the last second failed, or 80% of
// those of its newest 200ms (FastBuckets), once there were at least 10 of them; it then
// rejects calls for 450ms before it lets one probe through, and after the probe it lets the
// flow back in as the calls succeed (RampUp). Where the window trips while calls still succeed,
// it paces them instead of opening (Pace). These are the settings the README recommends, but
// for RetryJitter, which would make each run's times depend on the host and process.
var rule = breaker.Rule{
	ID:               "inventory-errors",
	Resource:         resource,
	Strategy:         breaker.ErrorRatio,
	Threshold:        0.5,
	MinRequestAmount: 10,
	StatInterval:     time.Second,
	FastBuckets:      2,
	RetryTimeout:     450 * time.Millisecond,
	RampUp:           time.Second,
	Pace:             true,
}

func main() {
	if err := run(os.Stdout, systemClock{}, time.Sleep); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

// systemClock is the wall clock, the same as the breaker's default.
type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

// errUnavailable is what the inventory service answers during its outage.
var errUnavailable = errors.New("inventory: 503 service unavailable")

// inventory is the fake downstream: healthy, except from outageFrom to outageTo after start.
type inventory struct {
	clk   breaker.Clock
	start time.Time
}

func (s *inventory) healthy() bool {
	since := s.clk.Now().Sub(s.start)
	return since < outageFrom || since >= outageTo
}

func (s *inventory) reserve(context.Context) error {
	if !s.healthy() {
		return errUnavailable
	}
	return nil
}

// run drives the traffic and writes the timeline to w. It reads time only from clk and waits
// only with sleep, so a test can run it on a fake clock in no time.
func run(w io.Writer, clk breaker.Clock, sleep func(time.Duration)) error {
	start := clk.Now()
	svc := &inventory{clk: clk, start: start}
	out := &printer{w: w, start: start}

	m := breaker.NewManager(breaker.WithClock(clk))
	if err := m.LoadRules([]breaker.Rule{rule}); err != nil {
		return err
	}
	// The observer runs on the calling goroutine, in the middle of the step, so each change
	// is printed at the moment it happens, before the step's totals.
	remove := m.AddObserver(breaker.ObserverFunc(out.change))
	defer remove()

	out.header()
	ctx := context.Background()
	for i := range steps {
		// Wait for the step's planned start rather than for a fixed step, so that the real
		// run does not drift behind the outage schedule.
		if d := start.Add(time.Duration(i) * step).Sub(clk.Now()); d > 0 {
			sleep(d)
		}
		at, healthy := clk.Now(), svc.healthy()
		var passed, failed, rejected int
		for range callsPerStep {
			err := m.Do(ctx, resource, svc.reserve)
			switch {
			case err == nil:
				passed++
			case errors.Is(err, breaker.ErrBlocked):
				rejected++ // the breaker answered at once; the service never saw the call
			default:
				failed++
			}
		}
		out.step(at, healthy, passed, failed, rejected, state(m))
	}
	out.printf("\nfinal state: %v\n", state(m))
	return out.err
}

// state is the state of the resource's only breaker.
func state(m *breaker.Manager) breaker.State {
	return m.Breakers(resource)[0].State()
}

// printer writes the timeline in aligned columns and keeps the first write error.
type printer struct {
	w     io.Writer
	start time.Time
	err   error
}

func (p *printer) printf(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}

func (p *printer) header() {
	newest := rule.StatInterval / 10 * time.Duration(rule.FastBuckets) // 10 buckets, the default
	p.printf("resource %q, rule %v >= %v over %v or >= %v over the last %v (at least %d calls),\n"+
		"probe after %v, then ramp up for at most %v\n\n",
		rule.Resource, rule.Strategy, rule.Threshold, rule.StatInterval, rule.WithDefaults().FastThreshold,
		newest, rule.MinRequestAmount, rule.RetryTimeout, rule.RampUp)
	p.printf("%6s  %-10s  %6s  %6s  %8s  %s\n", "time", "downstream", "passed", "failed", "rejected", "breaker")
}

func (p *printer) step(at time.Time, healthy bool, passed, failed, rejected int, s breaker.State) {
	health := "healthy"
	if !healthy {
		health = "DOWN"
	}
	p.printf("%6s  %-10s  %6d  %6d  %8d  %v\n", p.offset(at), health, passed, failed, rejected, s)
}

func (p *printer) change(c breaker.StateChange) {
	p.printf("%6s  ▸ %v → %v: %v", p.offset(c.At), c.From, c.To, c.Reason)
	switch c.Reason {
	case breaker.ThresholdExceeded:
		p.printf(" (error ratio %.2f)", c.Snapshot)
	case breaker.FastTrip:
		p.printf(" (error ratio %.2f of the newest buckets)", c.Snapshot)
	}
	p.printf("\n")
}

// offset is how long after the start t is, in whole milliseconds: the real run's steps start
// a fraction of a millisecond late, and that is noise.
func (p *printer) offset(t time.Time) string {
	return fmt.Sprintf("%dms", t.Sub(p.start).Milliseconds())
}
