// Package canonical writes the canonical form of a JSON text, as defined by
// RFC 8785 (the JSON Canonicalization Scheme, JCS), and an exact variant that
// never rounds a number.
//
// Two JSON texts that mean the same value have the same canonical form: member
// order, insignificant whitespace and the many spellings of one string or one
// number all disappear. A fingerprint of the canonical form is therefore stable
// under every re-encoding a client, proxy or SDK may apply to a retried request.
//
// # Number modes
//
// [JCS] follows RFC 8785 to the byte: every number becomes the ECMAScript
// Number::toString of the nearest IEEE-754 double. That is what interoperable
// signatures need, but it merges distinct values: 9007199254740993 and
// 9007199254740992 are the same double, so they get the same canonical form.
//
// [Exact] lays the number out with the same rules but from the literal's own
// decimal digits, so it neither merges distinct values nor splits equal ones:
// 1, 1.0, 1e0 and 10E-1 all become 1; 9007199254740993 stays itself; 1e400
// becomes 1e+400 instead of an error. For every literal that already is the
// shortest form of a double, Exact and JCS produce the same bytes.
//
// # Strict input
//
// The input must be one JSON text (RFC 8259) that is also I-JSON (RFC 7493):
// no duplicate member names (compared after unescaping), valid UTF-8, no lone
// surrogate escapes, no byte-order mark, numbers of the JSON grammar only, and
// nothing but whitespace after the value. Optionally, Unicode noncharacters
// are rejected too. Every rejection is an [*Error] carrying the byte offset,
// the JSON Pointer of the value in question and one of the sentinel errors
// below, so callers can test it with [errors.Is] and [errors.As].
//
// # Specifications
//
//   - RFC 8785, JSON Canonicalization Scheme: §3.2.2 (serialization of
//     primitives), §3.2.3 (sorting of members by UTF-16 code units).
//   - RFC 8259, The JavaScript Object Notation (JSON) Data Interchange Format:
//     §2 to §8 (grammar, strings, numbers, UTF-8).
//   - RFC 7493, The I-JSON Message Format: §2.1 (encoding and characters),
//     §2.3 (unique member names).
//   - ECMA-262, Number::toString: the layout of numbers in both modes.
//   - RFC 6901, JSON Pointer: the location in every [*Error].
//
// # Security considerations
//
// Two parsers that read one body differently are an attack surface: a
// fingerprint computed by a lenient parser can describe another request than
// the one the handler executes. Go's encoding/json keeps the last of two
// duplicate member names, gjson returns the first, and other parsers replace
// invalid UTF-8 or lone surrogates with U+FFFD, so {"amount":10,"amount":10000}
// can be read as 10 by one layer and charged as 10000 by the next. This package
// rejects every input on which strict parsers may disagree instead of picking
// one reading. It also never clamps: a number too large for a double is an
// error in JCS mode rather than the largest double.
//
// Hostile input cannot exhaust the goroutine stack or memory: parsing is
// iterative, nesting is limited by [Options.MaxDepth] (10,000 by default, as in
// encoding/json), work is linear in the input size, and output never exceeds
// the input by more than a small constant per number.
package canonical
