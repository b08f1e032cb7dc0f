package jsonwire

// The functions of this file read a text that is already known to be
// valid JSON (checked by Validate, or written by Append): they do not
// check anything, and past the end of an invalid text they may panic.

// SkipSpace returns the offset of the first byte from s[i] on that is not
// JSON whitespace, or len(s).
func SkipSpace[T ~string | ~[]byte](s T, i int) int {
	for i < len(s) {
		switch s[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// SkipString returns the offset just past the string that starts at s[i].
func SkipString[T ~string | ~[]byte](s T, i int) int {
	for i++; ; i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
}

// SkipValue returns the offset just past the value that starts at s[i].
func SkipValue[T ~string | ~[]byte](s T, i int) int {
	switch s[i] {
	case '"':
		return SkipString(s, i)
	case '{', '[':
		depth := 0
		for ; i < len(s); i++ {
			switch s[i] {
			case '"':
				i = SkipString(s, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return i
	}
	for i < len(s) {
		switch s[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}
