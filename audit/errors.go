package audit

import (
	"errors"
	"strconv"
)

// Sentinel errors. Test for them with [errors.Is]; an [*Error] says where.
var (
	// ErrFormat reports an input that is neither JSON Lines nor a HAR
	// file, or a HAR file whose structure is not HAR 1.2's.
	ErrFormat = errors.New("unknown log format")
	// ErrMalformed reports a request that does not follow the envelope
	// (JSON Lines) or the HAR mapping.
	ErrMalformed = errors.New("malformed request")
	// ErrTooLong reports a line or HAR entry longer than the limit.
	ErrTooLong = errors.New("request too long")
	// ErrLate reports a request timed earlier than requests already
	// decided, by more than the reordering tolerance.
	ErrLate = errors.New("request out of time order")
)

// Error is an input error: where it is and what. Malformed requests are
// collected in [Report].Malformed and, under [Options].Strict, returned by
// [Run] as the first one.
type Error struct {
	// Where locates the request; its Line or Entry is zero when the error
	// is about the whole input.
	Where Ref
	// Err is one of the sentinels, possibly wrapped with a detail.
	Err error
}

// Error returns "audit: " followed by the location and the problem.
func (e *Error) Error() string { return "audit: " + e.Where.String() + ": " + e.Err.Error() }

// Unwrap returns e.Err.
func (e *Error) Unwrap() error { return e.Err }

// detail wraps a sentinel with what exactly is wrong.
type detail struct {
	sentinel error
	msg      string
}

func (d *detail) Error() string { return d.sentinel.Error() + ": " + d.msg }
func (d *detail) Unwrap() error { return d.sentinel }

func malformed(msg string) error { return &detail{ErrMalformed, msg} }

// Ref locates a request in the logs: a line of a JSON Lines log, or an
// entry of a HAR file by its JSON Pointer.
type Ref struct {
	// Input is the log's name as given to [Run].
	Input string `json:"input"`
	// Line is the line of a JSON Lines log, from 1.
	Line int64 `json:"line,omitempty"`
	// Pointer is the JSON Pointer of a HAR entry, "/log/entries/N" (N
	// from 0).
	Pointer string `json:"pointer,omitempty"`
}

// String returns "name:line" for a line, "name#/log/entries/N" for a HAR
// entry (a JSON Pointer as a URI fragment, RFC 6901 §6) and the name
// alone for the whole input.
func (r Ref) String() string {
	switch {
	case r.Line > 0:
		return r.Input + ":" + strconv.FormatInt(r.Line, 10)
	case r.Pointer != "":
		return r.Input + "#" + r.Pointer
	}
	return r.Input
}
