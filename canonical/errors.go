package canonical

import "github.com/idemprint/idemprint/internal/jsonwire"

// Sentinel errors wrapped by [*Error]. Test for them with [errors.Is].
var (
	// ErrSyntax reports input that is not a JSON text: a bad token, a missing
	// delimiter, trailing data, a byte-order mark or an unexpected end.
	ErrSyntax = jsonwire.ErrSyntax
	// ErrDuplicateName reports two members of one object whose names are equal
	// after unescaping.
	ErrDuplicateName = jsonwire.ErrDuplicateName
	// ErrInvalidUTF8 reports a string containing bytes that are not UTF-8.
	ErrInvalidUTF8 = jsonwire.ErrInvalidUTF8
	// ErrInvalidSurrogate reports a \u escape of a lone or reversed surrogate.
	ErrInvalidSurrogate = jsonwire.ErrInvalidSurrogate
	// ErrNumberRange reports a number that cannot be represented: beyond the
	// double range in JCS mode, or with a decimal exponent beyond ±999,999,999
	// in Exact mode.
	ErrNumberRange = jsonwire.ErrNumberRange
	// ErrTooDeep reports nesting deeper than [Options.MaxDepth].
	ErrTooDeep = jsonwire.ErrTooDeep
	// ErrTooLarge reports input longer than [Options.MaxBytes], or a member
	// name of more than 2 GiB.
	ErrTooLarge = jsonwire.ErrTooLarge
	// ErrNoncharacter reports a Unicode noncharacter when
	// [Options.RejectNoncharacters] is set.
	ErrNoncharacter = jsonwire.ErrNoncharacter
)

// Error describes why an input was rejected and where.
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

// Error returns "canonical: " followed by the location and the problem. A
// long Pointer is shortened to its start and end around "...".
func (e *Error) Error() string { return jsonwire.Message("canonical", e.Offset, e.Pointer, e.Err) }

// Unwrap returns e.Err.
func (e *Error) Unwrap() error { return e.Err }

// fromWire returns the encoder's error as an *Error; nil stays nil. The
// two structs have the same fields, so this is a conversion, not a copy.
func fromWire(err error) error {
	if we, ok := err.(*jsonwire.Error); ok {
		return (*Error)(we)
	}
	return err
}
