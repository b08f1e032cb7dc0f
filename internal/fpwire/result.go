package fpwire

import (
	"errors"
	"strconv"
	"strings"

	"github.com/idemprint/idemprint/canonical"
	"github.com/idemprint/idemprint/fingerprint"
)

// Error is a rejection in the vectors' shape. Which members are set
// depends on the class:
//
//	class                          set
//	invalid-spec, invalid-path     Field: the spec member at fault, such as "/intent/2"
//	syntax, duplicate-name,        Offset and Pointer: the byte offset in the body
//	invalid-utf8, lone-surrogate,    and the JSON Pointer of the value ("" is the
//	number-range, depth, size        whole body)
//	missing-required,              Part and Name: "body" and the concrete path of
//	invalid-request                  a missing value, or "header", "query", "method"
//	                                 or "path" and the name
//	invalid-input                  Offset and Pointer: where the request text
//	                                 breaks its shape
//
// Message is the error's text, for people; it is not part of the format.
type Error struct {
	Class   string
	Field   string
	Offset  int64
	Pointer string
	Part    string
	Name    string
	Message string
}

// bodyClasses maps the sentinels of package canonical to their classes.
var bodyClasses = []struct {
	sentinel error
	class    string
}{
	{canonical.ErrSyntax, "syntax"},
	{canonical.ErrDuplicateName, "duplicate-name"},
	{canonical.ErrInvalidUTF8, "invalid-utf8"},
	{canonical.ErrInvalidSurrogate, "lone-surrogate"},
	{canonical.ErrNumberRange, "number-range"},
	{canonical.ErrTooDeep, "depth"},
	{canonical.ErrTooLarge, "size"},
}

// Classify returns the vector form of an error of [fingerprint.Compile],
// [fingerprint.Fingerprinter.Sum], [ParseSpec] or [ParseRequest]. An
// error of none of their kinds has the class "internal".
func Classify(err error) Error {
	out := Error{Message: err.Error()}
	var se *fingerprint.SpecError
	var ie *InputError
	var ce *canonical.Error
	var re *fingerprint.RequestError
	switch {
	case errors.As(err, &se):
		out.Class, out.Field = "invalid-spec", se.Pointer
		if errors.Is(err, fingerprint.ErrInvalidPath) {
			out.Class = "invalid-path"
		}
	case errors.As(err, &ie):
		out.Class, out.Offset, out.Pointer = ClassInvalidInput, ie.Offset, ie.Pointer
	case errors.As(err, &ce):
		out.Class, out.Offset, out.Pointer = "internal", ce.Offset, ce.Pointer
		for _, c := range bodyClasses {
			if errors.Is(err, c.sentinel) {
				out.Class = c.class
				break
			}
		}
	case errors.As(err, &re):
		out.Class, out.Part, out.Name = "invalid-request", re.Part, re.Name
		if errors.Is(err, fingerprint.ErrMissingRequired) {
			out.Class = "missing-required"
		}
	default:
		out.Class = "internal"
	}
	return out
}

// hasLocation reports whether e's class locates it by offset and pointer.
func (e Error) hasLocation() bool {
	switch e.Class {
	case "invalid-spec", "invalid-path", "missing-required", "invalid-request":
		return false
	}
	return true
}

// AppendJSON appends e as a JSON object with the members "class",
// "message" and those its class sets ("field"; "offset" and "pointer";
// "part" and "name"), in canonical order.
func (e Error) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"class":`...)
	dst = appendString(dst, e.Class)
	switch {
	case e.Class == "invalid-spec" || e.Class == "invalid-path":
		dst = append(dst, `,"field":`...)
		dst = appendString(dst, e.Field)
		dst = append(dst, `,"message":`...)
		dst = appendString(dst, e.Message)
	case e.hasLocation():
		dst = append(dst, `,"message":`...)
		dst = appendString(dst, e.Message)
		dst = append(dst, `,"offset":`...)
		dst = strconv.AppendInt(dst, e.Offset, 10)
		dst = append(dst, `,"pointer":`...)
		dst = appendString(dst, e.Pointer)
	default:
		dst = append(dst, `,"message":`...)
		dst = appendString(dst, e.Message)
		dst = append(dst, `,"name":`...)
		dst = appendString(dst, e.Name)
		dst = append(dst, `,"part":`...)
		dst = appendString(dst, e.Part)
	}
	return append(dst, '}')
}

// appendString appends s as a JSON string. Invalid UTF-8, which an error
// message may quote from the input, becomes U+FFFD: a message is for
// people, and the output must stay JSON.
func appendString(dst []byte, s string) []byte {
	out, err := canonical.AppendString(dst, s)
	if err != nil {
		out, _ = canonical.AppendString(dst, strings.ToValidUTF8(s, "\uFFFD"))
	}
	return out
}

// AppendResult appends the line-protocol result of a Sum: {"fingerprint":
// text} (with intent, non-nil, also "intent": the intent document as a
// string), or {"error": e.AppendJSON} when err is not nil.
func AppendResult(dst []byte, fp fingerprint.Fingerprint, intent []byte, err error) []byte {
	if err != nil {
		dst = append(dst, `{"error":`...)
		dst = Classify(err).AppendJSON(dst)
		return append(dst, '}')
	}
	dst = append(dst, `{"fingerprint":"`...)
	dst, _ = fp.AppendText(dst)
	dst = append(dst, '"')
	if intent != nil {
		dst = append(dst, `,"intent":`...)
		dst = appendString(dst, string(intent))
	}
	return append(dst, '}')
}
