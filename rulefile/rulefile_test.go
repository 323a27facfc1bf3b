package rulefile_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/rulefile"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const (
	ruleA = `[{"resource":"orders","strategy":"ErrorRatio","threshold":0.5,"retryTimeout":"10s"}]`
	ruleB = `[{"resource":"orders","strategy":"ErrorCount","threshold":3,"retryTimeout":"5s"}]`
)

var (
	wantA = []breaker.Rule{{Resource: "orders", Strategy: breaker.ErrorRatio, Threshold: 0.5, RetryTimeout: 10 * time.Second}}
	wantB = []breaker.Rule{{Resource: "orders", Strategy: breaker.ErrorCount, Threshold: 3, RetryTimeout: 5 * time.Second}}
)

// watched is a rule file watched by a Watcher polling every millisecond, with channels for
// what it reports.
type watched struct {
	t      *testing.T
	path   string
	m      *breaker.Manager
	w      *rulefile.Watcher
	loads  chan []breaker.Rule
	errs   chan error
	cancel context.CancelFunc
}

func watch(t *testing.T, content string, opts ...rulefile.Option) *watched {
	t.Helper()
	x := &watched{t: t, path: filepath.Join(t.TempDir(), "rules.json"), m: breaker.NewManager(),
		loads: make(chan []breaker.Rule, 10), errs: make(chan error, 10)}
	x.write(content)
	ctx, cancel := context.WithCancel(context.Background())
	opts = append(opts, rulefile.WithInterval(time.Millisecond),
		rulefile.OnLoad(func(r []breaker.Rule) { x.loads <- r }),
		rulefile.OnError(func(err error) { x.errs <- err }))
	w, err := rulefile.Watch(ctx, x.path, x.m, opts...)
	require.NoError(t, err)
	x.w, x.cancel = w, cancel
	require.Equal(t, x.m.Rules(), next(t, x.loads), "OnLoad hears the first load too")
	t.Cleanup(func() {
		cancel()
		<-w.Done()
	})
	return x
}

// write replaces the file at once, by renaming a new file over it.
func (x *watched) write(content string) {
	x.t.Helper()
	tmp := x.path + ".new"
	require.NoError(x.t, os.WriteFile(tmp, []byte(content), 0o644))
	require.NoError(x.t, os.Rename(tmp, x.path))
}

// next waits for what the watcher reports next.
func next[T any](t *testing.T, ch chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatal("the watcher reported nothing")
		panic("unreachable")
	}
}

func TestWatchLoadsChanges(t *testing.T) {
	x := watch(t, ruleA)
	assert.Equal(t, wantA, x.m.Rules(), "loaded before Watch returns")
	x.write(ruleB)
	assert.Equal(t, wantB, next(t, x.loads))
	assert.Equal(t, wantB, x.m.Rules())
}

func TestWatchKeepsLastGoodRules(t *testing.T) {
	x := watch(t, ruleA)
	tests := []struct {
		name string
		give func()
		want func(error) bool
	}{
		{"broken JSON", func() { x.write(`[{"resource":`) }, func(err error) bool { return err != nil }},
		{"an invalid rule", func() { x.write(`[{"resource":"orders","strategy":"ErrorRatio","threshold":2,"retryTimeout":"1s"}]`) },
			func(err error) bool { return errors.Is(err, breaker.ErrInvalidRule) }},
		{"a deleted file", func() { require.NoError(t, os.Remove(x.path)) },
			func(err error) bool { return errors.Is(err, os.ErrNotExist) }},
	}
	for _, tt := range tests {
		tt.give()
		err := next(t, x.errs)
		assert.True(t, tt.want(err), "%s: %v", tt.name, err)
		assert.Contains(t, err.Error(), x.path)
		assert.Equal(t, wantA, x.m.Rules(), "%s: the last good rules stay", tt.name)
	}
	x.write(ruleA) // the same content as before the deletion loads again
	assert.Equal(t, wantA, next(t, x.loads))
	assert.Empty(t, x.errs, "each problem was reported once")
}

// A file rewritten in place, as some tools do, ends with its whole content loaded.
func TestWatchRewriteInPlace(t *testing.T) {
	x := watch(t, ruleA)
	half := ruleB[:len(ruleB)/2]
	require.NoError(t, os.WriteFile(x.path, []byte(half), 0o644)) // in place, as some tools do
	require.NoError(t, os.WriteFile(x.path, []byte(ruleB), 0o644))
	assert.Equal(t, wantB, next(t, x.loads))
	select {
	case err := <-x.errs:
		// Only possible if the half file held still for a whole poll; then it was refused.
		assert.Contains(t, err.Error(), "JSON")
	default:
	}
}

func TestWatchRefusesABadFirstLoad(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"not":"an array"}`), 0o644))
	m := breaker.NewManager()
	for _, path := range []string{bad, filepath.Join(dir, "missing.json")} {
		w, err := rulefile.Watch(context.Background(), path, m)
		assert.Error(t, err)
		assert.Nil(t, w)
	}
	assert.Empty(t, m.Rules())
}

func TestWatchStopsWithItsContext(t *testing.T) {
	x := watch(t, ruleA)
	x.cancel()
	select {
	case <-x.w.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the watcher did not stop")
	}
}

func TestWatchSentinelFormat(t *testing.T) {
	x := watch(t, `[{"resource":"orders","grade":1,"count":0.5,"timeWindow":10,"limitApp":"default"}]`,
		rulefile.SentinelFormat())
	rules := x.m.Rules()
	require.Len(t, rules, 1)
	assert.Equal(t, breaker.ErrorRatio, rules[0].Strategy)
	assert.Equal(t, 10*time.Second, rules[0].RetryTimeout)
}

// Given a file in the document form, then its rules and resource settings load together; a
// bare array then replaces the rules and leaves the settings; a document of settings alone
// replaces them and leaves the rules.
func TestWatchDocument(t *testing.T) {
	forced := map[string]breaker.ResourceConfig{"orders": {Force: breaker.ForceOpen, Timeout: 2 * time.Second}}
	x := watch(t, `{"rules": `+ruleA+`, "resources": {"orders": {"force": "open", "timeout": "2s"}}}`)
	assert.Equal(t, wantA, x.m.Rules())
	assert.Equal(t, forced, x.m.Snapshot().Settings)

	x.write(ruleB)
	assert.Equal(t, wantB, next(t, x.loads))
	assert.Equal(t, forced, x.m.Snapshot().Settings, "a bare array leaves the settings as they are")

	x.write(`{"resources": {}}`)
	assert.Equal(t, wantB, next(t, x.loads), "OnLoad hears the rules in force")
	assert.Empty(t, x.m.Snapshot().Settings, "released")
	assert.Equal(t, wantB, x.m.Rules())
	assert.Empty(t, x.errs)
}

// Given a document whose settings are invalid, then nothing of it loads: the rules stay too.
func TestWatchDocumentAllOrNothing(t *testing.T) {
	x := watch(t, ruleA)
	x.write(`{"rules": ` + ruleB + `, "resources": {"orders": {"maxConcurrency": -1}}}`)
	err := next(t, x.errs)
	assert.ErrorIs(t, err, breaker.ErrInvalidRule)
	assert.Contains(t, err.Error(), "maxConcurrency")
	assert.Equal(t, wantA, x.m.Rules())
	assert.Empty(t, x.m.Snapshot().Settings)
}
