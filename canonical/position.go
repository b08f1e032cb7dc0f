package canonical

import "unicode/utf8"

// LineColumn returns the 1-based line and column of byte offset off in
// src, as an editor shows them: lines end at '\n', and the column counts
// characters (an invalid byte counts as one). Use it to locate an
// [Error]'s Offset for a human. An offset past the end of src is taken as
// the end; a negative one as the start.
func LineColumn(src []byte, off int64) (line, column int) {
	off = max(min(off, int64(len(src))), 0)
	line, start := 1, 0
	for i, c := range src[:off] {
		if c == '\n' {
			line++
			start = i + 1
		}
	}
	return line, utf8.RuneCount(src[start:off]) + 1
}
