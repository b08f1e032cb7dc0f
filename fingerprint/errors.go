package fingerprint

import (
	"errors"
	"strconv"
)

// Sentinel errors. Test for them with [errors.Is]; the types that carry
// them, [*SpecError] and [*RequestError], say where.
var (
	// ErrInvalidPath reports a path outside the documented subset.
	ErrInvalidPath = errors.New("invalid path")
	// ErrInvalidSpec reports any other problem in a Spec: a duplicate entry,
	// an unknown number mode, a bad header or query name, an intent path
	// that an Ignore entry would remove, a required path that is not intent.
	ErrInvalidSpec = errors.New("invalid spec")
	// ErrMissingRequired reports a request without a Required path.
	ErrMissingRequired = errors.New("required value missing")
	// ErrInvalidRequest reports a method, path, header value or query value
	// that is not valid UTF-8, so it has no canonical form.
	ErrInvalidRequest = errors.New("invalid request")
	// ErrInvalidFingerprint reports a string that [Parse] cannot read.
	ErrInvalidFingerprint = errors.New("invalid fingerprint")
)

// SpecError reports a problem in a [Spec] found by [Compile].
type SpecError struct {
	// Pointer is the RFC 6901 JSON Pointer of the problem within the Spec's
	// JSON form, such as "/intent/2" or "/numbers".
	Pointer string
	// Err wraps ErrInvalidPath or ErrInvalidSpec; its message has no prefix.
	Err error
}

// Error returns "fingerprint: spec " followed by the pointer and the problem.
func (e *SpecError) Error() string { return "fingerprint: spec " + e.Pointer + ": " + e.Err.Error() }

// Unwrap returns e.Err.
func (e *SpecError) Unwrap() error { return e.Err }

// RequestError reports a request that cannot be fingerprinted for a reason
// other than an invalid body (which is a *canonical.Error).
type RequestError struct {
	// Part is "body", "method", "path", "header" or "query".
	Part string
	// Name is the body path (a concrete path such as "items.3.sku"), header
	// or query parameter in question; empty for the method and the path.
	Name string
	// Err wraps ErrMissingRequired or ErrInvalidRequest.
	Err error
}

// Error returns "fingerprint: " followed by the part, the name and the problem.
func (e *RequestError) Error() string {
	s := "fingerprint: " + e.Part
	if e.Name != "" {
		s += " " + strconv.Quote(e.Name)
	}
	return s + ": " + e.Err.Error()
}

// Unwrap returns e.Err.
func (e *RequestError) Unwrap() error { return e.Err }

// detail is a sentinel with a more precise message.
type detail struct {
	sentinel error
	msg      string
}

func (d *detail) Error() string { return d.sentinel.Error() + ": " + d.msg }
func (d *detail) Unwrap() error { return d.sentinel }

func specErr(ptr string, sentinel error, msg string) *SpecError {
	return &SpecError{Pointer: ptr, Err: &detail{sentinel, msg}}
}
