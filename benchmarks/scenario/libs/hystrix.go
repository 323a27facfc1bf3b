package libs

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/afex/hystrix-go/hystrix"

	"github.com/halfopen/breaker/benchmarks/scenario"
)

// hystrixPoll is how often the hystrix guard reads its circuit's state: hystrix-go has no
// state-change hook.
const hystrixPoll = 5 * time.Millisecond

// Hystrix is afex/hystrix-go with the common error percentage and request volume, the open
// period as SleepWindow, and the common timeout as its own Timeout. Its rolling window is fixed
// at 10 s in hystrix-go, not the common 1 s. Its timeout answers the caller but leaves the work
// goroutine running until the dependency returns, since it does not cancel the context it
// passes. MaxConcurrentRequests is set high so that its semaphore never rejects. Every error
// the function returns is a failure to it, a refusal included.
func Hystrix(c Common) scenario.Library {
	hystrixQuiet.Do(func() { hystrix.SetLogger(quietHystrix{}) })
	return scenario.Library{Name: "hystrix", New: func(name string, changed func(scenario.State)) scenario.Guard {
		hystrix.ConfigureCommand(name, hystrix.CommandConfig{
			Timeout:                int(c.Timeout / time.Millisecond),
			MaxConcurrentRequests:  100000,
			RequestVolumeThreshold: c.MinCalls,
			SleepWindow:            int(c.RetryTimeout / time.Millisecond),
			ErrorPercentThreshold:  int(c.ErrorRatio * 100),
		})
		g := &hystrixGuard{name: name, done: make(chan struct{}), stopped: make(chan struct{})}
		go g.poll(changed)
		return g
	}}
}

var hystrixQuiet sync.Once

type quietHystrix struct{}

func (quietHystrix) Printf(string, ...any) {}

type hystrixGuard struct {
	name          string
	done, stopped chan struct{}
}

func (g *hystrixGuard) Call(ctx context.Context, fn func(context.Context) error) (bool, error) {
	err := hystrix.DoC(ctx, g.name, fn, nil)
	rejected := errors.Is(err, hystrix.ErrCircuitOpen) || errors.Is(err, hystrix.ErrMaxConcurrency)
	return !rejected, err
}

// poll reports open and closed as IsOpen sees them (hystrix's half-open is implicit: one call
// after SleepWindow). IsOpen is what every call asks first; it may itself open the circuit, as
// the next call would.
func (g *hystrixGuard) poll(changed func(scenario.State)) {
	defer close(g.stopped)
	cb, _, err := hystrix.GetCircuit(g.name)
	if err != nil {
		return
	}
	open := false
	t := time.NewTicker(hystrixPoll)
	defer t.Stop()
	for {
		select {
		case <-g.done:
			return
		case <-t.C:
			if now := cb.IsOpen(); now != open {
				open = now
				if open {
					changed(scenario.Open)
				} else {
					changed(scenario.Closed)
				}
			}
		}
	}
}

func (g *hystrixGuard) Close() {
	close(g.done)
	<-g.stopped
}
