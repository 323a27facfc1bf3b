//go:build race

package breakerview_test

const raceEnabled = true
