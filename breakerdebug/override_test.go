package breakerdebug_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakerdebug"
	"github.com/halfopen/breaker/breakertest"
)

const overridePath = path + "/override"

// changes is an Observer that keeps every state change it hears.
type changes struct {
	mu  sync.Mutex
	all []breaker.StateChange
}

func (c *changes) OnStateChange(sc breaker.StateChange) {
	c.mu.Lock()
	c.all = append(c.all, sc)
	c.mu.Unlock()
}

func (c *changes) heard() []breaker.StateChange {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]breaker.StateChange(nil), c.all...)
}

// byOperatorHeader is an authorization that names the operator of the X-Operator header and
// refuses a request without one.
func byOperatorHeader(r *http.Request) (string, error) {
	if op := r.Header.Get("X-Operator"); op != "" {
		return op, nil
	}
	return "", errors.New("no X-Operator header")
}

// writable is a Manager on a fake clock with rules, a handler that takes overrides from an
// operator named by X-Operator, what its observers heard and what the handler logged.
type writable struct {
	m      *breaker.Manager
	clk    *breakertest.Clock
	h      http.Handler
	events *changes
	logs   *bytes.Buffer // written under the slog handler's lock
}

func newWritable(t *testing.T, opts []breakerdebug.Option, rules ...breaker.Rule) *writable {
	t.Helper()
	m, clk, _ := newManager(t, rules...)
	w := &writable{m: m, clk: clk, events: &changes{}, logs: &bytes.Buffer{}}
	m.AddObserver(w.events)
	logger := slog.New(slog.NewTextHandler(w.logs, nil))
	opts = append([]breakerdebug.Option{breakerdebug.WithOverrides(byOperatorHeader), breakerdebug.WithLogger(logger)}, opts...)
	w.h = breakerdebug.Handler(m, opts...)
	return w
}

// post sends body to the write path of h as alice, with a JSON Content-Type.
func post(h http.Handler, body string) *httptest.ResponseRecorder {
	return send(h, http.MethodPost, overridePath, body, http.Header{
		"Content-Type": {"application/json"}, "X-Operator": {"alice"}})
}

func send(h http.Handler, method, target, body string, header http.Header) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	for k, v := range header {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// errorOf returns the message of an error answer.
func errorOf(t *testing.T, rec *httptest.ResponseRecorder) string {
	t.Helper()
	assert.Equal(t, "application/json; charset=utf-8", rec.Header().Get("Content-Type"))
	var got struct {
		Error string `json:"error"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &got), "an error answer is JSON: %s", rec.Body)
	return got.Error
}

// assertUnchanged checks that a refused write left no override, told the observers nothing
// and logged nothing.
func (w *writable) assertUnchanged(t *testing.T) {
	t.Helper()
	assert.Empty(t, overridesOf(w.m), "no override")
	assert.Empty(t, w.events.heard(), "observers heard nothing")
	assert.Empty(t, w.logs.String(), "nothing logged")
}

// Given an operator the authorization names, when they force a resource open, closed or back
// to auto over HTTP, then the answer is the override as installed, the Manager holds it,
// calls follow it, observers hear it with the note, and the handler logs it with the operator.
func TestOverrideOverHTTP(t *testing.T) {
	tests := []struct {
		give string // the action
		want breaker.Force
		call error // what a call gets, the breaker being OPEN
	}{
		{give: "open", want: breaker.ForceOpen, call: breaker.ErrForcedOpen},
		{give: "closed", want: breaker.ForceClosed, call: nil},
		{give: "auto", want: breaker.Auto, call: breaker.ErrOpen},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			w := newWritable(t, nil, inventoryRule)
			require.NoError(t, w.m.LoadResources(map[string]breaker.ResourceConfig{"inventory": {Force: breaker.ForceClosed}}))
			for range 3 {
				call(w.m, "inventory", fail) // trips the breaker, which its settings let calls through
			}
			w.clk.Advance(time.Second)

			rec := post(w.h, `{"resource": "inventory", "action": "`+tt.give+`", "duration": "10m", "note": "INC-42 ledger"}`)
			require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
			assert.Equal(t, "application/json; charset=utf-8", rec.Header().Get("Content-Type"))
			assert.JSONEq(t, fmt.Sprintf(`{"resource": "inventory", "force": %q, "at": %q, "until": %q, "note": "INC-42 ledger"}`,
				tt.give, stamp(time.Second), stamp(time.Second+10*time.Minute)), rec.Body.String())
			assert.Equal(t, []breaker.OverrideInfo{{Resource: "inventory", Force: tt.want, At: at(time.Second),
				Until: at(time.Second + 10*time.Minute), Note: "INC-42 ledger"}}, overridesOf(w.m))

			err := w.m.Do(context.Background(), "inventory", succeed)
			if tt.call == nil {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, tt.call)
			}
			last := w.events.heard()
			require.NotEmpty(t, last)
			assert.Equal(t, breaker.Override, last[len(last)-1].Reason)
			assert.Equal(t, "INC-42 ledger", last[len(last)-1].Note)
			assert.Contains(t, w.logs.String(), `msg="breakerdebug: override" operator=alice resource=inventory action=`+tt.give)
			assert.Contains(t, w.logs.String(), `note="INC-42 ledger"`)
		})
	}
}

// Given an override, when the operator ends it, then the answer says it ended and a second end
// finds none; a reset closes a tripped breaker and says whether there was one to reset. Each
// change is logged with the operator; what changes nothing is not.
func TestEndAndResetOverHTTP(t *testing.T) {
	w := newWritable(t, nil, inventoryRule)
	require.Equal(t, http.StatusOK, post(w.h, `{"resource": "inventory", "action": "open", "duration": "1h"}`).Code)

	rec := post(w.h, `{"resource": "inventory", "action": "end"}`)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	assert.JSONEq(t, `{"ended": true}`, rec.Body.String())
	assert.Empty(t, overridesOf(w.m))
	assert.JSONEq(t, `{"ended": false}`, post(w.h, `{"resource": "inventory", "action": "end"}`).Body.String())
	assert.Equal(t, 1, strings.Count(w.logs.String(), `msg="breakerdebug: override ended" operator=alice resource=inventory`))

	for range 3 {
		call(w.m, "inventory", fail)
	}
	require.Equal(t, breaker.Open, w.m.Breakers("inventory")[0].State())
	rec = post(w.h, `{"resource": "inventory", "action": "reset"}`)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	assert.JSONEq(t, `{"reset": true}`, rec.Body.String())
	assert.Equal(t, breaker.Closed, w.m.Breakers("inventory")[0].State())
	assert.Contains(t, w.logs.String(), `msg="breakerdebug: reset" operator=alice resource=inventory action=reset`)
	assert.JSONEq(t, `{"reset": false}`, post(w.h, `{"resource": "nothing here", "action": "reset"}`).Body.String(),
		"a resource without breakers has nothing to reset")
	assert.Equal(t, 1, strings.Count(w.logs.String(), "breakerdebug: reset"))
}

// Given a handler without WithOverrides, or with a nil authorization, then every write is
// refused with 403, and nothing changes.
func TestOverridesAreReadOnlyByDefault(t *testing.T) {
	for name, opts := range map[string][]breakerdebug.Option{
		"no option":         nil,
		"nil authorization": {breakerdebug.WithOverrides(nil)},
	} {
		t.Run(name, func(t *testing.T) {
			m, _, _ := newManager(t, inventoryRule)
			events := &changes{}
			m.AddObserver(events)
			h := breakerdebug.Handler(m, opts...)
			for _, body := range []string{
				`{"resource": "inventory", "action": "open", "duration": "10m"}`,
				`{"resource": "inventory", "action": "closed", "duration": "10m"}`,
				`{"resource": "inventory", "action": "auto", "duration": "10m"}`,
				`{"resource": "inventory", "action": "end"}`,
				`{"resource": "inventory", "action": "reset"}`,
			} {
				rec := post(h, body)
				assert.Equal(t, http.StatusForbidden, rec.Code, body)
				assert.Contains(t, errorOf(t, rec), "read-only")
			}
			assert.Empty(t, overridesOf(m))
			assert.Empty(t, events.heard())
		})
	}
}

// Given an authorization that refuses a request, or names no operator, then the write is
// refused with 403 and the authorization's reason, and nothing changes.
func TestOverrideAuthorization(t *testing.T) {
	body := `{"resource": "inventory", "action": "open", "duration": "10m"}`
	w := newWritable(t, nil, inventoryRule)
	rec := send(w.h, http.MethodPost, overridePath, body, http.Header{"Content-Type": {"application/json"}})
	assert.Equal(t, http.StatusForbidden, rec.Code)
	assert.Equal(t, "breakerdebug: not authorized: no X-Operator header", errorOf(t, rec))
	w.assertUnchanged(t)

	nobody := newWritable(t, []breakerdebug.Option{breakerdebug.WithOverrides(func(*http.Request) (string, error) {
		return "", nil
	})}, inventoryRule)
	rec = post(nobody.h, body)
	assert.Equal(t, http.StatusForbidden, rec.Code)
	assert.Contains(t, errorOf(t, rec), "no operator named")
	nobody.assertUnchanged(t)
}

// Only POST writes: any other method on the write path gets 405 with Allow: POST, and the
// status page itself still takes only GET and HEAD.
func TestOverrideMethods(t *testing.T) {
	w := newWritable(t, nil, inventoryRule)
	body := `{"resource": "inventory", "action": "open", "duration": "10m"}`
	header := http.Header{"Content-Type": {"application/json"}, "X-Operator": {"alice"}}
	for _, method := range []string{http.MethodGet, http.MethodHead, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions} {
		rec := send(w.h, method, overridePath, body, header)
		assert.Equal(t, http.StatusMethodNotAllowed, rec.Code, method)
		assert.Equal(t, "POST", rec.Header().Get("Allow"), method)
	}
	w.assertUnchanged(t)
	rec := send(w.h, http.MethodPost, path, body, header)
	assert.Equal(t, http.StatusMethodNotAllowed, rec.Code, "the page is not the write path")
	w.assertUnchanged(t)
}

// Only a JSON body is read: a form (what an HTML form of another site can send), text, or no
// Content-Type gets 415, so does JSON in another charset, and a browser's request from another
// origin gets 403; nothing changes.
func TestOverrideRefusesWhatAFormCanSend(t *testing.T) {
	tests := []struct {
		name string
		give http.Header
		want int
	}{
		{name: "none", give: http.Header{}, want: http.StatusUnsupportedMediaType},
		{name: "form", give: http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}, want: http.StatusUnsupportedMediaType},
		{name: "multipart form", give: http.Header{"Content-Type": {"multipart/form-data; boundary=x"}}, want: http.StatusUnsupportedMediaType},
		{name: "text", give: http.Header{"Content-Type": {"text/plain"}}, want: http.StatusUnsupportedMediaType},
		{name: "JSON in Latin-1", give: http.Header{"Content-Type": {"application/json; charset=latin1"}}, want: http.StatusUnsupportedMediaType},
		{name: "JSON text sequences", give: http.Header{"Content-Type": {"application/json-seq"}}, want: http.StatusUnsupportedMediaType},
		{name: "cross-site fetch", give: http.Header{"Content-Type": {"application/json"}, "Sec-Fetch-Site": {"cross-site"}}, want: http.StatusForbidden},
		{name: "another origin", give: http.Header{"Content-Type": {"application/json"}, "Origin": {"https://evil.example"}}, want: http.StatusForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWritable(t, nil, inventoryRule)
			tt.give.Set("X-Operator", "alice")
			rec := send(w.h, http.MethodPost, overridePath, `{"resource": "inventory", "action": "open", "duration": "10m"}`, tt.give)
			assert.Equal(t, tt.want, rec.Code)
			assert.NotEmpty(t, errorOf(t, rec))
			w.assertUnchanged(t)
		})
	}
	w := newWritable(t, nil, inventoryRule)
	rec := send(w.h, http.MethodPost, overridePath, `{"resource": "inventory", "action": "open", "duration": "10m"}`,
		http.Header{"Content-Type": {"application/json; charset=UTF-8"}, "X-Operator": {"alice"},
			"Sec-Fetch-Site": {"same-origin"}})
	assert.Equal(t, http.StatusOK, rec.Code, "JSON in UTF-8 from the page's own origin: %s", rec.Body)
}

// Bad input gets 400 with a message that says what is wrong (the Manager's own for what it
// validates), a body past 4 KiB gets 413, and nothing changes.
func TestOverrideBadInput(t *testing.T) {
	long := strings.Repeat("n", 1025)
	tests := []struct {
		name string
		give string
		want string // in the message
		code int    // 400 unless set
	}{
		{name: "empty body", give: ``, want: "must be one JSON object"},
		{name: "not JSON", give: `{"resource": "inventory",`, want: "not JSON"},
		{name: "an array", give: `[]`, want: "must be one JSON object"},
		{name: "two objects", give: `{"resource": "inventory", "action": "end"} {}`, want: "must be one JSON object"},
		{name: "unknown field", give: `{"resource": "inventory", "action": "open", "duration": "1m", "force": "open"}`,
			want: `unknown field "force"`},
		{name: "a field in another case", give: `{"Resource": "inventory", "action": "end"}`, want: `unknown field "Resource"`},
		{name: "a field twice", give: `{"resource": "inventory", "resource": "other", "action": "end"}`,
			want: `field "resource" given twice`},
		{name: "a number", give: `{"resource": "inventory", "action": "open", "duration": 600}`,
			want: `field "duration" must be a string`},
		{name: "null", give: `{"resource": "inventory", "action": "open", "duration": "1m", "note": null}`,
			want: `field "note" must be a string`},
		{name: "an object", give: `{"resource": {"name": "inventory"}, "action": "end"}`, want: `field "resource" must be a string`},
		{name: "not UTF-8", give: "{\"resource\": \"inventory\", \"action\": \"open\", \"duration\": \"1m\", \"note\": \"\xff\"}",
			want: "not UTF-8"},
		{name: "no action", give: `{"resource": "inventory", "duration": "1m"}`, want: "action is required"},
		{name: "unknown action", give: `{"resource": "inventory", "action": "close", "duration": "1m"}`,
			want: `action "close" is not one of open, closed, auto, end or reset`},
		{name: "no resource", give: `{"action": "open", "duration": "1m"}`, want: "resource is required"},
		{name: "empty resource", give: `{"resource": "", "action": "end"}`, want: "resource is required"},
		{name: "no duration", give: `{"resource": "inventory", "action": "open"}`, want: "duration is required for open"},
		{name: "not a duration", give: `{"resource": "inventory", "action": "closed", "duration": "10"}`,
			want: `duration "10" is not a Go duration`},
		{name: "zero duration", give: `{"resource": "inventory", "action": "open", "duration": "0s"}`,
			want: "Duration must be positive, got 0s"},
		{name: "negative duration", give: `{"resource": "inventory", "action": "auto", "duration": "-5m"}`,
			want: "Duration must be positive, got -5m0s"},
		{name: "past a day", give: `{"resource": "inventory", "action": "open", "duration": "24h0m1s"}`,
			want: "Duration must be at most 24h0m0s, got 24h0m1s"},
		{name: "duration for end", give: `{"resource": "inventory", "action": "end", "duration": "1m"}`,
			want: "duration is for open, closed and auto: end takes none"},
		{name: "duration for reset", give: `{"resource": "inventory", "action": "reset", "duration": ""}`,
			want: "duration is for open, closed and auto: reset takes none"},
		{name: "note for end", give: `{"resource": "inventory", "action": "end", "note": "why"}`,
			want: "note is for open, closed and auto: end takes none"},
		{name: "long note", give: `{"resource": "inventory", "action": "open", "duration": "1m", "note": "` +
			strings.Repeat("x", 257) + `"}`, want: "Note is 257 bytes long, more than 256"},
		{name: "a name the Manager refuses", give: `{"resource": "` + long + `", "action": "open", "duration": "1m"}`,
			want: "Resource is 1025 bytes long, more than the 1024"},
		{name: "a body past 4 KiB", give: `{"resource": "inventory", "action": "open", "duration": "1m", "note": "` +
			strings.Repeat(" ", 4096) + `"}`, want: "longer than 4096 bytes", code: http.StatusRequestEntityTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWritable(t, nil, inventoryRule)
			rec := post(w.h, tt.give)
			want := tt.code
			if want == 0 {
				want = http.StatusBadRequest
			}
			assert.Equal(t, want, rec.Code)
			assert.Contains(t, errorOf(t, rec), tt.want)
			w.assertUnchanged(t)
		})
	}
}

// Given the handler mounted under a prefix, with http.StripPrefix or with a pattern of its own
// for each method, then the write path is the page's path followed by /override.
func TestOverridePathUnderAPrefix(t *testing.T) {
	w := newWritable(t, nil, inventoryRule)
	stripped := http.NewServeMux()
	stripped.Handle("/ops/breakers/", http.StripPrefix("/ops/breakers", w.h))
	patterns := http.NewServeMux()
	patterns.Handle("GET /debug/breakers", w.h)
	patterns.Handle("POST /debug/breakers/override", w.h)
	header := http.Header{"Content-Type": {"application/json"}, "X-Operator": {"alice"}}
	for name, tt := range map[string]struct {
		mux         http.Handler
		page, write string
	}{
		"StripPrefix": {stripped, "/ops/breakers/", "/ops/breakers/override"},
		"patterns":    {patterns, "/debug/breakers", "/debug/breakers/override"},
	} {
		rec := send(tt.mux, http.MethodPost, tt.write, `{"resource": "inventory", "action": "open", "duration": "1m"}`, header)
		assert.Equal(t, http.StatusOK, rec.Code, "%s: %s", name, rec.Body)
		rec = send(tt.mux, http.MethodGet, tt.page+"?format=json", "", nil)
		assert.Equal(t, http.StatusOK, rec.Code, name)
		assert.Contains(t, rec.Body.String(), `"overrides":[{"resource":"inventory","force":"open"`, name)
		assert.JSONEq(t, `{"ended": true}`, send(tt.mux, http.MethodPost, tt.write, `{"resource": "inventory", "action": "end"}`, header).Body.String(), name)
	}
}

// Given overrides set over HTTP, then the status lists them by name, lists a resource that
// has only an override, marks the breakers of a resource forced closed by an override dry run
// and those of one whose settings' force an override lifted not, and shows each override's
// note beside its change, with no rule for a resource without rules.
func TestStatusShowsOverrides(t *testing.T) {
	search := breaker.Rule{Resource: "search", Strategy: breaker.ErrorCount, Threshold: 1,
		MinRequestAmount: 1, RetryTimeout: time.Minute}
	w := newWritable(t, nil, inventoryRule, search)
	require.NoError(t, w.m.LoadResources(map[string]breaker.ResourceConfig{"search": {Force: breaker.ForceClosed}}))
	for _, body := range []string{
		`{"resource": "search", "action": "auto", "duration": "5m", "note": "the breaker is right"}`,
		`{"resource": "legacy", "action": "open", "duration": "1h", "note": "retired"}`,
		`{"resource": "inventory", "action": "closed", "duration": "2m"}`,
	} {
		require.Equal(t, http.StatusOK, post(w.h, body).Code, body)
	}

	var got struct {
		Resources []struct {
			Resource string `json:"resource"`
			Breakers []struct {
				DryRun bool `json:"dryRun"`
			} `json:"breakers"`
		} `json:"resources"`
		Overrides   []json.RawMessage `json:"overrides"`
		Transitions []map[string]any  `json:"transitions"`
	}
	require.NoError(t, json.Unmarshal(get(w.h, http.MethodGet, path+"?format=json", nil).Body.Bytes(), &got))
	require.Len(t, got.Overrides, 3)
	for i, want := range []string{
		`{"resource": "inventory", "force": "closed", "at": "` + stamp(0) + `", "until": "` + stamp(2*time.Minute) + `", "note": ""}`,
		`{"resource": "legacy", "force": "open", "at": "` + stamp(0) + `", "until": "` + stamp(time.Hour) + `", "note": "retired"}`,
		`{"resource": "search", "force": "auto", "at": "` + stamp(0) + `", "until": "` + stamp(5*time.Minute) + `", "note": "the breaker is right"}`,
	} {
		assert.JSONEq(t, want, string(got.Overrides[i]))
	}
	require.Len(t, got.Resources, 3)
	assert.Equal(t, "inventory", got.Resources[0].Resource)
	assert.True(t, got.Resources[0].Breakers[0].DryRun, "forced closed by the override")
	assert.Equal(t, "legacy", got.Resources[1].Resource, "listed for its override alone")
	assert.Empty(t, got.Resources[1].Breakers)
	assert.Equal(t, "search", got.Resources[2].Resource)
	assert.False(t, got.Resources[2].Breakers[0].DryRun, "the override lifted the settings' ForceClosed")

	require.Len(t, got.Transitions, 3)
	assert.Equal(t, "Override", got.Transitions[0]["reason"])
	assert.Equal(t, "inventory", got.Transitions[0]["resource"])
	assert.NotContains(t, got.Transitions[0], "note", "no note given")
	assert.Equal(t, "retired", got.Transitions[1]["note"])
	assert.NotContains(t, got.Transitions[1], "rule", "legacy has no rules")
	assert.Equal(t, "the breaker is right", got.Transitions[2]["note"])
	assert.Contains(t, got.Transitions[2], "rule")
}

// Given an override set over HTTP for ten minutes, when the fake clock reaches its end, then
// the status no longer lists it (nor the resource it alone listed) and calls pass again.
func TestOverrideExpiresOverHTTP(t *testing.T) {
	w := newWritable(t, nil, inventoryRule)
	for _, body := range []string{
		`{"resource": "inventory", "action": "open", "duration": "10m", "note": "deploy"}`,
		`{"resource": "legacy", "action": "open", "duration": "10m"}`,
	} {
		require.Equal(t, http.StatusOK, post(w.h, body).Code, body)
	}
	listed := func() (resources, overrides []string) {
		var got struct {
			Resources []struct {
				Resource string `json:"resource"`
			} `json:"resources"`
			Overrides []struct {
				Resource string `json:"resource"`
			} `json:"overrides"`
		}
		require.NoError(t, json.Unmarshal(get(w.h, http.MethodGet, path+"?format=json", nil).Body.Bytes(), &got))
		for _, r := range got.Resources {
			resources = append(resources, r.Resource)
		}
		for _, o := range got.Overrides {
			overrides = append(overrides, o.Resource)
		}
		return resources, overrides
	}

	w.clk.Advance(10*time.Minute - time.Nanosecond)
	resources, overrides := listed()
	assert.Equal(t, []string{"inventory", "legacy"}, resources)
	assert.Equal(t, []string{"inventory", "legacy"}, overrides, "a nanosecond before their end")
	assert.ErrorIs(t, w.m.Do(context.Background(), "inventory", succeed), breaker.ErrForcedOpen)

	w.clk.Advance(time.Nanosecond)
	resources, overrides = listed()
	assert.Equal(t, []string{"inventory"}, resources, "legacy had only its override")
	assert.Empty(t, overrides, "both have ended")
	assert.NoError(t, w.m.Do(context.Background(), "inventory", succeed))
	assert.NoError(t, w.m.Do(context.Background(), "legacy", succeed))
	assert.Empty(t, overridesOf(w.m))
}

// Given one writer goroutine per resource setting, replacing and ending its overrides over
// HTTP while another reloads rules and settings and another reads the status, then every
// write succeeds and each resource ends as its writer's last write left it (run with -race).
func TestOverridesAndReloadsOverHTTPConcurrently(t *testing.T) {
	w := newWritable(t, nil, inventoryRule)
	const writers = 4
	actions := []string{"open", "closed", "auto", "end"}
	forceOf := map[string]breaker.Force{"open": breaker.ForceOpen, "closed": breaker.ForceClosed, "auto": breaker.Auto}
	var wg sync.WaitGroup
	var mu sync.Mutex
	answered := map[int]int{} // status code -> count
	for i := range writers {
		wg.Go(func() {
			name := fmt.Sprint("svc", i)
			for round := range 40 + i { // the last round's action is end, open, closed, auto
				var body string
				if a := actions[round%4]; a == "end" {
					body = fmt.Sprintf(`{"resource": %q, "action": "end"}`, name)
				} else {
					body = fmt.Sprintf(`{"resource": %q, "action": %q, "duration": "%dm", "note": "%d"}`, name, a, round+1, round)
				}
				rec := post(w.h, body)
				if actions[round%4] == "end" {
					assert.JSONEq(t, `{"ended": true}`, rec.Body.String(), "it ends the override of the round before")
				}
				mu.Lock()
				answered[rec.Code]++
				mu.Unlock()
			}
		})
	}
	wg.Go(func() {
		for round := range 50 {
			rule := inventoryRule
			rule.Threshold = float64(round + 1)
			rule2 := rule
			rule2.Resource = "svc1"
			assert.NoError(t, w.m.LoadRules([]breaker.Rule{rule, rule2}))
			assert.NoError(t, w.m.LoadResources(map[string]breaker.ResourceConfig{"svc2": {MaxConcurrency: round + 1}}))
		}
	})
	wg.Go(func() {
		for range 20 {
			assert.True(t, json.Valid(get(w.h, http.MethodGet, path+"?format=json", nil).Body.Bytes()))
		}
	})
	wg.Wait()

	assert.Equal(t, map[int]int{http.StatusOK: 40 + 41 + 42 + 43}, answered)
	var want []breaker.OverrideInfo
	for i := 1; i < writers; i++ { // svc0's last write ended its override
		round := 39 + i
		want = append(want, breaker.OverrideInfo{Resource: fmt.Sprint("svc", i), Force: forceOf[actions[round%4]],
			At: at(0), Until: at(time.Duration(round+1) * time.Minute), Note: fmt.Sprint(round)})
	}
	assert.Equal(t, want, overridesOf(w.m))
	assert.Equal(t, float64(50), w.m.Rules()[0].Threshold, "the last rules loaded")
	assert.Equal(t, map[string]breaker.ResourceConfig{"svc2": {MaxConcurrency: 50}}, w.m.Snapshot().Settings)
	assert.ErrorIs(t, w.m.Do(context.Background(), "svc1", succeed), breaker.ErrForcedOpen, "forced open over its new rules")
}

// A breaker of a name whose template setting forces it closed rejects nothing, and the status
// says so, as it does for an override and for settings of its own.
func TestStatusDryRunFollowsTemplateSettings(t *testing.T) {
	m, _, h := newManager(t, breaker.Rule{Resource: "GET *", Strategy: breaker.ErrorCount, Threshold: 1,
		MinRequestAmount: 1, RetryTimeout: time.Minute})
	require.NoError(t, m.LoadResources(map[string]breaker.ResourceConfig{"GET *": {Force: breaker.ForceClosed}}))
	call(m, "GET a", fail)
	rec := send(h, http.MethodGet, path+"?format=json", "", nil)
	require.Equal(t, http.StatusOK, rec.Code)
	var st struct {
		Resources []struct {
			Resource     string `json:"resource"`
			Worst        string `json:"worst"`
			SettingsFrom string `json:"settingsFrom"`
			Breakers     []struct {
				State  string `json:"state"`
				DryRun bool   `json:"dryRun"`
			} `json:"breakers"`
		} `json:"resources"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &st))
	require.Len(t, st.Resources, 1, "GET a; the template setting is a key, not a resource")
	assert.Equal(t, "GET a", st.Resources[0].Resource)
	assert.Equal(t, "GET *", st.Resources[0].SettingsFrom)
	assert.Equal(t, "FORCED", st.Resources[0].Worst)
	require.Len(t, st.Resources[0].Breakers, 1)
	assert.Equal(t, "OPEN", st.Resources[0].Breakers[0].State)
	assert.True(t, st.Resources[0].Breakers[0].DryRun, "forced closed by its template setting")
}

// A template setting is listed under its key, apart from the resources, with the number of
// names it applies to and no count of calls in flight of its own: each name counts its own.
func TestStatusTemplateSettingIsAKey(t *testing.T) {
	m, _, h := newManager(t)
	require.NoError(t, m.LoadResources(map[string]breaker.ResourceConfig{"GET *": {MaxConcurrency: 2}, "own": {}}))
	held, err := m.Enter("GET x")
	require.NoError(t, err)
	defer held.Exit()
	rec := send(h, http.MethodGet, path+"?format=json", "", nil)
	var st struct {
		Resources        []map[string]any `json:"resources"`
		TemplateSettings []map[string]any `json:"templateSettings"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &st))
	require.Len(t, st.Resources, 1, "own; GET x, with only a template setting's settings, is counted under its key")
	assert.Equal(t, "own", st.Resources[0]["resource"])
	assert.Contains(t, st.Resources[0], "inFlight", "own")
	require.Len(t, st.TemplateSettings, 1)
	assert.Equal(t, map[string]any{"key": "GET *", "names": float64(1),
		"settings": map[string]any{"force": "auto", "timeout": "0s", "maxConcurrency": float64(2)}}, st.TemplateSettings[0])
}

// overridesOf is the overrides in force, by resource name, as a Snapshot reads them.
func overridesOf(m *breaker.Manager) []breaker.OverrideInfo {
	var out []breaker.OverrideInfo
	snap := m.Snapshot()
	for _, r := range snap.Resources {
		if r.Override != nil {
			out = append(out, *r.Override)
		}
	}
	return out
}
