//go:build unix

package breakerdebug_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
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

// dumpDOM loads url in headless Chromium, lets its scripts run for 3s of virtual time, and
// returns the DOM as they left it. Chromium and every process it started are killed by the
// end of the test, also when it hangs.
func dumpDOM(t *testing.T, url string) string {
	t.Helper()
	bin := chromium(t)
	profile := t.TempDir()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The flags keep Chromium from reaching for the network (which is closed here) and from
	// needing a sandbox (the tests may run as root).
	cmd := exec.CommandContext(ctx, bin,
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+profile, "--virtual-time-budget=3000", "--dump-dom", url)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// Chromium starts helper processes: put them all in a process group of their own, and
	// kill the group on timeout and, in case one lingers, after the test.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second // then stop waiting for a helper that holds stdout open
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }) // before the profile is removed

	err := cmd.Wait()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		require.FailNow(t, "chromium timed out", "stderr:\n%s", stderr.String())
	}
	require.NoError(t, err, "chromium failed; stderr:\n%s", stderr.String())
	return stdout.String()
}

// section returns the part of dom from the table with id to its end.
func section(t *testing.T, dom, id string) string {
	t.Helper()
	return `<table id="` + id + `">` + extract(t, dom, `<table id="`+id+`">`, "</table>")
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

// Given a tripped resource, healthy ones, and one that trips between the page load and its
// first refresh, when Chromium loads the page and runs its script, then the page shows each
// resource with its state, the transitions with their reasons, a resource named as markup
// as plain text, and the state it fetched on refresh.
func TestE2EChromium(t *testing.T) {
	chromium(t) // skip early, before any setup
	const hostile = "<script>alert(1)</script>"
	search := breaker.Rule{Resource: "search", Strategy: breaker.ErrorCount, Threshold: 1,
		MinRequestAmount: 1, RetryTimeout: time.Minute}
	named := breaker.Rule{Resource: hostile, Strategy: breaker.ErrorCount, Threshold: 1,
		MinRequestAmount: 1, RetryTimeout: time.Minute}
	m, clk, h := newManager(t, inventoryRule, paymentsErrors, paymentsSlow, search, named)
	clk.Advance(100 * time.Millisecond)
	for range 3 {
		call(m, "inventory", fail)
	}
	call(m, "payments", succeed)
	call(m, "payments", succeed)

	// search trips when the page first asks for the JSON: only a refresh can show it OPEN.
	var refreshes atomic.Int32
	mux := http.NewServeMux()
	mux.Handle("GET "+path, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("format") == "json" && refreshes.Add(1) == 1 {
			call(m, "search", fail)
		}
		h.ServeHTTP(w, r)
	}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := httptest.NewUnstartedServer(mux)
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	defer srv.Close()

	dom := dumpDOM(t, srv.URL+path)

	assert.GreaterOrEqual(t, refreshes.Load(), int32(1), "the page fetched ?format=json")
	breakers := section(t, dom, "breakers")
	tests := []struct {
		give string // the resource as serialized HTML
		want string // its state, as a badge
	}{
		{give: "inventory", want: `<span class="badge open">OPEN</span>`},
		{give: "payments", want: `<span class="badge closed">CLOSED</span>`},
		{give: "search", want: `<span class="badge open">OPEN</span>`},
		{give: "&lt;script&gt;alert(1)&lt;/script&gt;", want: `<span class="badge closed">CLOSED</span>`},
	}
	for _, tt := range tests {
		assert.Contains(t, rowOf(t, breakers, tt.give), tt.want, tt.give)
	}
	assert.Contains(t, rowOf(t, breakers, "inventory"), "inventory-errors", "the rule's ID")
	assert.Contains(t, rowOf(t, breakers, "payments"), "0 bad of 2", "the window counts")

	transitions := section(t, dom, "transitions")
	assert.Contains(t, rowOf(t, transitions, "inventory"), "ThresholdExceeded (3)")
	assert.Contains(t, rowOf(t, transitions, "search"), "ThresholdExceeded (1)")
	assert.NotContains(t, dom, hostile, "the name is text, not an element")
	assert.Contains(t, dom, "5 breakers on 4 resources: 2 open, 0 half-open, 3 closed")
}
