//go:build !unix

package rulefile

import "os"

// openNonblocking opens path for reading. Outside Unix there are no FIFOs to wait on in the
// file system; the file is still checked to be a regular file before it is read.
func openNonblocking(path string) (*os.File, error) { return os.Open(path) }
