package breaker

import (
	"testing"
	"unsafe"
)

// An Entry is the one allocation of Enter: at 256 bytes it takes the allocator's 256-byte size
// class, and a byte more takes the 288-byte one, 32 bytes more to clear and to scan per call.
func TestEntryFitsItsSizeClass(t *testing.T) {
	if size := unsafe.Sizeof(Entry{}); size > 256 {
		t.Errorf("an Entry takes %d bytes, more than 256", size)
	}
}
