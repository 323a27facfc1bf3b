package breaker

import "context"

// DoWithFallback is Do with a fallback, in the manner of Hystrix's getFallback: when the call
// is blocked, or fn returns an error, it returns fallback(ctx, err) instead, where err is the
// *BlockError or fn's error. A fallback meant only for blocked calls returns err unchanged
// unless errors.Is(err, ErrBlocked). A panic in fn is not caught. A nil fallback makes it Do.
func (m *Manager) DoWithFallback(ctx context.Context, resource string, fn func(context.Context) error,
	fallback func(context.Context, error) error) error {
	err := m.Do(ctx, resource, fn)
	if err != nil && fallback != nil {
		return fallback(ctx, err)
	}
	return err
}

// ExecuteWithFallback is Execute with a fallback: when the call is blocked, or fn returns an
// error, it returns fallback(ctx, err) instead; see DoWithFallback.
func ExecuteWithFallback[T any](ctx context.Context, m *Manager, resource string, fn func(context.Context) (T, error),
	fallback func(context.Context, error) (T, error)) (T, error) {
	v, err := Execute(ctx, m, resource, fn)
	if err != nil && fallback != nil {
		return fallback(ctx, err)
	}
	return v, err
}
