package breaker

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// Strategy is what a rule measures to decide when its breaker trips.
type Strategy int32

const (
	// SlowRequestRatio trips when slow calls / calls >= Threshold. A call is slow when its
	// response time is greater than MaxAllowedRT.
	SlowRequestRatio Strategy = iota
	// ErrorRatio trips when failed calls / calls >= Threshold.
	ErrorRatio
	// ErrorCount trips when failed calls >= Threshold.
	ErrorCount
	// ConsecutiveErrors trips when Threshold calls in a row have failed: a failure adds one
	// to the run, a success ends it, a call that counts neither way changes nothing. It keeps
	// no window: MinRequestAmount, StatInterval and BucketCount do not apply to it.
	ConsecutiveErrors
)

// String returns the strategy's name as written in Go: "SlowRequestRatio", "ErrorRatio",
// "ErrorCount" or "ConsecutiveErrors".
func (s Strategy) String() string {
	switch s {
	case SlowRequestRatio:
		return "SlowRequestRatio"
	case ErrorRatio:
		return "ErrorRatio"
	case ErrorCount:
		return "ErrorCount"
	case ConsecutiveErrors:
		return "ConsecutiveErrors"
	}
	return "Strategy(" + strconv.Itoa(int(s)) + ")"
}

func (s Strategy) isRatio() bool { return s == SlowRequestRatio || s == ErrorRatio }

// isCount reports whether the strategy's Threshold is a number of failed calls.
func (s Strategy) isCount() bool { return s == ErrorCount || s == ConsecutiveErrors }

// windowed reports whether the strategy counts calls in a sliding window.
func (s Strategy) windowed() bool { return s != ConsecutiveErrors }

// Defaults for the zero values of the optional Rule fields.
const (
	defaultMinRequestAmount = 5
	defaultStatInterval     = time.Second
	defaultBucketCount      = 10
)

// maxStatInterval bounds Rule.StatInterval.
const maxStatInterval = 24 * time.Hour

// maxBucketCount bounds Rule.BucketCount, so that one rule cannot claim memory out of proportion.
const maxBucketCount = 1000

// maxRulesPerResource bounds the rules of one resource: every call to it goes through each of
// its breakers.
const maxRulesPerResource = 100

// maxProbeNum bounds Rule.ProbeNum: a breaker that needs more successes in a row than this
// would stay HALF_OPEN, one call at a time, for too long.
const maxProbeNum = 1000

// minBucketLength is the shortest bucket a window may have.
const minBucketLength = time.Millisecond

// Rule says when the calls of one resource should be rejected. Each rule of a resource gets its
// own breaker with its own sliding window. The zero value is not a valid rule: Resource,
// RetryTimeout and a Threshold are required, and MaxAllowedRT too for SlowRequestRatio.
//
// A rule's identity is every field but ID, with zero values read as their defaults (and
// MaxAllowedRT ignored but for SlowRequestRatio): reloading an identical rule keeps its
// breaker.
type Rule struct {
	// ID is a free label for logs and observers; it is not part of a rule's identity.
	ID string
	// Resource is the name calls are made under. Required.
	Resource string
	// Strategy is what the rule measures.
	Strategy Strategy
	// Threshold is, for the ratio strategies, a ratio in (0, 1]; for ErrorCount a whole
	// number >= 1. The breaker trips when the measure is greater than or equal to it.
	Threshold float64
	// MaxAllowedRT is the response time above which a call is slow (SlowRequestRatio only,
	// required there; a call that took exactly MaxAllowedRT is not slow). A call still in
	// flight counts as slow once it has run longer, before it returns. The other strategies
	// ignore it.
	MaxAllowedRT time.Duration
	// MinRequestAmount is how many calls the window must hold before the rule may trip;
	// 0 means 5, but for ErrorCount no more than Threshold: a rule
	// that trips on 3 failures trips on 3 failures in a row. With StatCalls, 0 means
	// StatCalls.
	MinRequestAmount uint64
	// StatCalls, when > 0, makes the window the last StatCalls calls, however long they took
	// to come, instead of the last StatInterval (SlowRequestRatio, ErrorRatio and ErrorCount;
	// at most 10,000). StatInterval, BucketCount, FastBuckets, FastThreshold, RampUp and
	// Pace, which are about time, must then be 0 (false).
	StatCalls uint32
	// StatInterval is the length of the sliding window; 0 means 1s. At most 24 hours.
	StatInterval time.Duration
	// BucketCount is how many buckets the window is split into; 0 means 10. At most 1,000.
	// StatInterval must divide into BucketCount equal buckets of at least 1ms.
	BucketCount uint32
	// RetryTimeout is how long the breaker stays OPEN before it lets one probe call through.
	// Required.
	RetryTimeout time.Duration
	// ProbeTimeout is how long a probe may run before it counts as failed; 0 means
	// RetryTimeout.
	ProbeTimeout time.Duration
	// ProbeNum is how many probes in a row must succeed to close the breaker; 0 means 1. One
	// probe is in flight at a time: after a success that is not the last, the breaker stays
	// HALF_OPEN and the next call is the next probe. At most 1,000.
	ProbeNum uint32
	// MaxRetryTimeout, when not 0, makes the OPEN time grow: RetryTimeout after a trip, then
	// doubled after each failed or timed-out probe, up to MaxRetryTimeout (>= RetryTimeout).
	// Closing starts it again at RetryTimeout.
	MaxRetryTimeout time.Duration
	// RetryJitter, in [0, 1), shortens every OPEN time by a fraction in [0, RetryJitter), so
	// that instances that tripped together do not probe together. The fraction is not random:
	// it is a hash of the Manager's instance name (WithInstanceName), the rule and the
	// breaker's generation, so a test can reproduce it.
	RetryJitter float64
	// DryRun makes the breaker reject nothing: it counts, trips, probes and reports as usual
	// (its StateChanges say DryRun, and call observers see what it would have rejected), but
	// a call it would reject passes, and it does not count that call. The way to try a new
	// threshold on live traffic before enforcing it.
	DryRun bool
	// FastBuckets, for SlowRequestRatio and ErrorRatio, also judges the newest FastBuckets
	// buckets of the window on their own: they trip the breaker (Reason FastTrip) when they
	// hold at least MinRequestAmount calls and their ratio reaches FastThreshold. A hard
	// outage then trips it within FastBuckets buckets, not after Threshold of a whole window.
	// Less than BucketCount; 0 turns it off.
	FastBuckets uint32
	// FastThreshold is the ratio the newest FastBuckets buckets must reach; 0 means
	// max(0.8, Threshold). Otherwise in [Threshold, 1]: a few buckets are
	// judged at a ratio no lower than the whole window's, so noise does not trip them.
	FastThreshold float64
	// RampUp, after the breaker closes on a probe, paces the calls it admits for at most this
	// long: within each bucket of the window, no more than the dependency has shown it can
	// take (see "Ramp up after recovery" in docs/recovery.md); the others are rejected with
	// ErrRampingUp. The ramp ends at the end of a bucket that held nothing back, or once RampUp
	// has passed. 0 turns it off: the full flow at once. Not for ConsecutiveErrors, which has no
	// buckets to pace by.
	RampUp time.Duration
	// Pace, for SlowRequestRatio and ErrorRatio, keeps the breaker CLOSED when its whole window
	// meets Threshold while the dependency still serves calls (the window holds a call that was
	// neither slow nor failed): it paces the calls instead, admitting within each bucket no more
	// than the dependency has shown it can serve, as a ramp does (see "Pacing" in
	// docs/recovery.md), and rejects the others with ErrPacing. A dependency that runs short of
	// capacity or has a quota keeps serving what it can, where opening would serve nothing. A
	// fast trip (FastBuckets) still opens, and so does a bucket of pacing whose calls all failed
	// (at its end), or the window once it holds no call that succeeded. Pacing ends at the end
	// of a bucket that held nothing back, or once a whole StatInterval passed without a call.
	// Not with StatCalls: a window of calls has no buckets to pace by.
	Pace bool
}

// defaultFastThreshold is the least ratio that Rule.FastThreshold's zero value stands for.
const defaultFastThreshold = 0.8

// Validate reports whether the rule can be loaded: nil, or a *RuleError (wrapping
// ErrInvalidRule) that names the field and the allowed values.
func (r Rule) Validate() error {
	if reason, field := r.check(); reason != "" {
		return &RuleError{Index: -1, Resource: r.Resource, Field: field, Reason: reason}
	}
	return nil
}

// check returns what is wrong with the rule and the field at fault, or "" when it is valid.
func (r Rule) check() (reason, field string) {
	if r.Resource == "" {
		return "is required", "Resource"
	}
	switch r.Strategy {
	case SlowRequestRatio, ErrorRatio, ErrorCount, ConsecutiveErrors:
	default:
		return fmt.Sprintf("must be SlowRequestRatio, ErrorRatio, ErrorCount or ConsecutiveErrors, got %d",
			int32(r.Strategy)), "Strategy"
	}
	t := r.Threshold
	switch {
	case math.IsNaN(t) || math.IsInf(t, 0):
		return fmt.Sprintf("must be a finite number, got %v", t), "Threshold"
	case r.Strategy.isRatio() && (t <= 0 || t > 1):
		return fmt.Sprintf("must be in (0, 1] for %v, got %v", r.Strategy, t), "Threshold"
	case r.Strategy.isCount() && (t < 1 || t != math.Trunc(t)):
		return fmt.Sprintf("must be a whole number >= 1 for %v, got %v", r.Strategy, t), "Threshold"
	}
	if r.MaxAllowedRT < 0 {
		return fmt.Sprintf("must not be negative, got %v", r.MaxAllowedRT), "MaxAllowedRT"
	}
	if r.Strategy == SlowRequestRatio && r.MaxAllowedRT == 0 {
		return "is required for SlowRequestRatio: set a duration > 0", "MaxAllowedRT"
	}
	if reason, field := r.checkStatCalls(); reason != "" {
		return reason, field
	}
	if r.StatInterval < 0 || r.StatInterval > maxStatInterval {
		return fmt.Sprintf("must be in [0, %v], got %v", maxStatInterval, r.StatInterval), "StatInterval"
	}
	if r.BucketCount > maxBucketCount {
		return fmt.Sprintf("must be at most %d, got %d", maxBucketCount, r.BucketCount), "BucketCount"
	}
	interval, buckets := r.statInterval(), time.Duration(r.bucketCount())
	if interval%buckets != 0 || interval/buckets < minBucketLength {
		return fmt.Sprintf("%v must divide into %d equal buckets of at least %v", interval, buckets, minBucketLength), "StatInterval"
	}
	if r.RetryTimeout <= 0 {
		return fmt.Sprintf("must be > 0, got %v", r.RetryTimeout), "RetryTimeout"
	}
	if r.ProbeTimeout < 0 {
		return fmt.Sprintf("must not be negative, got %v", r.ProbeTimeout), "ProbeTimeout"
	}
	if r.ProbeNum > maxProbeNum {
		return fmt.Sprintf("must be at most %d, got %d", maxProbeNum, r.ProbeNum), "ProbeNum"
	}
	if r.MaxRetryTimeout != 0 && r.MaxRetryTimeout < r.RetryTimeout {
		return fmt.Sprintf("must be 0 (no backoff) or at least RetryTimeout (%v), got %v", r.RetryTimeout,
			r.MaxRetryTimeout), "MaxRetryTimeout"
	}
	if math.IsNaN(r.RetryJitter) || r.RetryJitter < 0 || r.RetryJitter >= 1 {
		return fmt.Sprintf("must be in [0, 1), got %v", r.RetryJitter), "RetryJitter"
	}
	if r.RampUp < 0 {
		return fmt.Sprintf("must not be negative (0 turns the ramp off), got %v", r.RampUp), "RampUp"
	}
	if r.RampUp > 0 && !r.Strategy.windowed() {
		return fmt.Sprintf("must be 0 for %v: a ramp paces calls by the buckets of a window, and it has none, got %v",
			r.Strategy, r.RampUp), "RampUp"
	}
	if r.Pace && !r.Strategy.isRatio() {
		return fmt.Sprintf("must be false for %v: pacing holds a ratio of failed or slow calls down, "+
			"and %v counts failures", r.Strategy, r.Strategy), "Pace"
	}
	return r.checkFast()
}

// checkStatCalls checks StatCalls and the fields a window of calls has no use for.
func (r Rule) checkStatCalls() (reason, field string) {
	if r.StatCalls == 0 {
		return "", ""
	}
	timed := func(field string, v any) (string, string) {
		return fmt.Sprintf("must be 0 with StatCalls, whose window is the last %d calls however long they "+
			"took, got %v", r.StatCalls, v), field
	}
	switch {
	case r.StatCalls > maxStatCalls:
		return fmt.Sprintf("must be at most %d, got %d", maxStatCalls, r.StatCalls), "StatCalls"
	case !r.Strategy.windowed():
		return fmt.Sprintf("must be 0 for %v, which counts failures in a row and has no window, got %d",
			r.Strategy, r.StatCalls), "StatCalls"
	case r.StatInterval != 0:
		return timed("StatInterval", r.StatInterval)
	case r.BucketCount != 0:
		return timed("BucketCount", r.BucketCount)
	case r.FastBuckets != 0:
		return timed("FastBuckets", r.FastBuckets)
	case r.FastThreshold != 0:
		return timed("FastThreshold", r.FastThreshold)
	case r.RampUp != 0:
		return timed("RampUp", r.RampUp)
	case r.Pace:
		return timed("Pace", r.Pace)
	case r.MinRequestAmount > uint64(r.StatCalls):
		return fmt.Sprintf("must be at most StatCalls (%d): the window never holds more calls, got %d",
			r.StatCalls, r.MinRequestAmount), "MinRequestAmount"
	case r.Strategy == ErrorCount && r.Threshold > float64(r.StatCalls):
		return fmt.Sprintf("must be at most StatCalls (%d): the window never holds more failures, got %v",
			r.StatCalls, r.Threshold), "Threshold"
	}
	return "", ""
}

// checkFast checks FastBuckets and FastThreshold.
func (r Rule) checkFast() (reason, field string) {
	if !r.Strategy.isRatio() {
		switch {
		case r.FastBuckets != 0:
			return fmt.Sprintf("must be 0 for %v, which counts failures: only the ratio strategies judge "+
				"their newest buckets, got %d", r.Strategy, r.FastBuckets), "FastBuckets"
		case r.FastThreshold != 0:
			return fmt.Sprintf("must be 0 for %v, got %v", r.Strategy, r.FastThreshold), "FastThreshold"
		}
		return "", ""
	}
	if r.FastBuckets >= r.bucketCount() {
		return fmt.Sprintf("must be less than BucketCount (%d): the newest buckets are judged beside the "+
			"whole window, got %d", r.bucketCount(), r.FastBuckets), "FastBuckets"
	}
	f := r.FastThreshold
	if f != 0 && !(f >= r.Threshold && f <= 1) { // also refuses NaN
		return fmt.Sprintf("must be 0 (max(%v, Threshold)) or in [Threshold, 1] = [%v, 1], got %v",
			defaultFastThreshold, r.Threshold, f), "FastThreshold"
	}
	return "", ""
}

// fastThreshold is FastThreshold with its default.
func (r Rule) fastThreshold() float64 {
	if r.FastThreshold == 0 {
		return max(defaultFastThreshold, r.Threshold)
	}
	return r.FastThreshold
}

// minRequestAmount is MinRequestAmount with its default: defaultMinRequestAmount, or for
// ErrorCount no more than Threshold, so that {ErrorCount, Threshold 3} trips on the third
// failure.
func (r Rule) minRequestAmount() uint64 {
	switch {
	case r.MinRequestAmount != 0:
		return r.MinRequestAmount
	case r.StatCalls > 0:
		return uint64(r.StatCalls)
	case r.Strategy == ErrorCount && r.Threshold >= 1 && r.Threshold < defaultMinRequestAmount:
		return uint64(r.Threshold)
	}
	return defaultMinRequestAmount
}

func (r Rule) statInterval() time.Duration {
	if r.StatInterval == 0 {
		return defaultStatInterval
	}
	return r.StatInterval
}

func (r Rule) bucketCount() uint32 {
	if r.BucketCount == 0 {
		return defaultBucketCount
	}
	return r.BucketCount
}

func (r Rule) probeNum() uint32 { return max(r.ProbeNum, 1) }

func (r Rule) probeTimeout() time.Duration {
	if r.ProbeTimeout == 0 {
		return r.RetryTimeout
	}
	return r.ProbeTimeout
}

// WithDefaults returns the rule as its breaker reads it: each optional field left at zero
// holds the value the breaker uses for it (MinRequestAmount, StatInterval, BucketCount,
// ProbeTimeout, ProbeNum), for status pages and logs that show what a rule really does. A
// rule with StatCalls keeps StatInterval and BucketCount at 0: it has no time window.
func (r Rule) WithDefaults() Rule {
	r.MinRequestAmount = r.minRequestAmount()
	if r.StatCalls == 0 {
		r.StatInterval = r.statInterval()
		r.BucketCount = r.bucketCount()
	}
	r.ProbeTimeout = r.probeTimeout()
	r.ProbeNum = r.probeNum()
	if r.FastBuckets > 0 {
		r.FastThreshold = r.fastThreshold()
	}
	return r
}

// identity is the rule without its ID and with its defaults spelled out: two rules with the
// same identity behave the same, so they are the same rule.
func (r Rule) identity() Rule {
	r = r.WithDefaults()
	r.ID = ""
	if r.Strategy != SlowRequestRatio {
		r.MaxAllowedRT = 0 // ignored
	}
	if !r.Strategy.windowed() {
		r.MinRequestAmount, r.StatInterval, r.BucketCount = 0, 0, 0 // ignored
	}
	return r
}

// shape is what of a rule gives its breaker's window its form: a reloaded rule of the same
// shape keeps the breaker, and the rest of the rule only tunes it.
func (r Rule) shape() Rule {
	id := r.identity()
	return Rule{Resource: id.Resource, Strategy: id.Strategy, StatInterval: id.StatInterval,
		BucketCount: id.BucketCount, StatCalls: id.StatCalls}
}

// maxStatCalls bounds Rule.StatCalls, so that one rule cannot claim memory out of proportion.
const maxStatCalls = 10000
