// Command fleet shows one rule change in etcd reach every instance of a service, offline, in
// about a second.
//
// The program starts an etcd server embedded in it, on loopback ports, with its data in a
// temporary directory. Two instances of a service, each with its own breaker.Manager and etcd
// client, watch the same key with breakeretcd.Watch. An operator writes an ErrorCount rule to
// the key, then lowers its threshold, then writes a broken value; after each step the program
// prints what each instance loaded, or refused, and the state its breaker reaches after the
// same three failed calls. Then the operator forces the "ledger" resource open on every
// instance with one put of a document that holds the rules and the resource settings, and
// releases it with another; each instance's calls to ledger are rejected, then pass. Then it
// shuts everything down: the watchers, the clients, etcd.
//
//	go run ./examples/fleet
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"github.com/halfopen/breaker"
	breakeretcd "github.com/halfopen/breaker/contrib/etcd"
)

// key is where the fleet's rules live.
const key = "/config/payments/breakers"

// The operator's three writes: a rule, the same rule with a lower threshold, a broken value.
const (
	rulesV1 = `[{"id":"payments-errors","resource":"payments","strategy":"ErrorCount","threshold":5,"minRequestAmount":1,"retryTimeout":"30s"}]`
	rulesV2 = `[{"id":"payments-errors","resource":"payments","strategy":"ErrorCount","threshold":3,"minRequestAmount":1,"retryTimeout":"30s"}]`
	broken  = `[{"id":"payments-errors","resource":"payments","strategy":"ErrorCount","threshold":`
)

// The operator's kill switch: the same rules, with ledger forced open, then released. Every
// put carries the rules too, since it replaces the broken value.
const (
	forceLedger   = `{"rules": ` + rulesV2 + `, "resources": {"ledger": {"force": "open"}}}`
	releaseLedger = `{"rules": ` + rulesV2 + `, "resources": {}}`
)

// wait bounds every wait for etcd or for an instance.
const wait = 10 * time.Second

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "fleet:", err)
		os.Exit(1)
	}
}

// instance is one instance of the service: its Manager, its etcd client and its watcher, and
// what the watcher reports.
type instance struct {
	name   string
	m      *breaker.Manager
	client *clientv3.Client
	w      *breakeretcd.Watcher
	loads  chan []breaker.Rule
	errs   chan error
}

// run runs the example, printing its timeline to out.
func run(out io.Writer) (err error) {
	// Deferred calls run last to first: the watchers stop, then the clients close, then etcd.
	defer func() {
		if err == nil {
			fmt.Fprintln(out, "shutdown  watchers stopped, clients closed, etcd closed")
		}
	}()
	dir, err := os.MkdirTemp("", "fleet-etcd-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	etcd, endpoint, err := startEtcd(dir)
	if err != nil {
		return err
	}
	defer etcd.Close()
	fmt.Fprintln(out, "etcd      started on loopback, one member")

	operator, err := newClient(endpoint)
	if err != nil {
		return err
	}
	defer operator.Close()
	if err := put(operator, rulesV1); err != nil {
		return err
	}
	fmt.Fprintf(out, "operator  put %s: threshold 5\n", key)

	ctx, stop := context.WithCancel(context.Background())
	var fleet []*instance
	defer func() {
		stop()
		for _, in := range fleet {
			<-in.w.Done()
			in.client.Close()
		}
	}()
	for _, name := range []string{"instance-a", "instance-b"} {
		in, err := start(ctx, name, endpoint)
		if err != nil {
			return err
		}
		fleet = append(fleet, in)
	}
	if err := step(out, fleet, "loaded at start"); err != nil {
		return err
	}

	if err := put(operator, rulesV2); err != nil {
		return err
	}
	fmt.Fprintf(out, "operator  put %s: threshold 3\n", key)
	if err := step(out, fleet, "loaded"); err != nil {
		return err
	}

	if err := put(operator, broken); err != nil {
		return err
	}
	fmt.Fprintf(out, "operator  put %s: broken JSON\n", key)
	for _, in := range fleet {
		select {
		case err := <-in.errs:
			fmt.Fprintf(out, "%s refused it (%s); keeps %s\n", in.name, cause(err), describe(in.m.Rules()))
		case <-time.After(wait):
			return fmt.Errorf("%s did not report the broken value", in.name)
		}
	}

	if err := put(operator, forceLedger); err != nil {
		return err
	}
	fmt.Fprintf(out, "operator  put %s: ledger forced open\n", key)
	if err := callLedger(out, fleet); err != nil {
		return err
	}
	if err := put(operator, releaseLedger); err != nil {
		return err
	}
	fmt.Fprintf(out, "operator  put %s: ledger released\n", key)
	return callLedger(out, fleet)
}

// callLedger waits for each instance to load, prints the ledger's settings, and what a call to
// ledger, a resource without rules, gets.
func callLedger(out io.Writer, fleet []*instance) error {
	for _, in := range fleet {
		select {
		case <-in.loads:
		case err := <-in.errs:
			return fmt.Errorf("%s: %w", in.name, err)
		case <-time.After(wait):
			return fmt.Errorf("%s loaded nothing", in.name)
		}
		result := "passed"
		err := in.m.Do(context.Background(), "ledger", func(context.Context) error { return nil })
		if err != nil {
			result = "rejected: " + err.Error()
		}
		fmt.Fprintf(out, "%s loaded: ledger force %v; a call to ledger %s\n", in.name, in.m.Snapshot().Settings["ledger"].Force, result)
	}
	return nil
}

// step waits for each instance to load rules, prints them, and then the state the instance's
// breaker reaches after three failed calls.
func step(out io.Writer, fleet []*instance, what string) error {
	for _, in := range fleet {
		select {
		case rules := <-in.loads:
			fmt.Fprintf(out, "%s %s: %s\n", in.name, what, describe(rules))
		case err := <-in.errs:
			return fmt.Errorf("%s: %w", in.name, err)
		case <-time.After(wait):
			return fmt.Errorf("%s loaded nothing", in.name)
		}
	}
	for _, in := range fleet {
		for range 3 {
			_ = in.m.Do(context.Background(), "payments", func(context.Context) error {
				return errors.New("payments: 503")
			})
		}
		fmt.Fprintf(out, "%s 3 failed calls to payments: %v\n", in.name, in.m.Breakers("payments")[0].State())
	}
	return nil
}

// start starts one instance: a Manager kept in step with key.
func start(ctx context.Context, name, endpoint string) (*instance, error) {
	client, err := newClient(endpoint)
	if err != nil {
		return nil, err
	}
	in := &instance{name: name, m: breaker.NewManager(), client: client,
		loads: make(chan []breaker.Rule, 4), errs: make(chan error, 4)}
	in.w, err = breakeretcd.Watch(ctx, client, key, in.m,
		breakeretcd.WithLogger(slog.New(slog.DiscardHandler)), // the timeline says it all
		breakeretcd.OnLoad(func(r []breaker.Rule) { in.loads <- r }),
		breakeretcd.OnError(func(err error) { in.errs <- err }))
	if err != nil {
		client.Close()
		return nil, err
	}
	return in, nil
}

// describe summarises rules for the timeline.
func describe(rules []breaker.Rule) string {
	var s []string
	for _, r := range rules {
		s = append(s, fmt.Sprintf("%s %v >= %v, retry %v", r.Resource, r.Strategy, r.Threshold, r.RetryTimeout))
	}
	if len(s) == 0 {
		return "no rules"
	}
	return strings.Join(s, "; ")
}

// cause shortens a watcher's error to its last part.
func cause(err error) string {
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		return msg[i+2:]
	}
	return msg
}

func put(c *clientv3.Client, value string) error {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	_, err := c.Put(ctx, key, value)
	return err
}

func newClient(endpoint string) (*clientv3.Client, error) {
	return clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: wait, Logger: zap.NewNop()})
}

// startEtcd starts a one-member etcd server with its data in dir, on two free loopback ports,
// and waits until it serves. It returns the server and where its clients reach it.
func startEtcd(dir string) (*embed.Etcd, string, error) {
	ports, err := freeURLs(2)
	if err != nil {
		return nil, "", err
	}
	client, peer := ports[0], ports[1]
	cfg := embed.NewConfig()
	cfg.Name = "fleet"
	cfg.Dir = dir
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{client}, []url.URL{client}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peer}, []url.URL{peer}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, "", err
	}
	select {
	case <-e.Server.ReadyNotify():
		return e, client.Host, nil
	case err := <-e.Err():
		e.Close()
		return nil, "", fmt.Errorf("etcd: %w", err)
	case <-time.After(wait):
		e.Close()
		return nil, "", errors.New("etcd did not start")
	}
}

// freeURLs returns the URLs of n loopback ports that were free a moment ago: etcd's
// configuration wants ports, not ":0". They are held open together until all are chosen, so
// no two are the same port.
func freeURLs(n int) ([]url.URL, error) {
	urls := make([]url.URL, n)
	for i := range urls {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer ln.Close()
		urls[i] = url.URL{Scheme: "http", Host: ln.Addr().String()}
	}
	return urls, nil
}
