package rulefile_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/halfopen/breaker"
	"github.com/halfopen/breaker/rulefile"
)

func ExampleWatch() {
	dir, err := os.MkdirTemp("", "rules")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "breakers.json")
	doc := `{"rules": [{"resource": "payments", "strategy": "ErrorRatio", "threshold": 0.5, "retryTimeout": "10s"}],
	         "resources": {"payments": {"timeout": "2s"}}}`
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		panic(err)
	}

	ctx, stop := context.WithCancel(context.Background())
	m := breaker.NewManager()
	w, err := rulefile.Watch(ctx, path, m) // the first load happens before Watch returns
	if err != nil {
		panic(err) // refuse to start with bad rules
	}
	fmt.Println(len(m.Rules()), m.Rules()[0].Resource, m.Snapshot().Settings["payments"].Timeout)
	stop()
	<-w.Done()
	// Output: 1 payments 2s
}
