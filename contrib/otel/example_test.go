package breakerotel_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/halfopen/breaker"
	breakerotel "github.com/halfopen/breaker/contrib/otel"
)

func Example() {
	ctx := context.Background()
	reader := sdkmetric.NewManualReader() // in a service: a PeriodicReader and an exporter
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer provider.Shutdown(ctx)

	ins, err := breakerotel.New(provider)
	if err != nil {
		panic(err)
	}
	m := breaker.NewManager(ins.Option())
	if err := ins.Watch(m); err != nil {
		panic(err)
	}
	defer ins.Close()

	err = m.LoadRules([]breaker.Rule{{
		Resource:         "payments",
		Strategy:         breaker.ErrorCount,
		Threshold:        2,
		MinRequestAmount: 1,
		RetryTimeout:     time.Minute,
	}})
	if err != nil {
		panic(err)
	}
	err = m.LoadResources(map[string]breaker.ResourceConfig{
		"payments": {Timeout: 2 * time.Second, MaxConcurrency: 10},
	})
	if err != nil {
		panic(err)
	}
	charge := func(context.Context) error { return errors.New("payments: connection refused") }
	for range 3 {
		_ = m.Do(ctx, "payments", charge) // two fail and trip the breaker, which blocks the third
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		panic(err)
	}
	for _, line := range summary(rm) {
		fmt.Println(line)
	}
	// Output:
	// breaker.call.duration.max{breaker.resource=payments} (the longest call)
	// breaker.call.duration{breaker.resource=payments} count 2
	// breaker.calls{breaker.cause=open,breaker.outcome=blocked,breaker.resource=payments} 1
	// breaker.calls{breaker.outcome=failed,breaker.resource=payments} 2
	// breaker.calls{breaker.outcome=passed,breaker.resource=payments} 2
	// breaker.concurrency.limit{breaker.resource=payments,breaker.settings.from=own} 10
	// breaker.force{breaker.resource=payments,breaker.settings.from=own} 0
	// breaker.in_flight{breaker.resource=payments} 0
	// breaker.resource.info{breaker.resource=payments,breaker.side=client} 1
	// breaker.state{breaker.dry_run=false,breaker.resource=payments,breaker.rule=ErrorCount#0} 1
	// breaker.status{breaker.dry_run=false,breaker.resource=payments,breaker.rule=ErrorCount#0,breaker.state=closed} 0
	// breaker.status{breaker.dry_run=false,breaker.resource=payments,breaker.rule=ErrorCount#0,breaker.state=half_open} 0
	// breaker.status{breaker.dry_run=false,breaker.resource=payments,breaker.rule=ErrorCount#0,breaker.state=open} 1
	// breaker.timeout{breaker.resource=payments,breaker.settings.from=own} 2
	// breaker.transitions{breaker.dry_run=false,breaker.reason=ThresholdExceeded,breaker.resource=payments,breaker.state.from=CLOSED,breaker.state.to=OPEN} 1
	// breaker.window.bad{breaker.resource=payments,breaker.rule=ErrorCount#0} 0
	// breaker.window.calls{breaker.resource=payments,breaker.rule=ErrorCount#0} 0
	// breaker.window.ratio{breaker.resource=payments,breaker.rule=ErrorCount#0} 0
	// breaker.window.refused{breaker.resource=payments,breaker.rule=ErrorCount#0} 0
}

// summary prints each data point of rm on one line, sorted; durations only by their count, and
// the longest call without its value, since the example runs on the system clock.
func summary(rm metricdata.ResourceMetrics) []string {
	var lines []string
	line := func(name string, attrs attribute.Set, value any) {
		lines = append(lines, fmt.Sprintf("%s{%s} %v", name, attrs.Encoded(attribute.DefaultEncoder()), value))
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch data := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range data.DataPoints {
					line(m.Name, p.Attributes, p.Value)
				}
			case metricdata.Gauge[int64]:
				for _, p := range data.DataPoints {
					line(m.Name, p.Attributes, p.Value)
				}
			case metricdata.Gauge[float64]:
				for _, p := range data.DataPoints {
					if m.Name == breakerotel.CallDurationMaxName {
						line(m.Name, p.Attributes, "(the longest call)")
					} else {
						line(m.Name, p.Attributes, p.Value)
					}
				}
			case metricdata.Histogram[float64]:
				for _, p := range data.DataPoints {
					line(m.Name, p.Attributes, fmt.Sprintf("count %d", p.Count))
				}
			}
		}
	}
	slices.Sort(lines)
	return lines
}
