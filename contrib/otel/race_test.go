//go:build race

package breakerotel_test

const raceEnabled = true
