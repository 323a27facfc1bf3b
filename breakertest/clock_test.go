package breakertest_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"go.uber.org/goleak"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakertest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestClock(t *testing.T) {
	c := breakertest.NewClock()
	assert.Equal(t, breakertest.Start, c.Now())
	c.Advance(90 * time.Second)
	assert.Equal(t, breakertest.Start.Add(90*time.Second), c.Now())
	c.Advance(-time.Hour)
	assert.Equal(t, breakertest.Start.Add(90*time.Second-time.Hour), c.Now())
	later := breakertest.Start.Add(24 * time.Hour)
	c.Set(later)
	assert.Equal(t, later, c.Now())
}

// A test trips a breaker and recovers it without sleeping.
func Example() {
	clock := breakertest.NewClock()
	m := breaker.NewManager(breaker.WithClock(clock))
	_ = m.LoadRules([]breaker.Rule{{Resource: "db", Strategy: breaker.ErrorCount, Threshold: 1,
		MinRequestAmount: 1, RetryTimeout: 30 * time.Second}})
	down := func(context.Context) error { return errors.New("db down") }
	up := func(context.Context) error { return nil }

	_ = m.Do(context.Background(), "db", down)
	fmt.Println(m.Breakers("db")[0].State())
	clock.Advance(30 * time.Second)
	_ = m.Do(context.Background(), "db", up)
	fmt.Println(m.Breakers("db")[0].State())
	// Output:
	// OPEN
	// CLOSED
}
