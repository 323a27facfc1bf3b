package breakerdebug_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakerdebug"
	"github.com/halfopen/breaker/breakertest"
)

// event is one server-sent event.
type event struct {
	name, id, data string
}

// stream is an open event stream of a handler served over HTTP.
type stream struct {
	t    *testing.T
	resp *http.Response
	in   *bufio.Scanner
}

// subscribe opens the event stream at url, with the headers given.
func subscribe(t *testing.T, url string, header http.Header) *stream {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { _ = resp.Body.Close() })
	return &stream{t: t, resp: resp, in: bufio.NewScanner(resp.Body)}
}

// next reads the next event, skipping the lines that set no event (retry).
func (s *stream) next() event {
	s.t.Helper()
	var e event
	for s.in.Scan() {
		line := s.in.Text()
		if line == "" {
			if e.name != "" {
				return e
			}
			continue
		}
		field, value, _ := strings.Cut(line, ": ")
		switch field {
		case "event":
			e.name = value
		case "id":
			e.id = value
		case "data":
			e.data = value
		}
	}
	require.FailNow(s.t, "the stream ended", "%v", s.in.Err())
	return e
}

// transitions reads events up to the next status, and returns the seq of each transition.
func (s *stream) transitions() []string {
	s.t.Helper()
	var seqs []string
	for e := s.next(); e.name != "status"; e = s.next() {
		require.Equal(s.t, "transition", e.name)
		var c struct {
			Seq uint64 `json:"seq"`
		}
		require.NoError(s.t, json.Unmarshal([]byte(e.data), &c))
		require.Equal(s.t, strconv.FormatUint(c.Seq, 10), e.id)
		seqs = append(seqs, e.id)
	}
	return seqs
}

// flapping is a Manager whose breaker for "svc" trips on one failure and closes on the next
// call after a second, with the handler served over HTTP.
func flapping(t *testing.T, opts ...breakerdebug.Option) (*breaker.Manager, *breakertest.Clock, *httptest.Server) {
	t.Helper()
	clk := breakertest.NewClock()
	m := breaker.NewManager(breaker.WithClock(clk))
	require.NoError(t, m.LoadRules([]breaker.Rule{{Resource: "svc", Strategy: breaker.ErrorCount, Threshold: 1,
		MinRequestAmount: 1, RetryTimeout: time.Second}}))
	srv := httptest.NewServer(breakerdebug.Handler(m, opts...))
	t.Cleanup(srv.Close)
	return m, clk, srv
}

// flap makes n transitions of svc, n a multiple of 3: a trip, a probe, the close it makes,
// and again.
func flap(m *breaker.Manager, clk *breakertest.Clock, n int) {
	for range n / 3 {
		call(m, "svc", fail) // CLOSED → OPEN
		clk.Advance(time.Second)
		held, _ := m.Enter("svc") // OPEN → HALF_OPEN
		held.Exit()               // HALF_OPEN → CLOSED
	}
}

// Given state changes before a subscriber comes, when it opens the event stream, then it gets
// them as events, oldest first, each with its seq as its id, then the status; and each change
// after, as it happens, followed by the status.
func TestEventStreamReplaysThenFollows(t *testing.T) {
	m, clk, srv := flapping(t)
	flap(m, clk, 3) // trip, probe, close: seq 1 to 3
	s := subscribe(t, srv.URL+path+"/events", nil)
	require.Equal(t, http.StatusOK, s.resp.StatusCode)
	assert.Equal(t, "text/event-stream; charset=utf-8", s.resp.Header.Get("Content-Type"))
	assert.Equal(t, []string{"1", "2", "3"}, s.transitions())

	call(m, "svc", fail)
	e := s.next()
	require.Equal(t, "transition", e.name)
	assert.Equal(t, "4", e.id)
	assert.Contains(t, e.data, `"from":"CLOSED","to":"OPEN","reason":"ThresholdExceeded"`)
	status := s.next()
	require.Equal(t, "status", status.name)
	var st struct {
		Resources []struct {
			Breakers []struct{ State string } `json:"breakers"`
		} `json:"resources"`
		Transitions []any                     `json:"transitions"`
		Events      struct{ Subscribers int } `json:"events"`
	}
	require.NoError(t, json.Unmarshal([]byte(status.data), &st))
	assert.Equal(t, "OPEN", st.Resources[0].Breakers[0].State, "the status after the change")
	assert.Nil(t, st.Transitions, "the stream sends them one by one")
	assert.Equal(t, 1, st.Events.Subscribers)
}

// Given 150 state changes, a new subscriber gets the last 100 of them; one that says which it
// heard last (Last-Event-ID, as a browser does when it reconnects) gets only those after it.
// ?format=events and an Accept of text/event-stream serve the stream at the page's own path.
func TestEventStreamReplaysTheLast100(t *testing.T) {
	m, clk, srv := flapping(t)
	flap(m, clk, 150)
	seqs := subscribe(t, srv.URL+path+"/events", nil).transitions()
	require.Len(t, seqs, 100)
	assert.Equal(t, "51", seqs[0])
	assert.Equal(t, "150", seqs[99])

	seqs = subscribe(t, srv.URL+path+"?format=events", http.Header{"Last-Event-Id": {"147"}}).transitions()
	assert.Equal(t, []string{"148", "149", "150"}, seqs)
	seqs = subscribe(t, srv.URL+path, http.Header{"Accept": {"text/event-stream"}, "Last-Event-Id": {"150"}}).transitions()
	assert.Empty(t, seqs)
}

// Given a bound of one subscriber, a second gets 503 Service Unavailable while the first reads,
// and is served once the first has gone; the JSON counts the subscribers.
func TestEventStreamBoundsItsSubscribers(t *testing.T) {
	_, _, srv := flapping(t, breakerdebug.WithSubscribers(1))
	first := subscribe(t, srv.URL+path+"/events", nil)
	first.transitions()
	second := subscribe(t, srv.URL+path+"/events", nil)
	assert.Equal(t, http.StatusServiceUnavailable, second.resp.StatusCode)
	subscribers := func() int {
		resp, err := http.Get(srv.URL + path + "?format=json")
		require.NoError(t, err)
		defer resp.Body.Close()
		var st struct {
			Events struct{ Subscribers, Limit int } `json:"events"`
		}
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&st))
		require.Equal(t, 1, st.Events.Limit)
		return st.Events.Subscribers
	}
	assert.Equal(t, 1, subscribers())

	require.NoError(t, first.resp.Body.Close())
	require.Eventually(t, func() bool { return subscribers() == 0 }, 10*time.Second, time.Millisecond,
		"the subscriber that went is let go")
	third := subscribe(t, srv.URL+path+"/events", nil)
	assert.Equal(t, http.StatusOK, third.resp.StatusCode)
}

// The stream takes GET alone.
func TestEventStreamTakesGetOnly(t *testing.T) {
	_, _, h := newManager(t)
	rec := get(h, http.MethodPost, path+"/events", nil)
	assert.Equal(t, http.StatusMethodNotAllowed, rec.Code)
	assert.Equal(t, "GET", rec.Header().Get("Allow"))
}

// Given a subscriber served over HTTP, when its client goes, then its handler returns: the
// request's context ends it, and no goroutine is left behind (TestMain checks).
func TestEventStreamEndsWhenTheClientGoes(t *testing.T) {
	m, clk, srv := flapping(t)
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+path+"/events", nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	cancel()
	_ = resp.Body.Close()
	flap(m, clk, 3) // changes after it went: nothing to send them to
}
