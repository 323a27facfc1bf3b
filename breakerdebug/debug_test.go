package breakerdebug_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakerdebug"
	"github.com/halfopen/breaker/breakertest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const path = "/debug/breakers"

// noSubscribers is the JSON's "events" while no one reads the event stream.
var noSubscribers = map[string]any{"subscribers": 0, "limit": 16, "dropped": 0}

var (
	// inventoryRule trips on the third failure in a second.
	inventoryRule = breaker.Rule{
		ID:               "inventory-errors",
		Resource:         "inventory",
		Strategy:         breaker.ErrorCount,
		Threshold:        3,
		MinRequestAmount: 1,
		RetryTimeout:     5 * time.Second,
	}
	// The two rules of payments, which the tests leave CLOSED.
	paymentsErrors = breaker.Rule{
		ID:               "payments-errors",
		Resource:         "payments",
		Strategy:         breaker.ErrorRatio,
		Threshold:        0.5,
		MinRequestAmount: 5,
		RetryTimeout:     10 * time.Second,
	}
	paymentsSlow = breaker.Rule{
		Resource:         "payments",
		Strategy:         breaker.SlowRequestRatio,
		Threshold:        0.5,
		MaxAllowedRT:     100 * time.Millisecond,
		MinRequestAmount: 5,
		RetryTimeout:     10 * time.Second,
	}
)

var errDown = errors.New("downstream: 503")

func fail(context.Context) error    { return errDown }
func succeed(context.Context) error { return nil }

// call makes one call to resource through m; the breaker's verdict is what the tests read.
func call(m *breaker.Manager, resource string, fn func(context.Context) error) {
	_ = m.Do(context.Background(), resource, fn)
}

// newManager returns a Manager on a fake clock with rules loaded, and the status handler.
func newManager(t *testing.T, rules ...breaker.Rule) (*breaker.Manager, *breakertest.Clock, http.Handler) {
	t.Helper()
	clk := breakertest.NewClock()
	m := breaker.NewManager(breaker.WithClock(clk))
	require.NoError(t, m.LoadRules(rules))
	return m, clk, breakerdebug.Handler(m)
}

// get serves one request to h and returns the recorded response.
func get(h http.Handler, method, target string, header http.Header) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// at is a time d after the fake clock's start, the time the manager's clock shows then.
func at(d time.Duration) time.Time { return breakertest.Start.Add(d) }

// stamp is at(d) as the JSON shows it.
func stamp(d time.Duration) string { return at(d).Format(time.RFC3339Nano) }

// ruleJSON is rule as encoding/json writes it, whatever Rule.MarshalJSON makes of it.
func ruleJSON(t *testing.T, rule breaker.Rule) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(rule)
	require.NoError(t, err)
	return b
}

// Given rules for two resources, when inventory trips and then fails its probe while payments
// stays healthy, then the JSON lists both resources by name, the breakers in rule order with
// their states, window counts and retry time, and the three transitions newest first.
func TestJSONShowsBreakersAndTransitions(t *testing.T) {
	// Loaded out of order: the resources come out sorted, each one's breakers in rule order.
	m, clk, h := newManager(t, paymentsErrors, inventoryRule, paymentsSlow)

	clk.Advance(100 * time.Millisecond)
	for range 3 {
		call(m, "inventory", fail) // the third trips it at 100ms
	}
	clk.Advance(5 * time.Second)
	call(m, "inventory", fail) // at 5.1s: the probe, which fails: OPEN until 10.1s
	clk.Advance(time.Second)
	call(m, "payments", succeed)
	call(m, "payments", succeed)
	call(m, "payments", fail) // 1 bad of 3: below both thresholds and MinRequestAmount

	rec := get(h, http.MethodGet, path+"?format=json", nil)
	require.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, "application/json; charset=utf-8", rec.Header().Get("Content-Type"))

	inventory := ruleJSON(t, inventoryRule)
	const inventoryText = "errors ≥ 3 · min 1 call in 1s · retry 5s"
	want := map[string]any{
		"now":    at(6100 * time.Millisecond),
		"events": noSubscribers,
		"resources": []any{
			map[string]any{"resource": "inventory", "side": "client", "worst": "OPEN", "breakers": []any{
				map[string]any{"rule": inventory, "ruleText": inventoryText, "state": "OPEN", "dryRun": false,
					"generation": 3, "total": 0, "bad": 0, "refused": 0,
					"retryAt": at(5100*time.Millisecond + inventoryRule.RetryTimeout)},
			}},
			map[string]any{"resource": "payments", "side": "client", "worst": "CLOSED", "breakers": []any{
				map[string]any{"rule": ruleJSON(t, paymentsErrors), "state": "CLOSED", "dryRun": false,
					"generation": 0, "total": 3, "bad": 1, "refused": 0, "ratio": 1. / 3, "ruleText": "errors ≥ 50% · min 5 calls in 1s · retry 10s"},
				map[string]any{"rule": ruleJSON(t, paymentsSlow), "state": "CLOSED", "dryRun": false,
					"generation": 0, "total": 3, "bad": 0, "refused": 0, "ratio": 0, "ruleText": "slow ≥ 50% (RT > 100ms) · min 5 calls in 1s · retry 10s"},
			}},
		},
		"overrides": []any{},
		"transitions": []any{
			map[string]any{"seq": 3, "resource": "inventory", "side": "client", "rule": inventory, "ruleText": inventoryText,
				"from": "HALF_OPEN", "to": "OPEN", "reason": "ProbeFailed", "snapshot": 0,
				"at": at(5100 * time.Millisecond), "generation": 3, "dryRun": false},
			map[string]any{"seq": 2, "resource": "inventory", "side": "client", "rule": inventory, "ruleText": inventoryText,
				"from": "OPEN", "to": "HALF_OPEN", "reason": "RetryTimeoutElapsed", "snapshot": 0,
				"at": at(5100 * time.Millisecond), "generation": 2, "dryRun": false},
			map[string]any{"seq": 1, "resource": "inventory", "side": "client", "rule": inventory, "ruleText": inventoryText,
				"from": "CLOSED", "to": "OPEN", "reason": "ThresholdExceeded", "snapshot": 3,
				"at": at(100 * time.Millisecond), "generation": 1, "dryRun": false},
		},
	}
	wantJSON, err := json.Marshal(want)
	require.NoError(t, err)
	assert.JSONEq(t, string(wantJSON), rec.Body.String())
}

// Given no rules, then the JSON has empty lists, not nulls.
func TestJSONWithNoRules(t *testing.T) {
	_, _, h := newManager(t)
	rec := get(h, http.MethodGet, path+"?format=json", nil)
	assert.JSONEq(t, fmt.Sprintf(`{"now":%q,"resources":[],"overrides":[],"transitions":[],
		"events":{"subscribers":0,"limit":16,"dropped":0}}`, stamp(0)), rec.Body.String())
}

// The times of a breaker follow its state: none when CLOSED, retryAt when OPEN, and retryAt
// and probeDeadline when HALF_OPEN.
func TestJSONTimesFollowTheState(t *testing.T) {
	tests := []struct {
		name string
		give func(t *testing.T, m *breaker.Manager, clk *breakertest.Clock)
		want map[string]any // the breaker's entry, but for its rule
	}{
		{
			name: "CLOSED: no times",
			give: func(t *testing.T, m *breaker.Manager, clk *breakertest.Clock) {
				call(m, "inventory", fail)
			},
			want: map[string]any{"state": "CLOSED", "dryRun": false, "generation": 0, "total": 1, "bad": 1, "refused": 0, "ratio": 1},
		},
		{
			name: "OPEN: retryAt is the trip time + RetryTimeout",
			give: func(t *testing.T, m *breaker.Manager, clk *breakertest.Clock) {
				clk.Advance(100 * time.Millisecond)
				for range 3 {
					call(m, "inventory", fail)
				}
				clk.Advance(time.Second)
			},
			want: map[string]any{"state": "OPEN", "dryRun": false, "generation": 1, "total": 0, "bad": 0, "refused": 0,
				"retryAt": stamp(5100 * time.Millisecond)},
		},
		{
			name: "HALF_OPEN: retryAt as it was, probeDeadline the admission + ProbeTimeout",
			give: func(t *testing.T, m *breaker.Manager, clk *breakertest.Clock) {
				clk.Advance(100 * time.Millisecond)
				for range 3 {
					call(m, "inventory", fail)
				}
				clk.Advance(5200 * time.Millisecond)
				probe, err := m.Enter("inventory") // at 5.3s; still running when the page is read
				require.NoError(t, err)
				t.Cleanup(probe.Exit)
			},
			want: map[string]any{"state": "HALF_OPEN", "dryRun": false, "generation": 2, "total": 0, "bad": 0, "refused": 0,
				"retryAt": stamp(5100 * time.Millisecond), "probeDeadline": stamp(10300 * time.Millisecond)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, clk, h := newManager(t, inventoryRule)
			tt.give(t, m, clk)

			b := onlyBreaker(t, h)
			delete(b, "rule")
			delete(b, "ruleText")
			wantJSON, err := json.Marshal(tt.want)
			require.NoError(t, err)
			gotJSON, err := json.Marshal(b)
			require.NoError(t, err)
			assert.JSONEq(t, string(wantJSON), string(gotJSON))
		})
	}
}

// paceRule paces a dependency whose window holds half failures or more, with a success among
// them, instead of opening.
var paceRule = breaker.Rule{Resource: "svc", Strategy: breaker.ErrorRatio, Threshold: 0.5,
	MinRequestAmount: 4, RetryTimeout: time.Second, Pace: true}

// Given a rule with Pace whose window, in one bucket, meets its threshold with successes in it,
// then the breaker stays CLOSED and paces: the JSON marks it "pacing", its row's worst is
// PACING, and the transition is PacingStarted with the ratio that met the threshold. When a
// bucket holds nothing back, pacing ends: "pacing" is left out, the row is CLOSED again, and
// the newest transition is PacingEnded.
func TestJSONShowsPacing(t *testing.T) {
	m, clk, h := newManager(t, paceRule)
	for _, fn := range []func(context.Context) error{succeed, succeed, fail, fail} {
		call(m, "svc", fn)
	}
	assert.ErrorIs(t, m.Do(context.Background(), "svc", succeed), breaker.ErrPacing, "held back in the same bucket")

	rule := ruleJSON(t, paceRule)
	const text = "errors ≥ 50% · min 4 calls in 1s · retry 1s · pace instead of opening while calls still succeed"
	started := map[string]any{"seq": 1, "resource": "svc", "side": "client", "rule": rule, "ruleText": text, "from": "CLOSED",
		"to": "CLOSED", "reason": "PacingStarted", "snapshot": 0.5, "at": at(0), "generation": 1, "dryRun": false}
	want := map[string]any{
		"now":    at(0),
		"events": noSubscribers,
		"resources": []any{map[string]any{"resource": "svc", "side": "client", "worst": "PACING", "breakers": []any{
			map[string]any{"rule": rule, "ruleText": text, "state": "CLOSED", "dryRun": false, "generation": 1,
				"total": 4, "bad": 2, "refused": 0, "ratio": 0.5, "pacing": true},
		}}},
		"overrides":   []any{},
		"transitions": []any{started},
	}
	wantJSON, err := json.Marshal(want)
	require.NoError(t, err)
	assert.JSONEq(t, string(wantJSON), get(h, http.MethodGet, path+"?format=json", nil).Body.String())

	clk.Advance(100 * time.Millisecond)
	call(m, "svc", succeed) // admitted: the bucket holds nothing back
	clk.Advance(100 * time.Millisecond)
	call(m, "svc", succeed) // the next bucket: pacing has ended
	want = map[string]any{
		"now":    at(200 * time.Millisecond),
		"events": noSubscribers,
		"resources": []any{map[string]any{"resource": "svc", "side": "client", "worst": "CLOSED", "breakers": []any{
			map[string]any{"rule": rule, "ruleText": text, "state": "CLOSED", "dryRun": false, "generation": 2,
				"total": 6, "bad": 2, "refused": 0, "ratio": 2. / 6},
		}}},
		"overrides": []any{},
		"transitions": []any{
			map[string]any{"seq": 2, "resource": "svc", "side": "client", "rule": rule, "ruleText": text, "from": "CLOSED",
				"to": "CLOSED", "reason": "PacingEnded", "snapshot": 0, "at": at(200 * time.Millisecond),
				"generation": 2, "dryRun": false},
			started,
		},
	}
	wantJSON, err = json.Marshal(want)
	require.NoError(t, err)
	assert.JSONEq(t, string(wantJSON), get(h, http.MethodGet, path+"?format=json", nil).Body.String())
}

// Given breakers of each strategy with a known window on the fake clock, then each breaker's
// "ratio" is Stats.Ratio, its bad calls over its calls: the share of slow calls for
// SlowRequestRatio, of failed ones for ErrorRatio and ErrorCount; and it is left out where it
// means nothing: for ConsecutiveErrors, whose count is a run of failures, for a window that
// holds no call, and for a breaker not CLOSED, whose window is empty.
func TestJSONRatio(t *testing.T) {
	window := func(strategy breaker.Strategy, threshold float64) breaker.Rule {
		return breaker.Rule{Resource: "svc", Strategy: strategy, Threshold: threshold, MinRequestAmount: 100,
			MaxAllowedRT: 100 * time.Millisecond, StatInterval: time.Minute, RetryTimeout: time.Minute}
	}
	tests := []struct {
		name      string
		give      breaker.Rule
		calls     func(m *breaker.Manager, clk *breakertest.Clock)
		wantTotal uint64
		wantBad   uint64
		wantRatio any // nil: left out
	}{
		{
			name: "SlowRequestRatio: the share of slow calls",
			give: window(breaker.SlowRequestRatio, 0.9),
			calls: func(m *breaker.Manager, clk *breakertest.Clock) {
				for i := range 4 {
					rt := 10 * time.Millisecond
					if i == 0 {
						rt = 200 * time.Millisecond // slow
					}
					call(m, "svc", func(context.Context) error { clk.Advance(rt); return nil })
				}
			},
			wantTotal: 4, wantBad: 1, wantRatio: 0.25,
		},
		{
			name: "ErrorRatio: the share of failed calls",
			give: window(breaker.ErrorRatio, 0.9),
			calls: func(m *breaker.Manager, _ *breakertest.Clock) {
				for _, fn := range []func(context.Context) error{fail, fail, fail, succeed, succeed} {
					call(m, "svc", fn)
				}
			},
			wantTotal: 5, wantBad: 3, wantRatio: 0.6,
		},
		{
			name: "ErrorCount: the share of failed calls",
			give: window(breaker.ErrorCount, 10),
			calls: func(m *breaker.Manager, _ *breakertest.Clock) {
				for _, fn := range []func(context.Context) error{fail, succeed, succeed, succeed} {
					call(m, "svc", fn)
				}
			},
			wantTotal: 4, wantBad: 1, wantRatio: 0.25,
		},
		{
			name: "ErrorRatio with no failure: 0, written",
			give: window(breaker.ErrorRatio, 0.9),
			calls: func(m *breaker.Manager, _ *breakertest.Clock) {
				call(m, "svc", succeed)
				call(m, "svc", succeed)
			},
			wantTotal: 2, wantBad: 0, wantRatio: 0,
		},
		{
			name: "ConsecutiveErrors: a run, no ratio",
			give: breaker.Rule{Resource: "svc", Strategy: breaker.ConsecutiveErrors, Threshold: 5,
				RetryTimeout: time.Minute},
			calls: func(m *breaker.Manager, _ *breakertest.Clock) {
				call(m, "svc", succeed)
				call(m, "svc", fail)
				call(m, "svc", fail)
			},
			wantTotal: 2, wantBad: 2,
		},
		{
			name:  "an empty window: no ratio",
			give:  window(breaker.ErrorRatio, 0.9),
			calls: func(*breaker.Manager, *breakertest.Clock) {},
		},
		{
			name: "OPEN: an empty window, no ratio",
			give: breaker.Rule{Resource: "svc", Strategy: breaker.ErrorRatio, Threshold: 0.5,
				MinRequestAmount: 2, RetryTimeout: time.Minute},
			calls: func(m *breaker.Manager, _ *breakertest.Clock) {
				call(m, "svc", fail)
				call(m, "svc", fail) // trips
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, clk, h := newManager(t, tt.give)
			clk.Advance(100 * time.Millisecond)
			tt.calls(m, clk)

			b := onlyBreaker(t, h)
			assert.Equal(t, float64(tt.wantTotal), b["total"])
			assert.Equal(t, float64(tt.wantBad), b["bad"])
			ratio, ok := b["ratio"]
			if tt.wantRatio == nil {
				assert.False(t, ok, "no ratio, but %v", ratio)
				return
			}
			require.True(t, ok, "a ratio")
			assert.InDelta(t, tt.wantRatio, ratio, 1e-12)
			stats := m.Snapshot().Resources[0].Breakers[0]
			assert.InDelta(t, stats.Ratio(), ratio, 1e-12, "Stats.Ratio")
		})
	}
}

// ?format=json and an Accept header naming application/json get JSON; anything else, a
// browser's Accept among them, gets the page.
func TestContentNegotiation(t *testing.T) {
	const (
		jsonType = "application/json; charset=utf-8"
		htmlType = "text/html; charset=utf-8"
	)
	tests := []struct {
		name   string
		give   string // the request's target
		accept string
		want   string // Content-Type
	}{
		{name: "no Accept", give: path, want: htmlType},
		{name: "format=json", give: path + "?format=json", want: jsonType},
		{name: "format=json overrides a browser's Accept", give: path + "?format=json",
			accept: "text/html,application/xhtml+xml,*/*;q=0.8", want: jsonType},
		{name: "Accept: application/json", give: path, accept: "application/json", want: jsonType},
		{name: "Accept: application/json among others", give: path,
			accept: "text/plain;q=0.5, application/json;q=0.9", want: jsonType},
		{name: "a browser's Accept", give: path,
			accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", want: htmlType},
		{name: "application/json refused with q=0", give: path, accept: "application/json;q=0", want: htmlType},
		{name: "another format", give: path + "?format=xml", want: htmlType},
	}
	_, _, h := newManager(t, inventoryRule)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			header := http.Header{}
			if tt.accept != "" {
				header.Set("Accept", tt.accept)
			}
			rec := get(h, http.MethodGet, tt.give, header)
			require.Equal(t, http.StatusOK, rec.Code)
			assert.Equal(t, tt.want, rec.Header().Get("Content-Type"))
			assert.Equal(t, "no-store", rec.Header().Get("Cache-Control"))
			assert.Contains(t, rec.Header().Values("Vary"), "Accept")
			if tt.want == jsonType {
				assert.True(t, json.Valid(rec.Body.Bytes()), "a JSON body: %s", rec.Body)
			} else {
				assert.Contains(t, rec.Body.String(), "<!doctype html>")
			}
		})
	}
}

// Only GET and HEAD are allowed.
func TestMethods(t *testing.T) {
	tests := []struct {
		give string
		want int
	}{
		{give: http.MethodGet, want: http.StatusOK},
		{give: http.MethodHead, want: http.StatusOK},
		{give: http.MethodPost, want: http.StatusMethodNotAllowed},
		{give: http.MethodPut, want: http.StatusMethodNotAllowed},
		{give: http.MethodDelete, want: http.StatusMethodNotAllowed},
		{give: http.MethodPatch, want: http.StatusMethodNotAllowed},
	}
	_, _, h := newManager(t, inventoryRule)
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			for _, target := range []string{path, path + "?format=json"} {
				rec := get(h, tt.give, target, nil)
				assert.Equal(t, tt.want, rec.Code, target)
				switch {
				case tt.want == http.StatusMethodNotAllowed:
					assert.Equal(t, "GET, HEAD", rec.Header().Get("Allow"), target)
				case tt.give == http.MethodHead:
					assert.Empty(t, rec.Body.String(), "HEAD has no body")
					assert.NotEmpty(t, rec.Header().Get("Content-Length"))
				}
			}
		})
	}
}

// extract returns what lies between the first start in s and the end after it.
func extract(t *testing.T, s, start, end string) string {
	t.Helper()
	i := strings.Index(s, start)
	require.GreaterOrEqual(t, i, 0, "no %q in the page", start)
	s = s[i+len(start):]
	j := strings.Index(s, end)
	require.GreaterOrEqual(t, j, 0, "no %q after %q", end, start)
	return s[:j]
}

// The page has the table skeleton and loads nothing from anywhere: no absolute or
// protocol-relative URL, and a Content-Security-Policy that allows only its own script and
// style, by hash.
func TestPageIsSelfContained(t *testing.T) {
	_, _, h := newManager(t, inventoryRule, paymentsErrors)
	rec := get(h, http.MethodGet, path, nil)
	require.Equal(t, http.StatusOK, rec.Code)
	page := rec.Body.String()

	for _, want := range []string{
		`<table id="breakers">`,
		`<th>Resource</th><th>Rule</th><th>State</th><th>Window</th><th>Retry</th><th class="num">Gen</th><th>Settings and override</th>`,
		`<table id="overrides">`,
		`<th>Resource</th><th>Force</th><th>Until</th><th>Note</th><th>Since</th>`,
		`<table id="settings">`,
		`<th>Key</th><th>Applies to</th><th>Force</th><th>Timeout</th><th class="num">Max concurrency</th><th class="num">In flight</th>`,
		`<table id="transitions">`,
		`<h2>Recent transitions</h2>`,
		`<th class="num">Gen</th><th class="num">Seq</th>`,
		`<script id="status" type="application/json">`,
	} {
		assert.Contains(t, page, want)
	}
	assert.NotContains(t, page, "http://")
	assert.NotContains(t, page, "https://")
	external := regexp.MustCompile(`(?i)\b(src|href|action)\s*=\s*["']?\s*([a-z][a-z0-9+.-]*:)?//`)
	assert.Empty(t, external.FindAllString(page, -1), "no external src or href")
	assert.NotContains(t, page, "@import")

	csp := rec.Header().Get("Content-Security-Policy")
	assert.Contains(t, csp, "default-src 'none'")
	assert.Contains(t, csp, "connect-src 'self'")
	assert.NotContains(t, csp, "unsafe-inline")
	script := page[strings.LastIndex(page, "<script>")+len("<script>"):]
	script = script[:strings.Index(script, "</script>")]
	sum := sha256.Sum256([]byte(script))
	assert.Contains(t, csp, "'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'", "the CSP allows the page's script")
	style := extract(t, page, "<style>", "</style>")
	sum = sha256.Sum256([]byte(style))
	assert.Contains(t, csp, "'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'", "the CSP allows the page's style")
}

// Given a resource whose name is markup, then the page carries it escaped, and the status
// embedded in the page still reads back as the name.
func TestPageEscapesResourceNames(t *testing.T) {
	const name = "<script>alert(1)</script>"
	hostile := inventoryRule
	hostile.Resource = name
	hostile.ID = `"><img src=x onerror=alert(2)>`
	m, _, h := newManager(t, hostile)
	for range 3 {
		call(m, name, fail) // trips it, so the name is in a transition too
	}

	page := get(h, http.MethodGet, path, nil).Body.String()
	assert.NotContains(t, page, "<script>alert(1)")
	assert.NotContains(t, page, "<img")
	assert.Contains(t, page, `\u003cscript\u003ealert(1)\u003c/script\u003e`)

	var embedded struct {
		Resources []struct {
			Resource string `json:"resource"`
		} `json:"resources"`
		Transitions []struct {
			Resource string `json:"resource"`
		} `json:"transitions"`
	}
	data := extract(t, page, `<script id="status" type="application/json">`, "</script>")
	require.NoError(t, json.Unmarshal([]byte(data), &embedded), "the embedded status is JSON: %s", data)
	require.Len(t, embedded.Resources, 1)
	assert.Equal(t, name, embedded.Resources[0].Resource)
	require.Len(t, embedded.Transitions, 1)
	assert.Equal(t, name, embedded.Transitions[0].Resource)
}

// Given 120 transitions, then the status keeps the last 100, newest first.
func TestKeepsTheLast100Transitions(t *testing.T) {
	rule := breaker.Rule{Resource: "flaky", Strategy: breaker.ErrorCount, Threshold: 1,
		MinRequestAmount: 1, RetryTimeout: time.Second}
	m, clk, h := newManager(t, rule)
	for range 40 { // three transitions each: trip, probe, recovery
		call(m, "flaky", fail)
		clk.Advance(time.Second)
		call(m, "flaky", succeed)
	}

	var got struct {
		Transitions []struct {
			Reason     string `json:"reason"`
			Generation uint64 `json:"generation"`
		} `json:"transitions"`
	}
	require.NoError(t, json.Unmarshal(get(h, http.MethodGet, path+"?format=json", nil).Body.Bytes(), &got))
	require.Len(t, got.Transitions, 100)
	for i, c := range got.Transitions {
		assert.Equal(t, uint64(120-i), c.Generation, "transition %d", i)
	}
	assert.Equal(t, "ProbeSucceeded", got.Transitions[0].Reason)
	assert.Equal(t, "ProbeSucceeded", got.Transitions[99].Reason, "generation 21, the 7th recovery")
}

// Given 150 resources whose breakers each trip once, and calls to 1,000 resources without
// rules, then the status lists the 150 resources of the rules and keeps the last 100
// transitions: the handler keeps nothing per resource name.
func TestKeepsNothingPerResource(t *testing.T) {
	const tripped, unruled = 150, 1000
	rules := make([]breaker.Rule, tripped)
	for i := range rules {
		rules[i] = breaker.Rule{Resource: fmt.Sprintf("r%03d", i), Strategy: breaker.ErrorCount,
			Threshold: 1, MinRequestAmount: 1, RetryTimeout: time.Minute}
	}
	m, clk, h := newManager(t, rules...)
	for i := range tripped {
		clk.Advance(time.Millisecond)
		call(m, fmt.Sprintf("r%03d", i), fail)
	}
	for i := range unruled {
		call(m, fmt.Sprintf("GET /wp-admin/%d.php", i), fail)
	}

	var got struct {
		Resources []struct {
			Resource string `json:"resource"`
		} `json:"resources"`
		Transitions []struct {
			Resource string `json:"resource"`
		} `json:"transitions"`
	}
	require.NoError(t, json.Unmarshal(get(h, http.MethodGet, path+"?format=json", nil).Body.Bytes(), &got))
	require.Len(t, got.Resources, tripped)
	assert.Equal(t, "r000", got.Resources[0].Resource)
	assert.Equal(t, "r149", got.Resources[tripped-1].Resource)
	require.Len(t, got.Transitions, 100)
	for i, c := range got.Transitions {
		assert.Equal(t, fmt.Sprintf("r%03d", tripped-1-i), c.Resource, "transition %d", i)
	}
}

// Given calls tripping and recovering breakers on several goroutines, while others read the
// status, then nothing races (run with -race) and every read is valid JSON.
func TestConcurrentReads(t *testing.T) {
	rule := breaker.Rule{Resource: "flaky", Strategy: breaker.ErrorCount, Threshold: 1,
		MinRequestAmount: 1, RetryTimeout: time.Millisecond}
	m, clk, h := newManager(t, rule)
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for i := range 100 {
				call(m, "flaky", fail)
				clk.Advance(time.Millisecond)
				if i%2 == 0 {
					call(m, "flaky", succeed)
				}
			}
		})
		wg.Go(func() {
			for range 20 {
				rec := get(h, http.MethodGet, path+"?format=json", nil)
				assert.True(t, json.Valid(rec.Body.Bytes()))
			}
		})
	}
	wg.Wait()
}

// A nil Manager means the default one.
func TestNilManagerIsTheDefault(t *testing.T) {
	h := breakerdebug.Handler(nil)
	rec := get(h, http.MethodGet, path+"?format=json", nil)
	require.Equal(t, http.StatusOK, rec.Code)
	var got struct {
		Resources []any `json:"resources"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &got))
	assert.Len(t, got.Resources, len(breaker.Default().Rules()))
}

// A template's breakers are listed under the names called, each with its template, worst
// first, and "templates" counts them.
func TestJSONShowsTemplateBreakers(t *testing.T) {
	template := breaker.Rule{Resource: "api/*", Strategy: breaker.ErrorCount, Threshold: 1, RetryTimeout: time.Minute}
	m, _, h := newManager(t, template)
	var got struct {
		Resources []struct {
			Resource string `json:"resource"`
			Template string `json:"template"`
			Breakers []struct {
				State string       `json:"state"`
				Rule  breaker.Rule `json:"rule"`
			} `json:"breakers"`
		} `json:"resources"`
		Templates *struct {
			Resources, Breakers, Limit int
			Dropped                    uint64
		} `json:"templates"`
	}
	require.NoError(t, json.Unmarshal(get(h, http.MethodGet, path+"?format=json", nil).Body.Bytes(), &got))
	assert.Empty(t, got.Resources, "no breakers before the first call")
	require.NotNil(t, got.Templates, "a template is loaded")
	assert.Equal(t, 10_000, got.Templates.Limit)

	call(m, "api/users", fail)
	call(m, "api/orders", succeed)
	require.NoError(t, json.Unmarshal(get(h, http.MethodGet, path+"?format=json", nil).Body.Bytes(), &got))
	require.Len(t, got.Resources, 2)
	assert.Equal(t, "api/users", got.Resources[0].Resource, "OPEN: first")
	assert.Equal(t, "OPEN", got.Resources[0].Breakers[0].State)
	assert.Equal(t, "api/*", got.Resources[0].Breakers[0].Rule.Resource)
	assert.Equal(t, "api/orders", got.Resources[1].Resource)
	assert.Equal(t, "CLOSED", got.Resources[1].Breakers[0].State)
	for _, r := range got.Resources {
		assert.Equal(t, "api/*", r.Template, r.Resource)
	}
	assert.Equal(t, 2, got.Templates.Resources)
	assert.Equal(t, 2, got.Templates.Breakers)
	assert.Zero(t, got.Templates.Dropped)

	require.NoError(t, m.LoadRules(nil))
	got.Templates = nil
	require.NoError(t, json.Unmarshal(get(h, http.MethodGet, path+"?format=json", nil).Body.Bytes(), &got))
	assert.Nil(t, got.Templates, "no template, no template breakers")
}

// Given more template resources than WithTemplates, the status lists those not CLOSED first,
// then the most called, then by name (and shows them worst first); counts the rest as
// unlisted; and lists none of them as unruled.
func TestTemplateListIsBounded(t *testing.T) {
	clk := breakertest.NewClock()
	rec := breakerdebug.NewRecorder()
	m := breaker.NewManager(breaker.WithClock(clk), breaker.WithCallObserver(rec.OnCall))
	require.NoError(t, m.LoadRules([]breaker.Rule{{Resource: "api/*", Strategy: breaker.ErrorCount,
		Threshold: 1, RetryTimeout: time.Minute}}))
	h := breakerdebug.Handler(m, breakerdebug.WithRecorder(rec), breakerdebug.WithTemplates(3))

	for _, name := range []string{"api/a", "api/b", "api/c", "api/d"} {
		call(m, name, succeed)
	}
	call(m, "api/c", succeed) // the most called
	call(m, "api/z", fail)    // OPEN, last by name, called once
	var got struct {
		Resources []struct {
			Resource string `json:"resource"`
		} `json:"resources"`
		Unruled []struct {
			Resource string `json:"resource"`
		} `json:"unruled"`
		Templates struct {
			Resources int `json:"resources"`
			Unlisted  int `json:"unlisted"`
		} `json:"templates"`
	}
	require.NoError(t, json.Unmarshal(get(h, http.MethodGet, path+"?format=json", nil).Body.Bytes(), &got))
	var listed []string
	for _, r := range got.Resources {
		listed = append(listed, r.Resource)
	}
	assert.Equal(t, []string{"api/z", "api/c", "api/a"}, listed, "OPEN z, most called c, then a by name; listed worst first")
	assert.Equal(t, 5, got.Templates.Resources)
	assert.Equal(t, 2, got.Templates.Unlisted)
	assert.Empty(t, got.Unruled, "unlisted resources have breakers: they are not unruled")

	// Below the bound every one is listed.
	h = breakerdebug.Handler(m, breakerdebug.WithRecorder(rec))
	require.NoError(t, json.Unmarshal(get(h, http.MethodGet, path+"?format=json", nil).Body.Bytes(), &got))
	assert.Len(t, got.Resources, 5)
	assert.Zero(t, got.Templates.Unlisted)
}

// Given a template resource whose breakers were dropped to stay within
// WithMaxTemplateBreakers, when the status is read, then it is not listed as called without
// rules: a template matches it, even one left with no breakers. A name no template matches
// still is.
func TestEvictedTemplateResourceIsNotUnruled(t *testing.T) {
	clk := breakertest.NewClock()
	rec := breakerdebug.NewRecorder()
	m := breaker.NewManager(breaker.WithClock(clk), breaker.WithCallObserver(rec.OnCall),
		breaker.WithMaxTemplateBreakers(2))
	require.NoError(t, m.LoadRules([]breaker.Rule{
		{Resource: "api/*", Strategy: breaker.ErrorCount, Threshold: 1, RetryTimeout: time.Minute},
		{Resource: "img/*", Strategy: breaker.ErrorCount, Threshold: 1, RetryTimeout: time.Minute},
	}))
	h := breakerdebug.Handler(m, breakerdebug.WithRecorder(rec))

	// img/x is dropped first, and its template is left with no breakers at all.
	for _, name := range []string{"img/x", "api/a", "api/b", "api/c"} {
		call(m, name, succeed)
		clk.Advance(time.Millisecond)
	}
	call(m, "inventroy", succeed) // no template matches it
	d := m.Snapshot().Templates
	require.NotZero(t, d.Dropped, "api/c needed room")
	require.NotContains(t, templateNames(m), "api/a", "the longest idle was dropped")

	st := readStatus(t, h)
	var unruled []string
	for _, u := range st.Unruled {
		unruled = append(unruled, u.Resource)
	}
	assert.Equal(t, []string{"inventroy"}, unruled)
	var listed []string
	for _, r := range st.Resources {
		listed = append(listed, r.Resource)
	}
	assert.Equal(t, templateNames(m), listed, "the template resources that have breakers now")
}

// Given a name a template rule made that has settings of its own, when the status lists no
// template names (WithTemplates(0)), then it is listed all the same, with its template and its
// own settings.
func TestTemplateNameWithOwnSettingsIsListed(t *testing.T) {
	m := breaker.NewManager(breaker.WithClock(breakertest.NewClock()))
	require.NoError(t, m.LoadRules([]breaker.Rule{{Resource: "api/*", Strategy: breaker.ErrorCount,
		Threshold: 1, RetryTimeout: time.Minute}}))
	require.NoError(t, m.LoadResources(map[string]breaker.ResourceConfig{"api/a": {MaxConcurrency: 3}}))
	h := breakerdebug.Handler(m, breakerdebug.WithTemplates(0))
	call(m, "api/a", succeed)
	call(m, "api/b", succeed)

	var got struct {
		Resources []struct {
			Resource     string `json:"resource"`
			Template     string `json:"template"`
			SettingsFrom string `json:"settingsFrom"`
		} `json:"resources"`
		Templates struct {
			Unlisted int `json:"unlisted"`
		} `json:"templates"`
	}
	require.NoError(t, json.Unmarshal(get(h, http.MethodGet, path+"?format=json", nil).Body.Bytes(), &got))
	require.Len(t, got.Resources, 1)
	assert.Equal(t, "api/a", got.Resources[0].Resource)
	assert.Equal(t, "api/*", got.Resources[0].Template)
	assert.Equal(t, "api/a", got.Resources[0].SettingsFrom)
	assert.Equal(t, 1, got.Templates.Unlisted, "api/b")
}

// onlyBreaker returns the JSON of the one breaker of the one resource the page of h lists,
// failing t if it lists another number of either.
func onlyBreaker(t *testing.T, h http.Handler) map[string]any {
	t.Helper()
	var got struct {
		Resources []struct {
			Breakers []map[string]any `json:"breakers"`
		} `json:"resources"`
	}
	require.NoError(t, json.Unmarshal(get(h, http.MethodGet, path+"?format=json", nil).Body.Bytes(), &got))
	require.Len(t, got.Resources, 1)
	require.Len(t, got.Resources[0].Breakers, 1)
	return got.Resources[0].Breakers[0]
}

// templateNames returns the names that template rules made breakers for, as a Snapshot lists
// them, in order.
func templateNames(m *breaker.Manager) []string {
	var names []string
	for _, r := range m.Snapshot().Resources {
		if r.Template != "" {
			names = append(names, r.Name)
		}
	}
	return names
}
