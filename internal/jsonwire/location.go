package jsonwire

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// fail builds the *Error for a problem at src offset off, with the pointer of
// the value being read.
func (e *encoder) fail(dst []byte, off int, sentinel error, msg string) error {
	return &Error{Offset: int64(off), Pointer: e.pointer(dst, len(e.frames)), Err: &problem{sentinel, msg}}
}

func (e *encoder) eof(dst, src []byte) error {
	return e.fail(dst, len(src), ErrSyntax, "unexpected end of input")
}

// duplicate reports m as a repeated name of the innermost open object.
func (e *encoder) duplicate(dst []byte, m member) error {
	nm := unescapeName(nil, name(dst, &m))
	ptr := e.pointer(dst, len(e.frames)-1)
	ptr = string(appendPointerToken(append([]byte(ptr), '/'), nm))
	return &Error{Offset: m.srcOff, Pointer: ptr, Err: &problem{ErrDuplicateName, "duplicate member name " + QuoteExcerpt(nm)}}
}

// pointer returns the JSON Pointer of the value being read in the outermost
// depth frames. It runs only on the error path.
func (e *encoder) pointer(dst []byte, depth int) string {
	var b []byte
	for l := 0; l < depth; l++ {
		f := &e.frames[l]
		if !f.inValue {
			break
		}
		b = append(b, '/')
		if f.object {
			b = appendPointerToken(b, unescapeName(nil, name(dst, &e.members[f.cur])))
		} else {
			b = strconv.AppendInt(b, int64(f.count), 10)
		}
	}
	return string(b)
}

// unescapeName decodes a canonically escaped name.
func unescapeName(dst, b []byte) []byte {
	for i := 0; i < len(b); {
		r, n := decodeCanonical(b[i:])
		dst = utf8.AppendRune(dst, r)
		i += n
	}
	return dst
}

// appendPointerToken escapes a reference token as RFC 6901 §3 requires.
func appendPointerToken(dst, tok []byte) []byte {
	for _, c := range tok {
		switch c {
		case '~':
			dst = append(dst, '~', '0')
		case '/':
			dst = append(dst, '~', '1')
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

func quoteRune(r rune) string {
	h := strconv.FormatInt(int64(r), 16)
	for len(h) < 4 {
		h = "0" + h
	}
	return "U+" + strings.ToUpper(h)
}
