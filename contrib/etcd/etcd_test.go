package breakeretcd_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/goleak"
	"go.uber.org/zap"

	"github.com/halfopen/breaker"
	breakeretcd "github.com/halfopen/breaker/contrib/etcd"
)

// No goroutine may outlive the tests: not the watchers', nor, once closed, those of etcd's
// server and clients, which need no exception.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const (
	ruleA = `[{"resource":"orders","strategy":"ErrorRatio","threshold":0.5,"retryTimeout":"10s"}]`
	ruleB = `[{"resource":"orders","strategy":"ErrorCount","threshold":3,"retryTimeout":"5s"}]`
	ruleC = `[{"resource":"payments","strategy":"ErrorCount","threshold":2,"retryTimeout":"1s"}]`
)

var (
	wantA = []breaker.Rule{{Resource: "orders", Strategy: breaker.ErrorRatio, Threshold: 0.5, RetryTimeout: 10 * time.Second}}
	wantB = []breaker.Rule{{Resource: "orders", Strategy: breaker.ErrorCount, Threshold: 3, RetryTimeout: 5 * time.Second}}
	wantC = []breaker.Rule{{Resource: "payments", Strategy: breaker.ErrorCount, Threshold: 2, RetryTimeout: time.Second}}
)

// wait is how long a test waits for etcd or the watcher. A reconnection waits for gRPC's
// backoff, a second or two.
const wait = 20 * time.Second

// etcdServer is an etcd server embedded in the test, on loopback ports that stay the same
// across restarts.
type etcdServer struct {
	t            *testing.T
	dir          string
	client, peer url.URL
	e            *embed.Etcd // nil while stopped
}

// startEtcd starts an etcd server, stopped when the test ends.
func startEtcd(t *testing.T) *etcdServer {
	t.Helper()
	ports := freeURLs(t, 2)
	s := &etcdServer{t: t, dir: t.TempDir(), client: ports[0], peer: ports[1]}
	s.start()
	t.Cleanup(s.stop)
	return s
}

// freeURLs returns the URLs of n loopback ports that were free a moment ago: etcd's
// configuration wants ports, not ":0". They are held open together until all are chosen, so
// no two are the same port, as two ports taken one after the other could be.
func freeURLs(t *testing.T, n int) []url.URL {
	t.Helper()
	urls := make([]url.URL, n)
	for i := range urls {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		defer ln.Close()
		urls[i] = url.URL{Scheme: "http", Host: ln.Addr().String()}
	}
	return urls
}

func (s *etcdServer) start() {
	s.t.Helper()
	cfg := embed.NewConfig()
	cfg.Name = "test"
	cfg.Dir = s.dir
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{s.client}, []url.URL{s.client}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{s.peer}, []url.URL{s.peer}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.TickMs, cfg.ElectionMs = 10, 100 // one member: it elects itself at once
	cfg.UnsafeNoFsync = true             // the data only has to outlive a restart of the server
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	e, err := embed.StartEtcd(cfg)
	require.NoError(s.t, err)
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(wait):
		e.Close()
		s.t.Fatal("etcd did not start")
	}
	s.e = e
}

func (s *etcdServer) stop() {
	if s.e != nil {
		s.e.Close()
		s.e = nil
	}
}

// endpoint is where clients reach the server.
func (s *etcdServer) endpoint() string { return s.client.Host }

// newClient returns a client of endpoint, closed when the test ends.
func newClient(t *testing.T, endpoint string) *clientv3.Client {
	t.Helper()
	c, err := clientv3.New(clientv3.Config{
		Endpoints:   []string{endpoint},
		DialTimeout: wait,
		Logger:      zap.NewNop(),
	})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

// watched is a Manager kept in step with etcd by a Watcher, with channels for what the Watcher
// reports.
type watched struct {
	c      *clientv3.Client
	m      *breaker.Manager
	w      *breakeretcd.Watcher
	loads  chan []breaker.Rule
	errs   chan error
	cancel context.CancelFunc
}

// watch starts a Watcher of key through c for a new Manager, stopped when the test ends; it
// fails the test if Watch fails. The watcher logs nothing unless opts say where.
func watch(t *testing.T, c *clientv3.Client, key string, opts ...breakeretcd.Option) *watched {
	t.Helper()
	return watchManager(t, c, key, breaker.NewManager(), opts...)
}

func watchManager(t *testing.T, c *clientv3.Client, key string, m *breaker.Manager, opts ...breakeretcd.Option) *watched {
	t.Helper()
	x := &watched{c: c, m: m, loads: make(chan []breaker.Rule, 10), errs: make(chan error, 10)}
	ctx, cancel := context.WithCancel(context.Background())
	opts = append([]breakeretcd.Option{breakeretcd.WithLogger(quiet)}, opts...)
	opts = append(opts,
		breakeretcd.OnLoad(func(r []breaker.Rule) { x.loads <- r }),
		breakeretcd.OnError(func(err error) { x.errs <- err }))
	w, err := breakeretcd.Watch(ctx, c, key, m, opts...)
	if err != nil {
		cancel()
		require.NoError(t, err)
	}
	x.w, x.cancel = w, cancel
	t.Cleanup(func() {
		cancel()
		<-w.Done()
	})
	return x
}

// quiet discards the watchers' logs: the tests read OnError instead.
var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// put writes value at key.
func put(t *testing.T, c *clientv3.Client, key, value string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	_, err := c.Put(ctx, key, value)
	require.NoError(t, err)
}

// del deletes key, or with clientv3.WithPrefix every key under it.
func del(t *testing.T, c *clientv3.Client, key string, opts ...clientv3.OpOption) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	_, err := c.Delete(ctx, key, opts...)
	require.NoError(t, err)
}

// next waits for what the watcher reports next.
func next[T any](t *testing.T, ch chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(wait):
		t.Fatal("the watcher reported nothing")
		panic("unreachable")
	}
}

func TestWatchLoadsTheValueThenEachChange(t *testing.T) {
	s := startEtcd(t)
	c := newClient(t, s.endpoint())
	put(t, c, "/rules", ruleA)
	x := watch(t, c, "/rules")
	assert.Equal(t, wantA, x.m.Rules(), "loaded before Watch returns")
	assert.Equal(t, wantA, next(t, x.loads), "OnLoad hears the first load too")

	put(t, c, "/rules", ruleB)
	assert.Equal(t, wantB, next(t, x.loads))
	assert.Equal(t, wantB, x.m.Rules())
	put(t, c, "/rules/other", ruleC) // under the key, but not the key: ignored
	put(t, c, "/rules", ruleB)       // the same value again: nothing to load
	put(t, c, "/rules", ruleA)
	assert.Equal(t, wantA, next(t, x.loads))
	assert.Empty(t, x.loads)
	assert.Empty(t, x.errs)
}

func TestWatchKeepsLastGoodRules(t *testing.T) {
	s := startEtcd(t)
	c := newClient(t, s.endpoint())
	put(t, c, "/rules", ruleA)
	x := watch(t, c, "/rules")
	next(t, x.loads)
	tests := []struct {
		name string
		give string
		want error // nil: any error
	}{
		{"broken JSON", `[{"resource":`, nil},
		{"not an array", `{"resource":"orders"}`, nil},
		{"an invalid rule", `[{"resource":"orders","strategy":"ErrorRatio","threshold":2,"retryTimeout":"1s"}]`,
			breaker.ErrInvalidRule},
		{"two identical rules", "[" + ruleB[1:len(ruleB)-1] + "," + ruleB[1:], breaker.ErrInvalidRule},
	}
	for _, tt := range tests {
		put(t, c, "/rules", tt.give)
		err := next(t, x.errs)
		if tt.want != nil {
			assert.ErrorIs(t, err, tt.want, tt.name)
		}
		assert.Contains(t, err.Error(), `key "/rules"`, tt.name)
		assert.Equal(t, wantA, x.m.Rules(), "%s: the last good rules stay", tt.name)

		put(t, c, "/rules", tt.give) // the same problem again
	}
	put(t, c, "/rules", ruleB)
	assert.Equal(t, wantB, next(t, x.loads))
	assert.Empty(t, x.errs, "each problem was reported once")
	assert.Empty(t, x.loads)
}

func TestWatchDeletedKeyKeepsTheRules(t *testing.T) {
	s := startEtcd(t)
	c := newClient(t, s.endpoint())
	put(t, c, "/rules", ruleA)
	x := watch(t, c, "/rules")
	next(t, x.loads)

	del(t, c, "/rules")
	err := next(t, x.errs)
	assert.ErrorIs(t, err, breakeretcd.ErrNotFound)
	assert.Contains(t, err.Error(), `key "/rules"`)
	assert.Equal(t, wantA, x.m.Rules(), "the last good rules stay")

	put(t, c, "/rules", ruleA) // the same value, written back, loads again
	assert.Equal(t, wantA, next(t, x.loads))
	assert.Empty(t, x.errs)
}

func TestWatchClearOnDelete(t *testing.T) {
	s := startEtcd(t)
	c := newClient(t, s.endpoint())
	x := watch(t, c, "/rules", breakeretcd.ClearOnDelete())
	assert.Empty(t, next(t, x.loads), "a key missing at start loads no rules")

	put(t, c, "/rules", ruleA)
	assert.Equal(t, wantA, next(t, x.loads))
	del(t, c, "/rules")
	assert.Empty(t, next(t, x.loads))
	assert.Empty(t, x.m.Rules())
	assert.Empty(t, x.errs, "a deleted key is not a problem")
}

// Given a key missing at start, when Watch starts, then it reports ErrNotFound, leaves the
// Manager's rules as they are, and loads the key once it is written.
func TestWatchMissingKeyAtStart(t *testing.T) {
	s := startEtcd(t)
	c := newClient(t, s.endpoint())
	m := breaker.NewManager()
	require.NoError(t, m.LoadRules(wantC))
	x := watchManager(t, c, "/rules", m)
	err := next(t, x.errs)
	assert.ErrorIs(t, err, breakeretcd.ErrNotFound)
	assert.Contains(t, err.Error(), `key "/rules"`)
	assert.Equal(t, wantC, m.Rules(), "the Manager's rules stay")
	assert.Empty(t, x.loads)

	put(t, c, "/rules", ruleA)
	assert.Equal(t, wantA, next(t, x.loads))
	assert.Equal(t, wantA, m.Rules())
}

func TestWatchRefusesABadStart(t *testing.T) {
	s := startEtcd(t)
	c := newClient(t, s.endpoint())
	put(t, c, "/broken", `[{"resource":`)
	put(t, c, "/invalid", `[{"resource":"orders","strategy":"ErrorRatio","threshold":2,"retryTimeout":"1s"}]`)
	tests := []struct {
		name string
		give string
		opts []breakeretcd.Option
		want error // nil: any error
	}{
		{"missing, with RequireKey", "/missing", []breakeretcd.Option{breakeretcd.RequireKey()},
			breakeretcd.ErrNotFound},
		{"missing, with RequireKey and ClearOnDelete", "/missing",
			[]breakeretcd.Option{breakeretcd.RequireKey(), breakeretcd.ClearOnDelete()}, breakeretcd.ErrNotFound},
		{"broken JSON", "/broken", nil, nil},
		{"an invalid rule", "/invalid", nil, breaker.ErrInvalidRule},
	}
	for _, tt := range tests {
		m := breaker.NewManager()
		require.NoError(t, m.LoadRules(wantC))
		w, err := breakeretcd.Watch(context.Background(), c, tt.give, m,
			append(tt.opts, breakeretcd.WithLogger(quiet))...)
		assert.Error(t, err, tt.name)
		if tt.want != nil {
			assert.ErrorIs(t, err, tt.want, tt.name)
		}
		assert.Nil(t, w, tt.name)
		assert.Equal(t, wantC, m.Rules(), "%s: nothing changed", tt.name)
	}
}

// Given no etcd, when Watch starts, then it fails once WithTimeout has passed.
func TestWatchRefusesAnUnreachableEtcd(t *testing.T) {
	c := newClient(t, freeURLs(t, 1)[0].Host) // nothing listens there
	w, err := breakeretcd.Watch(context.Background(), c, "/rules", breaker.NewManager(),
		breakeretcd.WithTimeout(100*time.Millisecond))
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), `reading key "/rules"`)
	assert.Nil(t, w)
}

func TestWatchPrefix(t *testing.T) {
	s := startEtcd(t)
	c := newClient(t, s.endpoint())
	put(t, c, "/rules/b", ruleB)
	put(t, c, "/rules/a", ruleA)
	put(t, c, "/rulesets", ruleC) // not under "/rules/"
	x := watch(t, c, "/rules/", breakeretcd.WithPrefix())
	assert.Equal(t, concat(wantA, wantB), next(t, x.loads), "concatenated in key order")

	put(t, c, "/rules/c", ruleC)
	assert.Equal(t, concat(wantA, wantB, wantC), next(t, x.loads))

	put(t, c, "/rules/b", `[{"resource":`)
	err := next(t, x.errs)
	assert.Contains(t, err.Error(), `key "/rules/b"`)
	put(t, c, "/rules/b", ruleA) // fine alone, but the same rule as in /rules/a
	err = next(t, x.errs)
	assert.ErrorIs(t, err, breaker.ErrInvalidRule)
	assert.Contains(t, err.Error(), `key "/rules/b" holds rule 1 of the set`)
	assert.Equal(t, concat(wantA, wantB, wantC), x.m.Rules(), "the last good rules stay")

	// A transaction is one change, loaded at once.
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	_, err = c.Txn(ctx).Then(clientv3.OpDelete("/rules/a"), clientv3.OpPut("/rules/b", ruleB)).Commit()
	require.NoError(t, err)
	assert.Equal(t, concat(wantB, wantC), next(t, x.loads))

	del(t, c, "/rules/", clientv3.WithPrefix())
	err = next(t, x.errs)
	assert.ErrorIs(t, err, breakeretcd.ErrNotFound)
	assert.Contains(t, err.Error(), `prefix "/rules/"`)
	assert.Equal(t, concat(wantB, wantC), x.m.Rules(), "the last good rules stay")
	assert.Empty(t, x.loads)
	assert.Empty(t, x.errs)
}

func concat(rules ...[]breaker.Rule) []breaker.Rule { return slices.Concat(rules...) }

func TestWatchSentinelFormat(t *testing.T) {
	s := startEtcd(t)
	c := newClient(t, s.endpoint())
	put(t, c, "/sentinel", `[{"resource":"orders","grade":1,"count":0.5,"timeWindow":10,"limitApp":"default"}]`)
	x := watch(t, c, "/sentinel", breakeretcd.SentinelFormat())
	rules := next(t, x.loads)
	require.Len(t, rules, 1)
	assert.Equal(t, breaker.ErrorRatio, rules[0].Strategy)
	assert.Equal(t, 10*time.Second, rules[0].RetryTimeout)
}

// Given a watcher, when the etcd server restarts (same ports, same data) and the key then
// changes, then the watcher loads the change.
func TestWatchSurvivesAServerRestart(t *testing.T) {
	s := startEtcd(t)
	c := newClient(t, s.endpoint())
	put(t, c, "/rules", ruleA)
	x := watch(t, c, "/rules")
	next(t, x.loads)

	s.stop() // waits for the server's request timeout (5s) on the open watch
	s.start()
	put(t, c, "/rules", ruleB) // through the watcher's own client, once it reconnects
	assert.Equal(t, wantB, next(t, x.loads))
	assert.Equal(t, wantB, x.m.Rules())
	for len(x.errs) > 0 {
		t.Logf("reported while etcd restarted: %v", <-x.errs) // a lost leader, say: allowed
	}
}

// Given a watcher cut off from etcd, when the key changes twice and etcd compacts its history
// meanwhile, then the watcher, back in touch, finds its next revision compacted, reads the key
// again and loads the value it holds now.
func TestWatchReadsAgainAfterCompaction(t *testing.T) {
	s := startEtcd(t)
	c := newClient(t, s.endpoint())
	put(t, c, "/rules", ruleA)
	p := newProxy(t, s.endpoint())
	var log lockedBuffer
	x := watch(t, newClient(t, p.addr()), "/rules",
		breakeretcd.WithLogger(slog.New(slog.NewTextHandler(&log, nil))))
	next(t, x.loads)

	p.cut()
	put(t, c, "/rules", ruleB)
	put(t, c, "/rules", ruleC)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	resp, err := c.Get(ctx, "/rules")
	require.NoError(t, err)
	_, err = c.Compact(ctx, resp.Header.Revision)
	require.NoError(t, err)
	p.resume()

	assert.Equal(t, wantC, next(t, x.loads), "the value it holds now, and not the one before")
	assert.Contains(t, log.String(), "watch compacted")
	assert.Empty(t, x.errs, "a compaction is not a problem")
}

// Given a watcher, when its client is closed under it, then the watcher reports the problem,
// keeps the rules, and still stops with its context.
func TestWatchReportsAClosedClient(t *testing.T) {
	s := startEtcd(t)
	c := newClient(t, s.endpoint())
	put(t, c, "/rules", ruleA)
	x := watch(t, newClient(t, s.endpoint()), "/rules")
	next(t, x.loads)

	require.NoError(t, x.c.Close())
	err := next(t, x.errs)
	t.Logf("reported: %v", err)
	assert.Contains(t, err.Error(), `key "/rules"`)
	assert.Equal(t, wantA, x.m.Rules(), "the last good rules stay")
}

// Given a watcher cut off from etcd, when its context is done, then it stops.
func TestWatchStopsWithItsContext(t *testing.T) {
	s := startEtcd(t)
	c := newClient(t, s.endpoint())
	put(t, c, "/rules", ruleA)
	p := newProxy(t, s.endpoint())
	x := watch(t, newClient(t, p.addr()), "/rules")
	next(t, x.loads)

	p.cut()
	x.cancel()
	select {
	case <-x.w.Done():
	case <-time.After(wait):
		t.Fatal("the watcher did not stop")
	}
}

// lockedBuffer is a bytes.Buffer for a logger on another goroutine.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// proxy forwards TCP connections on loopback to an address. It can cut them all, and refuse
// new ones until resumed, as a network partition would.
type proxy struct {
	t      *testing.T
	ln     net.Listener
	target string

	mu     sync.Mutex
	cutOff bool
	conns  map[net.Conn]struct{}
	wg     sync.WaitGroup
}

func newProxy(t *testing.T, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &proxy{t: t, ln: ln, target: target, conns: make(map[net.Conn]struct{})}
	p.wg.Add(1)
	go p.serve()
	t.Cleanup(p.close)
	return p
}

func (p *proxy) addr() string { return p.ln.Addr().String() }

func (p *proxy) serve() {
	defer p.wg.Done()
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		out, err := net.Dial("tcp", p.target)
		if err != nil {
			in.Close()
			continue
		}
		p.mu.Lock()
		if p.cutOff {
			p.mu.Unlock()
			in.Close()
			out.Close()
			continue
		}
		p.conns[in], p.conns[out] = struct{}{}, struct{}{}
		p.wg.Add(2)
		go p.copy(in, out)
		go p.copy(out, in)
		p.mu.Unlock()
	}
}

func (p *proxy) copy(dst, src net.Conn) {
	defer p.wg.Done()
	io.Copy(dst, src)
	dst.Close()
	src.Close()
}

// cut closes every connection, and refuses new ones until resume.
func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cutOff = true
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

func (p *proxy) resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cutOff = false
}

func (p *proxy) close() {
	p.ln.Close()
	p.cut()
	p.wg.Wait()
}

// Given rules over the size limit, then Watch refuses them at start, naming the limit; while
// watching, a value that grows over it, or prefix values that together are over it, are
// reported and the last good rules stay.
func TestWatchRefusesRulesOverTheSizeLimit(t *testing.T) {
	s := startEtcd(t)
	c := newClient(t, s.endpoint())
	limit := int64(len(ruleA))
	big := ruleA + " "

	put(t, c, "/big", big)
	w, err := breakeretcd.Watch(context.Background(), c, "/big", breaker.NewManager(),
		breakeretcd.WithMaxSize(limit), breakeretcd.WithLogger(quiet))
	assert.Nil(t, w)
	assert.ErrorIs(t, err, breakeretcd.ErrTooLarge)
	assert.ErrorContains(t, err, fmt.Sprintf(`key "/big" holds %d bytes, over the limit of %d bytes`, len(big), limit))

	put(t, c, "/rules", ruleA)
	x := watch(t, c, "/rules", breakeretcd.WithMaxSize(limit))
	assert.Equal(t, wantA, next(t, x.loads))
	put(t, c, "/rules", big)
	err = next(t, x.errs)
	assert.ErrorIs(t, err, breakeretcd.ErrTooLarge)
	assert.Equal(t, wantA, x.m.Rules(), "the last good rules stay")
	put(t, c, "/rules", ruleB)
	assert.Equal(t, wantB, next(t, x.loads))

	// Under a prefix the keys count too: the watcher keeps each.
	put(t, c, "/set/a", ruleA)
	prefixLimit := int64(len("/set/a") + len(ruleA) + len("/set/c") + len(ruleC))
	p := watch(t, c, "/set/", breakeretcd.WithPrefix(), breakeretcd.WithMaxSize(prefixLimit))
	assert.Equal(t, wantA, next(t, p.loads))
	put(t, c, "/set/c", ruleC)
	assert.Equal(t, concat(wantA, wantC), next(t, p.loads), "at the limit")
	put(t, c, "/set/c", ruleC+" ")
	err = next(t, p.errs)
	assert.ErrorIs(t, err, breakeretcd.ErrTooLarge)
	assert.ErrorContains(t, err, fmt.Sprintf(`prefix "/set/" holds %d bytes in 2 keys`, prefixLimit+1))
	assert.Equal(t, concat(wantA, wantC), p.m.Rules())
	put(t, c, "/set/c", ruleC)
	assert.Equal(t, concat(wantA, wantC), next(t, p.loads))
	put(t, c, "/set/e", "") // an empty value: its key alone takes the prefix past the limit
	err = next(t, p.errs)
	assert.ErrorIs(t, err, breakeretcd.ErrTooLarge)
	assert.ErrorContains(t, err, fmt.Sprintf(`holds %d bytes in 3 keys`, prefixLimit+int64(len("/set/e"))))

	// The default is 16 MiB.
	assert.EqualValues(t, 16<<20, breakeretcd.DefaultMaxSize)
}

// Given a key in the document form, then its rules and settings load together; a bare array
// then replaces the rules and leaves the settings; a document of settings alone replaces them
// and leaves the rules.
func TestWatchDocument(t *testing.T) {
	s := startEtcd(t)
	c := newClient(t, s.endpoint())
	forced := map[string]breaker.ResourceConfig{"orders": {Force: breaker.ForceOpen, MaxConcurrency: 4}}
	put(t, c, "/rules", `{"rules": `+ruleA+`, "resources": {"orders": {"force": "open", "maxConcurrency": 4}}}`)
	x := watch(t, c, "/rules")
	assert.Equal(t, wantA, next(t, x.loads))
	assert.Equal(t, forced, x.m.Snapshot().Settings)

	put(t, c, "/rules", ruleB)
	assert.Equal(t, wantB, next(t, x.loads))
	assert.Equal(t, forced, x.m.Snapshot().Settings, "a bare array leaves the settings as they are")

	put(t, c, "/rules", `{"resources": {}}`)
	assert.Equal(t, wantB, next(t, x.loads), "OnLoad hears the rules in force")
	assert.Empty(t, x.m.Snapshot().Settings, "released")
	assert.Equal(t, wantB, x.m.Rules())
	assert.Empty(t, x.errs)
}

// Given a prefix, then the documents under it merge in key order: rules from the keys that hold
// rules, settings from the keys that hold settings; two keys that set one resource are refused.
func TestWatchPrefixDocuments(t *testing.T) {
	s := startEtcd(t)
	c := newClient(t, s.endpoint())
	put(t, c, "/cfg/a", ruleA)
	put(t, c, "/cfg/ops", `{"resources": {"orders": {"force": "open"}}}`)
	x := watch(t, c, "/cfg/", breakeretcd.WithPrefix())
	assert.Equal(t, wantA, next(t, x.loads))
	assert.Equal(t, map[string]breaker.ResourceConfig{"orders": {Force: breaker.ForceOpen}}, x.m.Snapshot().Settings)

	put(t, c, "/cfg/z", `{"resources": {"orders": {"force": "closed"}}}`)
	err := next(t, x.errs)
	assert.Contains(t, err.Error(), `keys "/cfg/ops" and "/cfg/z" both hold settings of resource "orders"`)
	assert.Equal(t, map[string]breaker.ResourceConfig{"orders": {Force: breaker.ForceOpen}}, x.m.Snapshot().Settings)

	del(t, c, "/cfg/z")
	assert.Equal(t, wantA, next(t, x.loads))
	del(t, c, "/cfg/ops")
	assert.Equal(t, wantA, next(t, x.loads))
	assert.Equal(t, wantA, x.m.Rules())
	assert.Empty(t, x.m.Snapshot().Settings, "the key that held the settings is gone, and they with it")

	// A key's value replaced by one without settings leaves them, as a single key's does.
	put(t, c, "/cfg/ops", `{"resources": {"orders": {"force": "open"}}}`)
	assert.Equal(t, wantA, next(t, x.loads))
	put(t, c, "/cfg/ops", ruleB)
	assert.Equal(t, concat(wantA, wantB), next(t, x.loads))
	assert.Equal(t, map[string]breaker.ResourceConfig{"orders": {Force: breaker.ForceOpen}}, x.m.Snapshot().Settings)
	del(t, c, "/cfg/a")
	assert.Equal(t, wantB, next(t, x.loads))
	assert.Equal(t, map[string]breaker.ResourceConfig{"orders": {Force: breaker.ForceOpen}}, x.m.Snapshot().Settings,
		"a key that never held them is gone")
	del(t, c, "/cfg/ops")
	assert.Equal(t, wantB, next(t, x.loads))
	assert.ErrorIs(t, next(t, x.errs), breakeretcd.ErrNotFound)
	assert.Empty(t, x.m.Snapshot().Settings, "the key whose value set them is gone")
	assert.Empty(t, x.errs)
}

// Given a key of settings that forces a resource open, watched beside rules the program loaded,
// when the key is deleted, then the force is released: the settings go with the key that held
// them, logged, and OnLoad hears of it; the rules stay, and the missing key is reported.
func TestWatchDeletedSettingsKeyReleasesTheSettings(t *testing.T) {
	s := startEtcd(t)
	c := newClient(t, s.endpoint())
	put(t, c, "/ops", `{"resources": {"orders": {"force": "open"}}}`)
	m := breaker.NewManager()
	require.NoError(t, m.LoadRules(wantC))
	logs := &lockedBuffer{}
	x := watchManager(t, c, "/ops", m, breakeretcd.WithLogger(slog.New(slog.NewTextHandler(logs, nil))))
	assert.Equal(t, wantC, next(t, x.loads))
	require.Equal(t, map[string]breaker.ResourceConfig{"orders": {Force: breaker.ForceOpen}}, m.Snapshot().Settings)

	del(t, c, "/ops")
	assert.Equal(t, wantC, next(t, x.loads), "OnLoad hears the rules in force")
	assert.Empty(t, m.Snapshot().Settings, "released")
	assert.Equal(t, wantC, m.Rules(), "the rules stay")
	assert.ErrorIs(t, next(t, x.errs), breakeretcd.ErrNotFound)
	assert.Contains(t, logs.String(), "resource settings removed")
	assert.Empty(t, x.loads)
}

// Given a document of rules and settings at the key, when it is deleted, then the rules stay
// (a deleted key keeps them) and the settings go; a later bare array leaves the settings
// empty.
func TestWatchDeletedDocumentKeepsTheRulesNotTheSettings(t *testing.T) {
	s := startEtcd(t)
	c := newClient(t, s.endpoint())
	put(t, c, "/rules", `{"rules": `+ruleA+`, "resources": {"orders": {"force": "open"}}}`)
	x := watch(t, c, "/rules")
	assert.Equal(t, wantA, next(t, x.loads))

	del(t, c, "/rules")
	assert.Equal(t, wantA, next(t, x.loads))
	assert.Empty(t, x.m.Snapshot().Settings, "released")
	assert.ErrorIs(t, next(t, x.errs), breakeretcd.ErrNotFound)

	put(t, c, "/rules", ruleB)
	assert.Equal(t, wantB, next(t, x.loads))
	assert.Empty(t, x.m.Snapshot().Settings)
	assert.Empty(t, x.errs)
}

// Given a value that says "no rules" in a form a mistake also writes (null, an empty array, a
// document whose "rules" is null), then it is refused with ErrEmptyRules, once, and the last
// good rules stay; {"rules": []} removes every rule, on purpose.
func TestWatchRefusesImplicitlyEmptyRules(t *testing.T) {
	s := startEtcd(t)
	c := newClient(t, s.endpoint())
	put(t, c, "/rules", ruleA)
	x := watch(t, c, "/rules")
	next(t, x.loads)

	// No two in a row give the same error, which would be reported once.
	for _, give := range []string{`null`, `{"rules": null}`, `[]`, `{"rules": null, "resources": {}}`, " [ ]\n"} {
		put(t, c, "/rules", give)
		err := next(t, x.errs)
		assert.ErrorIs(t, err, breakeretcd.ErrEmptyRules, give)
		assert.Contains(t, err.Error(), `key "/rules"`, give)
		assert.Contains(t, err.Error(), `{"rules": []}`, give)
		assert.Equal(t, wantA, x.m.Rules(), "%s: the last good rules stay", give)
	}
	assert.Empty(t, x.loads)

	put(t, c, "/rules", `{"rules": []}`)
	assert.Empty(t, next(t, x.loads))
	assert.Empty(t, x.m.Rules(), "removed on purpose")
	assert.Empty(t, x.errs)
}

// An implicitly empty value is refused under a prefix too, and by Watch at start, and in the
// Sentinel format, which has no explicit form.
func TestWatchRefusesImplicitlyEmptyRulesEverywhere(t *testing.T) {
	s := startEtcd(t)
	c := newClient(t, s.endpoint())
	put(t, c, "/empty", `[]`)
	put(t, c, "/null", `null`)
	for _, key := range []string{"/empty", "/null"} {
		for _, opts := range [][]breakeretcd.Option{nil, {breakeretcd.SentinelFormat()}} {
			m := breaker.NewManager()
			require.NoError(t, m.LoadRules(wantC))
			w, err := breakeretcd.Watch(context.Background(), c, key, m, append(opts, breakeretcd.WithLogger(quiet))...)
			assert.ErrorIs(t, err, breakeretcd.ErrEmptyRules, key)
			assert.Nil(t, w)
			assert.Equal(t, wantC, m.Rules())
		}
	}

	put(t, c, "/cfg/a", ruleA)
	put(t, c, "/cfg/b", ruleB)
	x := watch(t, c, "/cfg/", breakeretcd.WithPrefix())
	assert.Equal(t, concat(wantA, wantB), next(t, x.loads))
	put(t, c, "/cfg/b", `null`)
	err := next(t, x.errs)
	assert.ErrorIs(t, err, breakeretcd.ErrEmptyRules)
	assert.Contains(t, err.Error(), `key "/cfg/b"`)
	assert.Equal(t, concat(wantA, wantB), x.m.Rules())
	put(t, c, "/cfg/b", `{"rules": []}`)
	assert.Equal(t, wantA, next(t, x.loads))
}
