package breakeretcd_test

import (
	"context"
	"log"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/halfopen/breaker"
	breakeretcd "github.com/halfopen/breaker/contrib/etcd"
)

// A service keeps its breakers' rules in etcd, at one key shared by every instance. (It needs
// an etcd server, so it is compiled but not run: examples/fleet runs one.)
func ExampleWatch() {
	client, err := clientv3.New(clientv3.Config{
		Endpoints:   []string{"127.0.0.1:2379"},
		DialTimeout: 5 * time.Second,
	})
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())

	m := breaker.NewManager()
	w, err := breakeretcd.Watch(ctx, client, "/config/payments/breakers", m,
		breakeretcd.OnError(func(err error) {
			log.Printf("breaker rules not loaded, the last good ones stay: %v", err)
		}))
	if err != nil {
		log.Fatal(err) // etcd did not answer, or the stored rules are bad: refuse to start
	}

	// ... serve, with m.Do around each call to payments ...

	stop()     // at shutdown: stop the watcher,
	<-w.Done() // wait for it,
	client.Close()
}
