// Package problem writes RFC 9457 problem documents, the bodies of the
// answers that policy, idemhttp and the sidecar give instead of a
// handler's: one type with every member any of them uses, one encoder and
// one writer, so that every answer of the project has the same shape.
package problem

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/idemprint/idemprint/canonical"
)

// Base is the base of every problem type URI. The URIs are stable: a
// client may match on them.
const Base = "https://idemprint.dev/problems/"

// Details is an RFC 9457 problem (§3.1 members) with the extension members
// the project's answers use. Each member is encoded only when set, in the
// order of the fields. The zero value encodes as "{}".
type Details struct {
	Type   string
	Title  string
	Status int
	Detail string
	// DifferingPaths: what a reused key's request differs in
	// ("differing_paths").
	DifferingPaths []string
	// Line, Column, Offset and Pointer locate the problem of a body that
	// is not strict JSON; Offset is a pointer so that offset 0 is encoded.
	Line    int
	Column  int
	Offset  *int64
	Pointer string
	// Part and Name say what an invalid request's problem is about.
	Part string
	Name string

	// RetryAfter is the Retry-After header [Write] sends, in seconds; 0
	// for none. It is not a member of the document.
	RetryAfter int
}

// AppendJSON appends p as a JSON object to dst.
func (p *Details) AppendJSON(dst []byte) []byte {
	w := writer{dst: append(dst, '{')}
	w.str("type", p.Type)
	w.str("title", p.Title)
	w.int("status", int64(p.Status), p.Status != 0)
	w.str("detail", p.Detail)
	if len(p.DifferingPaths) > 0 {
		w.name("differing_paths")
		w.dst = append(w.dst, '[')
		for i, s := range p.DifferingPaths {
			if i > 0 {
				w.dst = append(w.dst, ',')
			}
			w.dst = AppendString(w.dst, s)
		}
		w.dst = append(w.dst, ']')
	}
	w.int("line", int64(p.Line), p.Line != 0)
	w.int("column", int64(p.Column), p.Column != 0)
	if p.Offset != nil {
		w.int("offset", *p.Offset, true)
	}
	w.str("pointer", p.Pointer)
	w.str("part", p.Part)
	w.str("name", p.Name)
	return append(w.dst, '}')
}

// writer appends the members of one object, each after a comma but the
// first.
type writer struct {
	dst []byte
	sep bool
}

func (w *writer) name(name string) {
	if w.sep {
		w.dst = append(w.dst, ',')
	}
	w.sep = true
	w.dst = append(w.dst, '"')
	w.dst = append(w.dst, name...)
	w.dst = append(w.dst, `":`...)
}

func (w *writer) str(name, v string) {
	if v != "" {
		w.name(name)
		w.dst = AppendString(w.dst, v)
	}
}

func (w *writer) int(name string, v int64, set bool) {
	if set {
		w.name(name)
		w.dst = strconv.AppendInt(w.dst, v, 10)
	}
}

// AppendString appends s as a JSON string. Invalid UTF-8, which no message
// of the project holds, is replaced by U+FFFD rather than failing the
// answer.
func AppendString(dst []byte, s string) []byte {
	out, err := canonical.AppendString(dst, s)
	if err != nil {
		out, _ = canonical.AppendString(dst, strings.ToValidUTF8(s, "\uFFFD"))
	}
	return out
}

// ContentType is the media type of a problem document (RFC 9457 §3).
const ContentType = "application/problem+json"

// Write answers with p: its status, Content-Type, Content-Length,
// Retry-After when p.RetryAfter is positive, and the document.
func Write(w http.ResponseWriter, p *Details) {
	b := p.AppendJSON(nil)
	h := w.Header()
	h.Set("Content-Type", ContentType)
	h.Set("Content-Length", strconv.Itoa(len(b)))
	if p.RetryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(p.RetryAfter))
	}
	w.WriteHeader(p.Status)
	w.Write(b)
}

// Sentence returns msg, an error message, as the sentence of a detail:
// without prefix, its first letter in upper case, ending in a period.
func Sentence(msg, prefix string) string {
	s := strings.TrimPrefix(msg, prefix)
	if s != "" && 'a' <= s[0] && s[0] <= 'z' {
		s = string(s[0]-'a'+'A') + s[1:]
	}
	return s + "."
}
