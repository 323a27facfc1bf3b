package breaker_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
)

// With a Timeout, fn's context has a deadline of at most admission + Timeout, and never later
// than the caller's own.
func TestTimeoutDeadline(t *testing.T) {
	m := breaker.NewManager()
	require.NoError(t, m.LoadResources(map[string]breaker.ResourceConfig{"svc": {Timeout: time.Minute}}))
	before := time.Now()
	var deadline time.Time
	require.NoError(t, m.Do(context.Background(), "svc", func(ctx context.Context) error {
		var ok bool
		deadline, ok = ctx.Deadline()
		require.True(t, ok)
		return nil
	}))
	assert.False(t, deadline.Before(before.Add(time.Minute)))
	assert.False(t, deadline.After(time.Now().Add(time.Minute)))

	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	want, _ := ctx.Deadline()
	require.NoError(t, m.Do(ctx, "svc", func(ctx context.Context) error {
		deadline, _ = ctx.Deadline()
		return nil
	}))
	assert.Equal(t, want, deadline, "the caller's earlier deadline stands")

	_, err := breaker.Execute(context.Background(), m, "other", func(ctx context.Context) (int, error) {
		_, ok := ctx.Deadline()
		assert.False(t, ok, "a resource without a Timeout gets the caller's context")
		return 0, nil
	})
	require.NoError(t, err)
}

// A dependency that hangs trips an ErrorRatio rule after MinRequestAmount calls have run
// into the timeout, through Do, a Resource handle and Enter with Entry.WithTimeout.
func TestTimeoutTripsOnAHang(t *testing.T) {
	hang := func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }
	h := newHarness(t, errorRatio(1, 3))
	require.NoError(t, h.m.LoadResources(map[string]breaker.ResourceConfig{"svc": {Timeout: 5 * time.Millisecond}}))
	assert.ErrorIs(t, h.m.Do(context.Background(), "svc", hang), context.DeadlineExceeded)
	assert.ErrorIs(t, h.m.Resource("svc").Do(context.Background(), hang), context.DeadlineExceeded)
	e, err := h.m.Enter("svc")
	require.NoError(t, err)
	ctx, cancel := e.WithTimeout(context.Background())
	e.SetError(hang(ctx))
	cancel()
	e.Exit()
	assert.Equal(t, []string{tripped}, h.events.transitions())
	assert.ErrorIs(t, h.m.Do(context.Background(), "svc", hang), breaker.ErrOpen)
}

// The RT of a call that ran into the timeout counts for SlowRequestRatio.
func TestTimeoutCountsAsSlow(t *testing.T) {
	h := newHarness(t, slowRatio(1, 2))
	require.NoError(t, h.m.LoadResources(map[string]breaker.ResourceConfig{"svc": {Timeout: 5 * time.Millisecond}}))
	for i := 0; i < 2; i++ {
		err := h.m.Do(context.Background(), "svc", func(ctx context.Context) error {
			<-ctx.Done()
			h.clock.Advance(100 * time.Millisecond) // the Manager's clock sees the wait
			return ctx.Err()
		})
		assert.ErrorIs(t, err, context.DeadlineExceeded)
	}
	assert.Equal(t, []string{tripped}, h.events.transitions())
}

// A call cut off at the resource's Timeout counts as slow, also when the Timeout is shorter
// than MaxAllowedRT, so a hang trips a slow-call rule.
func TestCutOffCallIsSlow(t *testing.T) {
	slow := slowRatio(1, 2)
	slow.MaxAllowedRT = time.Hour
	hang := func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }
	tests := []struct {
		name string
		call func(h *harness) error
	}{
		{"Do", func(h *harness) error { return h.m.Do(context.Background(), "svc", hang) }},
		{"Resource.Do", func(h *harness) error { return h.m.Resource("svc").Do(context.Background(), hang) }},
		{"Entry.WithTimeout", func(h *harness) error {
			e, err := h.m.Enter("svc")
			if err != nil {
				return err
			}
			ctx, cancel := e.WithTimeout(context.Background())
			defer cancel()
			e.SetError(hang(ctx))
			e.Exit()
			return nil
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, slow)
			require.NoError(t, h.m.LoadResources(map[string]breaker.ResourceConfig{"svc": {Timeout: time.Nanosecond}}))
			_ = tt.call(h)
			assert.Equal(t, breaker.Closed, h.state("svc", 0), "one call is below MinRequestAmount")
			_ = tt.call(h)
			assert.Equal(t, breaker.Open, h.state("svc", 0), "two cut-off calls are two slow calls")
		})
	}
}

// A call that ends at the caller's own, earlier deadline was not cut off by the library: the
// rule judges it by its response time alone.
func TestCallerDeadlineIsNotACutOff(t *testing.T) {
	slow := slowRatio(1, 1)
	slow.MaxAllowedRT = time.Hour
	h := newHarness(t, slow)
	require.NoError(t, h.m.LoadResources(map[string]breaker.ResourceConfig{"svc": {Timeout: time.Hour}}))
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	for range 3 {
		_ = h.m.Do(ctx, "svc", func(ctx context.Context) error { return ctx.Err() })
	}
	assert.Equal(t, breaker.Closed, h.state("svc", 0))
}
