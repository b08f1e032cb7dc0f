package policy

import (
	"strconv"
	"strings"
	"testing"
)

// FuzzComponentLength holds the hand-written reader of a storage key's
// lengths to strconv's: a decimal without sign or leading zeros, then a
// colon, or nothing.
func FuzzComponentLength(f *testing.F) {
	for _, s := range []string{"4:acme", "0:", "0", "01:x", ":x", "+1:x", "-1:x", "1", "", "17:",
		"999999999999999999:", "9999999999999999999:", "12a:", "3:abc:1:d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		size, tail, ok := componentLength(s)
		digits, wantTail, found := strings.Cut(s, ":")
		n, err := strconv.Atoi(digits)
		wantOK := found && err == nil && digits != "" && digits[0] >= '0' && digits[0] <= '9' &&
			(digits[0] != '0' || len(digits) == 1) && len(digits) <= 18
		if ok != wantOK || ok && (size != n || tail != wantTail) {
			t.Fatalf("componentLength(%q) = %d, %q, %v; strconv reads %d, %q, %v", s, size, tail, ok, n, wantTail, wantOK)
		}
	})
}
