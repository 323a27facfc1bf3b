package breakerdebug

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
)

// The Recorder's documentation says each name it keeps costs about 13 KB of counters, a minute
// of one-second buckets, on a 64-bit platform (each go.uber.org/atomic counter takes a word).
func TestSeriesSize(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("the size documented is a 64-bit platform's")
	}
	assert.InDelta(t, 13000, float64(unsafe.Sizeof(series{})), 1000)
}
