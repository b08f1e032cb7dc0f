package fingerprint

import (
	"math/bits"
	"strconv"
	"unsafe"

	"github.com/idemprint/idemprint/canonical"
	"github.com/idemprint/idemprint/internal/jsonwire"
)

// node is one step of the trie of walked paths. Compile builds it so that
// one walk over the canonical body serves every path, instead of one search
// per path.
type node struct {
	seg   segment // the step that leads here; zero at the root
	kids  []int   // indexes in Fingerprinter.nodes
	ends  []int   // walked paths that end here
	below []int   // a "#" node: the walked paths that go through it
	// The kids that a member name leads to, and their names (two kids may
	// share one: "1" and "\1").
	named     []int
	kidsNames []string
}

// buildTrie indexes the walked paths: the Intent paths, or without them the
// Required paths, which are only checked.
func (f *Fingerprinter) buildTrie() {
	f.walked = f.intent
	if len(f.intent) == 0 {
		f.walked = f.required
	}
	segs := 0
	for _, p := range f.walked {
		segs += len(p.segs)
	}
	f.nodes = make([]node, 1, 1+segs)
	type edge struct {
		from int
		key  string
	}
	kid := make(map[edge]int, segs) // a node's child by segment: no scan of wide nodes
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
		if f.nodes[i].kidsNames == nil {
			// Empty, not nil: for jsonwire, nil would be every name.
			f.nodes[i].kidsNames = make([]string, 0)
		}
	}
}

// selectIntent fills st.out with what each walked path selects in body and
// st.holes with where it found nothing, and checks the Required paths.
// With Intent paths the body as sent is read once: the encoder validates
// it and writes out only the values the paths select (Enter, Value and
// Leave below); without, the canonical body st.body is walked.
func (f *Fingerprinter) selectIntent(st *state, body []byte) error {
	n := len(f.walked)
	st.out = grow(st.out, n)
	st.holes = grow(st.holes, n)
	st.where, st.levels, st.stack, st.active = st.where[:0], st.levels[:0], st.stack[:0], st.active[:0]
	switch {
	case len(f.intent) > 0 && len(body) > 0:
		if err := jsonwire.Select(f.wire, body, st); err != nil {
			return fromWire(err)
		}
	case len(st.body) > 0 && n > 0:
		f.visit(st, unsafeString(st.body), 0, 0, 0, f.allIgnorePaths())
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
			first, _ := strconv.Unquote(h[:jsonwire.SkipString(h, 0)]) // a canonical string
			return missing(first)
		}
	}
	return nil
}

// fromWire returns the encoder's error as the *canonical.Error that
// canonical would return: the two structs have the same fields.
func fromWire(err error) error {
	if we, ok := err.(*jsonwire.Error); ok {
		return (*canonical.Error)(we)
	}
	return err
}

// level is one value of the body as sent that the walk of the Intent
// paths is in: the trie nodes that reach it (st.active[first:end]), its
// depth and the Ignore paths that still match, and for an array that is
// followed where its "#" bookkeeping starts in st.levels (else -1).
type level struct {
	first, end int
	d          int
	mask       uint64
	hash       int
}

// Enter is the walk's step into a value of the body as sent: the value is
// reached by the trie nodes of its container that name or index leads to.
// A value that some walked path ends at is asked for whole (Value walks it
// further); otherwise a container is followed while paths go on below it.
func (st *state) Enter(name []byte, index int, first byte) (jsonwire.Action, []string) {
	f := st.f
	lv := level{first: len(st.active), hash: -1}
	if len(st.stack) == 0 {
		st.active = append(st.active, 0) // the root
		lv.mask = f.allIgnorePaths()
	} else {
		p := &st.stack[len(st.stack)-1]
		lv.d = p.d + 1
		if index < 0 {
			nm := unsafeString(name)
			for _, ni := range st.active[p.first:p.end] {
				n := &f.nodes[ni]
				for x, kn := range n.kidsNames {
					if kn == nm {
						st.active = append(st.active, n.named[x])
					}
				}
			}
			if len(st.active) == lv.first {
				return jsonwire.Skip, nil // a member no path names
			}
			if p.mask != 0 {
				lv.mask, _ = f.advance(p.mask, p.d, nm, -1)
			}
		} else {
			h := p.hash
			for _, ni := range st.active[p.first:p.end] {
				for _, ki := range f.nodes[ni].kids {
					k := &f.nodes[ki]
					switch {
					case k.seg.all:
						for bi, pi := range k.below {
							if st.levels[h+2*bi] > 0 {
								st.out[pi] = append(st.out[pi], ',')
							}
							st.levels[h+2*bi+1] = len(st.out[pi])
						}
						h += 2 * len(k.below)
						st.active = append(st.active, ki)
					case k.seg.index == index:
						st.active = append(st.active, ki)
					}
				}
			}
			if len(st.active) == lv.first {
				return jsonwire.Skip, nil // an element no path indexes
			}
			if p.mask != 0 {
				lv.mask, _ = f.advance(p.mask, p.d, "", index)
			}
		}
		st.where = append(st.where, index)
	}
	lv.end = len(st.active)
	emit, follow := false, false
	for _, ni := range st.active[lv.first:] {
		n := &f.nodes[ni]
		emit = emit || len(n.ends) > 0
		follow = follow || len(n.kids) > 0
	}
	action, names := jsonwire.Pass, []string(nil)
	switch {
	case emit:
		action = jsonwire.Emit
	case follow && (first == '{' || first == '['):
		action = jsonwire.Follow
		if first == '{' && lv.end-lv.first == 1 {
			names = f.nodes[st.active[lv.first]].kidsNames // not nil: see buildTrie
		}
		if first == '[' {
			lv.hash = len(st.levels)
			st.eachAll(lv, func(pi int) {
				st.out[pi] = append(st.out[pi], '[')
				st.levels = append(st.levels, 0, 0) // elements written, mark
			})
		}
	}
	st.stack = append(st.stack, lv)
	return action, names
}

// Value walks the canonical form of the value last entered for every
// trie node that reaches it.
func (st *state) Value(canon []byte) {
	lv := &st.stack[len(st.stack)-1]
	for _, ni := range st.active[lv.first:lv.end] {
		if n := &st.f.nodes[ni]; len(n.kids) == 0 && lv.mask == 0 && len(st.f.ignoreNames) == 0 {
			for _, pi := range n.ends { // nothing to remove from it or to walk
				st.out[pi] = append(st.out[pi], canon...)
			}
			continue
		}
		st.f.visit(st, unsafeString(canon), 0, ni, lv.d, lv.mask)
	}
}

// Leave closes the value last entered: a followed array ends its "#"
// paths, and an element of one that selected nothing for a "#" path is a
// hole.
func (st *state) Leave() {
	f := st.f
	top := len(st.stack) - 1
	lv := st.stack[top]
	st.stack = st.stack[:top]
	if lv.hash >= 0 {
		st.eachAll(lv, func(pi int) { st.out[pi] = append(st.out[pi], ']') })
		st.levels = st.levels[:lv.hash]
	}
	if top > 0 {
		if p := st.stack[top-1]; p.hash >= 0 { // an element of a followed array
			h := p.hash
			st.eachAll(p, func(pi int) {
				c := &st.levels[h]
				if len(st.out[pi]) > st.levels[h+1] {
					*c++
				} else {
					// Nothing selected in this element: a hole.
					if *c > 0 {
						st.out[pi] = st.out[pi][:len(st.out[pi])-1]
					}
					f.addHole(st, pi, lv.d)
				}
				h += 2
			})
		}
		st.where = st.where[:len(st.where)-1]
	}
	st.active = st.active[:lv.first]
}

// eachAll calls fn for every walked path that goes through a "#" below
// the trie nodes of lv, in the order of st.levels.
func (st *state) eachAll(lv level, fn func(pi int)) {
	for _, ni := range st.active[lv.first:lv.end] {
		for _, ki := range st.f.nodes[ni].kids {
			for _, pi := range st.f.nodes[ki].below {
				fn(pi)
			}
		}
	}
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

// visit walks the value at s[i] of a canonical text, reached at trie node
// ni by a concrete path of d segments (st.where) that the Ignore paths in
// mask match so far. It appends the canonical form of what each walked
// path selects to st.out and returns the offset just past the value.
func (f *Fingerprinter) visit(st *state, s string, i, ni, d int, mask uint64) int {
	n := &f.nodes[ni]
	end := -1
	for _, pi := range n.ends {
		st.out[pi], end = f.filter(st.out[pi], s, i, d, mask)
	}
	if len(n.kids) == 0 || s[i] != '{' && s[i] != '[' {
		if end < 0 {
			end = jsonwire.SkipValue(s, i)
		}
		return end
	}
	wl := len(st.where)
	j := i + 1
	if s[i] == '{' {
		// A name selects from an object only.
		for s[j] != '}' {
			nameEnd := jsonwire.SkipString(s, j)
			name := s[j+1 : nameEnd-1]
			v := nameEnd + 1 // past the colon
			ve := -1
			for x, kn := range n.kidsNames {
				if kn != name {
					continue
				}
				next, _ := f.advance(mask, d, name, -1)
				st.where = append(st.where[:wl], -1)
				ve = f.visit(st, s, v, n.named[x], d+1, next)
			}
			st.where = st.where[:wl]
			if ve < 0 {
				ve = jsonwire.SkipValue(s, v)
			}
			j = ve
			if s[j] == ',' {
				j++
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
		st.where = append(st.where[:wl], idx)
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
			ve = jsonwire.SkipValue(s, j)
		}
		j = ve
		if s[j] == ',' {
			j++
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
// st.where, whose path has d segments: the concrete path is pi's own, with
// the indexes walked in place of its "#" segments.
func (f *Fingerprinter) addHole(st *state, pi, d int) {
	st.tmp = st.tmp[:0]
	for k, seg := range f.walked[pi].segs {
		if k < d && st.where[k] >= 0 {
			st.tmp = appendIndex(st.tmp, st.where[k])
		} else {
			st.tmp = appendKey(st.tmp, seg.key)
		}
	}
	if len(st.holes[pi]) > 0 {
		st.holes[pi] = append(st.holes[pi], ',')
	}
	st.holes[pi], _ = jsonwire.AppendString(st.holes[pi], unsafeString(st.tmp)) // path text: UTF-8
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
		j := jsonwire.SkipValue(s, i)
		return append(dst, s[i:j]...), j
	}
	switch s[i] {
	case '{':
		dst = append(dst, '{')
		i++
		n := 0
		for s[i] != '}' {
			nameEnd := jsonwire.SkipString(s, i)
			name := s[i+1 : nameEnd-1]
			next, drop := f.advance(mask, d, name, -1)
			if drop || f.ignoredName(name) {
				i = jsonwire.SkipValue(s, nameEnd+1)
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
	j := jsonwire.SkipValue(s, i)
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

func unsafeString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
