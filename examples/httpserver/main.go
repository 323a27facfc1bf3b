// Command httpserver shows the breaker guarding an HTTP server, offline, in about 2.5 seconds.
//
// It serves a flaky orders endpoint on 127.0.0.1, wrapped in breakerhttp's server middleware,
// and the status page of package breakerdebug at /debug/breakers. Then it sends itself
// traffic: the endpoint is healthy, then answers 500 during a simulated outage, then recovers.
// Every 100ms it sends a few requests and prints their status codes, and each state change of
// the breaker as an observer hears it: while the breaker is open, the middleware answers 503
// with Retry-After at once, without calling the handler. At the end it reads the status page
// as JSON, prints a summary, and shuts the server down.
//
//	go run ./examples/httpserver                # the timeline
//	go run ./examples/httpserver -linger 1m     # then keep serving: open the status page
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakerdebug"
	"github.com/halfopen/breaker/breakerhttp"
)

// pattern is the ServeMux pattern of the endpoint, and resource the name the middleware gives
// its calls: the pattern after breakerhttp.ServerPrefix, so that no rule written for the hosts
// the program calls takes it.
const (
	pattern  = "GET /orders/{id}"
	resource = breakerhttp.ServerPrefix + pattern
)

// The schedule of the run. The outage starts and ends halfway between steps, and the retry
// timeout is not a whole number of steps, so that the real run, whose steps start a little
// late, takes the same path as the fake-clock test.
const (
	step            = 100 * time.Millisecond
	steps           = 25
	requestsPerStep = 4
	outageFrom      = 250 * time.Millisecond
	outageTo        = 1150 * time.Millisecond
)

// rule trips the breaker when at least half the requests of the last second failed, once there
// were at least 10 of them; it then rejects requests for 450ms before it lets one probe through.
var rule = breaker.Rule{
	ID:               "orders-errors",
	Resource:         resource,
	Strategy:         breaker.ErrorRatio,
	Threshold:        0.5,
	MinRequestAmount: 10,
	StatInterval:     time.Second,
	RetryTimeout:     450 * time.Millisecond,
}

func main() {
	linger := flag.Duration("linger", 0, "keep serving this long after the traffic, to look at the status page")
	flag.Parse()
	if err := run(os.Stdout, systemClock{}, time.Sleep, *linger); err != nil {
		fmt.Fprintln(os.Stderr, "httpserver:", err)
		os.Exit(1)
	}
}

// systemClock is the wall clock, the same as the breaker's default.
type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

// orders is the flaky endpoint: it answers 500 from outageFrom to outageTo after start.
type orders struct {
	clk   breaker.Clock
	start time.Time
}

func (o *orders) healthy() bool {
	since := o.clk.Now().Sub(o.start)
	return since < outageFrom || since >= outageTo
}

func (o *orders) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !o.healthy() {
		http.Error(w, "orders: database unavailable (simulated outage)", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, "{\"id\":%q,\"status\":\"shipped\"}\n", r.PathValue("id"))
}

// run serves the endpoint and the status page on a loopback port, drives the traffic, writes
// the timeline and the summary to w, and shuts the server down. It reads time only from clk
// and waits only with sleep, so a test can run it on a fake clock in no time; after the
// traffic it keeps serving for linger.
func run(w io.Writer, clk breaker.Clock, sleep func(time.Duration), linger time.Duration) (err error) {
	m := breaker.NewManager(breaker.WithClock(clk))
	if err := m.LoadRules([]breaker.Rule{rule}); err != nil {
		return err
	}
	start := clk.Now()
	out := &printer{w: w, start: start}
	// The status page keeps the transitions it hears of, so it is made before any traffic.
	status := breakerdebug.Handler(m)
	// The observer runs on the server's goroutine for the request that made the transition,
	// before that request's response is sent, so each change is printed before its step's row.
	remove := m.AddObserver(breaker.ObserverFunc(out.change))
	defer remove()

	mux := http.NewServeMux()
	mux.Handle(pattern, breakerhttp.Middleware(m)(&orders{clk: clk, start: start}))
	mux.Handle("GET /debug/breakers", status)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		shutdown := srv.Shutdown(ctx)
		if serveErr := <-served; !errors.Is(serveErr, http.ErrServerClosed) {
			shutdown = errors.Join(shutdown, serveErr)
		}
		err = errors.Join(err, shutdown)
	}()

	base := "http://" + ln.Addr().String()
	client := &http.Client{Transport: &http.Transport{}, Timeout: 5 * time.Second}
	defer client.CloseIdleConnections()

	out.printf("serving %s at %s/orders/{id}, status page at %s/debug/breakers\n", resource, base, base)
	out.printf("rule %q: %v >= %v over %v (at least %d requests), probe after %v\n\n",
		rule.ID, rule.Strategy, rule.Threshold, rule.StatInterval, rule.MinRequestAmount, rule.RetryTimeout)
	out.printf("%6s  %-10s  %-19s  %-11s  %s\n", "time", "orders", "responses", "retry-after", "breaker")
	for i := range steps {
		// Wait for the step's planned start rather than for a fixed step, so that the real
		// run does not drift behind the outage schedule.
		if d := start.Add(time.Duration(i) * step).Sub(clk.Now()); d > 0 {
			sleep(d)
		}
		at := clk.Now()
		health := "healthy"
		if since := at.Sub(start); since >= outageFrom && since < outageTo {
			health = "DOWN"
		}
		codes := make([]string, 0, requestsPerStep)
		retryAfter := "-"
		for j := range requestsPerStep {
			code, after, err := get(client, fmt.Sprintf("%s/orders/%d", base, 100*i+j))
			if err != nil {
				return err
			}
			codes = append(codes, fmt.Sprint(code))
			if after != "" && retryAfter == "-" {
				retryAfter = after + "s"
			}
		}
		out.printf("%6s  %-10s  %-19s  %-11s  %v\n", out.offset(at), health, strings.Join(codes, " "),
			retryAfter, m.Breakers(resource)[0].State())
	}

	if err := summarize(out, client, base+"/debug/breakers?format=json"); err != nil {
		return err
	}
	if linger > 0 {
		out.printf("\nserving for another %v: open %s/debug/breakers\n", linger, base)
		sleep(linger)
	}
	return out.error()
}

// get sends one request and returns its status code and Retry-After header.
func get(client *http.Client, url string) (code int, retryAfter string, err error) {
	resp, err := client.Get(url)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return 0, "", err
	}
	return resp.StatusCode, resp.Header.Get("Retry-After"), nil
}

// summarize reads the status page as JSON and prints each breaker and the transitions.
func summarize(out *printer, client *http.Client, url string) error {
	resp, err := client.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	// The fields this summary needs; the page has more (see package breakerdebug).
	var st struct {
		Resources []struct {
			Resource string `json:"resource"`
			Breakers []struct {
				State      string `json:"state"`
				Generation uint64 `json:"generation"`
				Total      uint64 `json:"total"`
				Bad        uint64 `json:"bad"`
			} `json:"breakers"`
		} `json:"resources"`
		Transitions []struct {
			Reason string `json:"reason"`
		} `json:"transitions"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		return fmt.Errorf("GET %s: %w", url, err)
	}

	out.printf("\n/debug/breakers?format=json says:\n")
	for _, res := range st.Resources {
		for _, b := range res.Breakers {
			out.printf("  %s: %s after %d transitions; in the window, %d of %d requests failed\n",
				res.Resource, b.State, b.Generation, b.Bad, b.Total)
		}
	}
	reasons := make([]string, len(st.Transitions))
	for i, c := range st.Transitions {
		reasons[i] = c.Reason
	}
	out.printf("  transitions, newest first: %s\n", strings.Join(reasons, ", "))
	return nil
}

// printer writes the timeline and keeps the first write error. The observer writes from the
// server's goroutines, so it takes a lock.
type printer struct {
	mu    sync.Mutex
	w     io.Writer
	start time.Time
	err   error
}

func (p *printer) printf(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}

func (p *printer) error() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

func (p *printer) change(c breaker.StateChange) {
	line := fmt.Sprintf("%6s  ▸ %v → %v: %v", p.offset(c.At), c.From, c.To, c.Reason)
	if c.Reason == breaker.ThresholdExceeded {
		line += fmt.Sprintf(" (error ratio %.2f)", c.Snapshot)
	}
	p.printf("%s\n", line)
}

// offset is how long after the start t is, in whole milliseconds: the real run's steps start
// a fraction of a millisecond late, and that is noise.
func (p *printer) offset(t time.Time) string {
	return fmt.Sprintf("%dms", t.Sub(p.start).Milliseconds())
}
