// Command retry shows a retry loop paced by a circuit breaker, offline, in about three
// seconds.
//
// A fake ledger service is down for the first 2.5s, then healthy. One request retries its
// call with breakerretry.Policy: the first failures back off and trip the breaker; from then on the
// loop is rejected at once, without calling the ledger, and sleeps until the rejection's
// RetryAt, where its next call is the breaker's probe. It neither spins on the open breaker
// nor calls past it, and the breaker counts only the calls that reached the ledger. The
// program prints each call, rejection, wait and state change.
//
//	go run ./examples/retry
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/breakerretry"
)

const resource = "ledger"

// downFor is how long the ledger is down from the start of the run.
const downFor = 2500 * time.Millisecond

// rule trips the breaker on the third failure within 10s; it then rejects calls for 1s before
// it lets one probe through.
var rule = breaker.Rule{
	ID:               "ledger-errors",
	Resource:         resource,
	Strategy:         breaker.ErrorCount,
	Threshold:        3,
	MinRequestAmount: 1,
	StatInterval:     10 * time.Second,
	RetryTimeout:     time.Second,
}

// retry makes at most 10 calls within 10s, and backs off 100ms, 200ms, then 250ms after a
// failure. After a rejection it waits until RetryAt instead.
var retry = breakerretry.Policy{
	Attempts: 10,
	Within:   10 * time.Second,
	Backoff: func(n int) time.Duration {
		return min(100*time.Millisecond<<(n-1), 250*time.Millisecond)
	},
}

func main() {
	if _, err := run(os.Stdout, systemClock{}, sleep); err != nil {
		fmt.Fprintln(os.Stderr, "retry:", err)
		os.Exit(1)
	}
}

// systemClock is the wall clock, the same as the breaker's default.
type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

// errUnavailable is what the ledger answers while it is down.
var errUnavailable = errors.New("ledger: 503 service unavailable")

// tally counts what happened in a run.
type tally struct {
	Attempts int // calls to Do, let through or not
	Rejected int // of those, the ones the breaker rejected without calling the ledger
	Calls    int // calls that reached the ledger
}

// run makes one request that retries its call to the ledger, and writes what happened to w. It
// reads time only from clk and waits only with sleep, so a test can run it on a fake clock in
// no time.
func run(w io.Writer, clk breaker.Clock, sleep func(context.Context, time.Duration) error) (tally, error) {
	start := clk.Now()
	out := &printer{w: w, start: start}
	var t tally

	m := breaker.NewManager(breaker.WithClock(clk), breaker.WithCallObserver(func(c breaker.CallInfo) {
		t.Attempts++
		if c.Blocked != nil {
			t.Rejected++
			out.printf("%6s  rejected: the breaker is %v until %s\n", out.at(clk.Now()), c.Blocked.State, out.at(c.Blocked.RetryAt))
		}
	}))
	if err := m.LoadRules([]breaker.Rule{rule}); err != nil {
		return t, err
	}
	remove := m.AddObserver(breaker.ObserverFunc(func(c breaker.StateChange) {
		out.printf("%6s  ▸ %v → %v: %v\n", out.at(c.At), c.From, c.To, c.Reason)
	}))
	defer remove()

	ledger := func(context.Context) error {
		t.Calls++
		if clk.Now().Sub(start) < downFor {
			out.printf("%6s  call %d: %v\n", out.at(clk.Now()), t.Calls, errUnavailable)
			return errUnavailable
		}
		out.printf("%6s  call %d: ok\n", out.at(clk.Now()), t.Calls)
		return nil
	}

	p := retry
	p.Sleep = func(ctx context.Context, d time.Duration) error {
		out.printf("%6s  wait %v\n", out.at(clk.Now()), d.Round(10*time.Millisecond))
		return sleep(ctx, d)
	}
	err := p.Do(context.Background(), m, resource, ledger)
	out.printf("\nresult: %v after %s: %d attempts, %d rejected without a call, %d calls to the ledger\n",
		errText(err), out.at(clk.Now()), t.Attempts, t.Rejected, t.Calls)
	if err != nil {
		return t, err
	}
	return t, out.err
}

// sleep waits d on a timer, or until ctx is done, as a Policy does when its Sleep is nil (here it
// is set, to print each wait).
func sleep(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func errText(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}

// printer writes the log and keeps the first write error.
type printer struct {
	w     io.Writer
	start time.Time
	err   error
}

func (p *printer) printf(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}

// at is how long after the start t is, to 10ms: a real run's timers fire a little late, and
// that is noise (so are the waits, printed to 10ms too).
func (p *printer) at(t time.Time) string {
	return fmt.Sprintf("%.2fs", t.Sub(p.start).Round(10*time.Millisecond).Seconds())
}
