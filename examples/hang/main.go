// Command hang shows what a timeout, a breaker and an operator do for a dependency that hangs,
// offline: the dependency is an HTTP server on the loopback address.
//
// The dependency answers at once, then hangs. Each call has a 50ms timeout (ResourceConfig),
// so the hanging calls fail at their deadline instead of piling up, and after three of them
// the ErrorRatio rule trips: later calls are rejected at once. An operator then forces the
// resource open (a kill switch, as from a rule file or etcd), the dependency is fixed, and the
// operator resets the breaker and releases the force: calls pass again.
//
//	go run ./examples/hang
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"time"

	"github.com/halfopen/breaker"
)

const resource = "pricing"

// rule trips when half of the last 10s's calls failed, once there were 3; OPEN lasts 30s.
var rule = breaker.Rule{
	ID:               "pricing-errors",
	Resource:         resource,
	Strategy:         breaker.ErrorRatio,
	Threshold:        0.5,
	MinRequestAmount: 3,
	StatInterval:     10 * time.Second,
	RetryTimeout:     30 * time.Second,
}

// timeout bounds every call to the dependency.
const timeout = 50 * time.Millisecond

func main() {
	if err := run(os.Stdout, systemClock{}, time.Sleep); err != nil {
		fmt.Fprintln(os.Stderr, "hang:", err)
		os.Exit(1)
	}
}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

// dependency is an HTTP server on the loopback address that hangs while hanging is set, until
// the caller gives up.
type dependency struct {
	hanging atomic.Bool
	srv     *http.Server
	url     string
}

func startDependency() (*dependency, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	d := &dependency{url: "http://" + ln.Addr().String() + "/price"}
	d.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if d.hanging.Load() {
			<-r.Context().Done() // hang until the client goes away
			return
		}
		io.WriteString(w, "42")
	})}
	go d.srv.Serve(ln)
	return d, nil
}

func (d *dependency) close() { d.srv.Close() }

// step is one line of the timeline: what happens before the calls, and how many calls.
type step struct {
	at     time.Duration
	action string
	calls  int
}

var timeline = []step{
	{0, "the dependency is healthy", 3},
	{time.Second, "the dependency hangs", 5},
	{5 * time.Second, "an operator forces the resource open", 2},
	{10 * time.Second, "the dependency is fixed; the resource is still forced open", 2},
	{15 * time.Second, "the operator resets the breaker and releases the force", 3},
}

// run plays the timeline and writes it to w. The Manager reads time from clk and the program
// waits between steps with sleep, so a test can run it on a fake clock; the timeouts are real,
// as every context deadline is.
func run(w io.Writer, clk breaker.Clock, sleep func(time.Duration)) error {
	dep, err := startDependency()
	if err != nil {
		return err
	}
	defer dep.close()
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()

	m := breaker.NewManager(breaker.WithClock(clk))
	if err := m.LoadRules([]breaker.Rule{rule}); err != nil {
		return err
	}
	settings := breaker.ResourceConfig{Timeout: timeout}
	if err := m.LoadResources(map[string]breaker.ResourceConfig{resource: settings}); err != nil {
		return err
	}
	start := clk.Now()
	p := &printer{w: w, clk: clk, start: start}
	m.AddObserver(breaker.ObserverFunc(func(c breaker.StateChange) {
		p.printf("%s   ▸ %v → %v: %v\n", p.now(), c.From, c.To, c.Reason)
	}))

	get := func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, dep.url, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		_, err = io.Copy(io.Discard, resp.Body)
		return err
	}

	for _, s := range timeline {
		if d := start.Add(s.at).Sub(clk.Now()); d > 0 {
			sleep(d)
		}
		p.printf("%s %s\n", p.now(), s.action)
		switch s.at {
		case time.Second:
			dep.hanging.Store(true)
		case 5 * time.Second:
			settings.Force = breaker.ForceOpen
			if err := m.LoadResources(map[string]breaker.ResourceConfig{resource: settings}); err != nil {
				return err
			}
		case 10 * time.Second:
			dep.hanging.Store(false)
		case 15 * time.Second:
			m.Reset(resource)
			settings.Force = breaker.Auto
			if err := m.LoadResources(map[string]breaker.ResourceConfig{resource: settings}); err != nil {
				return err
			}
		}
		for range s.calls {
			result := describe(m.Do(context.Background(), resource, get))
			p.printf("%s     call: %s\n", p.now(), result)
		}
	}
	p.printf("\nfinal state: %v\n", m.Breakers(resource)[0].State())
	return p.err
}

// describe says how a call ended.
func describe(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, breaker.ErrForcedOpen):
		return "rejected: forced open"
	case errors.Is(err, breaker.ErrOpen):
		return "rejected: breaker open"
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("failed: timed out after %v", timeout)
	}
	return "failed: " + err.Error()
}

// printer writes the timeline, keeping the first error.
type printer struct {
	w     io.Writer
	clk   breaker.Clock
	start time.Time
	err   error
}

func (p *printer) now() string {
	return fmt.Sprintf("%5.1fs", p.clk.Now().Sub(p.start).Seconds())
}

func (p *printer) printf(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}
