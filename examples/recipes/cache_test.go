package recipes_test

import (
	"context"
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

// fakeCache is a recipes.Cache in memory that can be down or hang.
type fakeCache struct {
	mu      sync.Mutex
	values  map[string][]byte
	down    error // when set, every call fails with it
	hanging bool  // when set, every call waits until its context ends
	gets    int   // Gets that reached the cache
	sets    int   // Sets that reached it
}

func newFakeCache() *fakeCache { return &fakeCache{values: map[string][]byte{}} }

// errCacheTimeout is what the fake answers a call whose context ended, as a client's read
// deadline does.
var errCacheTimeout = errors.New("redis: i/o timeout")

func (c *fakeCache) reach(ctx context.Context) error {
	c.mu.Lock()
	down, hanging := c.down, c.hanging
	c.mu.Unlock()
	if down != nil {
		return down
	}
	if hanging {
		select {
		case <-ctx.Done():
			return errCacheTimeout
		case <-time.After(lockGuard):
			return errNeverCanceled
		}
	}
	return nil
}

func (c *fakeCache) Get(ctx context.Context, key string) ([]byte, error) {
	c.mu.Lock()
	c.gets++
	c.mu.Unlock()
	if err := c.reach(ctx); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.values[key]
	if !ok {
		return nil, recipes.ErrCacheMiss
	}
	return v, nil
}

func (c *fakeCache) Set(ctx context.Context, key string, value []byte, _ time.Duration) error {
	c.mu.Lock()
	c.sets++
	c.mu.Unlock()
	if err := c.reach(ctx); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.values[key] = value
	return nil
}

func (c *fakeCache) set(f func(c *fakeCache)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f(c)
}

// calls returns the Gets and Sets that reached the cache.
func (c *fakeCache) calls() (gets, sets int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gets, c.sets
}

const (
	freshFor = time.Minute
	keepFor  = time.Hour
)

// cachedOrders is a read-through cache over an order store, on one Manager on a fake clock
// with the rules and settings of both recipes, as a service loads them.
type cachedOrders struct {
	*recipes.CachedOrders
	store *recipes.OrderStore
	cache *fakeCache
	pool  *fakePool
	m     *breaker.Manager
	clock *breakertest.Clock
}

// newCachedOrders returns the cache and the store with orders o-0 to o-(n-1) in the database,
// the cache's Timeout set to cacheTimeout.
func newCachedOrders(t *testing.T, n int, cacheTimeout time.Duration) *cachedOrders {
	t.Helper()
	cacheSettings := recipes.OrdersCacheSettings(8)
	cacheSettings.Timeout = cacheTimeout
	m, clock := newManager(t, append(recipes.OrdersDBRules(), recipes.OrdersCacheRules()...),
		map[string]breaker.ResourceConfig{
			recipes.OrdersDB:    recipes.OrdersDBSettings(4),
			recipes.OrdersCache: cacheSettings,
		},
		breaker.WithClassifier(recipes.ClassifyPostgres))
	pool, cache := newFakePool(4), newFakeCache()
	store := recipes.NewOrderStore(m, pool)
	for i := range n {
		require.NoError(t, store.AddOrder(context.Background(), order(i)))
	}
	return &cachedOrders{
		CachedOrders: recipes.NewCachedOrders(m, cache, store, freshFor, keepFor),
		store:        store, cache: cache, pool: pool, m: m, clock: clock,
	}
}

func order(i int) recipes.Order {
	return recipes.Order{ID: fmt.Sprint("o-", i), Partner: "acme", Amount: int64(100 * i)}
}

// readAll reads orders o-0 to o-(n-1) and checks each.
func (c *cachedOrders) readAll(t *testing.T, n int) {
	t.Helper()
	for i := range n {
		got, err := c.Order(context.Background(), order(i).ID)
		require.NoError(t, err)
		require.Equal(t, order(i), got)
	}
}

// Given a cold cache, then each read misses, the database answers it and the cache is filled,
// the misses count as successes, and the next reads are answered by the cache alone.
func TestCachedOrdersMissIsNotAFailure(t *testing.T) {
	const n = 20
	c := newCachedOrders(t, n, 50*time.Millisecond)
	dbBefore, _, _ := c.pool.stats()

	c.readAll(t, n)
	dbAfterMisses, _, _ := c.pool.stats()
	assert.Equal(t, n, dbAfterMisses-dbBefore, "each miss read the database")
	for _, b := range c.m.Breakers(recipes.OrdersCache) {
		st := b.Stats()
		assert.Equal(t, breaker.Closed, st.State)
		assert.Equal(t, uint64(2*n), st.Total, "%v counts every Get and Set", st.Rule.Strategy)
		assert.Zero(t, st.Bad, "%v: a miss is the cache answering", st.Rule.Strategy)
	}

	c.readAll(t, n)
	dbAfterHits, _, _ := c.pool.stats()
	assert.Equal(t, dbAfterMisses, dbAfterHits, "the cache answered every read")
}

// Given a cache that is down, then every read falls through to the database, the cache's
// breaker opens, and from then on reads go straight to the database without asking the cache
// (nor filling it); once the cache is back, a probe closes the breaker and the cache answers
// again.
func TestCachedOrdersFallThroughWhenCacheIsDown(t *testing.T) {
	const n = 20
	c := newCachedOrders(t, n, 50*time.Millisecond)
	c.cache.set(func(c *fakeCache) { c.down = errors.New("dial tcp 10.0.0.6:6379: connect: connection refused") })

	c.readAll(t, n) // every read answered, by the database
	assert.Contains(t, states(c.m, recipes.OrdersCache), breaker.Open)
	gets, sets := c.cache.calls()
	assert.Less(t, gets, n, "the cache was not asked once its breaker opened")
	assert.Zero(t, sets, "a cache that failed is not filled")

	c.readAll(t, n)
	getsOpen, _ := c.cache.calls()
	assert.Equal(t, gets, getsOpen, "an open breaker sends nothing to the cache")
	assert.Equal(t, []breaker.State{breaker.Closed, breaker.Closed}, states(c.m, recipes.OrdersDB),
		"the database took the reads")

	c.cache.set(func(c *fakeCache) { c.down = nil })
	c.clock.Advance(time.Second) // the cache's RetryTimeout: jitter makes it no longer
	c.readAll(t, n)              // the probe misses, which closes the breaker; the rest fill the cache
	assert.Equal(t, []breaker.State{breaker.Closed, breaker.Closed}, states(c.m, recipes.OrdersCache))
	dbBefore, _, _ := c.pool.stats()
	c.readAll(t, n)
	dbAfter, _, _ := c.pool.stats()
	assert.Equal(t, dbBefore, dbAfter, "the cache answers again")
}

// Given a cache that hangs, then the cache's Timeout cuts each read off, which the database
// then answers, and the breakers open: the reads after that do not wait for the cache. The
// deadline is real time, so the test's Timeout is short.
func TestCachedOrdersTimeoutCutsOffAHangingCache(t *testing.T) {
	const n = 20
	c := newCachedOrders(t, n, 10*time.Millisecond)
	c.cache.set(func(c *fakeCache) { c.hanging = true })

	c.readAll(t, n)
	assert.Equal(t, []breaker.State{breaker.Open, breaker.Open}, states(c.m, recipes.OrdersCache),
		"a call cut off at the Timeout failed, and was slow")
	gets, _ := c.cache.calls()
	assert.Less(t, gets, n, "the cache was not asked once its breakers opened")
}

// Given an order cached a while ago and a database whose breaker holds every call back, then
// the read serves the stale copy rather than fail; an order the cache does not hold gets the
// rejection.
func TestCachedOrdersServeStaleWhenTheDatabaseCannotAnswer(t *testing.T) {
	c := newCachedOrders(t, 2, 50*time.Millisecond)
	ctx := context.Background()
	_, err := c.Order(ctx, "o-1") // cached
	require.NoError(t, err)
	c.clock.Advance(2 * freshFor)
	require.NoError(t, c.m.LoadResources(map[string]breaker.ResourceConfig{
		recipes.OrdersDB:    {Force: breaker.ForceOpen}, // as an open breaker would
		recipes.OrdersCache: recipes.OrdersCacheSettings(8),
	}))

	got, err := c.Order(ctx, "o-1")
	require.NoError(t, err)
	assert.Equal(t, order(1), got, "the stale copy")
	_, err = c.Order(ctx, "o-0")
	assert.ErrorIs(t, err, breaker.ErrBlocked, "nothing cached to serve")
}
