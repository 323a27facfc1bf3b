package breakerdebug_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakerdebug"
	"github.com/halfopen/breaker/breakertest"
)

// A Recorder on the Manager's clock, given to the Manager as a call observer and to the
// Handler, adds each resource's last minute to the status.
func ExampleNewRecorder() {
	clock := breakertest.NewClock()
	rec := breakerdebug.NewRecorder(breakerdebug.RecorderClock(clock))
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
				Calls, RejectedOpen, Ran, Failures uint64
				ErrorPercent                       float64
				RTP50                              string
			}
		}
	}
	_ = json.Unmarshal(resp.Body.Bytes(), &st)
	c := st.Resources[0].Calls
	fmt.Printf("%s: %d calls, %d rejected, %d of %d failed (%v%%), p50 %s\n",
		st.Resources[0].Resource, c.Calls, c.RejectedOpen, c.Failures, c.Ran, c.ErrorPercent, c.RTP50)
	// Output:
	// inventory: 5 calls, 1 rejected, 3 of 4 failed (75%), p50 50ms
}
