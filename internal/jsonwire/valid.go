package jsonwire

import (
	"unicode/utf16"
	"unicode/utf8"
)

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

// AppendUnquoted appends the text of the valid string token tok, quotes
// included in tok, with its escapes decoded.
func AppendUnquoted[T ~string | ~[]byte](dst []byte, tok T) []byte {
	for i := 1; i < len(tok)-1; {
		c := tok[i]
		if c != '\\' {
			dst = append(dst, c)
			i++
			continue
		}
		c = tok[i+1]
		i += 2
		switch c {
		case 'b':
			c = '\b'
		case 'f':
			c = '\f'
		case 'n':
			c = '\n'
		case 'r':
			c = '\r'
		case 't':
			c = '\t'
		case 'u':
			r := validHex4(tok, i)
			i += 4
			if utf16.IsSurrogate(r) { // valid: the low half follows
				r = utf16.DecodeRune(r, validHex4(tok, i+2))
				i += 6
			}
			dst = utf8.AppendRune(dst, r)
			continue
		}
		dst = append(dst, c) // '"', '\\' or '/'
	}
	return dst
}

// validHex4 decodes the four hexadecimal digits at s[i:].
func validHex4[T ~string | ~[]byte](s T, i int) rune {
	var r rune
	for _, c := range []byte{s[i], s[i+1], s[i+2], s[i+3]} {
		switch {
		case c >= 'a':
			c -= 'a' - 10
		case c >= 'A':
			c -= 'A' - 10
		default:
			c -= '0'
		}
		r = r<<4 | rune(c)
	}
	return r
}
