package breakergrpc

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/status"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakertest"
)

// Given a BlockError whose retry time is past, now, or less than a second away, then the
// RetryInfo of the status says to wait a second, never zero or a negative delay; a later
// retry time is said as it is.
func TestBlockedRetryDelayIsAtLeastASecond(t *testing.T) {
	clk := breakertest.NewClock()
	m := breaker.NewManager(breaker.WithClock(clk))
	now := m.Now()
	tests := []struct {
		name string
		give time.Time
		want time.Duration
	}{
		{name: "long past", give: now.Add(-time.Hour), want: time.Second},
		{name: "just past", give: now.Add(-time.Nanosecond), want: time.Second},
		{name: "now", give: now, want: time.Second},
		{name: "a nanosecond away", give: now.Add(time.Nanosecond), want: time.Second},
		{name: "zero time", give: time.Time{}, want: time.Second},
		{name: "later", give: now.Add(1500 * time.Millisecond), want: 1500 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rule := breaker.Rule{Resource: "/test.Echo/Echo", Strategy: breaker.ErrorCount, Threshold: 1}
			err := blocked(m, newOptions(nil), &breaker.BlockError{
				Resource: rule.Resource, Rule: &rule, State: breaker.HalfOpen, RetryAt: tt.give,
			})
			var retry *errdetails.RetryInfo
			for _, d := range status.Convert(err).Details() {
				if d, ok := d.(*errdetails.RetryInfo); ok {
					retry = d
				}
			}
			require.NotNil(t, retry, "RetryInfo of %v", err)
			assert.Equal(t, tt.want, retry.GetRetryDelay().AsDuration())
		})
	}
}
