// Command flapping shows a breaker recovering from a dependency that comes back in fits and
// starts, offline, on a simulated clock that it prints.
//
// The dependency fails every call for 3 seconds, then answers only every other call for 10
// seconds (half back), then heals. The rule trips on 3 failures in a row
// (ConsecutiveErrors), needs 3 probes in a row to close (ProbeNum), and doubles its OPEN time
// after each failed probe, from 1s up to 8s (MaxRetryTimeout): while the dependency is half
// back, single lucky successes do not close the breaker, and the probes grow rarer instead of
// hammering it.
//
//	go run ./examples/flapping
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakertest"
)

const resource = "recommendations"

var rule = breaker.Rule{
	ID:              "recommendations-flaps",
	Resource:        resource,
	Strategy:        breaker.ConsecutiveErrors,
	Threshold:       3,
	ProbeNum:        3,
	RetryTimeout:    time.Second,
	MaxRetryTimeout: 8 * time.Second,
}

// The dependency's phases, from the start.
const (
	downUntil     = 3 * time.Second
	halfBackUntil = 13 * time.Second
	end           = 30 * time.Second
	step          = 250 * time.Millisecond // one call every step
)

var errDown = errors.New("recommendations: 503")

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "flapping:", err)
		os.Exit(1)
	}
}

// run plays the scenario on a fake clock and writes the timeline to w.
func run(w io.Writer) error {
	clk := breakertest.NewClock()
	start := clk.Now()
	since := func() time.Duration { return clk.Now().Sub(start) }
	m := breaker.NewManager(breaker.WithClock(clk), breaker.WithInstanceName("example"))
	if err := m.LoadRules([]breaker.Rule{rule}); err != nil {
		return err
	}
	var werr error
	printf := func(format string, args ...any) {
		if werr == nil {
			_, werr = fmt.Fprintf(w, format, args...)
		}
	}
	m.AddObserver(breaker.ObserverFunc(func(c breaker.StateChange) {
		line := fmt.Sprintf("%6.2fs  %v → %v: %v", since().Seconds(), c.From, c.To, c.Reason)
		if c.To == breaker.Open {
			line += fmt.Sprintf(" (retry in %v)", m.Breakers(resource)[0].Stats().RetryAt.Sub(clk.Now()))
		}
		printf("%s\n", line)
	}))

	calls := 0 // calls that reached the dependency
	dependency := func(context.Context) error {
		calls++
		switch t := since(); {
		case t < downUntil:
			return errDown
		case t < halfBackUntil && calls%2 == 0:
			return errDown
		}
		return nil
	}
	var sent, rejected int
	for since() < end {
		if err := m.Do(context.Background(), resource, dependency); errors.Is(err, breaker.ErrBlocked) {
			rejected++
		}
		sent++
		clk.Advance(step)
	}
	printf("\n%d calls: %d reached the dependency, %d rejected; final state %v\n",
		sent, calls, rejected, m.Breakers(resource)[0].State())
	return werr
}
