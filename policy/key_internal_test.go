package policy

import (
	"strconv"
	"testing"
)

// decimalLength counts the digits strconv writes, at every power of ten
// and on either side of it.
func TestDecimalLength(t *testing.T) {
	for p := 1; p > 0 && p <= 1e18; p *= 10 {
		for _, n := range []int{p - 1, p, p + 1} {
			if got, want := decimalLength(n), len(strconv.Itoa(n)); got != want {
				t.Errorf("decimalLength(%d) = %d, want %d", n, got, want)
			}
		}
	}
}
