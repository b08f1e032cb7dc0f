//go:build !race

package canonical_test

const raceEnabled = false
