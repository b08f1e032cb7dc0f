package fingerprint

import (
	"math/bits"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/idemprint/idemprint/canonical"
)

// node is one step of the trie of walked paths. Compile builds it so that
// one walk over the canonical body serves every path, instead of one search
// per path.
type node struct {
	seg   segment // the step that leads here; zero at the root
	kids  []int   // indexes in Fingerprinter.nodes
	ends  []int   // walked paths that end here
	below []int   // a "#" node: the walked paths that go through it
	// The kids that a member name leads to, their names, and how many
	// names these are (two kids may share one: "1" and "\1").
	named     []int
	kidsNames []string
	distinct  int
}

// buildTrie indexes the walked paths: the Intent paths, or without them the
// Required paths, which are only checked.
func (f *Fingerprinter) buildTrie() {
	f.walked = f.intent
	if len(f.intent) == 0 {
		f.walked = f.required
	}
	f.nodes = []node{{}}
	type edge struct {
		from int
		key  string
	}
	kid := map[edge]int{} // a node's child by segment: no scan of wide nodes
	for pi, p := range f.walked {
		n := 0
		for _, seg := range p.segs {
			next, ok := kid[edge{n, seg.key}]
			if !ok {
				kid[edge{n, seg.key}] = len(f.nodes)
				next = len(f.nodes)
				f.nodes = append(f.nodes, node{seg: seg})
				f.nodes[n].kids = append(f.nodes[n].kids, next)
				if !seg.all {
					f.nodes[n].named = append(f.nodes[n].named, next)
					f.nodes[n].kidsNames = append(f.nodes[n].kidsNames, seg.name)
				}
			}
			n = next
			if seg.all {
				f.nodes[n].below = append(f.nodes[n].below, pi)
			}
		}
		f.nodes[n].ends = append(f.nodes[n].ends, pi)
	}
	for i := range f.nodes {
		n := &f.nodes[i]
		for x, name := range n.kidsNames {
			if !slices.Contains(n.kidsNames[:x], name) {
				n.distinct++
			}
		}
	}
}

// selectIntent walks the canonical body once for every walked path,
// filling st.out with what each selects and st.holes with where it found
// nothing, and checks the Required paths.
func (f *Fingerprinter) selectIntent(st *state) error {
	n := len(f.walked)
	st.out = grow(st.out, n)
	st.holes = grow(st.holes, n)
	st.where, st.levels, st.names, st.err = st.where[:0], st.levels[:0], st.names[:0], nil
	if len(st.text) > 0 && n > 0 {
		f.visit(st, st.text, skipSpace(st.text, 0), 0, 0, f.allIgnorePaths())
		if st.err != nil {
			return st.err
		}
	}
	for pi := range f.walked {
		p := &f.walked[pi]
		if !p.required {
			continue
		}
		if len(st.out[pi]) == 0 {
			return missing(p.text)
		}
		if len(st.holes[pi]) > 0 {
			h := unsafeString(st.holes[pi])
			first, _ := strconv.Unquote(h[:skipString(h, 0)]) // a canonical string
			return missing(first)
		}
	}
	return nil
}

// allIgnorePaths is the mask of every Ignore path, which all match at the
// root.
func (f *Fingerprinter) allIgnorePaths() uint64 { return uint64(1)<<len(f.ignorePaths) - 1 }

// appendAbsent appends the content of the "absent" member: for each Intent
// path that did not match everywhere, the concrete paths that matched
// nothing (the path itself when it matched nothing at all).
func (f *Fingerprinter) appendAbsent(dst []byte, st *state) []byte {
	if len(f.intent) == 0 {
		return dst
	}
	n := 0
	for pi := range f.walked {
		p := &f.walked[pi]
		out, holes := st.out[pi], st.holes[pi]
		if len(out) > 0 && len(holes) == 0 {
			continue
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		dst = append(dst, p.quoted...)
		dst = append(dst, ':', '[')
		if len(out) == 0 {
			dst = append(dst, p.quoted...)
		} else {
			dst = append(dst, holes...)
		}
		dst = append(dst, ']')
	}
	return dst
}

// appendSelected appends the "body" member (whole-body mode, when there is
// a body) or the "intent" member, preceded by a comma.
func (f *Fingerprinter) appendSelected(dst []byte, st *state) []byte {
	if len(f.intent) == 0 {
		if len(st.body) == 0 {
			return dst
		}
		dst = append(dst, `,"body":`...)
		dst, _ = f.filter(dst, unsafeString(st.body), 0, 0, f.allIgnorePaths())
		return dst
	}
	dst = append(dst, `,"intent":{`...)
	n := 0
	for pi := range f.walked {
		out := st.out[pi]
		if len(out) == 0 {
			continue
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		dst = append(dst, f.walked[pi].quoted...)
		dst = append(dst, ':')
		dst = append(dst, out...)
	}
	return append(dst, '}')
}

// grow returns s with n empty buffers, keeping their capacity.
func grow(s [][]byte, n int) [][]byte {
	for len(s) < n {
		s = append(s, nil)
	}
	s = s[:n]
	for i := range s {
		s[i] = s[i][:0]
	}
	return s
}

func missing(where string) error {
	return &RequestError{Part: "body", Name: where, Err: ErrMissingRequired}
}

// visit walks the value at s[i], reached at trie node ni by a concrete
// path of d segments (st.where) that the Ignore paths in mask match so far.
// It appends the canonical form of what each walked path selects to st.out
// and returns the offset just past the value. s is the canonical body, or
// with st.raw the body as sent, valid but with whitespace, escapes and
// members in any order: then only the values selected are canonicalized.
func (f *Fingerprinter) visit(st *state, s string, i, ni, d int, mask uint64) int {
	n := &f.nodes[ni]
	end := -1
	if len(n.ends) > 0 {
		canon, at := s, i
		if st.raw {
			var plain bool
			end, plain = st.skipCanonical(s, i)
			if plain {
				// Already canonical, and a scalar: nothing to ignore in it.
				for _, pi := range n.ends {
					st.out[pi] = append(st.out[pi], s[i:end]...)
				}
				canon = ""
			} else {
				var err error
				if st.sel, err = f.canon.Append(st.sel[:0], unsafeBytes(s[i:end])); err != nil {
					st.err = err // cannot happen: a part of a valid body is valid
				}
				canon, at = unsafeString(st.sel), 0
			}
		}
		for _, pi := range n.ends {
			if canon == "" {
				break
			}
			var e int
			st.out[pi], e = f.filter(st.out[pi], canon, at, d, mask)
			if !st.raw {
				end = e
			}
		}
	}
	if len(n.kids) == 0 || s[i] != '{' && s[i] != '[' {
		if end < 0 {
			end = st.skip(s, i)
		}
		return end
	}
	wl := len(st.where)
	j := skipSpace(s, i+1)
	if s[i] == '{' {
		// A name selects from an object only.
		found := 0
		for s[j] != '}' {
			nameEnd, escaped := scanString(s, j)
			name := s[j+1 : nameEnd-1]
			nl := len(st.names)
			if st.raw && escaped {
				// Escaped as sent: compare the canonical spelling. Names
				// stack up in st.names, so an outer one stays intact.
				st.tmp = appendUnescaped(st.tmp[:0], s[j:nameEnd])
				st.names, _ = canonical.AppendString(st.names, unsafeString(st.tmp)) // valid: from a valid string
				name = unsafeString(st.names[nl+1 : len(st.names)-1])
			}
			v := skipSpace(s, skipSpace(s, nameEnd)+1) // past the colon
			ve := -1
			matched := false
			for x, kn := range n.kidsNames {
				if kn != name {
					continue
				}
				matched = true
				ki := n.named[x]
				k := &f.nodes[ki]
				next, _ := f.advance(mask, d, name, -1)
				st.where = append(st.where[:wl], step{key: k.seg.key, index: -1})
				ve = f.visit(st, s, v, ki, d+1, next)
			}
			st.where, st.names = st.where[:wl], st.names[:nl]
			if matched {
				if found++; found == n.distinct && st.raw {
					// Names are unique in a valid object: nothing
					// further on can match.
					return int(st.ends[i])
				}
			}
			if ve < 0 {
				ve = st.skip(s, v)
			}
			j = skipSpace(s, ve)
			if s[j] == ',' {
				j = skipSpace(s, j+1)
			}
		}
		return j + 1
	}

	// An array: "#" takes every element, a decimal segment one.
	base := len(st.levels)
	for _, ki := range n.kids {
		for _, pi := range f.nodes[ki].below {
			st.out[pi] = append(st.out[pi], '[')
			st.levels = append(st.levels, 0, 0) // elements written, mark
		}
	}
	for idx := 0; s[j] != ']'; idx++ {
		ve := -1
		next, _ := f.advance(mask, d, "", idx)
		st.where = append(st.where[:wl], step{index: idx})
		lv := base
		for _, ki := range n.kids {
			k := &f.nodes[ki]
			switch {
			case k.seg.all:
				for bi, pi := range k.below {
					if st.levels[lv+2*bi] > 0 {
						st.out[pi] = append(st.out[pi], ',')
					}
					st.levels[lv+2*bi+1] = len(st.out[pi])
				}
				ve = f.visit(st, s, j, ki, d+1, next)
				for bi, pi := range k.below {
					c := &st.levels[lv+2*bi]
					if len(st.out[pi]) > st.levels[lv+2*bi+1] {
						*c++
						continue
					}
					// Nothing selected in this element: a hole.
					if *c > 0 {
						st.out[pi] = st.out[pi][:len(st.out[pi])-1]
					}
					f.addHole(st, pi, d+1)
				}
				lv += 2 * len(k.below)
			case k.seg.index == idx:
				ve = f.visit(st, s, j, ki, d+1, next)
			}
		}
		st.where = st.where[:wl]
		if ve < 0 {
			ve = st.skip(s, j)
		}
		j = skipSpace(s, ve)
		if s[j] == ',' {
			j = skipSpace(s, j+1)
		}
	}
	for _, ki := range n.kids {
		for _, pi := range f.nodes[ki].below {
			st.out[pi] = append(st.out[pi], ']')
		}
	}
	st.levels = st.levels[:base]
	return j + 1
}

// addHole records that walked path pi matched nothing in the element at
// st.where, whose path has d segments.
func (f *Fingerprinter) addHole(st *state, pi, d int) {
	st.tmp = st.tmp[:0]
	for _, s := range st.where {
		if s.index >= 0 {
			st.tmp = appendIndex(st.tmp, s.index)
		} else {
			st.tmp = appendKey(st.tmp, s.key)
		}
	}
	for _, seg := range f.walked[pi].segs[d:] {
		st.tmp = appendKey(st.tmp, seg.key)
	}
	if len(st.holes[pi]) > 0 {
		st.holes[pi] = append(st.holes[pi], ',')
	}
	st.holes[pi], _ = canonical.AppendString(st.holes[pi], unsafeString(st.tmp)) // path text: UTF-8
}

// step is one segment of the concrete path being walked: an index, or a
// member name as its path segment.
type step struct {
	key   string
	index int // -1 for a member
}

func appendKey(dst []byte, key string) []byte {
	if len(dst) > 0 {
		dst = append(dst, '.')
	}
	return append(dst, key...)
}

func appendIndex(dst []byte, i int) []byte {
	if len(dst) > 0 {
		dst = append(dst, '.')
	}
	return strconv.AppendInt(dst, int64(i), 10)
}

// advance returns the Ignore paths of mask that still match after one more
// step, a member name (canonically escaped) or, when idx >= 0, an array
// index, at depth d; drop reports that one of them ends there.
func (f *Fingerprinter) advance(mask uint64, d int, name string, idx int) (next uint64, drop bool) {
	for m := mask; m != 0; m &= m - 1 {
		b := bits.TrailingZeros64(m)
		q := &f.ignorePaths[b]
		s := &q.segs[d]
		var match bool
		if idx >= 0 {
			match = s.all || s.index == idx
		} else {
			match = !s.all && s.name == name
		}
		if !match {
			continue
		}
		if len(q.segs) == d+1 {
			drop = true
		} else {
			next |= 1 << b
		}
	}
	return next, drop
}

// filter appends the canonical value at s[i], whose path has depth d, less
// the members that Ignore removes, and returns the offset past the value.
func (f *Fingerprinter) filter(dst []byte, s string, i, d int, mask uint64) ([]byte, int) {
	if mask == 0 && len(f.ignoreNames) == 0 {
		j := skipValue(s, i)
		return append(dst, s[i:j]...), j
	}
	switch s[i] {
	case '{':
		dst = append(dst, '{')
		i++
		n := 0
		for s[i] != '}' {
			nameEnd := skipString(s, i)
			name := s[i+1 : nameEnd-1]
			next, drop := f.advance(mask, d, name, -1)
			if drop || f.ignoredName(name) {
				i = skipValue(s, nameEnd+1)
			} else {
				if n > 0 {
					dst = append(dst, ',')
				}
				n++
				dst = append(dst, s[i:nameEnd+1]...)
				dst, i = f.filter(dst, s, nameEnd+1, d+1, next)
			}
			if s[i] == ',' {
				i++
			}
		}
		return append(dst, '}'), i + 1
	case '[':
		dst = append(dst, '[')
		i++
		for idx := 0; s[i] != ']'; idx++ {
			if idx > 0 {
				dst = append(dst, ',')
			}
			next, _ := f.advance(mask, d, "", idx)
			dst, i = f.filter(dst, s, i, d+1, next)
			if s[i] == ',' {
				i++
			}
		}
		return append(dst, ']'), i + 1
	}
	j := skipValue(s, i)
	return append(dst, s[i:j]...), j
}

func (f *Fingerprinter) ignoredName(name string) bool {
	for _, n := range f.ignoreNames {
		if n == name {
			return true
		}
	}
	return false
}

// skip returns the offset just past the value at s[i] of the text walked;
// a container of the body as sent is looked up in st.ends.
func (st *state) skip(s string, i int) int {
	if st.raw && (s[i] == '{' || s[i] == '[') {
		return int(st.ends[i])
	}
	return skipValue(s, i)
}

// skipValue returns the offset just past the value at s[i] of a valid JSON
// text.
func skipValue(s string, i int) int {
	switch s[i] {
	case '"':
		return skipString(s, i)
	case '{', '[':
		depth := 0
		for ; i < len(s); i++ {
			switch s[i] {
			case '"':
				i = skipString(s, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return i
	}
	for i < len(s) && s[i] != ',' && s[i] != '}' && s[i] != ']' && !isSpace(s[i]) {
		i++
	}
	return i
}

// skipCanonical returns the offset just past the value at s[i] of the body
// as sent, and whether the value is a scalar already in canonical form: a
// literal, or a string without escapes (a valid string holds no raw control
// characters, quotes or backslashes, and canonical strings keep the rest as
// it is).
func (st *state) skipCanonical(s string, i int) (int, bool) {
	switch s[i] {
	case 't', 'f', 'n':
		return skipValue(s, i), true
	case '"':
		end, escaped := scanString(s, i)
		return end, !escaped
	}
	return st.skip(s, i), false
}

// appendUnescaped appends the text of tok, a valid JSON string token,
// unescaped.
func appendUnescaped(dst []byte, tok string) []byte {
	for i := 1; i < len(tok)-1; {
		c := tok[i]
		if c != '\\' {
			dst = append(dst, c)
			i++
			continue
		}
		c = tok[i+1]
		i += 2
		switch c {
		case 'b':
			c = '\b'
		case 'f':
			c = '\f'
		case 'n':
			c = '\n'
		case 'r':
			c = '\r'
		case 't':
			c = '\t'
		case 'u':
			r := hex4(tok[i:])
			i += 4
			if utf16.IsSurrogate(r) { // a valid string: the low half follows
				r = utf16.DecodeRune(r, hex4(tok[i+2:]))
				i += 6
			}
			dst = utf8.AppendRune(dst, r)
			continue
		}
		dst = append(dst, c) // '"', '\\' or '/'
	}
	return dst
}

// hex4 decodes the four hexadecimal digits that start s.
func hex4(s string) rune {
	var r rune
	for _, c := range []byte(s[:4]) {
		switch {
		case c >= 'a':
			c -= 'a' - 10
		case c >= 'A':
			c -= 'A' - 10
		default:
			c -= '0'
		}
		r = r<<4 | rune(c)
	}
	return r
}

// scanString returns the offset just past the string at s[i] and whether
// it holds an escape.
func scanString(s string, i int) (int, bool) {
	escaped := false
	for i++; ; i++ {
		switch s[i] {
		case '\\':
			escaped = true
			i++
		case '"':
			return i + 1, escaped
		}
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// skipSpace returns the offset of the first byte from s[i] on that is not
// JSON whitespace.
func skipSpace(s string, i int) int {
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	return i
}

// skipString returns the offset just past the string at s[i].
func skipString(s string, i int) int {
	for i++; ; i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
}

func unsafeString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

func unsafeBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }
