package jsonwire

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"slices"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
)

// frame is one open array or object. The parser keeps an explicit stack of
// frames instead of recursing, so depth costs heap, never goroutine stack.
type frame struct {
	object  bool
	inValue bool     // a member value or an element is being read
	count   int      // members or elements finished so far
	first   int      // objects: index in encoder.members of the first member
	cur     int      // objects: index in encoder.members of the current member
	open    int      // offset in dst of the '[' or '{'
	follow  bool     // Select: the selector is told about the values inside
	leave   bool     // Select: the selector is to leave the value being read
	names   []string // Select: the only names of members to tell it about, if not nil
}

// member locates one member of an open object in the output. Its value
// ends where the next member's comma is, or for the last member where the
// object ends (memberEnd).
//
// A member takes 24 bytes, as a wide object holds millions of them.
type member struct {
	start  int    // offset in dst of the name's opening quote
	srcOff int64  // offset in src of the name's opening quote
	name   uint32 // length of the quoted name in dst, and plainName
	pend   int32  // len(encoder.pend) when the member began
}

// plainName marks in member.name a plain name: one without escapes and
// code points from U+E000 on, so its bytes sort as its UTF-16 code units.
const plainName = 1 << 31

// nameEnd returns the offset in dst just past the name's closing quote.
func (m *member) nameEnd() int { return m.start + int(m.name&^plainName) }

func (m *member) plain() bool { return m.name&plainName != 0 }

// encoder is the reusable state of one Append call.
type encoder struct {
	opts  Options
	check bool // Validate: keep only the names of open objects in dst
	// Select: the selector, and while a value it asked for is written
	// out (emitting), where in dst it starts and the depth it is at.
	sel               Selector
	emitting          bool
	emitAt, emitDepth int
	leaveTop          bool   // the selector is to leave the top-level value
	name              []byte // the name of the member entered
	value             []byte // the value written out
	frames            []frame
	members           []member
	scratch           []byte      // the output of reorder
	names             []byte      // Validate's output: the names of open objects
	digits            []byte      // significant digits of a number split by a point
	order             []int32     // the sorted positions of an object's members
	keys              []sortKey   // sortByKeys' scratch
	packed            []uint64    // sortByKeys' first pass
	radix             []uint64    // radixSort's other buffer
	pend              []pending   // objects whose members are out of order
	spans             []span      // their members, in sorted order
	emit              []emitFrame // reorder's stack
}

var encoderPool = sync.Pool{New: func() any { return new(encoder) }}

// maxRetained keeps a pooled encoder from pinning the memory of one huge
// input forever.
const maxRetained = 1 << 20

func getEncoder(o Options) *encoder {
	e := encoderPool.Get().(*encoder)
	e.opts = o
	return e
}

func putEncoder(e *encoder) {
	if cap(e.scratch) > maxRetained {
		e.scratch = nil
	}
	if cap(e.names) > maxRetained {
		e.names = nil
	}
	if cap(e.value) > maxRetained {
		e.value = nil
	}
	if cap(e.members) > maxRetained/32 {
		e.members = nil
	}
	if cap(e.frames) > maxRetained/32 {
		e.frames = nil
	}
	if cap(e.digits)+cap(e.order)*4+cap(e.keys)*16+cap(e.packed)*8+cap(e.radix)*8+cap(e.pend)*32+cap(e.spans)*24+cap(e.emit)*32 > maxRetained {
		e.digits, e.order, e.keys, e.packed, e.radix, e.pend, e.spans, e.emit = nil, nil, nil, nil, nil, nil, nil, nil
	}
	e.frames = e.frames[:0]
	e.members = e.members[:0]
	e.pend = e.pend[:0]
	e.spans = e.spans[:0]
	e.opts, e.check, e.sel, e.emitting, e.leaveTop = Options{}, false, nil, false, false
	encoderPool.Put(e)
}

const (
	stValue = iota // expecting a value
	stName         // expecting a member name
	stAfter        // a value has ended
)

func (e *encoder) run(dst, src []byte) ([]byte, error) {
	if bytes.HasPrefix(src, []byte("\xef\xbb\xbf")) {
		return dst, e.fail(dst, 0, ErrSyntax, "byte-order mark is not allowed")
	}
	var err error
	base := len(dst)
	i := SkipSpace(src, 0)
	state := stValue
	for {
		switch state {
		case stValue:
			if i >= len(src) {
				return dst, e.eof(dst, src)
			}
			follow, names := false, []string(nil)
			if e.sel != nil && !e.emitting && (len(e.frames) == 0 || e.frames[len(e.frames)-1].follow) {
				follow, names = e.enter(dst, src[i])
			}
			switch c := src[i]; c {
			case '{', '[':
				if len(e.frames) >= e.opts.MaxDepth {
					return dst, e.fail(dst, i, ErrTooDeep, "nesting deeper than "+itoa(int64(e.opts.MaxDepth)))
				}
				end := c + 2 // '}' and ']' follow '{' and '[' by two in ASCII
				dst = append(dst, c)
				j := SkipSpace(src, i+1)
				if j < len(src) && src[j] == end {
					dst = append(dst, end)
					if e.check {
						dst = dst[:len(dst)-2]
					}
					i = j + 1
					state = stAfter
					continue
				}
				e.frames = append(e.frames, frame{object: c == '{', inValue: c == '[', first: len(e.members), open: len(dst) - 1, follow: follow, names: names})
				i = j
				if c == '{' {
					state = stName
				}
			case '"':
				if dst, i, _, err = e.appendQuoted(dst, src, i, !e.check); err != nil {
					return dst, err
				}
				state = stAfter
			case 't', 'f', 'n':
				lit := literalFalse
				switch c {
				case 't':
					lit = literalTrue
				case 'n':
					lit = literalNull
				}
				if !bytes.HasPrefix(src[i:], lit) {
					if bytes.HasPrefix(lit, src[i:]) {
						return dst, e.eof(dst, src)
					}
					return dst, e.fail(dst, i, ErrSyntax, "invalid literal "+QuoteExcerpt(token(src[i:])))
				}
				if !e.check {
					dst = append(dst, lit...)
				}
				i += len(lit)
				state = stAfter
			case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
				mark := len(dst)
				if dst, i, err = e.appendNumber(dst, src, i); err != nil {
					return dst, err
				}
				if e.check {
					dst = dst[:mark]
				}
				state = stAfter
			default:
				return dst, e.fail(dst, i, ErrSyntax, "invalid character "+quoteByte(c)+" at start of value")
			}

		case stName:
			top := &e.frames[len(e.frames)-1]
			if i >= len(src) {
				return dst, e.eof(dst, src)
			}
			if src[i] != '"' {
				if top.count > 0 && src[i] == '}' {
					return dst, e.fail(dst, i, ErrSyntax, "trailing comma before '}'")
				}
				return dst, e.fail(dst, i, ErrSyntax, "invalid character "+quoteByte(src[i])+", want a member name")
			}
			if top.count > 0 {
				dst = append(dst, ',')
			}
			start := len(dst)
			j := i
			plain := false
			if dst, j, plain, err = e.appendQuoted(dst, src, i, true); err != nil {
				return dst, err
			}
			if len(dst)-start >= plainName {
				return dst, e.fail(dst, i, ErrTooLarge, "member name of more than 2 GiB")
			}
			nm := uint32(len(dst) - start)
			if plain {
				nm |= plainName
			}
			top.cur = len(e.members)
			top.inValue = true
			e.members = append(e.members, member{start: start, srcOff: int64(i), name: nm, pend: int32(len(e.pend))})
			i = SkipSpace(src, j)
			if i >= len(src) {
				return dst, e.eof(dst, src)
			}
			if src[i] != ':' {
				return dst, e.fail(dst, i, ErrSyntax, "invalid character "+quoteByte(src[i])+" after member name, want ':'")
			}
			dst = append(dst, ':')
			i = SkipSpace(src, i+1)
			state = stValue

		case stAfter:
			if e.sel != nil && (e.emitting || e.leaving()) {
				dst = e.leave(dst)
			}
			i = SkipSpace(src, i)
			if len(e.frames) == 0 {
				if i < len(src) {
					return dst, e.fail(dst, i, ErrSyntax, "invalid character "+quoteByte(src[i])+" after top-level value")
				}
				if len(e.pend) > 0 {
					dst = e.reorder(dst, base)
				}
				return dst, nil
			}
			top := &e.frames[len(e.frames)-1]
			top.inValue = false
			if i >= len(src) {
				return dst, e.eof(dst, src)
			}
			switch c := src[i]; {
			case c == ',':
				top.count++
				i = SkipSpace(src, i+1)
				if top.object {
					state = stName
					continue
				}
				if i < len(src) && src[i] == ']' {
					return dst, e.fail(dst, i, ErrSyntax, "trailing comma before ']'")
				}
				dst = append(dst, ',')
				top.inValue = true
				state = stValue
			case c == '}' && top.object:
				np := len(e.pend)
				if dst, err = e.sortMembers(dst, top.first, top.open); err != nil {
					return dst, err
				}
				e.members = e.members[:top.first]
				e.frames = e.frames[:len(e.frames)-1]
				dst = append(dst, '}')
				if e.check {
					dst = dst[:top.open] // the names are checked
				}
				if len(e.pend) > np {
					e.pend[np].end = len(dst)
				}
				i++
			case c == ']' && !top.object:
				e.frames = e.frames[:len(e.frames)-1]
				dst = append(dst, ']')
				if e.check {
					dst = dst[:top.open]
				}
				i++
			case top.object:
				return dst, e.fail(dst, i, ErrSyntax, "invalid character "+quoteByte(c)+" after object member, want ',' or '}'")
			default:
				return dst, e.fail(dst, i, ErrSyntax, "invalid character "+quoteByte(c)+" after array element, want ',' or ']'")
			}
		}
	}
}

var (
	literalTrue  = []byte("true")
	literalFalse = []byte("false")
	literalNull  = []byte("null")
)

// token returns the run of letters and digits at the start of b, for messages.
func token(b []byte) []byte {
	n := 0
	for n < len(b) && n < excerptMax && (b[n]|0x20 >= 'a' && b[n]|0x20 <= 'z' || b[n] >= '0' && b[n] <= '9') {
		n++
	}
	if n == 0 && len(b) > 0 {
		n = 1
	}
	return b[:n]
}

// sortMembers orders the members of the object at dst[open] whose first
// member is e.members[first] by their names' UTF-16 code units (RFC 8785
// §3.2.3) and rejects duplicate names. Objects that are already sorted, the
// common case for machine-written JSON, are only compared; the others are
// recorded in e.pend for reorder.
func (e *encoder) sortMembers(dst []byte, first, open int) ([]byte, error) {
	ms := e.members[first:]
	if len(ms) < 2 {
		return dst, nil
	}
	if e.check && len(ms) < minKeySort {
		// Validate of a small object: only duplicates matter.
		for j := 1; j < len(ms); j++ {
			for k := range j {
				if ms[k].name&^plainName == ms[j].name&^plainName && bytes.Equal(name(dst, &ms[k]), name(dst, &ms[j])) {
					return dst, e.duplicate(dst, ms[j])
				}
			}
		}
		return dst, nil
	}
	sorted := true
	for j := 1; j < len(ms); j++ {
		c := compareMembers(dst, &ms[j-1], &ms[j])
		if c == 0 {
			// In a sorted prefix equal names are adjacent, so this is the
			// earliest repeated name in the input.
			return dst, e.duplicate(dst, ms[j])
		}
		if c > 0 {
			sorted = false
			break
		}
	}
	if sorted {
		return dst, nil
	}
	// Sort positions, not members: they are small and ties order by input.
	var ord []int32
	dup := int32(-1)
	if len(ms) >= minKeySort {
		dup = e.sortByKeys(dst, ms)
		ord = e.order
	} else {
		ord = e.order[:0]
		for j := range ms {
			ord = append(ord, int32(j))
		}
		e.order = ord
		less := func(a, b int32) bool {
			c := compareMembers(dst, &ms[a], &ms[b])
			return c < 0 || c == 0 && a < b
		}
		for j := 1; j < len(ord); j++ {
			o := ord[j]
			k := j
			for ; k > 0 && less(o, ord[k-1]); k-- {
				ord[k] = ord[k-1]
			}
			ord[k] = o
		}
		for j := 1; j < len(ord); j++ {
			// Equal names are adjacent, the later one second.
			if a, b := ord[j-1], ord[j]; bytes.Equal(name(dst, &ms[a]), name(dst, &ms[b])) && (dup < 0 || b < dup) {
				dup = b
			}
		}
	}
	if dup >= 0 {
		return dst, e.duplicate(dst, ms[dup])
	}
	if e.check {
		return dst, nil
	}
	// A small object with nothing pending inside is cheapest to reorder in
	// place now. Moving a large one now would move every nested object
	// again at each enclosing unsorted object, quadratic in depth: record
	// the order and write everything once at the end (reorder). The bound
	// keeps the moves of any byte below smallObject/6, the levels of
	// nesting that fit in it. The outermost object has nothing around it,
	// so it too is reordered in place, whatever its size.
	end := len(dst)
	if lo := ms[0].start; (end-lo <= smallObject || len(e.frames) == 1) && int32(len(e.pend)) == ms[0].pend {
		s := slices.Grow(e.scratch[:0], end-lo)
		for j, o := range ord {
			if j > 0 {
				s = append(s, ',')
			}
			s = append(s, dst[ms[o].start:memberEnd(ms, int(o), end)]...)
		}
		copy(dst[lo:end], s)
		e.scratch = s
		return dst, nil
	}
	p := pending{start: open, first: len(e.spans), n: len(ord)}
	e.spans = slices.Grow(e.spans, len(ord))
	for _, o := range ord {
		// Pending objects inside a member were recorded while it was read.
		after := int32(len(e.pend))
		if int(o)+1 < len(ms) {
			after = ms[o+1].pend
		}
		e.spans = append(e.spans, span{ms[o].start, memberEnd(ms, int(o), end), after > ms[o].pend})
	}
	e.pend = append(e.pend, p)
	return dst, nil
}

// memberEnd returns the offset in dst just past the value of ms[j], the
// members of an object whose last value ends at end.
func memberEnd(ms []member, j, end int) int {
	if j+1 < len(ms) {
		return ms[j+1].start - 1 // before the comma
	}
	return end
}

// smallObject is the size up to which an unsorted object is reordered in
// place when it closes.
const smallObject = 256

// pending is an object whose members are out of order in the first-pass
// output: its offsets there, and its members' spans in sorted order
// (encoder.spans[first:first+n]).
type pending struct {
	start, end int // the '{' and just past the '}'
	first, n   int
}

// span is one member in the first-pass output: name, colon and value, and
// whether a pending object lies inside it.
type span struct {
	start, end int
	inner      bool
}

// reorder writes the first-pass output dst[base:] again with the members
// of every pending object in sorted order. Each byte is copied twice, and
// nesting is handled with an explicit stack.
func (e *encoder) reorder(dst []byte, base int) []byte {
	pend := e.pend
	slices.SortFunc(pend, func(a, b pending) int { return cmp.Compare(a.start, b.start) })
	// next returns the first pending object starting at or after pos.
	next := func(pos int) int {
		k, _ := slices.BinarySearchFunc(pend, pos, func(p pending, pos int) int { return cmp.Compare(p.start, pos) })
		return k
	}
	out := slices.Grow(e.scratch[:0], len(dst)-base)
	stack := append(e.emit[:0], emitFrame{obj: -1, pos: base, end: len(dst)})
	for len(stack) > 0 {
		top := len(stack) - 1
		f := stack[top]
		if f.obj >= 0 { // the members of a pending object, one at a time
			p := &pend[f.obj]
			if f.pos == p.n {
				out = append(out, '}')
				stack = stack[:top]
				continue
			}
			if f.pos > 0 {
				out = append(out, ',')
			}
			m := e.spans[p.first+f.pos]
			stack[top].pos++
			if !m.inner {
				out = append(out, dst[m.start:m.end]...)
				continue
			}
			stack = append(stack, emitFrame{obj: -1, pos: m.start, end: m.end})
			continue
		}
		// A span: copy it up to the next pending object inside it. After
		// one pending object, the next in start order is usually the next
		// one after it (a sibling), so try that before searching.
		k := f.hint
		if k <= 0 || k >= len(pend) || pend[k].start < f.pos || pend[k-1].start >= f.pos {
			k = next(f.pos)
		}
		if k == len(pend) || pend[k].start >= f.end {
			out = append(out, dst[f.pos:f.end]...)
			stack = stack[:top]
			continue
		}
		out = append(out, dst[f.pos:pend[k].start]...)
		out = append(out, '{')
		stack[top].pos, stack[top].hint = pend[k].end, k+1
		stack = append(stack, emitFrame{obj: k})
	}
	copy(dst[base:], out)
	e.scratch, e.emit = out, stack
	return dst
}

// emitFrame is one step of reorder: a span of the first-pass output
// (obj < 0) from pos to end, or the members of pend[obj] from the pos-th.
type emitFrame struct {
	obj, pos, end int
	hint          int // spans: a guess of the next pending object
}

// name returns the escaped name of m in dst, without quotes.
func name(dst []byte, m *member) []byte { return dst[m.start+1 : m.nameEnd()-1] }

// compareMembers orders two members by name.
func compareMembers(dst []byte, a, b *member) int {
	if a.plain() && b.plain() {
		na, nb := name(dst, a), name(dst, b)
		if len(na) > 0 && len(nb) > 0 && na[0] != nb[0] {
			// Most names differ at once; skip the call.
			return int(na[0]) - int(nb[0])
		}
		return bytes.Compare(na, nb)
	}
	return compareNames(name(dst, a), name(dst, b))
}

// compareNames compares two canonically escaped names by the UTF-16 code
// units of their unescaped text.
func compareNames(a, b []byte) int {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		ca, cb := a[i], b[j]
		if ca == cb && ca < utf8.RuneSelf && ca != '\\' {
			i++
			j++
			continue
		}
		ra, na := decodeCanonical(a[i:])
		rb, nb := decodeCanonical(b[j:])
		if ra != rb {
			return cmp.Compare(utf16Order(ra), utf16Order(rb))
		}
		i += na
		j += nb
	}
	return cmp.Compare(len(a)-i, len(b)-j)
}

// utf16Order maps a code point to a key that orders like its UTF-16 code
// units: U+E000 to U+FFFF sort after the surrogate pairs of astral code
// points, everything else sorts by code point.
func utf16Order(r rune) rune {
	if r >= 0xe000 && r <= 0xffff {
		return r + 0x110000
	}
	return r
}

// decodeCanonical decodes one character of a canonically escaped string.
func decodeCanonical(b []byte) (rune, int) {
	c := b[0]
	if c >= utf8.RuneSelf {
		return utf8.DecodeRune(b)
	}
	if c != '\\' || len(b) < 2 {
		return rune(c), 1
	}
	switch b[1] {
	case 'b':
		return '\b', 2
	case 't':
		return '\t', 2
	case 'n':
		return '\n', 2
	case 'f':
		return '\f', 2
	case 'r':
		return '\r', 2
	case 'u':
		if len(b) >= 6 {
			r, _ := hex4(b[2:6])
			return r, 6
		}
	}
	return rune(b[1]), 2
}

// hex4 decodes four hexadecimal digits.
func hex4(b []byte) (rune, bool) {
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// hasZero is non-zero when some byte of x is zero.
func hasZero(x uint64) uint64 { return (x - lsb) &^ x & msb }

// safeASCII marks the bytes that a canonical string keeps as they are and
// that need no check: printable ASCII but the quote and the backslash.
var safeASCII = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// appendQuoted reads the string starting at src[start] (a quote) and, if
// keep, appends its canonical form. It returns the offset just past the closing quote and
// whether the string is plain (see plainName).
func (e *encoder) appendQuoted(dst, src []byte, start int, keep bool) ([]byte, int, bool, error) {
	plain := true
	if keep {
		dst = append(dst, '"')
	}
	i := start + 1
	run := i
	for {
		// Skip eight plain bytes at a time: none below 0x20, no '"' or
		// '\\', none from 0x80 on.
		for i+8 <= len(src) {
			x := binary.LittleEndian.Uint64(src[i:])
			if (x-lsb*0x20)&^x&msb|hasZero(x^(lsb*'"'))|hasZero(x^(lsb*'\\'))|x&msb != 0 {
				break
			}
			i += 8
		}
		for i < len(src) && safeASCII[src[i]] {
			i++
		}
		if i >= len(src) {
			return dst, i, false, e.eof(dst, src)
		}
		switch c := src[i]; {
		case c == '"':
			if keep {
				dst = append(dst, src[run:i]...)
				dst = append(dst, '"')
			}
			return dst, i + 1, plain, nil
		case c == '\\':
			if keep {
				dst = append(dst, src[run:i]...)
			}
			r, n, err := e.unescape(dst, src, i)
			if err != nil {
				return dst, i, false, err
			}
			if r < 0x20 || r == '"' || r == '\\' || r >= 0xe000 {
				plain = false
			}
			if keep {
				dst = appendRune(dst, r)
			}
			i += n
			run = i
		case c < 0x20:
			return dst, i, false, e.fail(dst, i, ErrSyntax, "raw control character "+quoteByte(c)+" in string")
		default:
			r, size := utf8.DecodeRune(src[i:])
			if r == utf8.RuneError && size == 1 {
				return dst, i, false, e.fail(dst, i, ErrInvalidUTF8, "invalid UTF-8 "+quoteByte(c)+" in string")
			}
			if e.opts.RejectNoncharacters && isNoncharacter(r) {
				return dst, i, false, e.fail(dst, i, ErrNoncharacter, "noncharacter "+quoteRune(r)+" in string")
			}
			if r >= 0xe000 {
				plain = false
			}
			i += size
		}
	}
}

// unescape decodes the escape sequence at src[i] (a backslash), joining a
// surrogate pair into one code point, and returns its length in src.
func (e *encoder) unescape(dst, src []byte, i int) (rune, int, error) {
	if i+1 >= len(src) {
		return 0, 0, e.eof(dst, src)
	}
	switch src[i+1] {
	case '"', '\\', '/':
		return rune(src[i+1]), 2, nil
	case 'b':
		return '\b', 2, nil
	case 'f':
		return '\f', 2, nil
	case 'n':
		return '\n', 2, nil
	case 'r':
		return '\r', 2, nil
	case 't':
		return '\t', 2, nil
	case 'u':
	default:
		return 0, 0, e.fail(dst, i, ErrSyntax, "invalid escape "+QuoteExcerpt(src[i:i+2])+" in string")
	}
	if i+6 > len(src) {
		if validHexPrefix(src[i+2:]) {
			return 0, 0, e.eof(dst, src)
		}
		return 0, 0, e.fail(dst, i, ErrSyntax, "invalid escape "+QuoteExcerpt(src[i:])+" in string")
	}
	r, ok := hex4(src[i+2 : i+6])
	if !ok {
		return 0, 0, e.fail(dst, i, ErrSyntax, "invalid escape "+QuoteExcerpt(src[i:i+6])+" in string")
	}
	n := 6
	if utf16.IsSurrogate(r) {
		r2 := rune(-1)
		if r < 0xdc00 && i+12 <= len(src) && src[i+6] == '\\' && src[i+7] == 'u' {
			r2, _ = hex4(src[i+8 : i+12])
		}
		if r2 < 0xdc00 || r2 > 0xdfff {
			return 0, 0, e.fail(dst, i, ErrInvalidSurrogate, "lone surrogate "+QuoteExcerpt(src[i:i+6])+" in string")
		}
		r = utf16.DecodeRune(r, r2)
		n = 12
	}
	if e.opts.RejectNoncharacters && isNoncharacter(r) {
		return 0, 0, e.fail(dst, i, ErrNoncharacter, "noncharacter "+quoteRune(r)+" in string")
	}
	return r, n, nil
}

func validHexPrefix(b []byte) bool {
	for _, c := range b {
		if _, ok := hex4([]byte{c, '0', '0', '0'}); !ok {
			return false
		}
	}
	return true
}

// isNoncharacter reports the 66 Unicode noncharacters.
func isNoncharacter(r rune) bool {
	return r >= 0xfdd0 && r <= 0xfdef || r&0xfffe == 0xfffe
}

// appendRune appends r escaped as RFC 8785 §3.2.2.2 requires: the two-letter
// escapes where JSON has them, \u00xx for other controls, UTF-8 otherwise.
func appendRune(dst []byte, r rune) []byte {
	switch {
	case r == '"' || r == '\\':
		return append(dst, '\\', byte(r))
	case r >= 0x20 && r < utf8.RuneSelf:
		return append(dst, byte(r))
	case r >= utf8.RuneSelf:
		return utf8.AppendRune(dst, r)
	}
	switch r {
	case '\b':
		return append(dst, '\\', 'b')
	case '\t':
		return append(dst, '\\', 't')
	case '\n':
		return append(dst, '\\', 'n')
	case '\f':
		return append(dst, '\\', 'f')
	case '\r':
		return append(dst, '\\', 'r')
	}
	const hex = "0123456789abcdef"
	return append(dst, '\\', 'u', '0', '0', hex[r>>4], hex[r&0xf])
}

// AppendString appends s as a canonical JSON string, quotes included, and
// returns the extended slice. It returns dst unchanged and an [*Error]
// wrapping [ErrInvalidUTF8] if s is not valid UTF-8; the error's Offset is
// the offset in s.
func AppendString(dst []byte, s string) ([]byte, error) {
	n := len(dst)
	dst = append(dst, '"')
	run := 0
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case safeASCII[c]:
			i++
		case c < utf8.RuneSelf:
			dst = append(dst, s[run:i]...)
			dst = appendRune(dst, rune(c))
			i++
			run = i
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				return dst[:n], &Error{Offset: int64(i), Err: &problem{ErrInvalidUTF8, "invalid UTF-8 " + quoteByte(c) + " in string"}}
			}
			i += size
		}
	}
	dst = append(dst, s[run:]...)
	return append(dst, '"'), nil
}
