package breakerotel

import (
	"context"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/embedded"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakerview"
)

// observed is a metric.Observer that keeps what it is given, by instrument, as "attributes value".
type observed struct {
	embedded.Observer
	ins    *Instruments
	points map[string][]string // by instrument name
}

func (o *observed) ObserveFloat64(metric.Float64Observable, float64, ...metric.ObserveOption) {}

func (o *observed) ObserveInt64(obs metric.Int64Observable, v int64, opts ...metric.ObserveOption) {
	name := map[metric.Int64Observable]string{o.ins.windowBad: WindowBadName, o.ins.windowRefused: WindowRefusedName,
		o.ins.resourceInfo: ResourceInfoName}[obs]
	if name == "" {
		return
	}
	attrs := metric.NewObserveConfig(opts).Attributes()
	o.points[name] = append(o.points[name], attrs.Encoded(attribute.DefaultEncoder())+" "+strconv.FormatInt(v, 10))
}

// Given a view whose route's breaker holds refused calls among its bad ones in its window
// (Stats.Refused, which the core counts) and a series of the names past the bound, then
// breaker.window.refused says them beside breaker.window.bad, and breaker.resource.info each
// resource's side: server for the route, none for the overflow.
func TestObserveViewRefusedAndSides(t *testing.T) {
	provider := sdkmetric.NewMeterProvider() // instruments of their own, told apart below
	t.Cleanup(func() { assert.NoError(t, provider.Shutdown(context.Background())) })
	ins, err := New(provider)
	require.NoError(t, err)
	rule := breaker.Rule{ID: "errors", Resource: "@server POST /orders", Strategy: breaker.ErrorRatio, Threshold: 0.5}
	v := &breakerview.View{Series: []breakerview.Series{
		{Label: "@server POST /orders", Side: breakerview.ServerSide, Breakers: []breakerview.Breaker{{
			Stats: breaker.Stats{Rule: rule, State: breaker.Closed, Total: 10, Bad: 3, Refused: 2}, Label: "errors",
			Windowed: true}}},
		{Label: "payments", Side: breakerview.ClientSide},
		{Label: breakerview.Overflow, Side: breakerview.NoSide},
	}}
	o := &observed{ins: ins, points: map[string][]string{}}
	ins.observeView(o, v)

	assert.Equal(t, map[string][]string{
		WindowBadName:     {"breaker.resource=@server POST /orders,breaker.rule=errors 3"},
		WindowRefusedName: {"breaker.resource=@server POST /orders,breaker.rule=errors 2"},
		ResourceInfoName: {"breaker.resource=@server POST /orders,breaker.side=server 1",
			"breaker.resource=payments,breaker.side=client 1", "breaker.resource=_other 1"},
	}, o.points)
}
