// Package rulefile keeps the rules of a breaker.Manager in step with a JSON rule file.
//
// Watch loads the file, then polls it and loads it again whenever its content changes and has
// held still for one poll (so a file caught half-written is not loaded). A file that cannot be
// read or parsed, or whose rules are invalid, is reported (logged, and passed to the OnError
// option) and the last good rules stay in force.
//
// Unlike the breaker package, which starts no goroutines, a Watcher runs one goroutine until
// its context is done.
package rulefile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/halfopen/breaker"
)

// Watcher reloads one rule file into one Manager. Create it with Watch.
type Watcher struct {
	path     string
	m        *breaker.Manager
	parse    func([]byte) ([]breaker.Rule, error)
	interval time.Duration
	onError  func(error)
	onLoad   func([]breaker.Rule)
	logger   *slog.Logger

	seen    []byte // the content last loaded or refused
	pending []byte // changed content read once: it is loaded when read the same again
	lastErr string // the last problem reported, so that it is reported once
	done    chan struct{}
}

// Option configures a Watcher.
type Option interface{ apply(*Watcher) }

type optionFunc func(*Watcher)

func (f optionFunc) apply(w *Watcher) { f(w) }

// WithInterval sets how often the file is read; the default is one second. A d <= 0 keeps the
// default.
func WithInterval(d time.Duration) Option {
	return optionFunc(func(w *Watcher) {
		if d > 0 {
			w.interval = d
		}
	})
}

// SentinelFormat reads the file as Sentinel degrade rules (breaker.ParseSentinelRules) rather
// than as breaker's own rules (breaker.ParseRules).
func SentinelFormat() Option {
	return optionFunc(func(w *Watcher) { w.parse = breaker.ParseSentinelRules })
}

// OnError is called, on the watcher's goroutine, with each new problem: a file that cannot be
// read or parsed, or rules the Manager refused. The last good rules stay in force.
func OnError(f func(error)) Option {
	return optionFunc(func(w *Watcher) { w.onError = f })
}

// OnLoad is called, on the watcher's goroutine, after each load of changed rules.
func OnLoad(f func([]breaker.Rule)) Option {
	return optionFunc(func(w *Watcher) { w.onLoad = f })
}

// WithLogger sets where problems are logged; the default, and what nil means, is
// slog.Default().
func WithLogger(l *slog.Logger) Option {
	return optionFunc(func(w *Watcher) {
		if l != nil {
			w.logger = l
		}
	})
}

// Watch loads the rules of the file at path into m, then starts a goroutine that loads them
// again each time the file's content changes, until ctx is done. If the first load fails it
// returns the error and starts nothing, so that a service can refuse to start with bad rules.
func Watch(ctx context.Context, path string, m *breaker.Manager, opts ...Option) (*Watcher, error) {
	w := &Watcher{
		path:     path,
		m:        m,
		parse:    breaker.ParseRules,
		interval: time.Second,
		onError:  func(error) {},
		onLoad:   func([]breaker.Rule) {},
		logger:   slog.Default(),
		done:     make(chan struct{}),
	}
	for _, o := range opts {
		o.apply(w)
	}
	data, err := os.ReadFile(path)
	if err == nil {
		err = w.load(data)
	}
	if err != nil {
		return nil, fmt.Errorf("rulefile: %w", err)
	}
	go w.run(ctx)
	return w, nil
}

// Done is closed when the watcher's goroutine has stopped, after its context is done.
func (w *Watcher) Done() <-chan struct{} { return w.done }

func (w *Watcher) run(ctx context.Context) {
	defer close(w.done)
	tick := time.NewTicker(w.interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			w.check()
		}
	}
}

// check reads the file and loads it if its content changed and then held still for one
// interval: a file caught half-written is not loaded.
func (w *Watcher) check() {
	data, err := os.ReadFile(w.path)
	if err != nil {
		w.pending = nil
		w.report(err)
		return
	}
	switch {
	case bytes.Equal(data, w.seen):
		w.pending = nil
	case !bytes.Equal(data, w.pending):
		w.pending = data
	default:
		w.pending = nil
		if err := w.load(data); err != nil {
			w.report(err)
		}
	}
}

// load parses data and loads its rules into the Manager.
func (w *Watcher) load(data []byte) error {
	w.seen = data
	rules, err := w.parse(data)
	if err != nil {
		return fmt.Errorf("%s: %w", w.path, err)
	}
	if err := w.m.LoadRules(rules); err != nil {
		return fmt.Errorf("%s: %w", w.path, err)
	}
	w.lastErr = ""
	w.onLoad(rules)
	return nil
}

// report logs and passes on a problem, once until it changes.
func (w *Watcher) report(err error) {
	if err.Error() == w.lastErr {
		return
	}
	w.lastErr = err.Error()
	w.logger.Error("rulefile: keeping the last good rules", "path", w.path, "error", err)
	if errors.Is(err, os.ErrNotExist) {
		w.seen = nil // so that the same content, written back, loads again
	}
	w.onError(err)
}
