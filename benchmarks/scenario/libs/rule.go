// Package libs adapts each circuit-breaker library to the scenario harness's Guard, each
// configured to its closest equivalent of one common rule (see Common).
package libs

import "time"

// Common is the rule every library is given, in its own terms, scaled down with the scripts
// (phases of 1 to 3 s): trip at half the calls failing over a 1 s window once it holds at least
// MinCalls calls, stay open RetryTimeout, and count a call slower than SlowRT as slow where the
// library can. Calls time out after Timeout.
type Common struct {
	ErrorRatio   float64
	SlowRatio    float64
	SlowRT       time.Duration
	MinCalls     int
	Window       time.Duration
	Buckets      int
	RetryTimeout time.Duration
	Timeout      time.Duration
	// ProbeNum and MaxRetryTimeout are breaker's recovery settings, for its second variant.
	ProbeNum        int
	MaxRetryTimeout time.Duration
	// RampUp is how long breaker+protect paces its calls after a probe closes it.
	RampUp time.Duration
}

// Rule is the common rule of every run.
var Rule = Common{
	ErrorRatio:      0.5,
	SlowRatio:       0.5,
	SlowRT:          50 * time.Millisecond,
	MinCalls:        10,
	Window:          time.Second,
	Buckets:         10,
	RetryTimeout:    500 * time.Millisecond,
	Timeout:         150 * time.Millisecond,
	ProbeNum:        3,
	MaxRetryTimeout: 2 * time.Second,
	RampUp:          3 * time.Second,
}
