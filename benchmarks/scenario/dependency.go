package scenario

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"time"
)

// ErrDependency is the failure the simulated dependency returns by its script's error rate,
// with no retry hint: a 5xx such as a plain 503.
var ErrDependency = errors.New("scenario: dependency failed")

// ErrOverloaded is the failure of a call beyond the dependency's capacity.
var ErrOverloaded = errors.New("scenario: dependency overloaded")

// ErrQuotaExceeded is the failure of a call beyond the dependency's quota for the current
// second: a 503 that a backend answers at once.
var ErrQuotaExceeded = errors.New("scenario: quota exceeded (503)")

// capacityWindow is the period over which capacity is counted: a call is over capacity when
// the window it starts in already took capacity × capacityWindow calls.
const capacityWindow = 100 * time.Millisecond

// Dependency is the simulated service behind the breaker. Each call looks up the phase in
// force when it starts, draws its outcome and latency from a seeded generator, waits the
// latency on the clock (a canceled context ends the wait with the context's error, as a
// well-behaved client does), and then answers.
type Dependency struct {
	script Script
	clock  Clock
	// stop ends every wait when the run is over, so hung calls never outlive it.
	stop context.Context

	mu     sync.Mutex
	rng    *rand.Rand
	window int64 // index of the current capacity window
	inWin  int   // calls taken in it
	second int64 // index of the current quota second
	inSec  int   // calls that reached the dependency in it
	// warm is when the current warm-up began: the start of the phase, or the last crash.
	warm      time.Duration
	warmPhase int // the phase warm belongs to (-1: none yet)
	crashes   int
	running   int
	peak      int
}

// NewDependency returns a dependency following script on clock, with its random draws seeded
// by seed. Calls still waiting when stop is done return at once.
func NewDependency(script Script, clock Clock, seed uint64, stop context.Context) *Dependency {
	return &Dependency{script: script, clock: clock, stop: stop, rng: rand.New(rand.NewPCG(seed, 0x5ce7a210)), warmPhase: -1}
}

// Call is one call to the dependency.
func (d *Dependency) Call(ctx context.Context) error {
	start := d.clock.Now()
	p := d.script.Phases[d.script.PhaseAt(start)]

	d.mu.Lock()
	over := d.overCapacity(p, start)
	overQuota := d.overQuota(p, start)
	fail := d.rng.Float64() < p.ErrorRate && !d.upTurn(p, start)
	lat := p.Latency.Base
	if p.Latency.Jitter > 0 {
		lat += time.Duration(d.rng.Int64N(int64(p.Latency.Jitter)))
	}
	if p.Latency.TailProb > 0 && d.rng.Float64() < p.Latency.TailProb {
		lat = p.Latency.Tail
	}
	d.running++
	d.peak = max(d.peak, d.running)
	d.mu.Unlock()
	defer func() {
		d.mu.Lock()
		d.running--
		d.mu.Unlock()
	}()

	if over {
		return ErrOverloaded
	}
	if overQuota {
		return beyondQuota(p)
	}
	if err := d.wait(ctx, lat); err != nil {
		return err
	}
	if fail {
		return ErrDependency
	}
	return nil
}

// beyondQuota is the answer to a call beyond p's quota: a refusal with the phase's hint, or
// else a 503 at once.
func beyondQuota(p Phase) error {
	if p.QuotaRetryAfter > 0 {
		return &Refusal{RetryAfter: p.QuotaRetryAfter}
	}
	return ErrQuotaExceeded
}

// wait sleeps lat, ending early when the caller's context or the run is done.
func (d *Dependency) wait(ctx context.Context, lat time.Duration) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(d.stop, cancel)
	defer stop()
	return d.clock.Sleep(ctx, lat)
}

// overCapacity counts the call in its capacity window and says whether it is beyond the
// phase's capacity. d.mu is held.
func (d *Dependency) overCapacity(p Phase, at time.Duration) bool {
	if p.CapacityTo <= 0 {
		return false
	}
	if i := d.script.PhaseAt(at); i != d.warmPhase {
		d.warmPhase, d.warm = i, d.script.Start(i)
	}
	if w := int64(at / capacityWindow); w != d.window {
		d.window, d.inWin = w, 0
	}
	d.inWin++
	limit := d.capacity(p, at) * capacityWindow.Seconds()
	if p.CrashOnOverload && float64(d.inWin) > 2*limit {
		d.warm, d.inWin = at, 0 // fell over: warming up again from now
		d.crashes++
		return true
	}
	return float64(d.inWin) > limit
}

// overQuota counts the call in its second of the run's clock and says whether it is beyond
// the phase's quota for that second. d.mu is held.
func (d *Dependency) overQuota(p Phase, at time.Duration) bool {
	if p.QuotaPerSecond <= 0 {
		return false
	}
	if s := int64(at / time.Second); s != d.second {
		d.second, d.inSec = s, 0
	}
	d.inSec++
	return d.inSec > p.QuotaPerSecond
}

// upTurn says whether at falls in one of the periods of an alternating phase in which the
// dependency answers without errors: the second, fourth, ... AlternateEvery from its start.
func (d *Dependency) upTurn(p Phase, at time.Duration) bool {
	if p.AlternateEvery <= 0 {
		return false
	}
	since := at - d.script.Start(d.script.PhaseAt(at))
	return (since/p.AlternateEvery)%2 == 1
}

// capacity is the phase's calls per second at offset at, ramped over the phase's length from
// the start of the current warm-up.
func (d *Dependency) capacity(p Phase, at time.Duration) float64 {
	frac := float64(at-d.warm) / float64(p.Duration)
	return p.CapacityFrom + (p.CapacityTo-p.CapacityFrom)*min(max(frac, 0), 1)
}

// Crashes is how many times the dependency fell over from overload.
func (d *Dependency) Crashes() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.crashes
}

// Running is the number of calls inside the dependency now.
func (d *Dependency) Running() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.running
}

// PeakRunning is the most calls that were inside the dependency at once.
func (d *Dependency) PeakRunning() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.peak
}
