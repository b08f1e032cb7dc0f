package policy

import (
	"iter"
	"net/http"
	"slices"
	"strings"
)

// HeaderField is one value of one header of a stored response.
type HeaderField struct {
	Name, Value string
}

// Header is the header of a stored response ([Record.Header]): one field
// per value, ordered by name (byte by byte) and, under one name, in the
// order the values were sent. A record's header is a list rather than a
// map so that keeping it costs one allocation, and so that it has one
// spelling: two equal headers are equal lists ([slices.Equal]).
//
// Build one with [HeaderOf]; the engine's records ([Rule.Complete]) are
// built so. A header built by hand in another order is still kept and
// replayed as a whole, but only a sorted one compares equal to its copy
// read back from a store.
type Header []HeaderField

// HeaderOf returns the fields of h in a Header's order: every value of
// every name, names without values left out. It returns nil when h has no
// value.
func HeaderOf(h http.Header) Header {
	n := 0
	for _, vs := range h {
		n += len(vs)
	}
	if n == 0 {
		return nil
	}
	out := make(Header, 0, n)
	for name, vs := range h {
		for _, v := range vs {
			out = append(out, HeaderField{name, v})
		}
	}
	out.sort()
	return out
}

// Get returns the first value of the header name, or "" when it has none.
// As [http.Header.Get] does, it looks name up in canonical form.
func (h Header) Get(name string) string {
	name = http.CanonicalHeaderKey(name)
	for _, f := range h {
		if f.Name == name {
			return f.Value
		}
	}
	return ""
}

// Values returns the values of the header name, in the order they were
// sent. As [http.Header.Values] does, it looks name up in canonical form
// ([http.CanonicalHeaderKey]). The slice is new.
func (h Header) Values(name string) []string {
	name = http.CanonicalHeaderKey(name)
	var out []string
	for _, f := range h {
		if f.Name == name {
			out = append(out, f.Value)
		}
	}
	return out
}

// HTTP returns a new http.Header holding every field of h, the values of
// each name in order, or nil when h is empty. Its values share one
// allocation, as [http.Header.Clone]'s do.
func (h Header) HTTP() http.Header {
	return h.appendHTTP("", "")
}

// Runs yields each run of consecutive fields under one name: the name and
// the run's fields, a part of h. In a sorted Header (as [HeaderOf] and
// [Header.Sorted] return) that is each name once, with all its values in
// order; counting the runs counts the names.
func (h Header) Runs() iter.Seq2[string, Header] {
	return func(yield func(string, Header) bool) {
		for i := 0; i < len(h); {
			j := i + 1
			for j < len(h) && h[j].Name == h[i].Name {
				j++
			}
			if !yield(h[i].Name, h[i:j:j]) {
				return
			}
			i = j
		}
	}
}

// appendHTTP is HTTP with the value value under the name name when name
// is not "" (replacing what h holds under it).
func (h Header) appendHTTP(name, value string) http.Header {
	if len(h) == 0 && name == "" {
		return nil
	}
	names := 0
	if name != "" {
		names++ // room for it
	}
	for range h.Runs() {
		names++
	}
	out := make(http.Header, names)
	values := make([]string, len(h), len(h)+1) // and the replay value
	i := 0
	for n, run := range h.Runs() {
		vs := values[i : i+len(run) : i+len(run)]
		for k, f := range run {
			vs[k] = f.Value
		}
		if old, ok := out[n]; ok { // a name out of order: rare
			out[n] = append(old, vs...)
		} else {
			out[n] = vs
		}
		i += len(run)
	}
	if name != "" {
		values = append(values, value)
		out[name] = values[len(h):]
	}
	return out
}

// sort orders h by name, keeping the order of the values under one name.
func (h Header) sort() {
	if !h.sorted() {
		slices.SortStableFunc(h, func(a, b HeaderField) int { return strings.Compare(a.Name, b.Name) })
	}
}

// sorted reports whether h is in a Header's order.
func (h Header) sorted() bool {
	for i := 1; i < len(h); i++ {
		if h[i].Name < h[i-1].Name {
			return false
		}
	}
	return true
}

// Sorted returns h in a Header's order: h itself when it is, or else a
// sorted copy, the values under one name kept in their order.
func (h Header) Sorted() Header {
	if h.sorted() {
		return h
	}
	c := slices.Clone(h)
	c.sort()
	return c
}
