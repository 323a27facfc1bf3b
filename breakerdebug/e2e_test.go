//go:build unix

package breakerdebug_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
)

// chromium returns the path of a Chromium binary, or skips the test.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("chromium not installed: run `make e2e-deps` (apt-get install chromium) to run this test")
	return ""
}

// browser is a headless Chromium driven over the DevTools protocol on a pipe (its file
// descriptors 3 and 4, one JSON message after another, each ended by a NUL byte), so that a
// test can load a page, act on the server while the page is open, and read what the page's
// script made of it. Chromium and every process it started are killed by the end of the test.
type browser struct {
	t       *testing.T
	send    io.Writer
	mu      sync.Mutex
	next    int
	waiting map[int]chan cdpMessage
	done    chan struct{} // closed when Chromium's end of the pipe closes
}

// cdpMessage is one message of the DevTools protocol: an answer (ID, Result or Error) or an
// event (Method, Params), which the tests do not need.
type cdpMessage struct {
	ID     int             `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params any             `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *struct {
		Message string `json:"message"`
	} `json:"error,omitempty"`
	SessionID string `json:"sessionId,omitempty"`
}

// startBrowser starts headless Chromium, or skips the test.
func startBrowser(t *testing.T) *browser {
	t.Helper()
	bin := chromium(t)
	toChromium, commands, err := os.Pipe()
	require.NoError(t, err)
	answers, fromChromium, err := os.Pipe()
	require.NoError(t, err)
	// The flags keep Chromium from reaching for the network (which is closed here) and from
	// needing a sandbox (the tests may run as root).
	cmd := exec.Command(bin,
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-background-timer-throttling", "--disable-renderer-backgrounding",
		"--user-data-dir="+t.TempDir(), "--remote-debugging-pipe", "about:blank")
	cmd.ExtraFiles = []*os.File{toChromium, fromChromium} // its fds 3 and 4
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	// Chromium starts helper processes: put them all in a process group of their own, and
	// kill the group after the test.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, cmd.Start())
	require.NoError(t, toChromium.Close())
	require.NoError(t, fromChromium.Close())
	b := &browser{t: t, send: commands, waiting: map[int]chan cdpMessage{}, done: make(chan struct{})}
	go b.read(answers)
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		_ = commands.Close()
		<-b.done // the reader has ended: no goroutine is left behind
		_ = answers.Close()
		if t.Failed() {
			t.Logf("chromium's stderr:\n%s", stderr.String())
		}
	})
	return b
}

// read hands each answer Chromium writes to the command waiting for it, until the pipe closes.
func (b *browser) read(r io.Reader) {
	defer close(b.done)
	in := bufio.NewReader(r)
	for {
		raw, err := in.ReadBytes(0)
		if err != nil {
			return
		}
		var msg cdpMessage
		if json.Unmarshal(raw[:len(raw)-1], &msg) != nil || msg.ID == 0 {
			continue // an event
		}
		b.mu.Lock()
		ch := b.waiting[msg.ID]
		delete(b.waiting, msg.ID)
		b.mu.Unlock()
		if ch != nil {
			ch <- msg
		}
	}
}

// call sends the command method with params, in the page session (or to the browser for ""),
// and decodes its result into result, failing the test on an error or after 30s.
func (b *browser) call(session, method string, params, result any) {
	b.t.Helper()
	ch := make(chan cdpMessage, 1)
	b.mu.Lock()
	b.next++
	id := b.next
	b.waiting[id] = ch
	b.mu.Unlock()
	raw, err := json.Marshal(cdpMessage{ID: id, Method: method, Params: params, SessionID: session})
	require.NoError(b.t, err)
	_, err = b.send.Write(append(raw, 0))
	require.NoError(b.t, err)
	select {
	case msg := <-ch:
		if msg.Error != nil {
			require.FailNow(b.t, method+": "+msg.Error.Message)
		}
		if result != nil {
			require.NoError(b.t, json.Unmarshal(msg.Result, result))
		}
	case <-b.done:
		require.FailNow(b.t, "chromium ended during "+method)
	case <-time.After(30 * time.Second):
		require.FailNow(b.t, "chromium did not answer "+method)
	}
}

// tab is a page open in the browser.
type tab struct {
	b       *browser
	session string
}

// open loads url in a new tab.
func (b *browser) open(url string) *tab {
	b.t.Helper()
	var target struct {
		TargetID string `json:"targetId"`
	}
	b.call("", "Target.createTarget", map[string]any{"url": "about:blank"}, &target)
	var attached struct {
		SessionID string `json:"sessionId"`
	}
	b.call("", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &attached)
	p := &tab{b: b, session: attached.SessionID}
	p.b.call(p.session, "Page.navigate", map[string]any{"url": url}, nil)
	return p
}

// eval returns what the JavaScript expression expr evaluates to in the page, as JSON decodes
// it into a value of type T; a promise is awaited.
func eval[T any](p *tab, expr string) T {
	p.b.t.Helper()
	var out struct {
		Result struct {
			Value T `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text string `json:"text"`
		} `json:"exceptionDetails"`
	}
	p.b.call(p.session, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true,
		"awaitPromise": true}, &out)
	if out.ExceptionDetails != nil {
		require.FailNow(p.b.t, "the page's JavaScript failed: "+out.ExceptionDetails.Text, expr)
	}
	return out.Result.Value
}

// waitFor waits, in the page and for at most limit, until the JavaScript condition cond
// holds, and reports whether it did. The page's own timers do the waiting.
func (p *tab) waitFor(cond string, limit time.Duration) bool {
	p.b.t.Helper()
	return eval[bool](p, `new Promise((resolve) => {
		const end = performance.now() + `+strconv.FormatInt(limit.Milliseconds(), 10)+`;
		const check = () => {
			if (`+cond+`) resolve(true);
			else if (performance.now() > end) resolve(false);
			else setTimeout(check, 5);
		};
		check();
	})`)
}

// live waits until the page rendered a status from the event stream, and returns its DOM.
func (p *tab) live() string {
	p.b.t.Helper()
	require.True(p.b.t, p.waitFor(`document.getElementById("updated") &&
		document.getElementById("updated").textContent.startsWith("Live")`, 10*time.Second),
		"the page never heard the event stream")
	return p.dom()
}

// dom returns the page's DOM as its script left it.
func (p *tab) dom() string {
	p.b.t.Helper()
	return eval[string](p, "document.documentElement.outerHTML")
}

// dumpDOM loads url in headless Chromium, waits until its script rendered the status the
// event stream sent, and returns the DOM.
func dumpDOM(t *testing.T, url string) string {
	t.Helper()
	return startBrowser(t).open(url).live()
}

// section returns the part of dom from the table with id to its end, tables nested in it
// (a template's group of rows) included.
func section(t *testing.T, dom, id string) string {
	t.Helper()
	start := `<table id="` + id + `">`
	i := strings.Index(dom, start)
	require.GreaterOrEqual(t, i, 0, "no %q in the page", start)
	depth := 0
	for j := i; j < len(dom); {
		k := strings.Index(dom[j:], "table")
		require.GreaterOrEqual(t, k, 0, "no end of %q", start)
		j += k
		switch {
		case strings.HasSuffix(dom[:j], "</"):
			depth--
		case strings.HasSuffix(dom[:j], "<"):
			depth++
		}
		j += len("table")
		if depth == 0 {
			return dom[i : j+1]
		}
	}
	require.FailNow(t, "no end of "+start)
	return ""
}

// rowOf returns the table row whose resource cell holds resource (as serialized HTML).
func rowOf(t *testing.T, table, resource string) string {
	t.Helper()
	for _, row := range strings.Split(table, "<tr")[1:] {
		if strings.Contains(row, `<td class="resource">`+resource+`</td>`) {
			return row
		}
	}
	require.FailNow(t, "no row for "+resource, "table:\n%s", table)
	return ""
}

// Given a tripped resource, healthy ones, a tripped DryRun rule, a resource forced open without
// rules and one forced closed whose breaker tripped, when Chromium loads the page, and one more
// resource trips while it is open, then the page shows that trip within a second, from the
// event stream, without asking the server for anything; and it shows each resource with its
// state, the forced ones as FORCED OPEN or FORCED CLOSED and the dry-run breakers as "dry run"
// (none of them counted as open), the settings and calls in flight, the transitions with their
// reasons and seq, and a resource named as markup as plain text.
func TestE2EChromium(t *testing.T) {
	chromium(t) // skip early, before any setup
	const hostile = "<script>alert(1)</script>"
	search := breaker.Rule{Resource: "search", Strategy: breaker.ErrorCount, Threshold: 1,
		MinRequestAmount: 1, RetryTimeout: time.Minute}
	named := breaker.Rule{Resource: hostile, Strategy: breaker.ConsecutiveErrors, Threshold: 2,
		RetryTimeout: time.Minute, MaxRetryTimeout: 5 * time.Minute, RetryJitter: 0.2, ProbeNum: 3}
	shadow := breaker.Rule{ID: "shadow-errors", Resource: "shadow", Strategy: breaker.ErrorCount, Threshold: 1,
		MinRequestAmount: 1, RetryTimeout: time.Minute, DryRun: true}
	bypassed := breaker.Rule{Resource: "bypassed", Strategy: breaker.ErrorCount, Threshold: 1,
		MinRequestAmount: 1, RetryTimeout: time.Minute}
	template := breaker.Rule{Resource: "api/*", Strategy: breaker.ErrorCount, Threshold: 1, RetryTimeout: time.Minute}
	m, clk, h := newManager(t, inventoryRule, paymentsErrors, paymentsSlow, search, named, shadow, bypassed, template)
	require.NoError(t, m.LoadResources(map[string]breaker.ResourceConfig{
		"payments": {Timeout: 1500 * time.Millisecond, MaxConcurrency: 8},
		"legacy":   {Force: breaker.ForceOpen},
		"bypassed": {Force: breaker.ForceClosed},
	}))
	clk.Advance(100 * time.Millisecond)
	for range 3 {
		call(m, "inventory", fail)
	}
	call(m, "payments", succeed)
	call(m, "payments", succeed)
	call(m, "payments", fail)  // 1 failed of 3, none slow: below the thresholds and MinRequestAmount
	call(m, "shadow", fail)    // trips the DryRun rule
	call(m, "bypassed", fail)  // trips the forced-closed resource's breaker
	call(m, "api/users", fail) // trips the breaker the template made for it
	call(m, "api/orders", succeed)
	call(m, hostile, fail) // one failure of the two in a row its rule trips on
	held, err := m.Enter("payments")
	require.NoError(t, err)
	defer held.Exit()

	// The server counts what the page asks it: the page itself, the event stream, and any
	// request for the JSON, which a page that polled would make.
	var polls, streams atomic.Int32
	mux := http.NewServeMux()
	mux.Handle("GET "+path, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Query().Get("format") {
		case "json":
			polls.Add(1)
		case "events":
			streams.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	srv := serveLocal(t, mux)
	page := startBrowser(t).open(srv.URL + path)
	page.live()

	// search trips while the page is open: the page shows it OPEN within a second, without
	// asking the server again.
	tripped := time.Now()
	call(m, "search", fail)
	require.True(t, page.waitFor(`[...document.querySelectorAll("#breakers td.resource")].some((td) =>
		td.textContent === "search" && td.parentElement.querySelector(".badge.open"))`, time.Second),
		"search is not shown OPEN within a second of its trip")
	assert.Less(t, time.Since(tripped), time.Second)
	dom := page.dom()
	assert.Zero(t, polls.Load(), "the page never polls")
	assert.Equal(t, int32(1), streams.Load(), "one event stream, kept open")

	breakers := section(t, dom, "breakers")
	tests := []struct {
		give string // the resource as serialized HTML
		want string // its state, as a badge
	}{
		{give: "inventory", want: `<span class="badge open">OPEN</span>`},
		{give: "payments", want: `<span class="badge closed">CLOSED</span>`},
		{give: "search", want: `<span class="badge open">OPEN</span>`},
		{give: "&lt;script&gt;alert(1)&lt;/script&gt;", want: `<span class="badge closed">CLOSED</span>`},
		{give: "shadow", want: `<span class="badge open">OPEN</span><span class="badge dry-run" title=`},
		{give: "legacy", want: `<td class="muted">no rules</td><td class="state"><span class="badge forced-open">FORCED OPEN</span></td>`},
		{give: "bypassed", want: `<span class="badge forced-closed">FORCED CLOSED</span><span class="badge open">OPEN</span><span class="badge dry-run" title=`},
		{give: "api/users", want: `<span class="badge open">OPEN</span>`},
		{give: "api/orders", want: `<span class="badge closed">CLOSED</span>`},
	}
	for _, tt := range tests {
		assert.Contains(t, rowOf(t, breakers, tt.give), tt.want, tt.give)
	}
	assert.Contains(t, rowOf(t, breakers, "legacy"), `class="row-forced"`, "the forced stripe")
	assert.NotContains(t, rowOf(t, breakers, "shadow"), "row-open", "a dry-run breaker is not striped as open")

	settings := section(t, dom, "settings")
	assert.Contains(t, rowOf(t, settings, "payments"),
		`<td class="auto">auto</td><td class="nowrap">1.5s</td><td class="num">8</td><td class="num">1<span class="muted"> / 8</span></td>`)
	assert.Contains(t, rowOf(t, settings, "legacy"),
		`<span class="badge forced-open">FORCED OPEN</span></td><td class="nowrap">none</td><td class="num">none</td><td class="num">0</td>`)
	assert.Contains(t, rowOf(t, settings, "bypassed"), `<span class="badge forced-closed">FORCED CLOSED</span>`)
	assert.Contains(t, rowOf(t, breakers, "inventory"), "inventory-errors", "the rule's ID")
	assert.Contains(t, rowOf(t, breakers, "inventory"),
		`<div class="rule-text">errors ≥ 3 · min 1 call in 1s · retry 5s</div>`, "the rule, described")
	assert.Contains(t, rowOf(t, breakers, "&lt;script&gt;alert(1)&lt;/script&gt;"),
		`<div class="rule-text">2 failures in a row · retry 1m0s, doubling per failed probe up to 5m0s, `+
			`up to 20% sooner (jitter) · 3 probes in a row to close</div>`, "no window, and the recovery")
	assert.Contains(t, rowOf(t, breakers, "&lt;script&gt;alert(1)&lt;/script&gt;"),
		`<td class="num window">1 failed in a row</td>`, "its run of failures, not a window, and no ratio")
	assert.Contains(t, rowOf(t, breakers, "payments"),
		`>1 failed of 3 <span class="ratio">(33.3%)</span></td>`, "the window counts and the failure ratio")
	assert.Contains(t, breakers, `>0 slow of 3 <span class="ratio">(0%)</span></td>`,
		"payments' second rule: its slow calls and their ratio")

	transitions := section(t, dom, "transitions")
	assert.Contains(t, rowOf(t, transitions, "inventory"), "ThresholdExceeded (3)")
	assert.Contains(t, rowOf(t, transitions, "search"), "ThresholdExceeded (1)")
	assert.NotContains(t, dom, hostile, "the name is text, not an element")
	assert.Contains(t, rowOf(t, transitions, "shadow"), `<span class="badge dry-run" title=`, "a dry-run trip")
	assert.NotContains(t, rowOf(t, transitions, "inventory"), "dry-run")
	var seqs []string
	for _, m := range regexp.MustCompile(`<td class="num">(\d+)</td></tr>`).FindAllStringSubmatch(transitions, -1) {
		seqs = append(seqs, m[1])
	}
	assert.Equal(t, []string{"5", "4", "3", "2", "1"}, seqs, "the transitions, newest first by seq")
	assert.Contains(t, rowOf(t, transitions, "api/users"), "api/*", "a template's breaker names its template")
	assert.Contains(t, strings.SplitN(transitions, "</tr>", 3)[1], `<td class="resource">search</td>`,
		"search tripped last, while the page was open, and is listed first")
	assert.Contains(t, dom, "9 breakers on 9 resources: 3 open, 0 half-open, 4 closed; 2 dry run (rejecting nothing); "+
		"1 resource forced open; 1 resource forced closed; 2 resources with breakers from templates "+
		"(2 of at most 10000 breakers, 0 dropped)")
}

// cellsOf returns the texts of the cells of class "num" in row, in order.
func cellsOf(row string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`<td class="num">([^<]*)</td>`).FindAllStringSubmatch(row, -1) {
		out = append(out, m[1])
	}
	return out
}

// wantCells is what the page should show for c, the last 10 seconds and then the minute,
// formatted from the JSON as page.js does.
func wantCells(c callsJSON) []string {
	rate := func(n uint64) string { return strconv.FormatFloat(float64(n)/60, 'f', 2, 64) }
	rate10 := func(n uint64) string { return strconv.FormatFloat(float64(n)/10, 'f', 2, 64) }
	pct := func(v float64, ran uint64) string {
		if ran == 0 {
			return "—"
		}
		return strconv.FormatFloat(v, 'f', -1, 64) + "%"
	}
	rt := func(s string) string {
		if s == "" {
			return "—"
		}
		return s
	}
	last := c.Last10s
	return []string{rate10(last.Calls), pct(last.ErrorPercent, last.Ran), pct(last.RefusedPercent, last.Ran),
		pct(last.SlowPercent, last.Ran), rate(c.Calls), rate(c.Rejected["open"]), rate(c.Rejected["forced_open"]),
		rate(c.Rejected["concurrency_limit"]), rate(c.Failures), rate(c.Refused), rate(c.Slow),
		pct(c.ErrorPercent, c.Ran), pct(c.SlowPercent, c.Ran), rt(c.RTMax)}
}

// Given traffic over ten seconds of a fake clock (calls that pass, fail, are refused, are slow,
// rejected by an OPEN breaker, by force and by the concurrency limit, and calls under a
// misspelt name), an
// OPEN breaker past its retry time and a HALF_OPEN one past its probe deadline, when Chromium
// renders the page, then every number in the calls tables is the JSON's, a few of them checked
// against values worked out by hand, the sparkline has a point per second, the misspelt name is
// listed without rules, and the retry column says "probe due" and "probe timed out"; a minute
// on, a rule under a misspelt name is listed as configured and not called, "did you mean payments".
func TestE2EDashboard(t *testing.T) {
	chromium(t)
	hang := breaker.Rule{ID: "hang", Resource: "hang", Strategy: breaker.ErrorCount, Threshold: 1,
		MinRequestAmount: 1, RetryTimeout: time.Second, ProbeTimeout: 2 * time.Second}
	m, clk, h := newRecorded(t, nil, inventoryRule, paymentsErrors, paymentsSlow, hang)
	require.NoError(t, m.LoadResources(map[string]breaker.ResourceConfig{
		"legacy":  {Force: breaker.ForceOpen},
		"limited": {MaxConcurrency: 1},
	}))
	start := clk.Now().Truncate(time.Second)
	at := func(d time.Duration) { clk.Set(start.Add(d)) }

	at(100 * time.Millisecond)
	for range 5 {
		call(m, "inventory", fail) // 3 failures trip it, 2 rejections; retry at 5.1s
	}
	call(m, "hang", fail) // OPEN, retry at 1.1s
	for range 3 {
		call(m, "legacy", succeed)
	}
	at(1200 * time.Millisecond)
	probe, err := m.Enter("hang") // HALF_OPEN, probe deadline 3.2s
	require.NoError(t, err)
	defer probe.Exit()
	for range 12 {
		timed(m, clk, "payments", 3*time.Millisecond, nil)
	}
	at(2100 * time.Millisecond)
	for range 4 {
		timed(m, clk, "payments", 3*time.Millisecond, nil)
	}
	for range 2 {
		timed(m, clk, "payments", 150*time.Millisecond, nil)
	}
	for range 4 { // 4 of 10 in the second: payments stays CLOSED
		timed(m, clk, "payments", 3*time.Millisecond, errDown)
	}
	held, err := m.Enter("limited")
	require.NoError(t, err)
	defer held.Exit()
	call(m, "limited", succeed) // over the limit
	at(3100 * time.Millisecond)
	for range 7 {
		call(m, "inventroy", succeed)
	}
	const hostile = "<b>x</b>"
	call(m, hostile, succeed)
	at(4100 * time.Millisecond)
	for _, err := range []error{breaker.CountAs(errDown, breaker.Refused), breaker.CountAs(errDown, breaker.Refused),
		errDown, nil} {
		call(m, "@server POST /quota", func(context.Context) error { return err })
	}
	at(11500 * time.Millisecond) // the last 10 s are seconds 2 to 11

	srv := serveLocal(t, h)

	dom := dumpDOM(t, srv.URL+path)
	st := readStatus(t, h)

	calls := section(t, dom, "calls")
	unruled := section(t, dom, "unruled")
	for _, r := range st.Resources {
		require.NotNil(t, r.Calls, r.Resource)
		assert.Equal(t, wantCells(*r.Calls), cellsOf(rowOf(t, calls, r.Resource)), r.Resource)
	}
	require.Len(t, st.Unruled, 3)
	for _, u := range st.Unruled {
		name := strings.NewReplacer("<", "&lt;", ">", "&gt;").Replace(u.Resource)
		assert.Equal(t, wantCells(u.Calls), cellsOf(rowOf(t, unruled, name)), u.Resource)
	}
	assert.NotContains(t, dom, hostile, "the name is text, not markup")

	// By hand: payments had 22 calls in the minute, 4 failed and 2 slow of 22 that ran, 20
	// under 5ms and 2 under 200ms, the longest 150ms; 10 of them in the last 10 s (second 2), 4
	// failed, 2 slow. inventory 5 calls, 2 rejected by its OPEN breaker, 3 that took no time,
	// none in the last 10 s; legacy 3 rejected by force, none ran; limited 2 calls, 1 over the
	// limit.
	assert.Equal(t, []string{"1.00", "40%", "0%", "20%",
		"0.37", "0.00", "0.00", "0.00", "0.07", "0.00", "0.03", "18.2%", "9.1%", "150ms"},
		cellsOf(rowOf(t, calls, "payments")))
	assert.Equal(t, []string{"0.00", "—", "—", "—",
		"0.08", "0.03", "0.00", "0.00", "0.05", "0.00", "0.00", "100%", "0%", "0s"},
		cellsOf(rowOf(t, calls, "inventory")))
	legacy := cellsOf(rowOf(t, calls, "legacy"))
	assert.Equal(t, "0.05", legacy[6], "forced/s")
	assert.Equal(t, []string{"—", "—"}, legacy[11:13], "no share of errors or slow calls: none ran")
	assert.Equal(t, "0.02", cellsOf(rowOf(t, calls, "limited"))[7])
	assert.Equal(t, "0.12", cellsOf(rowOf(t, unruled, "inventroy"))[4])
	assert.Contains(t, rowOf(t, unruled, "inventroy"), `<td class="muted">no rules</td>`)
	// The route: 4 calls in second 4, 2 refused apart from the 1 that failed, each side marked.
	assert.Equal(t, []string{"0.40", "25%", "50%", "0%", "0.07", "0.00", "0.00", "0.00", "0.02", "0.03", "0.00",
		"25%", "0%", "0s"}, cellsOf(rowOf(t, unruled, "@server POST /quota")))
	assert.Contains(t, unruled, `<tr data-side="server"><td class="resource">@server POST /quota</td>`)
	assert.Contains(t, unruled, `<tr data-side="client"><td class="resource">inventroy</td>`)
	assert.Contains(t, calls, `<tr data-side="client"><td class="resource">payments</td>`)

	// The sparkline of payments: 60 points, its busiest second (12 calls, 10s ago) at the top.
	points := regexp.MustCompile(`<polyline points="([^"]*)"`).FindStringSubmatch(rowOf(t, calls, "payments"))
	require.Len(t, points, 2)
	pts := strings.Fields(points[1])
	require.Len(t, pts, 60)
	assert.Equal(t, "99.7,1.0", pts[49], "second 1 of 11: 12 calls, the most")
	assert.Equal(t, "0.0,23.0", pts[0], "no calls a minute ago")

	breakers := section(t, dom, "breakers")
	assert.Contains(t, rowOf(t, breakers, "inventory"), "probe due")
	assert.Contains(t, rowOf(t, breakers, "hang"), "probe timed out")
	assert.NotContains(t, breakers, "in -", "no negative times")
	assert.Contains(t, dom, `<div id="uncalled-section" hidden="">`, "not yet a minute recorded")

	// A minute on, with a rule loaded under a misspelt name and calls to payments, the page warns
	// that the rule protects nothing, and names the resource meant.
	typo := paymentsErrors
	typo.ID, typo.Resource = "typo", "paymnets"
	require.NoError(t, m.LoadRules([]breaker.Rule{inventoryRule, paymentsErrors, paymentsSlow, hang, typo}))
	at(75 * time.Second)
	call(m, "payments", succeed)
	dom = dumpDOM(t, srv.URL+path)
	assert.NotContains(t, dom, `<div id="uncalled-section" hidden="">`)
	row := rowOf(t, section(t, dom, "uncalled"), "paymnets")
	assert.Contains(t, row, `<td class="warning">did you mean payments</td>`)
	assert.Contains(t, row, `<td>rules</td>`)
}

// Given a route the program serves and a host it calls, each with an ErrorRatio rule whose
// window holds bad calls, the route's refused among them (the status embedded in the page
// edited to say one was refused, as Stats.Refused says it once the core counts it), when
// Chromium renders that page, then the route's window shows its refused calls apart from its
// failed ones, the host's window as before, and each row, the transitions' too, its side.
func TestE2EWindowShowsRefusedAndSides(t *testing.T) {
	chromium(t)
	const route, host = "@server POST /orders", "POST partner.example:443"
	rule := func(name string) breaker.Rule {
		return breaker.Rule{ID: "errors", Resource: name, Strategy: breaker.ErrorRatio, Threshold: 0.9,
			MinRequestAmount: 100, RetryTimeout: time.Minute}
	}
	const tripped = "@server GET /tripped"
	m, _, h := newManager(t, rule(route), rule(host), breaker.Rule{Resource: tripped, Strategy: breaker.ErrorCount,
		Threshold: 1, MinRequestAmount: 1, RetryTimeout: time.Minute})
	refuse := func(context.Context) error { return breaker.CountAs(errDown, breaker.Refused) }
	for _, fn := range []func(context.Context) error{fail, refuse, succeed} {
		call(m, route, fn) // 2 bad of 3, 1 refused
	}
	for _, fn := range []func(context.Context) error{fail, succeed, succeed} {
		call(m, host, fn) // 1 bad of 3
	}
	call(m, tripped, fail) // a transition of a route
	page := get(h, http.MethodGet, path, nil)
	require.Equal(t, http.StatusOK, page.Code)
	body := regexp.MustCompile(`"bad":2,"refused":\d+`).ReplaceAllString(page.Body.String(), `"bad":2,"refused":1`)
	require.Equal(t, 1, strings.Count(body, `"bad":2,"refused":1`), "the route's window, edited")
	srv := serveLocal(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("format") == "events" {
			http.NotFound(w, r) // the page keeps the status it carries
			return
		}
		for k, v := range page.Header() {
			w.Header()[k] = v
		}
		_, _ = io.WriteString(w, body)
	}))

	tab := startBrowser(t).open(srv.URL + path)
	require.True(t, tab.waitFor(`document.querySelectorAll("#breakers td.window").length === 3`, 10*time.Second))
	dom := tab.dom()
	breakers := section(t, dom, "breakers")
	assert.Contains(t, rowOf(t, breakers, route), `>1 failed + 1 refused of 3 <span class="ratio">(66.7%)</span></td>`)
	assert.Contains(t, rowOf(t, breakers, host), `>1 failed of 3 <span class="ratio">(33.3%)</span></td>`)
	assert.Contains(t, breakers, `data-side="server"><td class="resource">`+route+`</td>`)
	assert.Contains(t, breakers, `data-side="client"><td class="resource">`+host+`</td>`)
	assert.Contains(t, section(t, dom, "transitions"), `<tr data-side="server">`)
	after := eval[string](tab, `getComputedStyle(document.querySelector('tr[data-side="server"] > td.resource'), "::after").content`)
	assert.Equal(t, `"server"`, after, "the side shows after the name")
}

// Given an operator's override of a resource with rules, set over HTTP before the page loads,
// and one of a resource without rules set while the page is open, when Chromium renders the
// page, then the overrides table shows each with its force, its end and its note (markup as
// text), the breakers table marks both resources, and the summary and the transitions count
// and name them.
func TestE2EOverrides(t *testing.T) {
	chromium(t)
	w := newWritable(t, nil, inventoryRule, paymentsErrors)
	const hostile = "<b>retired</b> INC-7"
	mux := http.NewServeMux()
	mux.Handle(path+"/", w.h) // the page at path/, the writes at path/override
	srv := serveLocal(t, mux)

	req, err := http.NewRequest(http.MethodPost, srv.URL+path+"/override",
		strings.NewReader(`{"resource": "inventory", "action": "open", "duration": "10m", "note": "ledger deploy"}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Operator", "alice")
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, http.StatusOK, resp.StatusCode)
	w.clk.Advance(time.Minute)

	page := startBrowser(t).open(srv.URL + path + "/page")
	page.live()
	rec := post(w.h, `{"resource": "legacy", "action": "closed", "duration": "1h", "note": "`+hostile+`"}`)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.True(t, page.waitFor(`[...document.querySelectorAll("#overrides td.resource")].some((td) =>
		td.textContent === "legacy")`, time.Second), "the override set while the page is open shows")
	dom := page.dom()

	overrides := section(t, dom, "overrides")
	assert.Contains(t, rowOf(t, overrides, "inventory"),
		`<td class="state"><span class="badge forced-open">FORCED OPEN</span></td><td class="nowrap" title="`+
			stamp(10*time.Minute)+`">00:10:00.000<span class="muted"> (in 9m0s)</span></td><td class="note">ledger deploy</td>`)
	assert.Contains(t, rowOf(t, overrides, "legacy"),
		`<span class="badge forced-closed">FORCED CLOSED</span></td><td class="nowrap" title="`+
			stamp(time.Minute+time.Hour)+`">01:01:00.000<span class="muted"> (in 60m0s)</span></td>`+
			`<td class="note">&lt;b&gt;retired&lt;/b&gt; INC-7</td>`, "set before the first refresh, which shows it")
	assert.NotContains(t, dom, "<b>retired", "the note is text, not markup")

	breakers := section(t, dom, "breakers")
	assert.Contains(t, rowOf(t, breakers, "inventory"), `<span class="badge forced-open">FORCED OPEN</span>`+
		`<span class="badge override" title="forced open until 00:10:00.000 UTC — ledger deploy">override</span>`+
		`<span class="badge closed">`, "its breaker's own state beside the override")
	assert.Contains(t, rowOf(t, breakers, "legacy"), `<td class="muted">no rules</td><td class="state">`+
		`<span class="badge forced-closed">FORCED CLOSED</span><span class="badge override"`)
	assert.Contains(t, dom, "2 breakers on 3 resources: 0 open, 0 half-open, 2 closed; 1 resource forced open; "+
		"1 resource forced closed; 2 operator overrides")
	transitions := section(t, dom, "transitions")
	assert.Contains(t, rowOf(t, transitions, "inventory"), `<div class="note muted">ledger deploy</div>`)
	assert.Contains(t, rowOf(t, transitions, "legacy"), `<td class="muted">—</td>`, "no rules: no state to show")
}

// topRows returns the rows of the table section whose resource cells are its own, the rows
// of the groups nested in it left out.
func topRows(table string) []string {
	for {
		i := strings.Index(table, `<table class="members">`)
		if i < 0 {
			break
		}
		j := strings.Index(table[i:], "</table>")
		table = table[:i] + table[i+j+len("</table>"):]
	}
	body := table[strings.Index(table, "<tbody>"):]
	return strings.Split(body, "<tr")[1:]
}

// Given 100 resources with rules of their own, one OPEN, one HALF_OPEN, one pacing, one
// ramping up, one overridden, a few busy ones and the rest idle; 40 hosts a template rule made;
// a "*" template setting and settings of its own for one shard; and a call of payments (rules,
// no settings of its own) in flight, when Chromium renders the page, then the OPEN one is the
// first row and the rows read worst first, the busiest first, by name in natural order, the 40
// hosts one group line where their worst comes; the pacing and ramping shards are CLOSED and
// marked so; payments shows the "*" setting under its own name with the key "*"; "*" is a key,
// not a resource; and the order and each row's settings' source are the JSON's.
func TestE2EIncident(t *testing.T) {
	chromium(t)
	rule := func(name string) breaker.Rule {
		return breaker.Rule{Resource: name, Strategy: breaker.ErrorCount, Threshold: 1, MinRequestAmount: 1,
			RetryTimeout: time.Minute}
	}
	rules := []breaker.Rule{rule("payments")}
	for i := 1; i <= 99; i++ {
		r := rule("shard-" + strconv.Itoa(i))
		switch i {
		case 3: // HALF_OPEN, its probe held
			r.RetryTimeout = time.Second
		case 8: // ramping up after its probe closed it
			r.RetryTimeout, r.RampUp = time.Second, time.Minute
		case 12: // pacing: half its calls fail, and the others succeed
			r.Strategy, r.Threshold, r.MinRequestAmount, r.Pace = breaker.ErrorRatio, 0.5, 4, true
		}
		rules = append(rules, r)
	}
	rules = append(rules, rule("catalog/*"))
	m, clk, h := newManager(t, rules...)
	require.NoError(t, m.LoadResources(map[string]breaker.ResourceConfig{
		"*":       {Timeout: 500 * time.Millisecond, MaxConcurrency: 20}, // written for the catalog hosts
		"shard-5": {Timeout: time.Second},
	}))
	_, err := m.Override("shard-20", breaker.ForceOpen, 10*time.Minute, "INC-9")
	require.NoError(t, err)
	for _, name := range []string{"shard-57", "shard-3", "shard-8"} {
		call(m, name, fail)
	}
	clk.Advance(1100 * time.Millisecond)
	probe, err := m.Enter("shard-3")
	require.NoError(t, err)
	defer probe.Exit()
	call(m, "shard-8", succeed) // its probe: CLOSED, ramping up
	for _, fn := range []func(context.Context) error{succeed, succeed, fail, fail} {
		call(m, "shard-12", fn) // the fourth starts pacing
	}
	for name, n := range map[string]int{"shard-90": 5, "shard-2": 3, "shard-10": 3} {
		for range n {
			call(m, name, succeed)
		}
	}
	for i := 1; i <= 40; i++ {
		call(m, "catalog/host-"+strconv.Itoa(i), succeed)
	}
	held, err := m.Enter("payments")
	require.NoError(t, err)
	defer held.Exit()

	srv := serveLocal(t, h)

	dom := dumpDOM(t, srv.URL+path)
	var st struct {
		Resources []struct {
			Resource     string `json:"resource"`
			SettingsFrom string `json:"settingsFrom"`
		} `json:"resources"`
	}
	resp, err := srv.Client().Get(srv.URL + path + "?format=json")
	require.NoError(t, err)
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&st))
	require.NoError(t, resp.Body.Close())

	breakers := section(t, dom, "breakers")
	top := topRows(breakers)
	require.Len(t, top, 101, "100 resources and one line for the 40 hosts")
	assert.Contains(t, top[0], `<td class="resource">shard-57</td>`, "the OPEN one first")
	assert.Contains(t, top[0], `<span class="badge open">OPEN</span>`)
	var head []string
	for _, row := range top[:10] {
		if m := regexp.MustCompile(`<td class="resource">([^<]*)</td>`).FindStringSubmatch(row); m != nil {
			head = append(head, m[1])
		} else {
			head = append(head, regexp.MustCompile(`<span class="group-name">([^<]*)</span>`).FindStringSubmatch(row)[1])
		}
	}
	assert.Equal(t, []string{"shard-57", "shard-3", "shard-12", "shard-8", "shard-20", "shard-90", "shard-2",
		"shard-10", "catalog/*", "payments"}, head,
		"OPEN, HALF_OPEN, pacing, ramping, overridden, then the busiest (5, 3, 3 calls; 2 before 10), the "+
			"hosts (1 call each) where their worst comes, then the idle by name")
	assert.Contains(t, top[2], `<span class="badge closed">CLOSED</span><span class="badge pacing" title=`)
	assert.Contains(t, top[3], `<span class="badge closed">CLOSED</span><span class="badge ramping-up" title=`)
	assert.Contains(t, top[8], `<span class="group-name">catalog/*</span> <span class="badge closed">CLOSED</span>`+
		`<span class="tally"> · 40 names: 40 CLOSED</span></summary>`, "one line, its worst state and the counts")
	assert.Equal(t, 1, strings.Count(breakers, "<details"), "one group")
	for _, row := range top {
		assert.NotContains(t, row, `<td class="resource">catalog/host-`, "the hosts are in their group")
	}

	// The page and the JSON: the same order, each row's settings from the same place.
	var order, sources []string
	var wantOrder, wantSources []string
	resourceCell := regexp.MustCompile(`<td class="resource">([^<]*)</td>`)
	from := regexp.MustCompile(`<td class="settings"><div class="applied"><span class="from (?:own|key)" title="[^"]*">([^<]*)</span>`)
	for _, row := range strings.Split(breakers, "<tr")[1:] {
		name := resourceCell.FindStringSubmatch(row)
		if name == nil {
			continue // the header, or a group's line
		}
		if len(order) > 0 && order[len(order)-1] == name[1] {
			continue // a resource's next breaker
		}
		order = append(order, name[1])
		source := "none"
		if m := from.FindStringSubmatch(row); m != nil {
			source = m[1]
		}
		sources = append(sources, source)
	}
	for _, r := range st.Resources {
		wantOrder = append(wantOrder, r.Resource)
		switch r.SettingsFrom {
		case "":
			wantSources = append(wantSources, "none")
		case r.Resource:
			wantSources = append(wantSources, "own")
		default:
			wantSources = append(wantSources, r.SettingsFrom)
		}
	}
	require.Len(t, wantOrder, 140)
	assert.Equal(t, wantOrder, order, "the page lists the resources in the JSON's order")
	assert.Equal(t, wantSources, sources, "and each one's settings from where the JSON says")
	assert.Equal(t, "own", sources[slices.Index(order, "shard-5")])

	assert.Contains(t, rowOf(t, breakers, "payments"), `<td class="settings"><div class="applied">`+
		`<span class="from key" title="from the template setting *">*</span> timeout 500ms · max 20 concurrent · `+
		`1 in flight</div></td>`, "the * setting under its own name, with its key")
	assert.Contains(t, rowOf(t, breakers, "shard-20"), `<div class="override-line">override: forced open until `+
		`00:10:00.000 UTC — INC-9</div>`, "its override, with its end and note")

	assert.Contains(t, rowOf(t, section(t, dom, "transitions"), "shard-12"), "PacingStarted (0.5)",
		"with the ratio that met the threshold")

	settings := section(t, dom, "settings")
	assert.Contains(t, rowOf(t, settings, "*"), `<span class="badge key" title=`, "a key, marked as one")
	assert.Contains(t, rowOf(t, settings, "*"), "139 names", "every name without settings of its own")
	assert.Contains(t, dom, `<p id="summary">140 breakers on 140 resources: 1 open, 1 half-open, 138 closed; `+
		`1 resource forced open; 1 operator override; 1 template setting (*); 40 resources with breakers from templates`,
		"* is not counted as a resource")
}

// serveLocal serves h on a loopback port of its own for the rest of the test, for the browser
// to load.
func serveLocal(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := httptest.NewUnstartedServer(h)
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}
