package breakerdebug

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/halfopen/breaker/breakerview"
)

// The log's memory holds the names of the last list only: a name called again, or no longer
// configured, leaves it, so it never holds more than the names configured now.
func TestUncalledLogHoldsTheLastListOnly(t *testing.T) {
	var l uncalledLog
	fresh := l.since([]breakerview.Uncalled{{Name: "paymnets"}, {Name: "invntory"}})
	assert.Len(t, fresh, 2, "both are new")
	fresh = l.since([]breakerview.Uncalled{{Name: "paymnets"}})
	assert.Empty(t, fresh, "paymnets was logged already")
	assert.Len(t, l.logged, 1, "invntory left the list, and the log's memory")
	fresh = l.since(nil)
	assert.Empty(t, fresh)
	assert.Empty(t, l.logged)
	fresh = l.since([]breakerview.Uncalled{{Name: "paymnets"}})
	assert.Len(t, fresh, 1, "uncalled again after a list without it: logged again")
}
