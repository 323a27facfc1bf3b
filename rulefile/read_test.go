package rulefile_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/rulefile"
)

// polled is a watched rule file whose polls the test makes, one at a time.
type polled struct {
	*watched
	ticks  chan time.Time
	checks chan bool // after each poll: whether it read the content
}

// watchPolled watches a file whose content is already at x.path, polling only when the test
// says. open, if not nil, replaces how the file is opened.
func watchPolled(t *testing.T, path string, open func(string) (*os.File, error), opts ...rulefile.Option) *polled {
	t.Helper()
	x := &polled{
		watched: &watched{t: t, path: path, m: breaker.NewManager(),
			loads: make(chan []breaker.Rule, 10), errs: make(chan error, 10)},
		ticks:  make(chan time.Time),
		checks: make(chan bool, 10),
	}
	ctx, cancel := context.WithCancel(context.Background())
	opts = append(opts, rulefile.WithTestHooks(open, x.ticks, func(read bool) { x.checks <- read }),
		rulefile.OnLoad(func(r []breaker.Rule) { x.loads <- r }),
		rulefile.OnError(func(err error) { x.errs <- err }))
	w, err := rulefile.Watch(ctx, x.path, x.m, opts...)
	require.NoError(t, err)
	x.w, x.cancel = w, cancel
	require.Equal(t, x.m.Rules(), next(t, x.loads))
	t.Cleanup(func() {
		cancel()
		<-w.Done()
	})
	return x
}

// poll makes the watcher poll once and waits until it has handled what it read; it returns
// whether the poll read the content.
func (x *polled) poll() bool {
	x.t.Helper()
	x.ticks <- time.Now()
	return next(x.t, x.checks)
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	tmp := path + ".new"
	require.NoError(t, os.WriteFile(tmp, []byte(content), 0o644))
	require.NoError(t, os.Rename(tmp, path))
}

// Given a file over the size limit, then Watch refuses it, naming the limit, and a file that
// grows over it while watched is reported while the last good rules stay.
func TestWatchRefusesAFileOverTheSizeLimit(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.json")
	require.NoError(t, os.WriteFile(big, []byte(ruleA+strings.Repeat(" ", 100)), 0o644))
	w, err := rulefile.Watch(context.Background(), big, breaker.NewManager(), rulefile.WithMaxSize(100))
	assert.Nil(t, w)
	assert.ErrorIs(t, err, rulefile.ErrTooLarge)
	assert.ErrorContains(t, err, fmt.Sprintf("rulefile: file too large: %s holds %d bytes, over the limit of 100 bytes",
		big, len(ruleA)+100))

	// The default is 16 MiB: a sparse file one byte larger is refused before it is read.
	huge := filepath.Join(dir, "huge.json")
	f, err := os.Create(huge)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(16<<20+1))
	require.NoError(t, f.Close())
	_, err = rulefile.Watch(context.Background(), huge, breaker.NewManager())
	assert.ErrorIs(t, err, rulefile.ErrTooLarge)
	assert.ErrorContains(t, err, "holds 16777217 bytes, over the limit of 16777216 bytes (16 MiB)")

	path := filepath.Join(dir, "rules.json")
	writeFile(t, path, ruleA)
	x := watchPolled(t, path, nil, rulefile.WithMaxSize(int64(len(ruleA))))
	writeFile(t, path, ruleA+" ")
	x.poll()
	err = next(t, x.errs)
	assert.ErrorIs(t, err, rulefile.ErrTooLarge)
	assert.ErrorContains(t, err, fmt.Sprintf("over the limit of %d bytes", len(ruleA)))
	assert.Equal(t, wantA, x.m.Rules(), "the last good rules stay")
}

// Given a file that has not changed since it was read, long enough ago for its modification
// time to vouch for it, then polls do not read it again; a change is read and, being valid,
// loaded at the first poll that sees it.
func TestWatchDoesNotReadAnUnchangedFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rules.json")
	old := time.Now().Add(-time.Hour)
	writeFile(t, path, ruleA)
	require.NoError(t, os.Chtimes(path, old, old))
	x := watchPolled(t, path, nil)
	for i := range 3 {
		assert.False(t, x.poll(), "poll %d read the unchanged file", i)
	}

	writeFile(t, path, ruleB) // just written: its modification time does not vouch for it yet
	assert.True(t, x.poll(), "a changed file is read")
	assert.Equal(t, wantB, next(t, x.loads), "and loaded in the same poll")
	assert.True(t, x.poll(), "a file written moments ago is read at every poll")
	assert.Empty(t, x.loads, "and not loaded again")

	require.NoError(t, os.Chtimes(path, old, old))
	assert.True(t, x.poll(), "its modification time changed")
	assert.False(t, x.poll(), "now it vouches for the content")
	assert.Empty(t, x.loads)
	assert.Empty(t, x.errs)
}

// Given a read problem that clears and then comes back, then it is reported each time it comes
// back, not only the first time. The watched path is a symbolic link swapped, as Kubernetes
// swaps a ConfigMap's, between a rule file and a directory.
func TestWatchReportsAReadProblemAgainAfterARecovery(t *testing.T) {
	dir := t.TempDir()
	rules, sub := filepath.Join(dir, "a.json"), filepath.Join(dir, "sub")
	require.NoError(t, os.WriteFile(rules, []byte(ruleA), 0o644))
	require.NoError(t, os.Mkdir(sub, 0o755))
	path := filepath.Join(dir, "rules.json")
	point := func(target string) { // atomically, by renaming a new link over the old
		require.NoError(t, os.Symlink(target, path+".new"))
		require.NoError(t, os.Rename(path+".new", path))
	}
	point(rules)
	x := watchPolled(t, path, nil)

	for round := range 3 {
		point(sub)
		x.poll()
		err := next(t, x.errs)
		assert.ErrorIs(t, err, rulefile.ErrNotRegular, "round %d", round)
		assert.ErrorContains(t, err, path)

		point(rules) // the same content as before: nothing to load, but the problem is over
		x.poll()
		assert.Empty(t, x.errs)
		assert.Empty(t, x.loads)
	}
	assert.Equal(t, wantA, x.m.Rules())
}

// Given a read the file system does not answer (a hung mount), then the watcher reports it
// once, starts no second read, and stops at once when its context is done; the read's
// goroutine ends when the read returns (goleak checks that at the end).
func TestWatchStopsWhileAReadHangs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rules.json")
	writeFile(t, path, ruleA)
	entered, release := make(chan struct{}, 10), make(chan struct{})
	hang := false
	open := func(p string) (*os.File, error) {
		if hang { // set and read on the goroutine that starts the reads, in turn
			entered <- struct{}{}
			<-release
		}
		return rulefile.OpenNonblocking(p)
	}
	x := watchPolled(t, path, open)
	defer close(release)
	x.poll()

	hang = true
	x.ticks <- time.Now()
	next(t, entered)
	x.ticks <- time.Now() // the read has not returned
	err := next(t, x.errs)
	assert.ErrorContains(t, err, "a read has not returned")
	x.ticks <- time.Now()
	x.ticks <- time.Now() // the watcher has handled the poll before: nothing more reported
	assert.Empty(t, x.errs, "reported once")
	assert.Empty(t, entered, "no second read")

	x.cancel()
	select {
	case <-x.w.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the watcher did not stop while a read hung")
	}
}

// Given a first read that does not return, then Watch returns the context's error as soon as
// the context is done.
func TestWatchReturnsWhileTheFirstReadHangs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rules.json")
	writeFile(t, path, ruleA)
	entered, release := make(chan struct{}), make(chan struct{})
	defer close(release)
	open := func(p string) (*os.File, error) {
		entered <- struct{}{}
		<-release
		return rulefile.OpenNonblocking(p)
	}
	ctx, cancel := context.WithCancel(context.Background())
	returned := make(chan error, 1)
	go func() {
		_, err := rulefile.Watch(ctx, path, breaker.NewManager(), rulefile.WithTestHooks(open, nil, nil))
		returned <- err
	}()
	<-entered
	cancel()
	assert.ErrorIs(t, next(t, returned), context.Canceled)
}

// Given no Manager, then Watch loads the rules into breaker.Default(), as breakerhttp and
// breakerdebug do, rather than panic.
func TestWatchNilManagerIsTheDefault(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rules.json")
	writeFile(t, path, ruleA)
	t.Cleanup(func() { require.NoError(t, breaker.LoadRules(nil)) })
	ctx, cancel := context.WithCancel(context.Background())
	w, err := rulefile.Watch(ctx, path, nil)
	require.NoError(t, err)
	assert.Equal(t, wantA, breaker.Default().Rules())
	cancel()
	<-w.Done()
}

// OnLoad's first call is made by Watch, before it returns, on the caller's goroutine.
func TestWatchFirstOnLoadBeforeWatchReturns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rules.json")
	writeFile(t, path, ruleA)
	var loaded []breaker.Rule // no lock: OnLoad runs on this goroutine the first time
	ctx, cancel := context.WithCancel(context.Background())
	w, err := rulefile.Watch(ctx, path, breaker.NewManager(),
		rulefile.OnLoad(func(r []breaker.Rule) {
			if loaded == nil {
				loaded = r
			}
		}))
	require.NoError(t, err)
	assert.Equal(t, wantA, loaded)
	cancel()
	<-w.Done()
}
