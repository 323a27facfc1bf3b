package rulefile

import (
	"os"
	"time"
)

// WithTestHooks replaces how the file is opened (nil keeps it), where polls come from (nil
// keeps the ticker), and what runs after each poll's read is handled (nil: nothing), told
// whether the poll read the content. A read still out at a poll is reported at once.
func WithTestHooks(open func(path string) (*os.File, error), ticks <-chan time.Time, afterCheck func(read bool)) Option {
	return optionFunc(func(w *Watcher) {
		if open != nil {
			w.open = open
		}
		w.ticks = ticks
		w.afterCheck = afterCheck
		w.hungAfter = 0
	})
}

// OpenNonblocking is the default open.
var OpenNonblocking = openNonblocking
