//go:build race

package idemhttp_test

// raceEnabled: the race detector makes sync.Pool drop values at random, so
// allocation budgets cannot be checked.
const raceEnabled = true
