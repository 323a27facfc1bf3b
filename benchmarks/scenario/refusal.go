package scenario

import (
	"errors"
	"fmt"
	"time"
)

// ErrRefused is what every refusal of the simulated dependency is (errors.Is finds it through
// a *Refusal): a call the dependency turned away while alive, beyond its quota, saying when it
// takes calls again, as an HTTP 429 with Retry-After or gRPC's RESOURCE_EXHAUSTED does. It is
// not a failure of the dependency, and a guard may tell it apart; to a caller it is an error.
var ErrRefused = errors.New("scenario: refused (429)")

// Refusal is the answer of a dependency that refused a call: ErrRefused, with the dependency's
// hint. The simulated dependency returns a new *Refusal for each refused call.
type Refusal struct {
	// RetryAfter is when the dependency says it takes calls again, from the refusal: the
	// Retry-After header of a 429.
	RetryAfter time.Duration
}

// Error says it is a 429 and gives its hint.
func (r *Refusal) Error() string {
	return fmt.Sprintf("scenario: refused (429), retry after %v", r.RetryAfter)
}

// Is makes errors.Is(err, ErrRefused) true for every refusal.
func (r *Refusal) Is(target error) bool { return target == ErrRefused }

// RetryAfterOf returns the hint of the refusal in err's chain, and whether err is a refusal.
func RetryAfterOf(err error) (time.Duration, bool) {
	var r *Refusal
	if errors.As(err, &r) {
		return r.RetryAfter, true
	}
	return 0, false
}
