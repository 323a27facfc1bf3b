package recipes

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/halfopen/breaker"
)

// OrdersCache is the resource of every call to the cache in front of the orders database.
const OrdersCache = "redis orders"

// Cache is what CachedOrders needs of a cache such as Redis or memcached. A client's adapter
// maps its own miss to ErrCacheMiss: go-redis's redis.Nil, gomemcache's memcache.ErrCacheMiss.
// Each method must return when ctx ends, as those clients do.
type Cache interface {
	// Get returns the value of key, or ErrCacheMiss when the cache does not hold it.
	Get(ctx context.Context, key string) ([]byte, error)
	// Set stores value under key for ttl.
	Set(ctx context.Context, key string, value []byte, ttl time.Duration) error
}

// ErrCacheMiss is what a Cache returns for a key it does not hold.
var ErrCacheMiss = errors.New("recipes: cache miss")

// OrdersCacheRules returns the rules of the cache: the README's recommended rules, with a
// MaxAllowedRT for a cache, which answers in a millisecond or two, and a shorter RetryTimeout
// and RampUp: while the cache's breaker is OPEN every read falls through to the database, and
// a probe costs one Get, cut off at the cache's short Timeout.
func OrdersCacheRules() []breaker.Rule {
	return []breaker.Rule{
		{Resource: OrdersCache, Strategy: breaker.ErrorRatio, Threshold: 0.5,
			FastBuckets: 2, RetryTimeout: time.Second, RetryJitter: 0.2, RampUp: 5 * time.Second,
			Pace: true},
		{Resource: OrdersCache, Strategy: breaker.SlowRequestRatio, Threshold: 0.5,
			MaxAllowedRT: 20 * time.Millisecond, FastBuckets: 2, RetryTimeout: time.Second,
			RetryJitter: 0.2, RampUp: 5 * time.Second, Pace: true},
	}
}

// OrdersCacheSettings returns the settings of the cache for a client whose pool holds poolSize
// connections (go-redis's PoolSize). The Timeout is short: a cache slower than the database it
// stands in front of is worse than none, and a read it cuts off falls through to the database.
// MaxConcurrency at the pool's size rejects a call at once rather than queueing it for a
// connection, as for the database.
func OrdersCacheSettings(poolSize int) breaker.ResourceConfig {
	return breaker.ResourceConfig{Timeout: 50 * time.Millisecond, MaxConcurrency: poolSize}
}

// CachedOrders reads orders through a cache in front of an OrderStore. The Manager needs
// OrdersCacheRules and OrdersCacheSettings loaded beside the OrderStore's. It is safe for
// concurrent use.
type CachedOrders struct {
	m     *breaker.Manager
	cache Cache
	store *OrderStore
	fresh time.Duration // how long a cached order is served without asking the database
	keep  time.Duration // how long the cache keeps it: a copy older than fresh is served stale
}

// NewCachedOrders returns CachedOrders that serve an order from cache for fresh after reading
// it from store, and serve a copy up to keep old when store cannot answer.
func NewCachedOrders(m *breaker.Manager, cache Cache, store *OrderStore, fresh, keep time.Duration) *CachedOrders {
	return &CachedOrders{m: m, cache: cache, store: store, fresh: fresh, keep: keep}
}

// cachedOrder is what the cache holds for an order.
type cachedOrder struct {
	Order      Order     `json:"order"`
	FreshUntil time.Time `json:"freshUntil"`
}

// Order returns the order id: from the cache while its copy is fresh; else from the database,
// which then refills the cache. When the cache misses, fails, times out, or its breaker holds
// the call back, the database answers: the OrderStore's own breaker and MaxConcurrency keep a
// cache outage from becoming the database's. When the database cannot answer (its breaker
// holds the call back, or it fails), a stale copy the cache still holds is served. It returns
// what OrderStore.Order returns otherwise.
func (c *CachedOrders) Order(ctx context.Context, id string) (Order, error) {
	key := "order:" + id
	cached, hit, cacheErr := c.get(ctx, key)
	if hit && c.m.Now().Before(cached.FreshUntil) {
		return cached.Order, nil
	}
	o, err := c.store.Order(ctx, id)
	switch {
	case errors.Is(err, ErrOrderNotFound):
		return Order{}, err
	case err != nil && hit:
		return cached.Order, nil // stale, rather than nothing
	case err != nil:
		return Order{}, err
	}
	if cacheErr == nil { // not after a failure: a cache in trouble is asked no more than needed
		c.set(ctx, key, cachedOrder{Order: o, FreshUntil: c.m.Now().Add(c.fresh)})
	}
	return o, nil
}

// get reads key from the cache, as a call under OrdersCache. A miss is the cache answering, so
// the call succeeds with hit false; err is the cache's failure, or the *breaker.BlockError of a
// call held back.
func (c *CachedOrders) get(ctx context.Context, key string) (cached cachedOrder, hit bool, err error) {
	var b []byte
	err = c.m.Do(ctx, OrdersCache, func(ctx context.Context) error {
		var err error
		b, err = c.cache.Get(ctx, key)
		if errors.Is(err, ErrCacheMiss) {
			return nil
		}
		return err
	})
	if err != nil || b == nil {
		return cachedOrder{}, false, err
	}
	if json.Unmarshal(b, &cached) != nil {
		return cachedOrder{}, false, nil // a copy it cannot read is a miss, not the cache's fault
	}
	return cached, true, nil
}

// set stores v under key, as a call under OrdersCache. Its failure is counted, and otherwise
// ignored: the next read misses.
func (c *CachedOrders) set(ctx context.Context, key string, v cachedOrder) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	_ = c.m.Do(ctx, OrdersCache, func(ctx context.Context) error {
		return c.cache.Set(ctx, key, b, c.keep)
	})
}
