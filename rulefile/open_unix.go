//go:build unix

package rulefile

import (
	"os"
	"syscall"
)

// openNonblocking opens path for reading without waiting: opening a FIFO for reading would
// otherwise wait for a writer. Reads from a regular file are not affected by O_NONBLOCK.
func openNonblocking(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
