package breaker

import (
	"context"
	"errors"
	"strconv"
)

// Outcome is how a completed call counts in the windows of its breakers.
type Outcome int8

const (
	// Success counts as a good call.
	Success Outcome = iota
	// Failure counts as a failed call: ErrorRatio and ErrorCount count it against the rule.
	Failure
	// Ignore counts neither way: the call is left out of the window, and a probe that ends so
	// returns its breaker to OPEN with the retry time unchanged (ProbeIgnored).
	Ignore
	// Refused is a call the dependency refused while alive, saying how much it takes: a quota's
	// 429, a 503 with Retry-After, gRPC's RESOURCE_EXHAUSTED. ErrorRatio and ErrorCount count it
	// against the rule, so they trip or pace on refusals, and a RetryAfter hint on it says when
	// pacing may call again; it never counts toward the fast trip (FastBuckets), which is for
	// hard outages, nor toward a run of ConsecutiveErrors. SlowRequestRatio judges it by its
	// time. Stats and every surface count refusals apart from failures.
	Refused
)

// String returns "Success", "Failure", "Ignore" or "Refused".
func (o Outcome) String() string {
	switch o {
	case Success:
		return "Success"
	case Failure:
		return "Failure"
	case Ignore:
		return "Ignore"
	case Refused:
		return "Refused"
	}
	return "Outcome(" + strconv.Itoa(int(o)) + ")"
}

// known is o as a call counts it: an Outcome that is none of the four counts as Failure.
func (o Outcome) known() Outcome {
	if o > Refused || o < Success {
		return Failure
	}
	return o
}

// Classifier decides how a call that ended with a non-nil error counts. A call that ended
// with nil is always a Success, and the classifier is not asked. It runs on the caller's
// goroutine for every failed call, so it should be quick; if it panics, the panic is logged
// and the call counts as a Failure.
//
// Typical choices: a caller's mistake (a "bad request") as Success or Ignore, so that bad
// input does not open the breaker; context.DeadlineExceeded as Failure (the default), since a
// dependency too slow to answer is what a breaker is for; a typed "not found" as Success.
type Classifier func(err error) Outcome

// DefaultClassifier counts context.Canceled (the caller gave up) as Ignore and every other
// error as Failure.
func DefaultClassifier(err error) Outcome {
	if errors.Is(err, context.Canceled) {
		return Ignore
	}
	return Failure
}

// CountAs marks err to count as o for the one call that returns it, whatever the Manager's
// Classifier would say; err may be nil. An o that is none of the four counts as Failure.
// Return it from the function given to Do or Execute, which then return err itself; or give it
// to Entry.SetError. The mark is found through wrapping (fmt.Errorf's %w, errors.Join), as
// errors.As finds an error, so a helper deep in a call stack may mark its error and its
// callers wrap it on the way up.
func CountAs(err error, o Outcome) error { return &countedError{err: err, o: o} }

// countedError is an error marked by CountAs.
type countedError struct {
	err error
	o   Outcome
}

func (e *countedError) Error() string {
	if e.err == nil {
		return "breaker: counted as " + e.o.String()
	}
	return e.err.Error()
}

func (e *countedError) Unwrap() error { return e.err }

// markOf returns the CountAs mark of err, the first in its chain.
func markOf(err error) (*countedError, bool) { return inChain[*countedError](err) }

// CountedAs returns the Outcome that a CountAs mark in err's chain says, the first one found as
// errors.As finds an error, and whether there is one. A wrapper, such as a retry loop, reads it
// to leave a count its function chose alone.
func CountedAs(err error) (Outcome, bool) {
	if c, ok := markOf(err); ok {
		return c.o.known(), true
	}
	return Success, false
}

// inChain returns the first error of type T in err's chain, depth first, as errors.As finds
// it (but for As methods), without allocating: errors.As moves its target to the heap, and this
// runs on every failed call.
func inChain[T error](err error) (T, bool) {
	for err != nil {
		if t, ok := err.(T); ok {
			return t, true
		}
		switch e := err.(type) {
		case interface{ Unwrap() []error }:
			for _, inner := range e.Unwrap() {
				if t, ok := inChain[T](inner); ok {
					return t, true
				}
			}
			err = nil
		case interface{ Unwrap() error }:
			err = e.Unwrap()
		default:
			err = nil
		}
	}
	var none T
	return none, false
}

// uncounted removes a CountAs mark that err itself is; one that err wraps stays where the
// caller put it, and shows only the error it marks.
func uncounted(err error) error {
	if c, ok := err.(*countedError); ok {
		return c.err
	}
	return err
}

// result is how a call ended, as its breakers count it.
type result struct {
	rt     int64   // the response time, in nanoseconds
	hint   int64   // the dependency's retry hint (RetryAfter), in nanoseconds; 0: none
	o      Outcome // how its error counts
	cutOff bool    // it ended at a deadline the library set (ResourceConfig.Timeout): slow
}

// ending is how a call ended, beside the error it ended with.
type ending uint8

const (
	byError  ending = iota // its error says how it counts (the Classifier, a CountAs mark)
	outlived               // it ran past the resource's Timeout: failed and slow, whatever it returned
	canceled               // its caller canceled its context: it counts neither way, whatever it returned
)

// endingOf says how a call made with ctx (the caller's context) that returned err ended: by a
// cancellation of its caller, when it failed with ctx canceled (a driver may answer a
// cancellation with an error of its own that does not wrap context.Canceled), else by its
// error. A deadline of the caller's that passed counts as the error says. It is small enough to
// inline: a call that succeeded pays one comparison.
func endingOf(ctx context.Context, err error) ending {
	if err != nil && ctx.Err() == context.Canceled {
		return canceled
	}
	return byError
}

// resultOf is how a call that ended with err, as how says, counts: for a call that failed, or
// ended otherwise than by its error. A call that returned nil as its caller expected needs none
// of it.
func (m *Manager) resultOf(err error, how ending) result {
	res := result{o: m.classify(err), hint: retryHint(err)}
	switch {
	case how == outlived:
		res.o, res.cutOff, res.hint = Failure, true, 0 // the Timeout decides, not the late answer's hint
	case how == canceled && err != ErrPanicked:
		res.o = Ignore
	}
	return res
}

// classify says how a call's error counts. A panicking Classifier, or an Outcome that is none
// of the four, counts as Failure. It is small enough to inline, so a call that succeeded pays
// for one comparison.
func (m *Manager) classify(err error) Outcome {
	if err == nil {
		return Success
	}
	return m.classifyError(err)
}

// classifyError is classify for a non-nil error.
func (m *Manager) classifyError(err error) Outcome {
	switch c, marked := markOf(err); {
	case marked:
		return c.o.known()
	case err == ErrPanicked:
		return Failure // whatever the Classifier says: a panic is the dependency's call failing
	case m.classifier == nil:
		return DefaultClassifier(err)
	}
	return m.classifyWith(err).known()
}

func (m *Manager) classifyWith(err error) (o Outcome) {
	defer func() {
		if v := recover(); v != nil {
			m.logger.Error("breaker: classifier panicked; the call counts as a failure", "panic", v, "error", err)
			o = Failure
		}
	}()
	return m.classifier(err)
}
