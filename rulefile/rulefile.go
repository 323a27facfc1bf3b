// Package rulefile keeps the rules of a breaker.Manager in step with a JSON rule file.
//
// The file is a document as breaker.ParseDocument reads it: a bare JSON array of rules, or an
// object with "rules", "resources" (the resource settings: timeout, maxConcurrency, force), or
// both, which Manager.LoadDocument installs together. A document replaces only what it holds: a
// file without "resources" leaves the settings as they are (write "resources": {} to clear
// them), and one without "rules" leaves the rules.
//
// Watch loads the file, then polls it and loads it again at the first poll that finds its
// content changed and valid. Content that does not parse or load may be a file caught
// half-written: it is reported (logged, and passed to the OnError option) only if it is still
// the same at the next poll, and the last good rules stay in force.
//
// Only a regular file is read (a symbolic link to one is followed), and only up to a size limit
// (WithMaxSize, 16 MiB by default). A poll that finds the file's size, modification time and
// identity as they were at the last read does not read it again. Reads run on a goroutine of
// their own, so that a read the file system does not answer (a hung network mount) never keeps
// Watch or the watcher from returning when their context is done.
//
// Unlike the breaker package, which starts no goroutines, a Watcher runs one goroutine until
// its context is done, and one more for each read, which ends when the read returns.
package rulefile

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/halfopen/breaker"
)

// DefaultMaxSize is the largest rule file Watch reads unless WithMaxSize says otherwise: 16 MiB.
const DefaultMaxSize = 16 << 20

// ErrTooLarge is reported, or returned by Watch, for a file larger than the size limit
// (WithMaxSize). The error wrapping it names the file and the limit.
var ErrTooLarge = errors.New("rulefile: file too large")

// ErrNotRegular is reported, or returned by Watch, when the path names something other than a
// regular file (a directory, a FIFO, a device), which rulefile does not read: a read from a
// FIFO or a device could wait for ever.
var ErrNotRegular = errors.New("rulefile: not a regular file")

// trustAfter is how long after a file's modification time a read must start for its size and
// modification time to vouch for its content at the next poll. A file written within it may be
// written again with the same size and a modification time equal to the one read (file systems
// keep time in steps of up to 2s, and a network file system's clock may differ from ours), so
// until it is older than that it is read at every poll.
const trustAfter = 10 * time.Second

// hungAfter is how long a read may stay out before a poll reports it as a problem: a slow disk
// or a loaded machine may take longer than one interval; a hung mount takes for ever.
const hungAfter = 30 * time.Second

// Watcher reloads one rule file into one Manager. Create it with Watch.
type Watcher struct {
	path     string
	m        *breaker.Manager
	parse    func([]byte) (breaker.Document, error)
	interval time.Duration
	maxSize  int64
	onError  func(error)
	onLoad   func([]breaker.Rule)
	logger   *slog.Logger

	// Set by tests only (export_test.go).
	open       func(path string) (*os.File, error) // opens the file to read it
	ticks      <-chan time.Time                    // polls; nil: a time.Ticker of interval
	afterCheck func(read bool)                     // called after each poll is handled; read: the content was read
	hungAfter  time.Duration                       // hungAfter, or less

	// The fields below belong to Watch, then to the watcher's goroutine. Only hashes of the
	// content are kept, never the content: a large file is held once, while it is loaded.
	last        fileState // the file as the last successful read found it
	seen        [sha256.Size]byte
	haveSeen    bool // seen is the hash of the content last loaded or refused
	pending     [sha256.Size]byte
	havePending bool   // pending is the hash of changed content read once, loaded when read the same again
	readProblem string // the read error last reported; "" once a read succeeds
	loadProblem string // the load error last reported; "" once rules load
	done        chan struct{}
}

// fileState is what a read found out about the file besides its content.
type fileState struct {
	info    os.FileInfo // nil: nothing known
	trusted bool        // info was taken long enough after the file's modification (trustAfter)
}

// unchanged reports whether info describes the same file, with the same size and modification
// time, as s does, and s is trusted to vouch for the content.
func (s fileState) unchanged(info os.FileInfo) bool {
	return s.info != nil && s.trusted && os.SameFile(s.info, info) && s.info.Size() == info.Size() &&
		s.info.ModTime().Equal(info.ModTime()) && s.info.Mode() == info.Mode()
}

// Option configures a Watcher.
type Option interface{ apply(*Watcher) }

type optionFunc func(*Watcher)

func (f optionFunc) apply(w *Watcher) { f(w) }

// WithInterval sets how often the file is polled; the default is one second. A d <= 0 keeps the
// default.
func WithInterval(d time.Duration) Option {
	return optionFunc(func(w *Watcher) {
		if d > 0 {
			w.interval = d
		}
	})
}

// WithMaxSize sets the largest file, in bytes, that is read; the default is DefaultMaxSize
// (16 MiB). A larger file is refused with an error wrapping ErrTooLarge that names the limit,
// and at most n+1 bytes of it are read. An n <= 0 keeps the default.
func WithMaxSize(n int64) Option {
	return optionFunc(func(w *Watcher) {
		if n > 0 {
			w.maxSize = n
		}
	})
}

// SentinelFormat reads the file as a JSON array of Sentinel degrade rules
// (breaker.ParseSentinelRules) rather than as breaker's own document (breaker.ParseDocument).
// Such a file holds rules only; the resource settings are left as they are.
func SentinelFormat() Option {
	return optionFunc(func(w *Watcher) { w.parse = parseSentinel })
}

// parseSentinel reads Sentinel degrade rules as a document of rules alone.
func parseSentinel(data []byte) (breaker.Document, error) {
	rules, err := breaker.ParseSentinelRules(data)
	return breaker.Document{Rules: rules, HasRules: err == nil}, err
}

// OnError is called, on the watcher's goroutine, with each new problem: a file that cannot be
// read, is not a regular file, is too large or cannot be parsed, rules the Manager refused, a
// read that has not returned after 30 seconds. The last good rules stay in force. A problem is
// reported once; a read problem again after a read has succeeded in between, and a problem
// with the content again after rules have loaded in between. Watch does not call it: it
// returns the problems of the first load.
func OnError(f func(error)) Option {
	return optionFunc(func(w *Watcher) { w.onError = f })
}

// OnLoad is called after each load of a changed file, the first one included, with the rules
// in force after it (the Manager's, when the file holds resource settings only): for the first
// load, by Watch on the caller's goroutine before Watch returns; after that, on the watcher's
// goroutine.
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

// Watch loads the rules of the file at path into m (nil means breaker.Default()), then starts a
// goroutine that loads them again each time the file's content changes, until ctx is done. If
// the first load fails it returns the error and starts nothing, so that a service can refuse to
// start with bad rules. If ctx is done before the first read returns, Watch returns ctx's error
// at once; the read, left on its own goroutine, ends when the file system answers.
func Watch(ctx context.Context, path string, m *breaker.Manager, opts ...Option) (*Watcher, error) {
	if m == nil {
		m = breaker.Default()
	}
	w := &Watcher{
		path:      path,
		m:         m,
		parse:     breaker.ParseDocument,
		interval:  time.Second,
		maxSize:   DefaultMaxSize,
		onError:   func(error) {},
		onLoad:    func([]breaker.Rule) {},
		logger:    slog.Default(),
		open:      openNonblocking,
		hungAfter: hungAfter,
		done:      make(chan struct{}),
	}
	for _, o := range opts {
		o.apply(w)
	}
	var res readResult
	select {
	case <-ctx.Done():
		return nil, fmt.Errorf("rulefile: %s: %w", path, ctx.Err())
	case res = <-w.startRead():
	}
	err := res.err
	if err == nil {
		w.last = res.state
		err = w.load(res.data, res.sum)
	}
	if err != nil {
		if !errors.Is(err, ErrTooLarge) && !errors.Is(err, ErrNotRegular) { // those say "rulefile: "
			err = fmt.Errorf("rulefile: %w", err)
		}
		return nil, err
	}
	go w.run(ctx)
	return w, nil
}

// Done is closed when the watcher's goroutine has stopped, after its context is done. It does
// not wait for a read that has not returned: that read's goroutine ends when the read does.
func (w *Watcher) Done() <-chan struct{} { return w.done }

func (w *Watcher) run(ctx context.Context) {
	defer close(w.done)
	ticks := w.ticks
	if ticks == nil {
		tick := time.NewTicker(w.interval)
		defer tick.Stop()
		ticks = tick.C
	}
	var reading <-chan readResult // the read in flight, if any
	var readStart time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticks:
			if reading != nil { // one read at a time: a hung mount must not pile them up
				if time.Since(readStart) >= w.hungAfter {
					w.reportRead(fmt.Errorf("%s: a read has not returned within %v; not reading again until it does",
						w.path, w.hungAfter))
				}
				continue
			}
			reading, readStart = w.startRead(), time.Now()
		case res := <-reading:
			reading = nil
			w.check(res)
			if w.afterCheck != nil {
				w.afterCheck(res.data != nil)
			}
		}
	}
}

// readResult is what one read of the file found.
type readResult struct {
	state fileState
	data  []byte            // nil when the file was unchanged and so not read
	sum   [sha256.Size]byte // of data
	err   error
}

// startRead reads the file on a goroutine of its own and returns where its result will be sent.
// The channel is buffered, so the goroutine ends when the read returns, whether or not anyone
// still waits for it.
func (w *Watcher) startRead() <-chan readResult {
	ch := make(chan readResult, 1)
	prev := w.last
	if w.havePending {
		prev = fileState{} // pending content is read again, to be loaded
	}
	go func() { ch <- w.read(prev) }()
	return ch
}

// read opens the file without blocking, refuses anything but a regular file, skips a file
// that prev vouches is unchanged, and reads at most maxSize+1 bytes. It only reads fields set
// before the watcher started, so it may run on any goroutine.
func (w *Watcher) read(prev fileState) readResult {
	f, err := w.open(w.path)
	if err != nil {
		return readResult{err: err}
	}
	defer f.Close()
	start := time.Now()
	info, err := f.Stat()
	if err != nil {
		return readResult{err: err}
	}
	if !info.Mode().IsRegular() {
		return readResult{err: fmt.Errorf("%w: %s is %s", ErrNotRegular, w.path, describeType(info.Mode()))}
	}
	state := fileState{info: info, trusted: info.ModTime().Before(start.Add(-trustAfter))}
	if prev.unchanged(info) {
		return readResult{state: state}
	}
	if info.Size() > w.maxSize {
		return readResult{err: w.tooLarge(fmt.Sprintf("%d bytes", info.Size()))}
	}
	data, err := io.ReadAll(io.LimitReader(f, w.maxSize+1))
	if err != nil {
		return readResult{err: err}
	}
	if int64(len(data)) > w.maxSize {
		return readResult{err: w.tooLarge(fmt.Sprintf("at least %d bytes", len(data)))} // it grew since Stat
	}
	return readResult{state: state, data: data, sum: sha256.Sum256(data)}
}

func (w *Watcher) tooLarge(size string) error {
	limit := fmt.Sprintf("%d bytes", w.maxSize)
	if w.maxSize%(1<<20) == 0 {
		limit += fmt.Sprintf(" (%d MiB)", w.maxSize>>20)
	}
	return fmt.Errorf("%w: %s holds %s, over the limit of %s (see WithMaxSize)", ErrTooLarge, w.path, size, limit)
}

// describeType says what kind of file mode is, for errors.
func describeType(mode os.FileMode) string {
	switch {
	case mode.IsDir():
		return "a directory"
	case mode&os.ModeNamedPipe != 0:
		return "a FIFO (named pipe)"
	case mode&os.ModeSocket != 0:
		return "a socket"
	case mode&os.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file (mode " + mode.String() + ")"
}

// check handles the result of a poll's read: it loads content that changed, at once when it is
// valid; invalid content is reported once it has held still for a poll, so that a file caught
// half-written is not reported.
func (w *Watcher) check(res readResult) {
	if res.err != nil {
		w.last, w.havePending = fileState{}, false
		if errors.Is(res.err, os.ErrNotExist) {
			w.haveSeen = false // so that the same content, written back, loads again
		}
		w.reportRead(res.err)
		return
	}
	w.readProblem = "" // the file reads again: its next read problem is news
	w.last = res.state
	switch {
	case res.data == nil: // unchanged since the last read
	case w.haveSeen && res.sum == w.seen:
		w.havePending = false
	case !w.havePending || res.sum != w.pending:
		// New content loads at once if it is valid. Invalid content may be a file caught
		// half-written: it is reported only if it is still the same at the next poll.
		seen, haveSeen := w.seen, w.haveSeen
		if err := w.load(res.data, res.sum); err != nil {
			w.seen, w.haveSeen = seen, haveSeen
			w.pending, w.havePending = res.sum, true
			return
		}
		w.havePending = false
	default:
		w.havePending = false
		if err := w.load(res.data, res.sum); err != nil {
			w.reportLoad(err)
		}
	}
}

// load parses data, whose hash is sum, and loads what it holds into the Manager.
func (w *Watcher) load(data []byte, sum [sha256.Size]byte) error {
	w.seen, w.haveSeen = sum, true
	doc, err := w.parse(data)
	if err != nil {
		return fmt.Errorf("%s: %w", w.path, err)
	}
	if err := w.m.LoadDocument(doc); err != nil {
		return fmt.Errorf("%s: %w", w.path, err)
	}
	w.loadProblem = ""
	rules := doc.Rules
	if !doc.HasRules {
		rules = w.m.Rules()
	}
	w.onLoad(rules)
	return nil
}

// reportRead and reportLoad log and pass on a problem, once until it changes or its episode
// ends: a read problem's when a read succeeds, a load problem's when rules load.
func (w *Watcher) reportRead(err error) { w.report(err, &w.readProblem) }
func (w *Watcher) reportLoad(err error) { w.report(err, &w.loadProblem) }

func (w *Watcher) report(err error, last *string) {
	if err.Error() == *last {
		return
	}
	*last = err.Error()
	w.logger.Error("rulefile: keeping the last good rules", "path", w.path, "error", err)
	w.onError(err)
}
