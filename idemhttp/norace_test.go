//go:build !race

package idemhttp_test

const raceEnabled = false
