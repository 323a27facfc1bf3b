package breakerview

import "github.com/halfopen/breaker"

// Limits bounds the names a Calls keeps apart, each with its own last minute and, in an
// exporter, series of its own: the calls of every other name are counted under Overflow, so
// that callers who make up names (a resource per URL path) cannot grow a surface without end.
// Names are taken in the order first seen. A field below 1 takes the default of the surface
// it is given to (DefaultLimits, unless the surface says otherwise).
type Limits struct {
	// Names is how many names are kept (1,000 by default).
	Names int
	// NameLength is the longest name kept, in bytes (1 KiB by default, the bound the Manager
	// puts on the names it keeps, breaker.DefaultMaxNameLength): a longer name is neither
	// kept nor looked up, so a caller who passes a whole URL as the name costs nothing.
	NameLength int
	// NameBytes is how many bytes the names kept may take together, each charged by its
	// length, and by that of its label too when the label had to be rewritten (128 KiB by
	// default). A copy of each name is kept, never the caller's string, which may be part of
	// a much larger one.
	NameBytes int
}

// DefaultLimits returns the Limits a field below 1 takes by default: 1,000 names of at most
// 1 KiB each, 128 KiB of them in all.
func DefaultLimits() Limits {
	return Limits{Names: 1000, NameLength: breaker.DefaultMaxNameLength, NameBytes: 128 << 10}
}

// Or returns l with each field below 1 taken from d.
func (l Limits) Or(d Limits) Limits {
	if l.Names < 1 {
		l.Names = d.Names
	}
	if l.NameLength < 1 {
		l.NameLength = d.NameLength
	}
	if l.NameBytes < 1 {
		l.NameBytes = d.NameBytes
	}
	return l
}
