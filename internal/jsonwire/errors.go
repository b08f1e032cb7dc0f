package jsonwire

import (
	"errors"
	"strconv"
	"unicode/utf8"
)

// Sentinel errors wrapped by [*Error]; package canonical exports them.
var (
	// ErrSyntax reports input that is not a JSON text: a bad token, a missing
	// delimiter, trailing data, a byte-order mark or an unexpected end.
	ErrSyntax = errors.New("invalid JSON syntax")
	// ErrDuplicateName reports two members of one object whose names are equal
	// after unescaping.
	ErrDuplicateName = errors.New("duplicate member name")
	// ErrInvalidUTF8 reports a string containing bytes that are not UTF-8.
	ErrInvalidUTF8 = errors.New("invalid UTF-8")
	// ErrInvalidSurrogate reports a \u escape of a lone or reversed surrogate.
	ErrInvalidSurrogate = errors.New("invalid surrogate escape")
	// ErrNumberRange reports a number that cannot be represented: beyond the
	// double range in JCS mode, or with a decimal exponent beyond ±999,999,999
	// in Exact mode.
	ErrNumberRange = errors.New("number out of range")
	// ErrTooDeep reports nesting deeper than the limit.
	ErrTooDeep = errors.New("nesting too deep")
	// ErrTooLarge reports input longer than a limit, or a member name of
	// more than 2 GiB.
	ErrTooLarge = errors.New("input too large")
	// ErrNoncharacter reports a Unicode noncharacter when
	// Options.RejectNoncharacters is set.
	ErrNoncharacter = errors.New("unicode noncharacter")
)

// Error describes why an input was rejected and where; package canonical
// returns it as a *canonical.Error with the same fields.
type Error struct {
	// Offset is the byte offset in the input of the first byte of the
	// offending token (or the input length for an unexpected end).
	Offset int64
	// Pointer is the RFC 6901 JSON Pointer of the value in which the problem
	// was found; "" is the whole document.
	Pointer string
	// Err describes the problem. It wraps one of the sentinel errors of this
	// package, and its message has no location and no package prefix.
	Err error
}

// Error returns "canonical: " followed by the location and the problem.
func (e *Error) Error() string { return Message("canonical", e.Offset, e.Pointer, e.Err) }

// Message formats an error of package pkg at byte off, in the value at the
// JSON Pointer ptr: "pkg: byte off at ptr: err".
func Message(pkg string, off int64, ptr string, err error) string {
	s := pkg + ": byte " + strconv.FormatInt(off, 10)
	if ptr != "" {
		s += " at " + ShortPointer(ptr)
	}
	return s + ": " + err.Error()
}

// NewError returns an *Error at off wrapping sentinel with the message msg.
func NewError(off int64, sentinel error, msg string) *Error {
	return &Error{Offset: off, Err: &problem{sentinel, msg}}
}

// pointerMax bounds how much of a pointer an error message shows.
const pointerMax = 64

// ShortPointer returns ptr, or for a long one (a deep or wide document) its
// start and end around "...", so messages stay short. [Error.Error] uses it.
func ShortPointer(ptr string) string {
	if len(ptr) <= pointerMax {
		return ptr
	}
	head, tail := ptr[:pointerMax/2], ptr[len(ptr)-pointerMax/2:]
	// Cut at UTF-8 boundaries.
	for len(head) > 0 && !utf8.RuneStart(ptr[len(head)]) {
		head = head[:len(head)-1]
	}
	for len(tail) > 0 && !utf8.RuneStart(tail[0]) {
		tail = tail[1:]
	}
	return head + "..." + tail
}

// Unwrap returns e.Err.
func (e *Error) Unwrap() error { return e.Err }

// problem is a sentinel with details: its message replaces the sentinel's,
// and errors.Is still finds the sentinel.
type problem struct {
	sentinel error
	msg      string
}

func (p *problem) Error() string { return p.msg }
func (p *problem) Unwrap() error { return p.sentinel }

// excerptMax bounds how much of the input an error message quotes.
const excerptMax = 32

// QuoteExcerpt quotes at most excerptMax bytes of b for an error message.
func QuoteExcerpt(b []byte) string {
	if len(b) <= excerptMax {
		return strconv.Quote(string(b))
	}
	return strconv.Quote(string(b[:excerptMax])) + "..."
}

// quoteByte describes the byte c for an error message.
func quoteByte(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return strconv.QuoteRune(rune(c))
	}
	return "byte 0x" + strconv.FormatUint(uint64(c)|0x100, 16)[1:]
}
