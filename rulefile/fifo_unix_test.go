//go:build unix

package rulefile_test

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/rulefile"
)

// unblockFIFO opens the FIFO at path for writing and closes it, which ends a read or open of
// it that waits for a writer (so that a failing run leaks no goroutine).
func unblockFIFO(path string) {
	if f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
		f.Close()
	}
}

// Given a FIFO at the path, then Watch refuses it at once rather than wait for a writer.
func TestWatchRefusesAFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rules.json")
	require.NoError(t, syscall.Mkfifo(path, 0o644))
	t.Cleanup(func() { unblockFIFO(path) })
	returned := make(chan error, 1)
	go func() {
		_, err := rulefile.Watch(context.Background(), path, breaker.NewManager())
		returned <- err
	}()
	select {
	case err := <-returned:
		assert.ErrorIs(t, err, rulefile.ErrNotRegular)
		assert.ErrorContains(t, err, path)
	case <-time.After(10 * time.Second):
		t.Fatal("Watch waited on the FIFO")
	}
}

// Given a FIFO renamed over the watched file, then the watcher reports it, keeps the last good
// rules, and still stops when its context is done.
func TestWatchReportsAFIFOAndStops(t *testing.T) {
	x := watch(t, ruleA)
	fifo := x.path + ".fifo"
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	require.NoError(t, os.Rename(fifo, x.path))
	t.Cleanup(func() { unblockFIFO(x.path) })
	err := next(t, x.errs)
	assert.ErrorIs(t, err, rulefile.ErrNotRegular)
	assert.Equal(t, wantA, x.m.Rules())

	x.cancel()
	select {
	case <-x.w.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the watcher did not stop")
	}
}
