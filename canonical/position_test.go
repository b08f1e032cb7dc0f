package canonical_test

import (
	"fmt"
	"testing"

	"github.com/idemprint/idemprint/canonical"
)

func TestLineColumn(t *testing.T) {
	src := []byte("{\"a\":1,\n \"é\":2,\r\n\t\"b\":\xff}")
	for _, tc := range []struct {
		off       int64
		line, col int
		reason    string
	}{
		{0, 1, 1, "start"},
		{-5, 1, 1, "negative offset"},
		{7, 1, 8, "the newline itself"},
		{8, 2, 1, "after a newline"},
		{12, 2, 4, "after a two-byte character, counted once"},
		{18, 3, 1, "CR LF ends a line at the LF"},
		{24, 3, 7, "an invalid byte counts as one"},
		{1000, 3, 8, "past the end"},
	} {
		line, col := canonical.LineColumn(src, tc.off)
		if line != tc.line || col != tc.col {
			t.Errorf("LineColumn(%d) = %d:%d, want %d:%d (%s)", tc.off, line, col, tc.line, tc.col, tc.reason)
		}
	}
}

func ExampleLineColumn() {
	body := []byte("{\"amount\":10,\n \"amount\":10000}")
	_, err := canonical.Transform(body)
	if ce, ok := err.(*canonical.Error); ok {
		line, col := canonical.LineColumn(body, ce.Offset)
		fmt.Printf("%d:%d at %s: %v\n", line, col, ce.Pointer, ce.Err)
	}
	// Output: 2:2 at /amount: duplicate member name "amount"
}
