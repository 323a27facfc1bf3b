//go:build !race

package breakerview_test

const raceEnabled = false
