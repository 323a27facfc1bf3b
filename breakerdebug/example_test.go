package breakerdebug_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakerdebug"
	"github.com/halfopen/breaker/breakertest"
)

// A Recorder, given to the Manager as a call observer and to the Handler, adds each resource's
// last minute to the status, by the Manager's clock.
func ExampleNewRecorder() {
	clock := breakertest.NewClock()
	rec := breakerdebug.NewRecorder()
	m := breaker.NewManager(breaker.WithClock(clock), rec.Option())
	_ = m.LoadRules([]breaker.Rule{{Resource: "inventory", Strategy: breaker.ErrorCount,
		Threshold: 3, MinRequestAmount: 1, RetryTimeout: 5 * time.Second}})
	h := breakerdebug.Handler(m, breakerdebug.WithRecorder(rec))

	for i := range 5 {
		_ = m.Do(context.Background(), "inventory", func(context.Context) error {
			clock.Advance(30 * time.Millisecond)
			if i > 0 {
				return errors.New("down")
			}
			return nil
		})
	}

	resp := httptest.NewRecorder()
	h.ServeHTTP(resp, httptest.NewRequest(http.MethodGet, "/?format=json", nil))
	var st struct {
		Resources []struct {
			Resource string
			Calls    struct {
				Calls, Ran, Failures uint64
				Rejected             map[string]uint64
				ErrorPercent         float64
				RTMax                string
			}
		}
	}
	_ = json.Unmarshal(resp.Body.Bytes(), &st)
	c := st.Resources[0].Calls
	fmt.Printf("%s: %d calls, %d rejected open, %d of %d failed (%v%%), the longest %s\n",
		st.Resources[0].Resource, c.Calls, c.Rejected["open"], c.Failures, c.Ran, c.ErrorPercent, c.RTMax)
	// Output:
	// inventory: 5 calls, 1 rejected open, 3 of 4 failed (75%), the longest 30ms
}

// WithOverrides lets an operator the program authorizes force a resource open for a while
// with a POST to the handler's path followed by /override.
func ExampleWithOverrides() {
	clock := breakertest.NewClock()
	m := breaker.NewManager(breaker.WithClock(clock), breaker.WithLogger(slog.New(slog.DiscardHandler)))
	h := breakerdebug.Handler(m,
		breakerdebug.WithOverrides(func(r *http.Request) (string, error) {
			if user, pass, ok := r.BasicAuth(); ok && user == "alice" && pass == "secret" {
				return user, nil
			}
			return "", errors.New("unknown operator")
		}),
		breakerdebug.WithLogger(slog.New(slog.DiscardHandler)))

	req := httptest.NewRequest(http.MethodPost, "/debug/breakers/override",
		strings.NewReader(`{"resource": "payments", "action": "open", "duration": "10m", "note": "INC-42"}`))
	req.Header.Set("Content-Type", "application/json")
	req.SetBasicAuth("alice", "secret")
	resp := httptest.NewRecorder()
	h.ServeHTTP(resp, req)
	fmt.Print(resp.Code, " ", resp.Body)
	fmt.Println(m.Do(context.Background(), "payments", func(context.Context) error { return nil }))
	// Output:
	// 200 {"resource":"payments","force":"open","at":"2026-01-01T00:00:00Z","until":"2026-01-01T00:10:00Z","note":"INC-42"}
	// breaker: call to "payments" blocked: breaker: resource forced open
}
