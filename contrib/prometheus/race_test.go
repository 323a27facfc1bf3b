//go:build race

package breakerprom_test

const raceEnabled = true
