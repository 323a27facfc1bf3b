// Package breakeretcd keeps the rules of a breaker.Manager in step with rules stored in etcd, so
// that every instance of a service reads the same rules and a change reaches them all.
//
// Watch reads the document stored at one key (or, with WithPrefix, the documents stored under
// a prefix, merged in key order), loads it into the Manager, and then watches the key and loads
// every change. A document is what breaker.ParseDocument reads: a bare JSON array of rules, or
// an object with "rules", "resources" (the resource settings: timeout, maxConcurrency, force),
// or both, which Manager.LoadDocument installs together. It replaces only what it holds: a
// value without "resources" leaves the settings as they are, so an operator can force a
// resource open for the whole fleet with one put, and release it with another. A value that
// cannot be parsed, or whose rules the Manager refuses, is reported (logged, and passed to the
// OnError option) once, and the last good rules stay in force. So is a value that would remove
// every rule in a form a mistake writes as easily (null, [], {"rules": null}: ErrEmptyRules);
// {"rules": []} removes them on purpose.
//
// A deleted key keeps its rules in force too, unless ClearOnDelete says otherwise, but not its
// resource settings: a force or a limit lasts only as long as a key that set it, so deleting
// the key that forced a resource open releases it. The settings the watcher loaded are removed
// (logged, and OnLoad hears of it) once every key that held them is deleted; settings the
// program loaded itself are not the watcher's to remove.
//
// The watcher survives etcd restarts and lost connections: the client resumes its watch where
// it left off, and when it cannot (the revisions it missed were compacted, the watch was
// canceled or closed) the watcher reads the key again and watches from the revision it read.
//
// Unlike the breaker package, which starts no goroutines, a Watcher runs one goroutine until its
// context is done; the etcd client runs its own for the watch, which end when the watch does
// or, at the latest, at Client.Close.
package breakeretcd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/halfopen/breaker"
)

// ErrNotFound is reported when no value is stored at the key (with WithPrefix: under the
// prefix), whether it was missing when Watch started or deleted later: passed to OnError, or
// returned by Watch with RequireKey. With ClearOnDelete a missing value is not a problem and is
// not reported.
var ErrNotFound = errors.New("breakeretcd: no rules stored in etcd")

// ErrTooLarge is reported, or returned by Watch, when the rules stored in etcd are larger than
// the size limit (WithMaxSize): the value at the key, or with WithPrefix the keys and values under the
// prefix together. The error wrapping it names the limit. The last good rules stay in force.
var ErrTooLarge = errors.New("breakeretcd: rules too large")

// ErrEmptyRules is reported, or returned by Watch, for a value that says "no rules" in a form
// that a mistake writes as easily as an operator: JSON null, an empty array, or a document
// whose "rules" is null. The last good rules stay. The document {"rules": []} removes every
// rule on purpose; in the Sentinel format, which has no such form, delete the key with
// ClearOnDelete.
var ErrEmptyRules = errors.New("breakeretcd: refusing to remove every rule")

// DefaultMaxSize is the most bytes of rules Watch accepts unless WithMaxSize says otherwise:
// 16 MiB, as rulefile.
const DefaultMaxSize = 16 << 20

// Retries of a failed read or of a watch that ended back off from minRetry to maxRetry,
// doubling each time; a watch that delivered events or lasted maxRetry starts them over.
const (
	minRetry = 100 * time.Millisecond
	maxRetry = 10 * time.Second
)

// Watcher keeps one Manager's rules in step with one etcd key or prefix. Create it with Watch.
type Watcher struct {
	client        *clientv3.Client
	key           string
	m             *breaker.Manager
	prefix        bool
	parse         func([]byte) (breaker.Document, error)
	sentinel      bool // parse reads Sentinel rules
	clearOnDelete bool
	requireKey    bool
	timeout       time.Duration
	maxSize       int64
	onError       func(error)
	onLoad        func([]breaker.Rule)
	logger        *slog.Logger

	// The fields below belong to Watch, then to the watcher's goroutine.
	values       map[string][]byte // what etcd holds, by key, as of the last read and events
	seen         map[string][]byte // the values last loaded or refused; nil before the first
	settingsFrom []string          // the keys whose values held the settings the watcher loaded
	lastErr      string            // the last problem reported, so that it is reported once
	done         chan struct{}
}

// Option configures a Watcher.
type Option interface{ apply(*Watcher) }

type optionFunc func(*Watcher)

func (f optionFunc) apply(w *Watcher) { f(w) }

// WithPrefix makes Watch read every key that begins with the key given to it: each holds a
// document, and the rules are their concatenation in key order (etcd's byte order), the
// settings their union. A value that cannot be parsed refuses the whole set, as do rules the
// Manager refuses together (two identical rules in different keys, say). Deleting some of the
// keys loads the rules of the others, and the settings of the others; when none of the keys
// that held the settings is left, the settings are removed. Deleting them all is a deleted key
// (see ClearOnDelete).
func WithPrefix() Option {
	return optionFunc(func(w *Watcher) { w.prefix = true })
}

// SentinelFormat reads the values as JSON arrays of Sentinel degrade rules
// (breaker.ParseSentinelRules) rather than as breaker's own documents (breaker.ParseDocument).
// They hold rules only; the resource settings are left as they are.
func SentinelFormat() Option {
	return optionFunc(func(w *Watcher) { w.parse, w.sentinel = parseSentinel, true })
}

// parseSentinel reads Sentinel degrade rules as a document of rules alone.
func parseSentinel(data []byte) (breaker.Document, error) {
	rules, err := breaker.ParseSentinelRules(data)
	return breaker.Document{Rules: rules, HasRules: err == nil}, err
}

// ClearOnDelete makes a missing value mean "no rules and no settings": when the key is deleted,
// or missing when Watch starts, the Manager's rules and resource settings are all removed (and
// OnLoad hears of it) instead of staying in force with ErrNotFound reported.
func ClearOnDelete() Option {
	return optionFunc(func(w *Watcher) { w.clearOnDelete = true })
}

// RequireKey makes Watch fail, with an error wrapping ErrNotFound, when no value is stored at
// the key when it starts. Without it Watch leaves the Manager's rules as they are, reports
// ErrNotFound, and loads the value once it is written.
func RequireKey() Option {
	return optionFunc(func(w *Watcher) { w.requireKey = true })
}

// WithTimeout bounds each read of the rules from etcd, the first one in Watch included; the
// default is 5 seconds. A d <= 0 keeps the default. Watches are not bounded.
func WithTimeout(d time.Duration) Option {
	return optionFunc(func(w *Watcher) {
		if d > 0 {
			w.timeout = d
		}
	})
}

// WithMaxSize sets the most bytes of rules the watcher parses: the value at the key, or with
// WithPrefix the keys and values under the prefix together, so that many keys with small
// values count what the watcher keeps of them. The default is DefaultMaxSize (16 MiB). Rules
// over it are not parsed: they are refused with an error wrapping ErrTooLarge that names the
// limit, and the last good rules stay. An n <= 0 keeps the default.
//
// The limit applies once etcd's answer has arrived, which etcd bounds by its own request size
// limit (--max-request-bytes, 1.5 MiB by default) for each value; it keeps a large set of rules
// from being parsed and loaded. The memory the windows of the rules take is for the Manager to
// bound.
func WithMaxSize(n int64) Option {
	return optionFunc(func(w *Watcher) {
		if n > 0 {
			w.maxSize = n
		}
	})
}

// OnError is called with each new problem: a value that cannot be parsed, or would remove every
// rule by mistake (ErrEmptyRules), rules the Manager refused, a missing value (ErrNotFound), a read of etcd that failed, a watch that ended for
// another reason than compaction. The last good rules stay in force. A problem is reported
// once; the same problem again only after rules have loaded, or the watch has ended and the key
// been read anew, in between. It is called by Watch for the first read, then on the watcher's
// goroutine; the watcher waits for it.
func OnError(f func(error)) Option {
	return optionFunc(func(w *Watcher) { w.onError = f })
}

// OnLoad is called after each load of changed values, the first one included, with the rules in
// force after it (the Manager's, when the values hold resource settings only). It is called by
// Watch for the first read, then on the watcher's goroutine.
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

// Watch reads the rules stored at key in etcd and loads them into m, then starts a goroutine
// that watches the key and loads the rules again each time they change, until ctx is done.
//
// The value is a document as breaker.ParseDocument reads it, rules and resource settings
// (SentinelFormat: a JSON array of rules as breaker.ParseSentinelRules reads them). If the
// first read fails, or the value cannot be parsed, or would remove every rule by mistake
// (ErrEmptyRules), or m refuses its rules, Watch returns the error and starts nothing, so that
// a service can refuse to start with bad rules. A missing value is not an error unless RequireKey says
// so: m keeps the rules it has (none, for a new Manager; with ClearOnDelete, none at all) and
// loads the value once it is written.
//
// The caller keeps ownership of client: close it after ctx is done and Done is closed.
func Watch(ctx context.Context, client *clientv3.Client, key string, m *breaker.Manager, opts ...Option) (*Watcher, error) {
	w := &Watcher{
		client:  client,
		key:     key,
		m:       m,
		parse:   breaker.ParseDocument,
		timeout: 5 * time.Second,
		maxSize: DefaultMaxSize,
		onError: func(error) {},
		onLoad:  func([]breaker.Rule) {},
		logger:  slog.Default(),
		done:    make(chan struct{}),
	}
	for _, o := range opts {
		o.apply(w)
	}
	rev, err := w.read(ctx)
	if err == nil && w.requireKey && len(w.values) == 0 {
		err = fmt.Errorf("%w: %s", ErrNotFound, w.what())
	}
	if err == nil {
		err = w.apply()
	}
	switch {
	case errors.Is(err, ErrNotFound) && !w.requireKey:
		w.report(err, rev)
	case err != nil:
		return nil, err
	}
	go w.run(ctx, rev)
	return w, nil
}

// Done is closed when the watcher's goroutine has stopped, after its context is done.
func (w *Watcher) Done() <-chan struct{} { return w.done }

// run follows the key from the revision after rev, and reads it again whenever the watch
// ends, until ctx is done.
func (w *Watcher) run(ctx context.Context, rev int64) {
	defer close(w.done)
	retry := minRetry
	for {
		started := time.Now()
		delivered, err := w.follow(ctx, rev)
		if ctx.Err() != nil {
			return
		}
		if delivered || time.Since(started) >= maxRetry {
			retry = minRetry // the watch worked for a while: this is a new failure
		}
		var compacted *compactedError
		if errors.As(err, &compacted) {
			// Not a problem: what the watch missed is gone, and the next read holds it.
			w.logger.Info("breakeretcd: watch compacted, reading the rules again",
				"key", w.key, "compactRevision", compacted.rev)
		} else {
			w.report(err, rev)
			if !sleep(ctx, retry) {
				return
			}
			retry = min(2*retry, maxRetry)
		}
		for {
			if rev, err = w.read(ctx); err == nil {
				break
			}
			if ctx.Err() != nil {
				return
			}
			w.report(err, rev)
			if !sleep(ctx, retry) {
				return
			}
			retry = min(2*retry, maxRetry)
		}
		w.lastErr = "" // etcd answers again: its next problem is news
		if err := w.apply(); err != nil {
			w.report(err, rev) // a change made while the watch was down
		}
	}
}

// compactedError ends a watch whose next revision was compacted away.
type compactedError struct{ rev int64 }

func (e *compactedError) Error() string {
	return fmt.Sprintf("breakeretcd: revisions up to %d were compacted", e.rev)
}

// follow watches the key from the revision after rev and loads each change, until the watch
// ends or ctx is done. It reports whether the watch delivered anything, and why it ended.
func (w *Watcher) follow(ctx context.Context, rev int64) (delivered bool, err error) {
	// Without a leader the member's data may be stale: have it end the watch, so that the
	// watcher reads the key again through a member that has one.
	ctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel() // ends the client's watch too
	opts := []clientv3.OpOption{clientv3.WithRev(rev + 1)}
	if w.prefix {
		opts = append(opts, clientv3.WithPrefix())
	}
	ch := w.client.Watch(ctx, w.key, opts...)
	for {
		var resp clientv3.WatchResponse
		var ok bool
		select {
		case <-ctx.Done():
			return delivered, ctx.Err()
		case resp, ok = <-ch:
		}
		switch {
		case !ok:
			return delivered, fmt.Errorf("breakeretcd: watching %s: the client closed the watch", w.what())
		case resp.CompactRevision != 0:
			return delivered, &compactedError{rev: resp.CompactRevision}
		case resp.Err() != nil:
			return delivered, fmt.Errorf("breakeretcd: watching %s: %w", w.what(), resp.Err())
		}
		delivered = true
		if len(resp.Events) == 0 {
			continue // created, or progress
		}
		for _, ev := range resp.Events {
			if ev.Type == clientv3.EventTypePut {
				w.values[string(ev.Kv.Key)] = ev.Kv.Value
			} else {
				delete(w.values, string(ev.Kv.Key))
			}
		}
		rev = resp.Header.Revision
		if err := w.apply(); err != nil {
			w.report(err, rev)
		}
	}
}

// read gets the value, or with WithPrefix the values, stored at the key, and returns the
// revision they were read at.
func (w *Watcher) read(ctx context.Context) (rev int64, err error) {
	ctx, cancel := context.WithTimeout(ctx, w.timeout)
	defer cancel()
	var opts []clientv3.OpOption
	if w.prefix {
		opts = append(opts, clientv3.WithPrefix())
	}
	resp, err := w.client.Get(ctx, w.key, opts...)
	if err != nil {
		return 0, fmt.Errorf("breakeretcd: reading %s: %w", w.what(), err)
	}
	w.values = make(map[string][]byte, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		w.values[string(kv.Key)] = kv.Value
	}
	return resp.Header.Revision, nil
}

// apply loads the values etcd holds into the Manager, unless they are the ones last loaded or
// refused. It returns a missing value (when it is a problem), values over the size limit, a
// value that cannot be parsed or would remove every rule by mistake, or rules the Manager
// refused. The settings the watcher loaded go once every key that held them is deleted, also
// when the value is missing: a deleted key keeps its rules, but not a force or a limit.
func (w *Watcher) apply() error {
	if w.seen != nil && maps.EqualFunc(w.values, w.seen, bytes.Equal) {
		return nil
	}
	w.seen = maps.Clone(w.values)
	missing := len(w.values) == 0 && !w.clearOnDelete
	var doc merged
	if !missing {
		if err := w.checkSize(); err != nil {
			return err
		}
		var err error
		if doc, err = w.merge(); err != nil {
			return err
		}
	}
	released := !doc.HasResources && w.settingsGone()
	if released {
		doc.Resources, doc.HasResources = map[string]breaker.ResourceConfig{}, true
	}
	if missing && !released {
		return fmt.Errorf("%w: %s", ErrNotFound, w.what())
	}
	if err := w.m.LoadDocument(doc.Document); err != nil {
		var re *breaker.RuleError
		switch {
		case !errors.As(err, &re) || re.Index < 0 || re.Index >= len(doc.ruleKeys):
			return fmt.Errorf("breakeretcd: %s: %w", w.what(), err)
		case w.prefix:
			return fmt.Errorf("breakeretcd: key %q holds rule %d of the set: %w", doc.ruleKeys[re.Index], re.Index, err)
		}
		return fmt.Errorf("breakeretcd: key %q: %w", w.key, err)
	}
	if released {
		w.logger.Warn("breakeretcd: the keys that held the resource settings were deleted: resource settings removed",
			"key", w.key, "keys", w.settingsFrom)
	}
	if doc.HasResources {
		w.settingsFrom = doc.settingsKeys
	}
	w.lastErr = ""
	rules := doc.Rules
	if !doc.HasRules {
		rules = w.m.Rules()
	}
	w.onLoad(rules)
	if missing {
		return fmt.Errorf("%w: %s", ErrNotFound, w.what())
	}
	return nil
}

// settingsGone reports whether the settings in force came from the watcher's values and
// every key that held them has been deleted since.
func (w *Watcher) settingsGone() bool {
	if len(w.settingsFrom) == 0 {
		return false
	}
	for _, k := range w.settingsFrom {
		if _, ok := w.values[k]; ok {
			return false
		}
	}
	return true
}

// checkSize returns an error wrapping ErrTooLarge when the values are over the size limit.
func (w *Watcher) checkSize() error {
	var size int64
	for k, v := range w.values {
		size += int64(len(v))
		if w.prefix {
			size += int64(len(k)) // kept too, one per key under the prefix
		}
	}
	if size <= w.maxSize {
		return nil
	}
	limit := fmt.Sprintf("%d bytes", w.maxSize)
	if w.maxSize%(1<<20) == 0 {
		limit += fmt.Sprintf(" (%d MiB)", w.maxSize>>20)
	}
	held := fmt.Sprintf("%d bytes", size)
	if w.prefix {
		held += fmt.Sprintf(" in %d keys", len(w.values))
	}
	return fmt.Errorf("%w: %s holds %s, over the limit of %s (see WithMaxSize)", ErrTooLarge, w.what(), held, limit)
}

// merged is the document the values make together, and the keys its parts came from.
type merged struct {
	breaker.Document
	ruleKeys     []string // the key that holds each rule
	settingsKeys []string // the keys that hold settings, in key order
}

// merge parses the values into one document, in key order: the rules of every value that holds
// rules, one after the other, and the settings of every value that holds settings, each
// resource in one value only. With no values at all (ClearOnDelete) the document clears both
// rules and settings.
func (w *Watcher) merge() (doc merged, err error) {
	if len(w.values) == 0 {
		return merged{Document: breaker.Document{HasRules: true, HasResources: true}}, nil
	}
	from := map[string]string{} // the key that holds each resource's settings
	for _, k := range slices.Sorted(maps.Keys(w.values)) {
		d, err := w.parse(w.values[k])
		if err != nil {
			return doc, fmt.Errorf("breakeretcd: key %q: %w", k, err)
		}
		if d.HasRules && len(d.Rules) == 0 {
			if err := w.checkEmpty(k, w.values[k]); err != nil {
				return doc, err
			}
		}
		if d.HasRules {
			doc.HasRules = true
			doc.Rules = append(doc.Rules, d.Rules...)
			for range d.Rules {
				doc.ruleKeys = append(doc.ruleKeys, k)
			}
		}
		if d.HasResources {
			if doc.Resources == nil {
				doc.Resources, doc.HasResources = map[string]breaker.ResourceConfig{}, true
			}
			doc.settingsKeys = append(doc.settingsKeys, k)
			for _, name := range slices.Sorted(maps.Keys(d.Resources)) {
				if prev, ok := from[name]; ok {
					return doc, fmt.Errorf("breakeretcd: keys %q and %q both hold settings of resource %q: write them in one", prev, k, name)
				}
				from[name] = k
				doc.Resources[name] = d.Resources[name]
			}
		}
	}
	return doc, nil
}

// checkEmpty returns an error wrapping ErrEmptyRules unless value, the value of key, which
// parsed as no rules, says so on purpose: a document whose "rules" is an empty array. null and
// [] are what a template with nothing to fill in, or an export of nothing, writes as easily.
func (w *Watcher) checkEmpty(key string, value []byte) error {
	var what string
	switch v := bytes.TrimSpace(value); {
	case bytes.Equal(v, []byte("null")):
		what = "null"
	case len(v) > 0 && v[0] == '[':
		what = "an empty array"
	default:
		var top struct {
			Rules json.RawMessage `json:"rules"`
		}
		if json.Unmarshal(v, &top) != nil || !bytes.Equal(bytes.TrimSpace(top.Rules), []byte("null")) {
			return nil // {"rules": []}
		}
		what = `a document whose "rules" is null`
	}
	if w.sentinel {
		return fmt.Errorf("%w: key %q holds %s; to remove them on purpose, delete the key with ClearOnDelete",
			ErrEmptyRules, key, what)
	}
	return fmt.Errorf(`%w: key %q holds %s; to remove them on purpose, store {"rules": []}`, ErrEmptyRules, key, what)
}

// report logs and passes on a problem, once until it changes.
func (w *Watcher) report(err error, rev int64) {
	if err.Error() == w.lastErr {
		return
	}
	w.lastErr = err.Error()
	w.logger.Error("breakeretcd: keeping the last good rules", "key", w.key, "revision", rev, "error", err)
	w.onError(err)
}

// what names what the watcher reads, for errors.
func (w *Watcher) what() string {
	if w.prefix {
		return fmt.Sprintf("prefix %q", w.key)
	}
	return fmt.Sprintf("key %q", w.key)
}

// sleep waits for d, or until ctx is done; it reports whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
