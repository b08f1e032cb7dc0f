// Package fpwire reads and writes fingerprint specs, requests and results
// in the language-neutral shapes of the published vectors
// (testdata/vectors): the JSON a spec or request is written in, and the
// result a fingerprint or a rejection is reported as. The line protocol
// (idemprint fingerprint --jsonl) and the WebAssembly module behind the npm
// package share it, so both classify every error as the vectors do.
//
// Input is read strictly, as package canonical reads a body: a line with a
// duplicate member, invalid UTF-8 or a lone surrogate is rejected, never
// repaired, so the request fingerprinted is the one that was written.
package fpwire

import (
	"encoding/base64"
	"errors"
	"strconv"
	"strings"

	"github.com/idemprint/idemprint/canonical"
	"github.com/idemprint/idemprint/fingerprint"
	"github.com/tidwall/gjson"
)

// ErrInvalidInput reports a spec or request text that is not of its shape:
// not one strict JSON object, an unknown member, a member of the wrong
// type, or both body and bodyBase64.
var ErrInvalidInput = errors.New("invalid input")

// ClassInvalidInput is the class of an [ErrInvalidInput] request: a line
// of the line protocol, or a request the npm package could not read.
const ClassInvalidInput = "invalid-input"

// InputError reports where a spec or request text breaks its shape.
type InputError struct {
	// Offset is the byte offset in the text of the value at fault.
	Offset int64
	// Pointer is the RFC 6901 JSON Pointer of that value in the text.
	Pointer string
	// Err wraps ErrInvalidInput, or for a text that is not strict JSON the
	// *canonical.Error that says why; its message has no prefix.
	Err error
}

// Error returns "fpwire: " followed by the location and the problem.
func (e *InputError) Error() string {
	s := "fpwire: byte " + strconv.FormatInt(e.Offset, 10)
	if e.Pointer != "" {
		s += " at " + e.Pointer
	}
	return s + ": " + e.Err.Error()
}

// Unwrap returns e.Err.
func (e *InputError) Unwrap() error { return e.Err }

type detail struct {
	sentinel error
	msg      string
}

func (d *detail) Error() string { return d.sentinel.Error() + ": " + d.msg }
func (d *detail) Unwrap() error { return d.sentinel }

var strict = canonical.Options{Numbers: canonical.Exact}

// object checks that src is one strict JSON object and returns it.
func object(src []byte) (gjson.Result, error) {
	if err := strict.Validate(src); err != nil {
		var ce *canonical.Error
		if errors.As(err, &ce) {
			return gjson.Result{}, &InputError{Offset: ce.Offset, Pointer: ce.Pointer, Err: ce.Err}
		}
		return gjson.Result{}, err
	}
	v := gjson.ParseBytes(src)
	if !v.IsObject() {
		return gjson.Result{}, &InputError{Offset: int64(firstByte(src)), Err: &detail{ErrInvalidInput, "want a JSON object"}}
	}
	return v, nil
}

func firstByte(src []byte) int {
	for i, c := range src {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return i
		}
	}
	return len(src)
}

// pointerToken escapes a member name as one RFC 6901 reference token.
func pointerToken(name string) string {
	if !strings.ContainsAny(name, "~/") {
		return name
	}
	return strings.ReplaceAll(strings.ReplaceAll(name, "~", "~0"), "/", "~1")
}

// stringList reads an array of strings at ptr.
func stringList(v gjson.Result, ptr string, bad func(v gjson.Result, ptr, msg string) error) ([]string, error) {
	if !v.IsArray() {
		return nil, bad(v, ptr, "want an array of strings")
	}
	var out []string
	var err error
	v.ForEach(func(_, e gjson.Result) bool {
		if e.Type != gjson.String {
			err = bad(e, ptr+"/"+strconv.Itoa(len(out)), "want a string")
			return false
		}
		out = append(out, e.String())
		return true
	})
	if out == nil && err == nil {
		out = []string{}
	}
	return out, err
}

// ParseSpec reads a Spec from its JSON form, the "fingerprint" object of a
// policy file and the "spec" of a vector: an object with the optional
// members intent, ignore, required, headers and query (arrays of strings)
// and numbers (a string). A problem is a [*fingerprint.SpecError] naming
// the member, wrapping [fingerprint.ErrInvalidSpec], so that it reads as a
// Compile error does; a text that is not one strict JSON object has the
// pointer "".
func ParseSpec(src []byte) (fingerprint.Spec, error) {
	var s fingerprint.Spec
	bad := func(_ gjson.Result, ptr, msg string) error {
		return &fingerprint.SpecError{Pointer: ptr, Err: &detail{fingerprint.ErrInvalidSpec, msg}}
	}
	v, err := object(src)
	if err != nil {
		return s, &fingerprint.SpecError{Pointer: "", Err: &detail{fingerprint.ErrInvalidSpec, "not a JSON object: " + unprefixed(err)}}
	}
	v.ForEach(func(k, m gjson.Result) bool {
		name := k.String()
		ptr := "/" + pointerToken(name)
		var list *[]string
		switch name {
		case "intent":
			list = &s.Intent
		case "ignore":
			list = &s.Ignore
		case "required":
			list = &s.Required
		case "headers":
			list = &s.Headers
		case "query":
			list = &s.Query
		case "numbers":
			if m.Type != gjson.String {
				err = bad(m, ptr, `want "exact" or "jcs"`)
				return false
			}
			s.Numbers = m.String()
			return true
		default:
			err = bad(m, ptr, "unknown member "+strconv.Quote(name)+" (want intent, ignore, required, numbers, headers or query)")
			return false
		}
		*list, err = stringList(m, ptr, bad)
		return err == nil
	})
	return s, err
}

// unprefixed returns err's message without its location prefix.
func unprefixed(err error) string {
	var ie *InputError
	if errors.As(err, &ie) {
		return ie.Err.Error() + " (byte " + strconv.FormatInt(ie.Offset, 10) + ")"
	}
	return err.Error()
}

// ParseRequest reads a request in the vectors' shape: an object with the
// optional members method and path (strings), headers and query (objects
// whose members are arrays of strings), and at most one of body (a string,
// the body's UTF-8) and bodyBase64 (the body in padded base64, RFC 4648
// §4, for a body that is not UTF-8). An absent member is empty; an empty
// body is no body. The Header and Query maps keep the names as written.
// A problem is an [*InputError].
func ParseRequest(src []byte) (fingerprint.Request, error) {
	if r, ok, err := selectRequest(src); ok {
		return r, err
	}
	return parseRequestSlow(src)
}

// parseRequestSlow is ParseRequest for any text: it validates the text,
// then reads it with gjson, saying what is wrong and where.
func parseRequestSlow(src []byte) (fingerprint.Request, error) {
	var r fingerprint.Request
	bad := func(v gjson.Result, ptr, msg string) error {
		return &InputError{Offset: int64(v.Index), Pointer: ptr, Err: &detail{ErrInvalidInput, msg}}
	}
	v, err := object(src)
	if err != nil {
		return r, err
	}
	haveBody := false
	v.ForEach(func(k, m gjson.Result) bool {
		name := k.String()
		ptr := "/" + pointerToken(name)
		switch name {
		case "method", "path", "body", "bodyBase64":
			if m.Type != gjson.String {
				err = bad(m, ptr, "want a string")
				return false
			}
		case "headers", "query":
			if !m.IsObject() {
				err = bad(m, ptr, "want an object of arrays of strings")
				return false
			}
		default:
			err = bad(m, ptr, "unknown member "+strconv.Quote(name)+" (want method, path, headers, query, body or bodyBase64)")
			return false
		}
		switch name {
		case "method":
			r.Method = m.String()
		case "path":
			r.Path = m.String()
		case "body", "bodyBase64":
			if haveBody {
				err = bad(m, ptr, "want one of body and bodyBase64, not both")
				return false
			}
			haveBody = true
			if name == "body" {
				if raw := m.Raw[1 : len(m.Raw)-1]; !strings.Contains(raw, `\`) {
					r.Body = []byte(raw) // nothing to unescape
				} else {
					r.Body = []byte(m.String())
				}
				break
			}
			if r.Body, err = base64.StdEncoding.Strict().DecodeString(m.String()); err != nil {
				err = bad(m, ptr, "not padded base64 (RFC 4648 §4)")
				return false
			}
		case "headers", "query":
			if m.Raw == "{}" {
				break // no names: no map
			}
			vals := map[string][]string{}
			m.ForEach(func(hk, hv gjson.Result) bool {
				hname := hk.String()
				vals[hname], err = stringList(hv, ptr+"/"+pointerToken(hname), bad)
				return err == nil
			})
			if name == "headers" {
				r.Header = vals
			} else {
				r.Query = vals
			}
		}
		return err == nil
	})
	if len(r.Body) == 0 {
		r.Body = nil
	}
	return r, err
}
