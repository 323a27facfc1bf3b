package breaker

// Rival is a call of its own, for tests that race a call of another resource with the calls
// of a breaker's resource for its probe: it passes one breaker through its door, as the
// admission path does.
type Rival struct {
	m *Manager
	t Ticket
}

// NewRival returns a call on m's clock that no breaker has let through yet.
func NewRival(m *Manager) *Rival { return &Rival{m: m} }

// Pass lets the call through b, making it b's probe if b is due for one, and reports whether b
// let it through.
func (r *Rival) Pass(b CircuitBreaker) bool {
	r.t = newTicket()
	return b.TryPass(&r.t) && r.t.takeProbes() == nil
}

// Complete ends the call now, with err, and has b count it.
func (r *Rival) Complete(b CircuitBreaker, err error) {
	r.t.end = r.m.now()
	r.t.res = result{rt: r.t.end - r.t.start, o: r.m.classify(err)}
	b.OnRequestComplete(&r.t)
}

// The bounds and defaults tests check, which the package documents rather than exports.
const (
	DefaultFastThreshold = defaultFastThreshold
	MaxBucketCount       = maxBucketCount
	MaxOverrides         = maxOverrides
	MaxProbeNum          = maxProbeNum
	MaxRulesPerResource  = maxRulesPerResource
	MaxStatCalls         = maxStatCalls
	MaxStatInterval      = maxStatInterval
	MaxTemplates         = maxTemplates
)
