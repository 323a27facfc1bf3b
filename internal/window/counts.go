package window

// Mark is how a call counts in a window: good, bad, or bad because the dependency refused it
// while alive (a quota's 429). A refusal is a bad call that the window also counts apart, so
// that a rule can tell a live dependency saying how much it takes from a failing one.
type Mark uint8

const (
	Good Mark = iota
	Bad
	Refused
)

// Counts are the calls of some buckets of a window, or of a window of calls: all of them, the
// bad ones among them, and the refused ones among those. Refused never exceeds Bad, nor Bad
// Total.
type Counts struct{ Total, Bad, Refused uint64 }

// Failed is the bad calls that were not refused: what a hard outage is judged by.
func (c Counts) Failed() uint64 { return c.Bad - c.Refused }

// add adds the counts o to c.
func (c *Counts) add(o Counts) {
	c.Total += o.Total
	c.Bad += o.Bad
	c.Refused += o.Refused
}
