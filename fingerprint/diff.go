package fingerprint

import (
	"bytes"
	"errors"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/idemprint/idemprint/canonical"
	"github.com/idemprint/idemprint/internal/jsonwire"
)

// MaxDifferences is the most differences [Diff] lists. Two documents may
// differ at any number of places; Diff stops at the first MaxDifferences,
// so a list of exactly this length may have been cut.
const MaxDifferences = 100

// Difference is one way in which two intent documents differ.
type Difference struct {
	// Part is "method", "path", "header", "query" or "body".
	Part string
	// Path names what differs: for "body", a path in the documented syntax
	// (an intent path, or a path below one or below the whole body, such as
	// "destination.iban" or "items.2.qty"); for "header" and "query", the
	// name; empty for "method" and "path".
	Path string
	// First and Second are the JSON values in the first and the second
	// document, as written there (Diff's arguments, not copies); nil means
	// absent.
	First, Second []byte
	// FirstAbsent and SecondAbsent list, for an intent path through "#",
	// the concrete paths of elements in which it matched nothing.
	FirstAbsent, SecondAbsent []string
}

// Diff compares two intent documents, as [Fingerprinter.AppendIntent]
// writes them, and lists what differs, in the order method, path, headers
// (by name), query (by name), body: the whole body, then the intent paths
// in the order of their text. Documents of equal requests have no
// differences. Values that are objects on both sides (and arrays of equal
// length outside "#" paths) are compared member by member, so a difference
// names the innermost path; members in the order of their names, elements
// in order. At most [MaxDifferences] differences are listed: the first ones
// in this order.
//
// Diff reads each document once and visits each value at most once, so
// its time is linear in the length of the two documents, however deep they
// nest. A document that is not valid JSON, that repeats a member name or
// that lacks the members of an intent document is an error.
func Diff(a, b []byte) ([]Difference, error) {
	var d differ
	return d.diff(a, b)
}

// differ holds the state of one Diff call.
type differ struct {
	ta, tb  tree
	out     []Difference
	where   []pathStep // the path below base being compared
	members []member   // the member lists of the objects being compared
	base    string     // the intent path, or "" for the whole body
	work    int        // values visited and bytes compared: see TestDiffWork
}

// pathStep is one segment of the path being compared: a member name
// (decoded) or, when index >= 0, an array index.
type pathStep struct {
	name  string
	index int
}

// full reports whether the list has reached MaxDifferences.
func (d *differ) full() bool { return len(d.out) >= MaxDifferences }

func (d *differ) diff(a, b []byte) ([]Difference, error) {
	if err := d.ta.parse(a); err != nil {
		return nil, err
	}
	if err := d.tb.parse(b); err != nil {
		return nil, err
	}
	da, err := d.ta.document()
	if err != nil {
		return nil, err
	}
	db, err := d.tb.document()
	if err != nil {
		return nil, err
	}
	for _, part := range [...]struct {
		name   string
		ia, ib int
	}{{"method", da.method, db.method}, {"path", da.path, db.path}} {
		va, vb := d.ta.raw(part.ia), d.tb.raw(part.ib)
		d.work += min(len(va), len(vb))
		if !bytes.Equal(va, vb) && !d.full() {
			d.out = append(d.out, Difference{Part: part.name, First: va, Second: vb})
		}
	}
	for _, part := range [...]struct {
		name   string
		ia, ib int
	}{{"header", da.headers, db.headers}, {"query", da.query, db.query}} {
		ma, err := d.ta.appendMembers(nil, part.ia)
		if err != nil {
			return nil, err
		}
		mb, err := d.tb.appendMembers(nil, part.ib)
		if err != nil {
			return nil, err
		}
		for i, j := 0, 0; (i < len(ma) || j < len(mb)) && !d.full(); {
			name, ca, cb := d.next(ma, mb, &i, &j)
			va, vb := d.ta.raw(ca), d.tb.raw(cb)
			d.work += min(len(va), len(vb))
			if !bytes.Equal(va, vb) {
				d.out = append(d.out, Difference{Part: part.name, Path: strings.Clone(name), First: va, Second: vb})
			}
		}
	}
	if da.body >= 0 || db.body >= 0 {
		if err := d.values(da.body, db.body); err != nil {
			return nil, err
		}
	}
	if err := d.intents(da, db); err != nil {
		return nil, err
	}
	if len(d.out) == 0 {
		return nil, nil
	}
	return d.out, nil
}

// intents compares the intent paths: their values and, for paths through
// "#", the elements in which they matched nothing.
func (d *differ) intents(da, db document) error {
	var lists [4][]member
	for i, idx := range [...]int{da.intent, db.intent, da.absent, db.absent} {
		t := &d.ta
		if i%2 == 1 {
			t = &d.tb
		}
		var err error
		if lists[i], err = t.appendMembers(nil, idx); err != nil {
			return err
		}
	}
	var pos [4]int
	for !d.full() {
		// The next path is the least name at the four cursors.
		var k string
		found := false
		for i, l := range lists {
			if pos[i] < len(l) && (!found || l[pos[i]].name < k) {
				k, found = l[pos[i]].name, true
			}
		}
		if !found {
			return nil
		}
		var at [4]int // the value of k in each list, or -1
		for i, l := range lists {
			at[i] = -1
			if pos[i] < len(l) && l[pos[i]].name == k {
				at[i] = l[pos[i]].val
				pos[i]++
				d.work += len(k)
			}
		}
		if multiValue(k) {
			ha, err := d.ta.holes(at[2], k)
			if err != nil {
				return err
			}
			hb, err := d.tb.holes(at[3], k)
			if err != nil {
				return err
			}
			va, vb := d.ta.raw(at[0]), d.tb.raw(at[1])
			d.work += min(len(va), len(vb))
			if !bytes.Equal(va, vb) || !slices.Equal(ha, hb) {
				d.out = append(d.out, Difference{Part: "body", Path: strings.Clone(k), First: va, Second: vb, FirstAbsent: ha, SecondAbsent: hb})
			}
			continue
		}
		d.base = strings.Clone(k)
		err := d.values(at[0], at[1])
		d.base = ""
		if err != nil {
			return err
		}
	}
	return nil
}

// next returns the least name at the cursors i and j of two sorted member
// lists, with its value in each (-1 when absent), and advances past it.
func (d *differ) next(ma, mb []member, i, j *int) (name string, ca, cb int) {
	ca, cb = -1, -1
	switch {
	case *j == len(mb) || *i < len(ma) && ma[*i].name < mb[*j].name:
		name, ca = ma[*i].name, ma[*i].val
		*i++
	case *i == len(ma) || mb[*j].name < ma[*i].name:
		name, cb = mb[*j].name, mb[*j].val
		*j++
	default:
		name, ca, cb = ma[*i].name, ma[*i].val, mb[*j].val
		*i++
		*j++
	}
	d.work += len(name)
	return name, ca, cb
}

// values compares the value ia of the first document with ib of the
// second (-1: absent) at the path d.base, d.where, and appends their
// differences.
func (d *differ) values(ia, ib int) error {
	if d.full() || ia < 0 && ib < 0 {
		return nil
	}
	d.work++
	va, vb := d.ta.raw(ia), d.tb.raw(ib)
	if ia >= 0 && ib >= 0 && va[0] == vb[0] {
		switch va[0] {
		case '{':
			return d.objects(ia, ib)
		case '[':
			if d.ta.vals[ia].n == d.tb.vals[ib].n {
				return d.arrays(ia, ib)
			}
		default:
			d.work += min(len(va), len(vb))
			if bytes.Equal(va, vb) {
				return nil
			}
		}
	}
	d.out = append(d.out, Difference{Part: "body", Path: d.path(), First: va, Second: vb})
	return nil
}

// objects compares two objects member by member. Their member lists stay
// in d.members above mark until it returns; the comparisons below it
// append theirs after them.
func (d *differ) objects(ia, ib int) error {
	mark := len(d.members)
	var err error
	if d.members, err = d.ta.appendMembers(d.members, ia); err != nil {
		return err
	}
	mid := len(d.members)
	if d.members, err = d.tb.appendMembers(d.members, ib); err != nil {
		return err
	}
	end := len(d.members)
	ma, mb := d.members[mark:mid:mid], d.members[mid:end:end]
	wl := len(d.where)
	for i, j := 0, 0; (i < len(ma) || j < len(mb)) && err == nil && !d.full(); {
		name, ca, cb := d.next(ma, mb, &i, &j)
		d.where = append(d.where[:wl], pathStep{name: name, index: -1})
		err = d.values(ca, cb)
	}
	d.where, d.members = d.where[:wl], d.members[:mark]
	return err
}

func (d *differ) arrays(ia, ib int) error {
	wl := len(d.where)
	ca, cb := ia+1, ib+1
	var err error
	for i := 0; i < d.ta.vals[ia].n && err == nil && !d.full(); i++ {
		d.where = append(d.where[:wl], pathStep{index: i})
		err = d.values(ca, cb)
		ca, cb = d.ta.vals[ca].next, d.tb.vals[cb].next
	}
	d.where = d.where[:wl]
	return err
}

// path returns the path being compared in the documented syntax. It is
// built only for a difference, so its cost counts once per difference.
func (d *differ) path() string {
	var b strings.Builder
	b.WriteString(d.base)
	for _, s := range d.where {
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		if s.index >= 0 {
			b.WriteString(strconv.Itoa(s.index))
		} else {
			writeSegment(&b, s.name)
		}
	}
	d.work += b.Len()
	return b.String()
}

// writeSegment writes a member name as one path segment, escaping the
// characters that the path syntax reads specially.
func writeSegment(b *strings.Builder, k string) {
	for i := 0; i < len(k); i++ {
		if strings.IndexByte(`.|*?#@!\[]{}`, k[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(k[i])
	}
}

// tree is a JSON text parsed once into its values in document order, so
// that comparing two texts never reads a value twice.
type tree struct {
	src  []byte
	vals []value
}

// value is one JSON value of a tree: src[start:end]. A container's
// children follow it, each one's subtree ending where the next begins.
type value struct {
	start, end int
	name       int // for a member: where its name (a JSON string) starts; else -1
	next       int // the index just past this value's subtree
	n          int // a container's number of children
}

// member is a member of an object: its decoded name and the index of its
// value.
type member struct {
	name string
	val  int
}

var errNotDocument = errors.New("fingerprint: not an intent document")

// parse reads src, which must be one valid JSON text.
func (t *tree) parse(src []byte) error {
	if jsonwire.Validate(jsonwire.Options{Numbers: jsonwire.Exact, MaxDepth: canonical.DefaultMaxDepth}, src) != nil {
		return errNotDocument
	}
	t.src, t.vals = src, slices.Grow(t.vals[:0], countValues(src))
	var open []int // the containers being read
	name := -1     // the name of the member whose value comes next
	i := jsonwire.SkipSpace(src, 0)
	for {
		// src[i] starts a value.
		idx := len(t.vals)
		t.vals = append(t.vals, value{start: i, name: name})
		if len(open) > 0 {
			t.vals[open[len(open)-1]].n++
		}
		switch src[i] {
		case '{', '[':
			open = append(open, idx)
			i = jsonwire.SkipSpace(src, i+1)
		case '"':
			i = jsonwire.SkipString(src, i)
			t.close(idx, i)
			i = jsonwire.SkipSpace(src, i)
		default:
			for i < len(src) && !strings.ContainsRune(",]} \t\n\r", rune(src[i])) {
				i++
			}
			t.close(idx, i)
			i = jsonwire.SkipSpace(src, i)
		}
		// Close the containers that end here; stop before the next value.
	closing:
		for {
			if len(open) == 0 {
				return nil
			}
			top := open[len(open)-1]
			switch src[i] {
			case ',':
				i = jsonwire.SkipSpace(src, i+1)
				break closing
			case '}', ']':
				t.close(top, i+1)
				open = open[:len(open)-1]
				i = jsonwire.SkipSpace(src, i+1)
			default: // the first value of a container
				break closing
			}
		}
		name = -1
		if src[t.vals[open[len(open)-1]].start] == '{' {
			name = i
			i = jsonwire.SkipSpace(src, jsonwire.SkipString(src, i))
			i = jsonwire.SkipSpace(src, i+1) // past the colon
		}
	}
}

// countValues returns the number of values in the valid JSON text src, or
// one more when it has an empty array: one for the text, and one for each
// comma and opening bracket outside strings.
func countValues(src []byte) int {
	n := 1
	for i := 0; i < len(src); i++ {
		switch src[i] {
		case '"':
			i = jsonwire.SkipString(src, i) - 1
		case ',', '[', '{':
			n++
		}
	}
	return n
}

// close ends the value idx at end, which is also where its subtree ends.
func (t *tree) close(idx, end int) {
	t.vals[idx].end = end
	t.vals[idx].next = len(t.vals)
}

// raw returns the text of value i, or nil for -1.
func (t *tree) raw(i int) []byte {
	if i < 0 {
		return nil
	}
	v := &t.vals[i]
	return t.src[v.start:v.end:v.end]
}

// appendMembers appends the members of the object i (none for -1) to
// dst, sorted by name; an intent document's are sorted already. A repeated
// name is an error.
func (t *tree) appendMembers(dst []member, i int) ([]member, error) {
	if i < 0 {
		return dst, nil
	}
	if t.src[t.vals[i].start] != '{' {
		return dst, errNotDocument
	}
	n := len(dst)
	dst = slices.Grow(dst, t.vals[i].n)
	sorted := true
	for c, k := i+1, 0; k < t.vals[i].n; c, k = t.vals[c].next, k+1 {
		name, err := t.name(c)
		if err != nil {
			return dst[:n], err
		}
		if k > 0 && name <= dst[len(dst)-1].name {
			sorted = false
		}
		dst = append(dst, member{name, c})
	}
	if !sorted {
		ms := dst[n:]
		slices.SortFunc(ms, func(a, b member) int { return strings.Compare(a.name, b.name) })
		for k := 1; k < len(ms); k++ {
			if ms[k].name == ms[k-1].name {
				return dst[:n], errNotDocument
			}
		}
	}
	return dst, nil
}

// name returns the decoded name of the member whose value is i. Without
// escapes it shares the source's bytes; Diff copies what it keeps.
func (t *tree) name(i int) (string, error) {
	q := t.src[t.vals[i].name:jsonwire.SkipString(t.src, t.vals[i].name)]
	if bytes.IndexByte(q, '\\') < 0 {
		q = q[1 : len(q)-1]
		return unsafe.String(unsafe.SliceData(q), len(q)), nil
	}
	return string(jsonwire.AppendUnquoted(nil, q)), nil
}

// holes returns the concrete paths of the "absent" list i (none for -1)
// other than p itself, which stands for "absent altogether" and shows as a
// nil value.
func (t *tree) holes(i int, p string) ([]string, error) {
	if i < 0 {
		return nil, nil
	}
	if t.src[t.vals[i].start] != '[' {
		return nil, errNotDocument
	}
	var out []string
	for c, k := i+1, 0; k < t.vals[i].n; c, k = t.vals[c].next, k+1 {
		q := t.raw(c)
		if len(q) == 0 {
			continue // what parse reads inside an empty array
		}
		if q[0] != '"' {
			return nil, errNotDocument
		}
		if h := string(jsonwire.AppendUnquoted(nil, q)); h != p {
			out = append(out, h)
		}
	}
	return out, nil
}

// document holds the indexes of the members of an intent document, -1
// where absent.
type document struct {
	absent, body, headers, intent, method, path, query int
}

func (t *tree) document() (document, error) {
	d := document{-1, -1, -1, -1, -1, -1, -1}
	top, err := t.appendMembers(nil, 0)
	if err != nil {
		return d, err
	}
	for _, m := range top {
		switch m.name {
		case "absent":
			d.absent = m.val
		case "body":
			d.body = m.val
		case "headers":
			d.headers = m.val
		case "intent":
			d.intent = m.val
		case "method":
			d.method = m.val
		case "path":
			d.path = m.val
		case "query":
			d.query = m.val
		}
	}
	if d.method < 0 || d.path < 0 {
		return d, errNotDocument
	}
	for _, i := range [...]int{d.absent, d.headers, d.intent, d.query} {
		if i >= 0 && t.src[t.vals[i].start] != '{' {
			return d, errNotDocument
		}
	}
	return d, nil
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
