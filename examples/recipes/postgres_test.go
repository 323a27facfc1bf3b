package recipes_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakertest"
	"github.com/halfopen/breaker/examples/recipes"
)

// pgError is an error of PostgreSQL's, as pgconn.PgError shows one: a message and a SQLSTATE.
type pgError struct{ code, msg string }

func (e *pgError) Error() string    { return "ERROR: " + e.msg + " (SQLSTATE " + e.code + ")" }
func (e *pgError) SQLState() string { return e.code }

// queryCanceled is what PostgreSQL answers a statement that was canceled; the fake answers it to
// a query whose context ended, an error that wraps no context error, as a driver's may be.
var queryCanceled = &pgError{code: "57014", msg: "canceling statement due to user request"}

// lockGuard ends a query waiting on a lock whose context never ends (a store that does not pass
// the context on), so that such a test fails rather than hangs.
const lockGuard = 5 * time.Second

var errNeverCanceled = errors.New("fake pool: the query waited on the lock with a context that never ended")

// fakePool is a recipes.Querier over an orders table in memory, with a pool of connections:
// each query holds one from before it starts until it returns, and waits for one, until its
// context ends, when they are all in use.
type fakePool struct {
	conns chan struct{} // a token for each connection in use

	mu       sync.Mutex
	orders   map[string]recipes.Order
	down     error         // when set, no connection can be made: every query fails with it
	locked   chan struct{} // when set, every query waits until it is closed, or its context ends
	started  chan struct{} // when set, hears of every query that holds a connection
	reached  int           // queries that held a connection
	deadline []bool        // for each of them, whether its context had a deadline
}

func newFakePool(size int) *fakePool {
	return &fakePool{conns: make(chan struct{}, size), orders: map[string]recipes.Order{}}
}

// acquire takes a connection for a query with ctx, as pgxpool does: at once while one is free,
// else when one is given back, or not at all once ctx ends.
func (p *fakePool) acquire(ctx context.Context) error {
	p.mu.Lock()
	down := p.down
	p.mu.Unlock()
	if down != nil {
		return down
	}
	select {
	case p.conns <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("acquire connection: %w", ctx.Err())
	}
	p.mu.Lock()
	_, hasDeadline := ctx.Deadline()
	p.reached++
	p.deadline = append(p.deadline, hasDeadline)
	locked, started := p.locked, p.started
	p.mu.Unlock()
	if started != nil {
		started <- struct{}{}
	}
	if locked != nil {
		select {
		case <-locked:
		case <-ctx.Done():
			<-p.conns
			return queryCanceled
		case <-time.After(lockGuard):
			<-p.conns
			return errNeverCanceled
		}
	}
	return nil
}

func (p *fakePool) release() { <-p.conns }

func (p *fakePool) QueryRow(ctx context.Context, _ string, args ...any) recipes.Row {
	if err := p.acquire(ctx); err != nil {
		return row{err: err}
	}
	defer p.release()
	p.mu.Lock()
	defer p.mu.Unlock()
	o, ok := p.orders[args[0].(string)]
	if !ok {
		return row{err: fmt.Errorf("scan: %w", sql.ErrNoRows)}
	}
	return row{values: []any{o.Partner, o.Amount}}
}

func (p *fakePool) Exec(ctx context.Context, _ string, args ...any) error {
	if err := p.acquire(ctx); err != nil {
		return err
	}
	defer p.release()
	p.mu.Lock()
	defer p.mu.Unlock()
	id := args[0].(string)
	if _, ok := p.orders[id]; ok {
		return &pgError{code: "23505", msg: `duplicate key value violates unique constraint "orders_pkey"`}
	}
	p.orders[id] = recipes.Order{ID: id, Partner: args[1].(string), Amount: args[2].(int64)}
	return nil
}

// stats returns what the fake saw: the queries that held a connection, whether each had a
// deadline, and the connections in use now.
func (p *fakePool) stats() (reached int, deadline []bool, inUse int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.reached, append([]bool(nil), p.deadline...), len(p.conns)
}

func (p *fakePool) set(f func(p *fakePool)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f(p)
}

type row struct {
	values []any
	err    error
}

func (r row) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	*dest[0].(*string) = r.values[0].(string)
	*dest[1].(*int64) = r.values[1].(int64)
	return nil
}

// newOrderStore returns a store over a fake pool of poolSize connections, its Manager on a fake
// clock with the recipe's classifier, rules and settings, the Timeout set to timeout.
func newOrderStore(t *testing.T, poolSize int, timeout time.Duration) (*recipes.OrderStore, *fakePool, *breaker.Manager, *breakertest.Clock) {
	t.Helper()
	settings := recipes.OrdersDBSettings(poolSize)
	settings.Timeout = timeout
	m, clock := newManager(t, recipes.OrdersDBRules(), map[string]breaker.ResourceConfig{recipes.OrdersDB: settings},
		breaker.WithClassifier(recipes.ClassifyPostgres))
	pool := newFakePool(poolSize)
	return recipes.NewOrderStore(m, pool), pool, m, clock
}

// Given the errors a pgx pool returns, then the caller's mistakes and a missing row count as
// successes, the database's troubles as failures, and the caller's cancellation neither way.
func TestClassifyPostgres(t *testing.T) {
	tests := []struct {
		name string
		give error
		want breaker.Outcome
	}{
		{"no row", fmt.Errorf("load order: %w", sql.ErrNoRows), breaker.Success},
		{"unique violation", &pgError{code: "23505", msg: "duplicate key"}, breaker.Success},
		{"foreign key violation", &pgError{code: "23503", msg: "violates foreign key constraint"}, breaker.Success},
		{"malformed input", &pgError{code: "22P02", msg: "invalid input syntax for type bigint"}, breaker.Success},
		{"wrapped unique violation", fmt.Errorf("add order: %w", &pgError{code: "23505"}), breaker.Success},
		{"lock timeout", &pgError{code: "55P03", msg: "canceling statement due to lock timeout"}, breaker.Failure},
		{"statement canceled", queryCanceled, breaker.Failure},
		{"shutting down", &pgError{code: "57P01", msg: "terminating connection due to administrator command"}, breaker.Failure},
		{"too many connections", &pgError{code: "53300", msg: "too many clients already"}, breaker.Failure},
		{"not a SQLSTATE", &pgError{code: "2"}, breaker.Failure},
		{"connection refused", errors.New("failed to connect: dial tcp 10.0.0.5:5432: connect: connection refused"), breaker.Failure},
		{"deadline", fmt.Errorf("timeout: %w", context.DeadlineExceeded), breaker.Failure},
		{"caller canceled", fmt.Errorf("timeout: %w", context.Canceled), breaker.Ignore},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, recipes.ClassifyPostgres(tt.give))
		})
	}
}

// Given callers that insert orders stored already and read orders that do not exist, then
// they get their errors and neither breaker counts a bad call: bad input never opens them.
func TestOrderStoreCallersMistakesNeverOpen(t *testing.T) {
	store, _, m, _ := newOrderStore(t, 4, time.Second)
	ctx := context.Background()
	require.NoError(t, store.AddOrder(ctx, recipes.Order{ID: "o-1", Partner: "acme", Amount: 1250}))

	for range 20 {
		err := store.AddOrder(ctx, recipes.Order{ID: "o-1", Partner: "acme", Amount: 1250})
		assert.ErrorIs(t, err, recipes.ErrDuplicateOrder)
		_, err = store.Order(ctx, "o-404")
		assert.ErrorIs(t, err, recipes.ErrOrderNotFound)
	}
	got, err := store.Order(ctx, "o-1")
	require.NoError(t, err)
	assert.Equal(t, recipes.Order{ID: "o-1", Partner: "acme", Amount: 1250}, got)

	assert.Equal(t, []breaker.State{breaker.Closed, breaker.Closed}, states(m, recipes.OrdersDB))
	for _, b := range m.Breakers(recipes.OrdersDB) {
		st := b.Stats()
		assert.Equal(t, uint64(42), st.Total, "%v counts every call", st.Rule.Strategy)
		assert.Zero(t, st.Bad, "%v counts no bad call", st.Rule.Strategy)
	}
}

// Given a database that stopped (no connection can be made), then the fast trip opens the
// breaker, the calls after it do not reach the pool, and a probe closes it once the database
// is back.
func TestOrderStoreStoppedDatabaseTrips(t *testing.T) {
	store, pool, m, clock := newOrderStore(t, 4, time.Second)
	ctx := context.Background()
	require.NoError(t, store.AddOrder(ctx, recipes.Order{ID: "o-1", Partner: "acme", Amount: 1250}))
	refused := errors.New("failed to connect: dial tcp 10.0.0.5:5432: connect: connection refused")
	pool.set(func(p *fakePool) { p.down = refused })

	var err error
	failed := 0
	for ; failed < 100; failed++ {
		if _, err = store.Order(ctx, "o-1"); errors.Is(err, breaker.ErrBlocked) {
			break
		}
		require.ErrorIs(t, err, refused)
		clock.Advance(10 * time.Millisecond)
	}
	assert.ErrorIs(t, err, breaker.ErrOpen)
	assert.Less(t, failed, 100, "the breaker opened")
	assert.Contains(t, states(m, recipes.OrdersDB), breaker.Open)

	before, _, _ := pool.stats()
	for range 10 {
		_, err := store.Order(ctx, "o-1")
		assert.ErrorIs(t, err, breaker.ErrOpen)
	}
	after, _, _ := pool.stats()
	assert.Equal(t, before, after, "a rejected call takes no connection")

	pool.set(func(p *fakePool) { p.down = nil })
	clock.Advance(5 * time.Second) // RetryTimeout: jitter makes it no longer
	got, err := store.Order(ctx, "o-1")
	require.NoError(t, err, "the probe")
	assert.Equal(t, "acme", got.Partner)
	assert.Equal(t, []breaker.State{breaker.Closed, breaker.Closed}, states(m, recipes.OrdersDB))
}

// Given a table lock that no query gets past, then the Timeout's context reaches each query,
// which ends at the deadline and gives its connection back, each such call counts as failed,
// and the breakers open: the calls after them are rejected without waiting. The deadline is
// real time, as every context deadline is, so the test's Timeout is short.
func TestOrderStoreTimeoutCutsOffALock(t *testing.T) {
	store, pool, m, _ := newOrderStore(t, 4, 20*time.Millisecond)
	ctx := context.Background()
	pool.set(func(p *fakePool) { p.locked = make(chan struct{}) })

	var err error
	cutOff := 0
	for ; cutOff < 100; cutOff++ {
		if _, err = store.Order(ctx, "o-1"); errors.Is(err, breaker.ErrBlocked) {
			break
		}
		require.ErrorIs(t, err, queryCanceled, "the query ended at the deadline")
		_, _, inUse := pool.stats()
		require.Zero(t, inUse, "the connection went back to the pool")
	}
	assert.ErrorIs(t, err, breaker.ErrOpen)
	assert.Less(t, cutOff, 100, "the breakers opened")
	assert.Equal(t, []breaker.State{breaker.Open, breaker.Open}, states(m, recipes.OrdersDB),
		"a call cut off at the Timeout failed, and was slow")

	reached, deadline, _ := pool.stats()
	assert.Equal(t, cutOff, reached)
	for i, d := range deadline {
		assert.True(t, d, "query %d got the Timeout's context", i)
	}
}

// Given every connection of the pool held by a query waiting on a lock, then the next call is
// rejected at once with ErrConcurrencyLimit, since MaxConcurrency is the pool's size, instead
// of waiting for a connection; the held calls finish once the lock is released.
func TestOrderStoreConcurrencyLimitAtPoolSize(t *testing.T) {
	const poolSize = 3
	store, pool, m, _ := newOrderStore(t, poolSize, time.Minute)
	ctx := context.Background()
	require.NoError(t, store.AddOrder(ctx, recipes.Order{ID: "o-1", Partner: "acme", Amount: 1250}))
	locked, started := make(chan struct{}), make(chan struct{}, poolSize)
	pool.set(func(p *fakePool) { p.locked, p.started = locked, started })

	var wg sync.WaitGroup
	errs := make([]error, poolSize)
	for i := range poolSize {
		wg.Go(func() { _, errs[i] = store.Order(ctx, "o-1") })
	}
	for range poolSize {
		<-started
	}

	// Without the limit, this call would wait for a connection: its own deadline ends the test.
	waiting, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	_, err := store.Order(waiting, "o-1")
	assert.ErrorIs(t, err, breaker.ErrConcurrencyLimit)
	reached, _, inUse := pool.stats()
	assert.Equal(t, poolSize+1, reached, "the rejected call asked the pool for nothing") // with AddOrder's
	assert.Equal(t, poolSize, inUse)

	close(locked)
	wg.Wait()
	for _, err := range errs {
		assert.NoError(t, err)
	}
	assert.Equal(t, []breaker.State{breaker.Closed, breaker.Closed}, states(m, recipes.OrdersDB))
}

// Given callers that give up while their query waits on a lock, and a driver that answers the
// cancellation with an error of the database's, then those calls count neither way: a caller
// that leaves says nothing about the database.
func TestOrderStoreCanceledCallerCountsNeither(t *testing.T) {
	store, pool, m, _ := newOrderStore(t, 4, time.Minute)
	started := make(chan struct{}, 1)
	pool.set(func(p *fakePool) { p.locked, p.started = make(chan struct{}), started })

	for range 20 {
		ctx, cancel := context.WithCancel(context.Background())
		go func() { // the caller gives up once its query is waiting
			<-started
			cancel()
		}()
		_, err := store.Order(ctx, "o-1")
		cancel()
		require.ErrorIs(t, err, queryCanceled)
	}
	assert.Equal(t, []breaker.State{breaker.Closed, breaker.Closed}, states(m, recipes.OrdersDB))
	for _, b := range m.Breakers(recipes.OrdersDB) {
		assert.Zero(t, b.Stats().Total, "%v counted none of them", b.Rule().Strategy)
	}
}
