package breaker_test

import (
	"regexp"
	"testing"
)

// heavyName is what the names of heavy tests match; make test runs them in a second pass,
// without the race detector: go test -run 'Bound$|^TestMemory'.
var heavyName = regexp.MustCompile(`Bound$|^TestMemory`)

// heavyTest skips t under -race. A heavy test checks a bound or the memory a Manager holds, on
// one goroutine, with so many rules, names or overrides that the race detector makes it take
// seconds and finds nothing. Its name must match heavyName, or make test would never run it.
func heavyTest(t *testing.T) {
	t.Helper()
	if !heavyName.MatchString(t.Name()) {
		t.Fatalf("%s is a heavy test: its name must match %v, which make test runs without -race", t.Name(), heavyName)
	}
	if raceEnabled {
		t.Skip("a heavy test; make test runs it without -race")
	}
}
