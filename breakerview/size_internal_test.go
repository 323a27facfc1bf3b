package breakerview

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
)

// The documentation says each name a Calls keeps costs about 4 KB of counters, a minute of
// one-second steps, on a 64-bit platform: 60 steps of 72 bytes (a lock, a key, the longest
// call and eleven counters), 4,320 bytes.
func TestMinuteSize(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("the size documented is a 64-bit platform's")
	}
	assert.InDelta(t, 4000, float64(unsafe.Sizeof(minute{})), 400)
}
