package fingerprint

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
)

// Difference is one way in which two intent documents differ.
type Difference struct {
	// Part is "method", "path", "header", "query" or "body".
	Part string
	// Path names what differs: for "body", a path in the documented syntax
	// (an intent path, or a path below one or below the whole body, such as
	// "destination.iban" or "items.2.qty"); for "header" and "query", the
	// name; empty for "method" and "path".
	Path string
	// First and Second are the canonical JSON values in the first and the
	// second document; nil means absent.
	First, Second []byte
	// FirstAbsent and SecondAbsent list, for an intent path through "#",
	// the concrete paths of elements in which it matched nothing.
	FirstAbsent, SecondAbsent []string
}

// Diff compares two intent documents, as [Fingerprinter.AppendIntent]
// writes them, and lists what differs, in the order method, path, headers,
// query, body. Documents of equal requests have no differences. Values that
// are objects on both sides (and arrays of equal length outside "#" paths)
// are compared member by member, so a difference names the innermost path.
func Diff(a, b []byte) ([]Difference, error) {
	da, err := parseDocument(a)
	if err != nil {
		return nil, err
	}
	db, err := parseDocument(b)
	if err != nil {
		return nil, err
	}
	var out []Difference
	for _, part := range []string{"method", "path"} {
		if !bytes.Equal(da.top[part], db.top[part]) {
			out = append(out, Difference{Part: part, First: da.top[part], Second: db.top[part]})
		}
	}
	for _, part := range []string{"header", "query"} {
		ma, mb := da.sub[part], db.sub[part]
		for _, k := range unionKeys(ma, mb) {
			if !bytes.Equal(ma[k], mb[k]) {
				out = append(out, Difference{Part: part, Path: k, First: ma[k], Second: mb[k]})
			}
		}
	}
	if da.top["body"] != nil || db.top["body"] != nil {
		out = diffValues(out, "", da.top["body"], db.top["body"])
	}
	ia, ib := da.sub["intent"], db.sub["intent"]
	for _, k := range mergeKeys(unionKeys(ia, ib), unionKeys(da.absent, db.absent)) {
		ha, hb := holes(da.absent[k], k), holes(db.absent[k], k)
		if multiValue(k) && (!bytes.Equal(ia[k], ib[k]) || !slices.Equal(ha, hb)) {
			out = append(out, Difference{Part: "body", Path: k, First: ia[k], Second: ib[k], FirstAbsent: ha, SecondAbsent: hb})
			continue
		}
		out = diffValues(out, k, ia[k], ib[k])
	}
	return out, nil
}

// holes returns the concrete holes of a path, without the path itself,
// which stands for "absent altogether" and shows as a nil value.
func holes(list []string, p string) []string {
	var out []string
	for _, h := range list {
		if h != p {
			out = append(out, h)
		}
	}
	return out
}

// diffValues appends the differences between two canonical values at path p.
func diffValues(out []Difference, p string, a, b []byte) []Difference {
	if bytes.Equal(a, b) {
		return out
	}
	if len(a) > 0 && len(b) > 0 && a[0] == b[0] && (a[0] == '{' || a[0] == '[') {
		if a[0] == '{' {
			var ma, mb map[string]json.RawMessage
			if json.Unmarshal(a, &ma) == nil && json.Unmarshal(b, &mb) == nil {
				for _, k := range unionKeys(ma, mb) {
					out = diffValues(out, joinPath(p, escapeSegment(k)), ma[k], mb[k])
				}
				return out
			}
		} else {
			var la, lb []json.RawMessage
			if json.Unmarshal(a, &la) == nil && json.Unmarshal(b, &lb) == nil && len(la) == len(lb) {
				for i := range la {
					out = diffValues(out, joinPath(p, strconv.Itoa(i)), la[i], lb[i])
				}
				return out
			}
		}
	}
	return append(out, Difference{Part: "body", Path: p, First: nilIfEmpty(a), Second: nilIfEmpty(b)})
}

func nilIfEmpty(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}

func joinPath(p, seg string) string {
	if p == "" {
		return seg
	}
	return p + "." + seg
}

// escapeSegment writes a member name as one path segment.
func escapeSegment(k string) string {
	var b strings.Builder
	for i := 0; i < len(k); i++ {
		if strings.IndexByte(`.|*?#@!\[]{}`, k[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(k[i])
	}
	return b.String()
}

type document struct {
	top    map[string]json.RawMessage
	sub    map[string]map[string]json.RawMessage // "header", "query", "intent"
	absent map[string][]string
}

var errNotDocument = errors.New("fingerprint: not an intent document")

func parseDocument(b []byte) (*document, error) {
	d := &document{sub: map[string]map[string]json.RawMessage{}}
	if err := json.Unmarshal(b, &d.top); err != nil || d.top["method"] == nil || d.top["path"] == nil {
		return nil, errNotDocument
	}
	for part, member := range map[string]string{"header": "headers", "query": "query", "intent": "intent"} {
		if raw := d.top[member]; raw != nil {
			var m map[string]json.RawMessage
			if err := json.Unmarshal(raw, &m); err != nil {
				return nil, errNotDocument
			}
			d.sub[part] = m
		}
	}
	if raw := d.top["absent"]; raw != nil {
		if err := json.Unmarshal(raw, &d.absent); err != nil {
			return nil, errNotDocument
		}
	}
	return d, nil
}

// unionKeys returns the keys of the maps, sorted.
func unionKeys[V any](ms ...map[string]V) []string {
	var keys []string
	for _, m := range ms {
		for k := range m {
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	slices.Sort(keys)
	return keys
}

func mergeKeys(a, b []string) []string {
	for _, k := range b {
		if !slices.Contains(a, k) {
			a = append(a, k)
		}
	}
	slices.Sort(a)
	return a
}

// multiValue reports whether the path p has a "#" segment.
func multiValue(p string) bool {
	start := 0
	for i := 0; i <= len(p); i++ {
		switch {
		case i < len(p) && p[i] == '\\':
			i++
		case i == len(p) || p[i] == '.':
			if p[start:i] == "#" {
				return true
			}
			start = i + 1
		}
	}
	return false
}
