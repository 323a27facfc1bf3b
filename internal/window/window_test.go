package window

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/halfopen/breaker/internal/inlinecheck"
)

// The package promises to start no goroutines.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The fast paths of a call, which their comments promise small enough to inline, are.
func TestFastPathsInline(t *testing.T) {
	inlinecheck.Inlined(t, "(*Sliding).AddGood", "(*Sliding).AddGoodOn", "(*Flight).TryEnter", "(*Flight).TryEnterOn", "(*Flight).TryLeave")
}
