package breaker_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halfopen/breaker"
)

// The fallback runs for blocked and failed calls, with the error; not for successes.
func TestFallback(t *testing.T) {
	h := newHarness(t, errorCount(1, 1))
	var got []error
	fallback := func(_ context.Context, err error) error {
		got = append(got, err)
		return nil // serve a default instead
	}
	require.NoError(t, h.m.DoWithFallback(t.Context(), "svc", succeed, fallback))
	assert.Empty(t, got)
	require.NoError(t, h.m.DoWithFallback(t.Context(), "svc", fail, fallback))
	require.NoError(t, h.m.DoWithFallback(t.Context(), "svc", succeed, fallback))
	require.Len(t, got, 2)
	assert.Equal(t, errDown, got[0])
	assert.ErrorIs(t, got[1], breaker.ErrOpen)

	onlyBlocked := func(_ context.Context, err error) (string, error) {
		if !errors.Is(err, breaker.ErrBlocked) {
			return "", err
		}
		return "cached", nil
	}
	v, err := breaker.ExecuteWithFallback(t.Context(), h.m, "svc",
		func(context.Context) (string, error) { return "fresh", nil }, onlyBlocked)
	assert.NoError(t, err)
	assert.Equal(t, "cached", v)

	h.at(5 * time.Second) // the probe may pass and fails: the fallback passes the error on
	v, err = breaker.ExecuteWithFallback(t.Context(), h.m, "svc",
		func(context.Context) (string, error) { return "", errDown }, onlyBlocked)
	assert.Equal(t, errDown, err)
	assert.Empty(t, v)

	assert.ErrorIs(t, h.m.DoWithFallback(t.Context(), "svc", succeed, nil), breaker.ErrOpen, "nil fallback: Do")
}
