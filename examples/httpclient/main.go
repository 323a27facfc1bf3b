// Command httpclient shows a circuit breaker in an http.Client trip and recover, offline, in
// about three seconds.
//
// The program starts a flaky HTTP server on 127.0.0.1: healthy, then answering 503 for a
// while, then healthy again. Every 150ms it sends the server a burst of GET requests through
// an http.Client whose transport is breakerhttp.NewTransport, under an ErrorRatio rule for the
// resource "GET 127.0.0.1:PORT", and prints what happened: the status of each response, the
// requests the breaker rejected without touching the network, how many requests the server
// saw, and each state change of the breaker as an observer hears it.
//
//	go run ./examples/httpclient
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakerhttp"
)

// The schedule of the run. The outage starts and ends halfway between steps, and the retry
// timeout is not a whole number of steps, so that the real run, whose steps start a little
// late, takes the same path as the fake-clock test.
const (
	step         = 150 * time.Millisecond
	steps        = 20
	requestsStep = 4
	outageFrom   = 375 * time.Millisecond
	outageTo     = 1575 * time.Millisecond
)

// newRule trips the breaker of resource when at least half the requests of the last second
// failed, once there were at least 10 of them; it then rejects requests for 500ms before it
// lets one probe through.
func newRule(resource string) breaker.Rule {
	return breaker.Rule{
		ID:               "flaky-errors",
		Resource:         resource,
		Strategy:         breaker.ErrorRatio,
		Threshold:        0.5,
		MinRequestAmount: 10,
		StatInterval:     time.Second,
		RetryTimeout:     500 * time.Millisecond,
	}
}

func main() {
	if err := run(os.Stdout, systemClock{}, time.Sleep); err != nil {
		fmt.Fprintln(os.Stderr, "httpclient:", err)
		os.Exit(1)
	}
}

// systemClock is the wall clock, the same as the breaker's default.
type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

// flaky is the server: healthy, except from outageFrom to outageTo after start, when it
// answers 503. It counts the requests it sees.
type flaky struct {
	clk   breaker.Clock
	start time.Time
	hits  atomic.Int64
}

func (s *flaky) healthy() bool {
	since := s.clk.Now().Sub(s.start)
	return since < outageFrom || since >= outageTo
}

func (s *flaky) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.hits.Add(1)
	if !s.healthy() {
		http.Error(w, "flaky: down", http.StatusServiceUnavailable)
		return
	}
	_, _ = io.WriteString(w, "flaky: ok\n")
}

// run serves the flaky server on loopback, drives the client's requests and writes the
// timeline to w. It reads time only from clk and waits only with sleep, so a test can run it
// on a fake clock in no time; the requests still go over the loopback network.
func run(w io.Writer, clk breaker.Clock, sleep func(time.Duration)) (err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	start := clk.Now()
	svc := &flaky{clk: clk, start: start}
	srv := &http.Server{Handler: svc, ReadHeaderTimeout: 5 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	transport := &http.Transport{} // no proxy: the server is on loopback
	defer func() {
		transport.CloseIdleConnections()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err = errors.Join(err, srv.Shutdown(ctx))
		if serveErr := <-served; !errors.Is(serveErr, http.ErrServerClosed) {
			err = errors.Join(err, serveErr)
		}
	}()

	m := breaker.NewManager(breaker.WithClock(clk))
	url := "http://" + ln.Addr().String() + "/stock"
	resource := "GET " + ln.Addr().String() // NewTransport's default resource name
	rule := newRule(resource)
	if err := m.LoadRules([]breaker.Rule{rule}); err != nil {
		return err
	}
	client := &http.Client{Transport: breakerhttp.NewTransport(transport, m), Timeout: 5 * time.Second}

	out := &printer{w: w, start: start}
	// The observer runs on the goroutine whose request made the transition, the only one
	// here, in the middle of the step: each change is printed before the step's row.
	remove := m.AddObserver(breaker.ObserverFunc(out.change))
	defer remove()

	out.header(rule)
	for i := range steps {
		// Wait for the step's planned start rather than for a fixed step, so that the real
		// run does not drift behind the outage schedule.
		if d := start.Add(time.Duration(i) * step).Sub(clk.Now()); d > 0 {
			sleep(d)
		}
		at, healthy, hits := clk.Now(), svc.healthy(), svc.hits.Load()
		results := make([]string, 0, requestsStep)
		for range requestsStep {
			results = append(results, get(client, url))
		}
		out.step(at, healthy, results, svc.hits.Load()-hits, m.Breakers(resource)[0].State())
	}
	out.printf("\nfinal state: %v; the server saw %d of %d requests\n",
		m.Breakers(resource)[0].State(), svc.hits.Load(), steps*requestsStep)
	return out.err
}

// get sends one request and says what became of it: its status code, "open" when the breaker
// rejected it without sending it, or "err" when it failed on the way.
func get(client *http.Client, url string) string {
	resp, err := client.Get(url)
	switch {
	case errors.Is(err, breaker.ErrOpen):
		return "open"
	case err != nil:
		return "err"
	}
	_, _ = io.Copy(io.Discard, resp.Body) // read to the end, so the connection is reused
	resp.Body.Close()
	return fmt.Sprint(resp.StatusCode)
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

func (p *printer) header(rule breaker.Rule) {
	p.printf("resource %q, rule %v >= %v over %v (at least %d requests), probe after %v\n",
		rule.Resource, rule.Strategy, rule.Threshold, rule.StatInterval,
		rule.MinRequestAmount, rule.RetryTimeout)
	p.printf("a 5xx is a failure; \"open\": rejected by the breaker, not sent\n\n")
	p.printf("%6s  %-7s  %-19s  %4s  %s\n", "time", "server", "responses", "sent", "breaker")
}

func (p *printer) step(at time.Time, healthy bool, results []string, sent int64, s breaker.State) {
	health := "healthy"
	if !healthy {
		health = "DOWN"
	}
	p.printf("%6s  %-7s  %-19s  %4d  %v\n", p.offset(at), health, strings.Join(results, " "), sent, s)
}

func (p *printer) change(c breaker.StateChange) {
	p.printf("%6s  ▸ %v → %v: %v", p.offset(c.At), c.From, c.To, c.Reason)
	if c.Reason == breaker.ThresholdExceeded {
		p.printf(" (error ratio %.2f)", c.Snapshot)
	}
	p.printf("\n")
}

// offset is how long after the start t is, in whole milliseconds: the real run's steps start
// a fraction of a millisecond late, and that is noise.
func (p *printer) offset(t time.Time) string {
	return fmt.Sprintf("%dms", t.Sub(p.start).Milliseconds())
}
