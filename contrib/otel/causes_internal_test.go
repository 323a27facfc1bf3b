package breakerotel

import (
	"strings"
	"testing"

	"github.com/halfopen/breaker"
)

// Given every kind of rejection the core names, then each has a cause value, the kind's own
// name: a call blocked for a new reason can never index past the counters.
func TestEveryBlockKindHasItsCause(t *testing.T) {
	k := breaker.BlockKind(0)
	for ; !strings.HasPrefix(k.String(), "BlockKind("); k++ {
		if int(k) >= len(causes) {
			t.Fatalf("no cause for %v", k)
		}
		if causes[k] != k.String() {
			t.Errorf("cause of %v is %q, want %q", k, causes[k], k.String())
		}
	}
	if int(k) != len(causes) {
		t.Errorf("%d causes for %d kinds", len(causes), k)
	}
}
