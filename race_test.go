//go:build race

package breaker_test

// raceEnabled: the race detector makes a test of a million calls take minutes.
const raceEnabled = true
