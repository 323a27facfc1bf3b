// Command dashdemo serves the breakerdebug status page of a Manager that has had a minute of
// made-up traffic, for the screenshot in docs/dashboard.png (make screenshot). The traffic is
// played on a fake clock before the server starts, so every run shows the same page. It prints
// the page's URL and serves until killed.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakerdebug"
	"github.com/halfopen/breaker/breakertest"
)

var errDown = errors.New("upstream: 503")

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "address to serve on")
	flag.Parse()

	clk := breakertest.NewClock()
	rec := breakerdebug.NewRecorder()
	m := breaker.NewManager(breaker.WithClock(clk), rec.Option())
	rules := []breaker.Rule{
		{ID: "inventory-errors", Resource: "inventory", Strategy: breaker.ErrorRatio, Threshold: 0.5,
			MinRequestAmount: 10, RetryTimeout: 20 * time.Second},
		{ID: "payments-slow", Resource: "payments", Strategy: breaker.SlowRequestRatio, Threshold: 0.5,
			MaxAllowedRT: 200 * time.Millisecond, MinRequestAmount: 10, RetryTimeout: 10 * time.Second},
		{ID: "search-errors", Resource: "search", Strategy: breaker.ErrorCount, Threshold: 20,
			MinRequestAmount: 1, RetryTimeout: 5 * time.Second},
	}
	if err := m.LoadRules(rules); err != nil {
		log.Fatal(err)
	}
	if err := m.LoadResources(map[string]breaker.ResourceConfig{
		"payments": {MaxConcurrency: 4, Timeout: time.Second},
		"legacy":   {Force: breaker.ForceOpen},
	}); err != nil {
		log.Fatal(err)
	}
	// The handler first: it hears the state changes from its creation on.
	page := breakerdebug.Handler(m, breakerdebug.WithRecorder(rec))
	start := clk.Now().Truncate(time.Minute)
	for sec := range 60 {
		second := start.Add(time.Duration(sec) * time.Second)
		clk.Set(second)
		// search: steady, a few slow calls; inventory fails from second 40 and trips;
		// payments: a burst of slow calls around second 30; a misspelt name; legacy forced.
		// The calls of a second take less than a second of the clock in all.
		for i := range 20 + sec%7 {
			call(m, clk, "search", time.Duration(1+i%3)*time.Millisecond, nil)
		}
		for i := range 12 {
			var err error
			if sec >= 40 && i%3 != 0 {
				err = errDown
			}
			call(m, clk, "inventory", 4*time.Millisecond, err)
		}
		for i := range 8 {
			rt := 20 * time.Millisecond
			if sec >= 28 && sec < 34 && i < 2 {
				rt = 300 * time.Millisecond
			}
			call(m, clk, "payments", rt, nil)
		}
		for range 5 {
			call(m, clk, "inventroy", 6*time.Millisecond, nil)
		}
		if sec%2 == 0 {
			call(m, clk, "legacy", 0, nil)
		}
	}

	// An operator forces payments open for its deploy, for half an hour.
	if _, err := m.Override("payments", breaker.ForceOpen, 30*time.Minute, "INC-42: payments v2 deploy"); err != nil {
		log.Fatal(err)
	}

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("http://%s/debug/breakers\n", ln.Addr())
	_ = os.Stdout.Sync()
	mux := http.NewServeMux()
	mux.Handle("/debug/breakers", page)
	log.Fatal(http.Serve(ln, mux))
}

// call makes one call that takes rt on clk and returns err.
func call(m *breaker.Manager, clk *breakertest.Clock, resource string, rt time.Duration, err error) {
	_ = m.Do(context.Background(), resource, func(context.Context) error {
		clk.Advance(rt)
		return err
	})
}
