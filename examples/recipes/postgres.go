package recipes

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/halfopen/breaker"
)

// OrdersDB is the resource every call to the orders database is made under. One name for the
// whole pool, not one per query: a database that stops or locks up fails every query at once,
// and the concurrency limit must count every call that holds one of the pool's connections.
const OrdersDB = "postgres orders"

// Querier is what the order store needs of a PostgreSQL connection pool. A *pgxpool.Pool
// provides it through an adapter, since pgx's methods return pgx's own types:
//
//	type pgxQuerier struct{ pool *pgxpool.Pool }
//
//	func (q pgxQuerier) QueryRow(ctx context.Context, query string, args ...any) recipes.Row {
//		return q.pool.QueryRow(ctx, query, args...)
//	}
//
//	func (q pgxQuerier) Exec(ctx context.Context, query string, args ...any) error {
//		_, err := q.pool.Exec(ctx, query, args...)
//		return err
//	}
//
// Each method holds one of the pool's connections until it returns, and must return when ctx
// ends, as pgx's do: that is how a resource's Timeout frees a connection that a lock or a hang
// holds.
type Querier interface {
	// QueryRow runs a query that returns at most one row. The query's error comes from the
	// row's Scan, which returns an error matching sql.ErrNoRows when there was no row
	// (pgx.ErrNoRows does, since pgx v5.7).
	QueryRow(ctx context.Context, query string, args ...any) Row
	// Exec runs a statement that returns no rows.
	Exec(ctx context.Context, query string, args ...any) error
}

// Row is the row QueryRow returns, as pgx.Row is.
type Row interface {
	Scan(dest ...any) error
}

// OrdersDBRules returns the rules of the orders database: the README's recommended rules as
// they are. A stopped database fails every call, which the fast trip (FastBuckets) catches
// within two buckets; a lock or a hang keeps calls in flight, which the SlowRequestRatio rule
// counts slow once they pass MaxAllowedRT, before any of them returns.
func OrdersDBRules() []breaker.Rule {
	return []breaker.Rule{
		{Resource: OrdersDB, Strategy: breaker.ErrorRatio, Threshold: 0.5,
			FastBuckets: 2, RetryTimeout: 5 * time.Second, RetryJitter: 0.2, RampUp: 20 * time.Second,
			Pace: true},
		{Resource: OrdersDB, Strategy: breaker.SlowRequestRatio, Threshold: 0.5,
			MaxAllowedRT: 300 * time.Millisecond, FastBuckets: 2, RetryTimeout: 5 * time.Second,
			RetryJitter: 0.2, RampUp: 20 * time.Second, Pace: true},
	}
}

// OrdersDBSettings returns the settings of the orders database for a pool of poolSize
// connections (pgxpool's MaxConns). The Timeout cuts off a query that waits on a lock or hangs,
// and counts it as failed; MaxConcurrency at the pool's size rejects the call that would wait
// for a connection at once, instead of queueing it behind the calls that hold them all.
func OrdersDBSettings(poolSize int) breaker.ResourceConfig {
	return breaker.ResourceConfig{Timeout: time.Second, MaxConcurrency: poolSize}
}

// ClassifyPostgres is a Classifier (breaker.WithClassifier) for PostgreSQL's answers: a
// query that found no row, and an error the caller's input caused (SQLSTATE class 22, data
// exceptions such as 22P02, a malformed number; class 23, integrity constraint violations such
// as 23505, a unique violation), count as successes, so that bad input never opens the
// breaker: the database answered, and a probe that meets one has shown it alive. Everything
// else is left to breaker.DefaultClassifier: a connection refused, a lock_timeout (55P03), an
// administrator's shutdown (57P01) and a deadline fail; the caller's own cancellation counts
// neither way.
//
// It recognises PostgreSQL's errors by their SQLState method, which pgconn.PgError has, so it
// needs no import of pgx. A Classifier is the Manager's, for every resource: it matches only
// errors that a database returns, and leaves every other error to the default.
func ClassifyPostgres(err error) breaker.Outcome {
	if errors.Is(err, sql.ErrNoRows) {
		return breaker.Success
	}
	var pgErr interface{ SQLState() string }
	if errors.As(err, &pgErr) {
		switch class(pgErr.SQLState()) {
		case "22", "23":
			return breaker.Success
		}
	}
	return breaker.DefaultClassifier(err)
}

// class is the class of a SQLSTATE code: its first two characters.
func class(sqlState string) string {
	if len(sqlState) < 2 {
		return ""
	}
	return sqlState[:2]
}

// uniqueViolation is the SQLSTATE of an INSERT that repeats a unique key.
const uniqueViolation = "23505"

// Order is one order the service keeps and pushes to its partner.
type Order struct {
	ID      string
	Partner string
	Amount  int64 // in cents
}

// ErrOrderNotFound is what OrderStore.Order returns for an order that is not stored.
var ErrOrderNotFound = errors.New("recipes: no such order")

// ErrDuplicateOrder is what OrderStore.AddOrder returns for an order whose ID is stored already.
var ErrDuplicateOrder = errors.New("recipes: order stored already")

// OrderStore keeps orders in PostgreSQL, every query a call of its Manager under OrdersDB. The
// Manager needs ClassifyPostgres, OrdersDBRules and OrdersDBSettings loaded. It is safe for
// concurrent use.
type OrderStore struct {
	m  *breaker.Manager
	db Querier
}

// NewOrderStore returns a store that queries db through m.
func NewOrderStore(m *breaker.Manager, db Querier) *OrderStore {
	return &OrderStore{m: m, db: db}
}

// Order reads the order id. It returns ErrOrderNotFound when there is none, a
// *breaker.BlockError (matching breaker.ErrBlocked) when the database's breaker or its
// concurrency limit held the call back, or the database's error.
func (s *OrderStore) Order(ctx context.Context, id string) (Order, error) {
	o := Order{ID: id}
	err := s.m.Do(ctx, OrdersDB, func(ctx context.Context) error {
		// This ctx, not the caller's, carries the Timeout: given to the query, it ends the
		// query, and frees its connection, at the deadline.
		return s.db.QueryRow(ctx, `SELECT partner, amount FROM orders WHERE id = $1`, id).
			Scan(&o.Partner, &o.Amount)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return Order{}, fmt.Errorf("order %s: %w", id, ErrOrderNotFound)
	}
	if err != nil {
		return Order{}, err
	}
	return o, nil
}

// AddOrder stores o. It returns ErrDuplicateOrder when an order with its ID is stored already,
// and otherwise what Order returns.
func (s *OrderStore) AddOrder(ctx context.Context, o Order) error {
	err := s.m.Do(ctx, OrdersDB, func(ctx context.Context) error {
		return s.db.Exec(ctx, `INSERT INTO orders (id, partner, amount) VALUES ($1, $2, $3)`,
			o.ID, o.Partner, o.Amount)
	})
	var pgErr interface{ SQLState() string }
	if errors.As(err, &pgErr) && pgErr.SQLState() == uniqueViolation {
		return fmt.Errorf("order %s: %w", o.ID, ErrDuplicateOrder)
	}
	return err
}
