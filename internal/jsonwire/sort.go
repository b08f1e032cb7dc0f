package jsonwire

import (
	"cmp"
	"encoding/binary"
	"math"
	"math/bits"
	"slices"
	"unicode/utf8"
)

// Sorting the members of a wide object. Comparing two members through
// their positions reads both names from wherever they lie in the output,
// a cache miss per comparison once the object outgrows the cache. Instead
// each member gets a key: eight bytes of its name, read in input order,
// packed into an integer whose order is the names' order. The positions
// are sorted by key; only members whose keys tie read their names again,
// eight bytes further on (plain names) or in full (compareMembers).

// sortKey is one member being sorted: eight bytes of its name, from
// sortKeyAt, and its position in the object.
type sortKey struct {
	key uint64
	idx int32
}

// minKeySort is the size from which an object is sorted by keys; smaller
// ones sort by comparing members directly.
const minKeySort = 13

// sortByKeys sorts the positions of ms by name, ties by position, into
// e.order, and returns the position of the first member (in input order)
// whose name repeats an earlier one, or -1.
//
// Each member becomes one integer: a window of the leading bits of its key
// above its position, so plain integer sorting orders them (sortPacked).
// Members whose windows tie get the next window of their names, in place.
func (e *encoder) sortByKeys(dst []byte, ms []member) int32 {
	posBits := bits.Len(uint(len(ms) - 1))
	w := min(64-posBits, 56) // a window and its bit offset fit in 64 bits
	packed := slices.Grow(e.packed[:0], len(ms))
	for j := range ms {
		m := &ms[j]
		k := plainWindow(dst, m, 0, w)
		if !m.plain() {
			k = escapedKey(name(dst, m)) >> (64 - w)
		}
		packed = append(packed, k<<posBits|uint64(j))
	}
	e.order = slices.Grow(e.order[:0], len(ms))
	dup := e.sortPacked(dst, ms, packed, 0, w, posBits)
	if cap(packed)*8 > maxRetained {
		packed, e.radix = nil, nil // let the memory go before the reordering
	}
	e.packed = packed
	if cap(e.keys)*16 > maxRetained {
		e.keys = nil
	}
	return dup
}

// sortPacked sorts packed, members whose names agree on their first bit
// bits, appends their positions in order to e.order, and returns the first
// repeated name's position or -1.
func (e *encoder) sortPacked(dst []byte, ms []member, packed []uint64, bit, w, posBits int) int32 {
	pos := uint64(1)<<posBits - 1
	if len(packed) < minRadixSort {
		slices.Sort(packed)
	} else {
		e.radix = slices.Grow(e.radix[:0], len(packed))[:len(packed)]
		radixSort(packed, e.radix, posBits)
	}
	dup := int32(-1)
	for i := 0; i < len(packed); {
		j := i + 1
		for j < len(packed) && packed[j]&^pos == packed[i]&^pos {
			j++
		}
		if j-i == 1 {
			e.order = append(e.order, int32(packed[i]&pos))
			i = j
			continue
		}
		run := packed[i:j]
		i = j
		plain, longer := true, false
		for _, p := range run {
			m := &ms[p&pos]
			plain = plain && m.plain()
			longer = longer || 8*(m.nameEnd()-m.start-2) > bit+w
		}
		var d int32 = -1
		switch {
		case !plain:
			// Keys of escaped names are only a first guess: compare in
			// full.
			keys := e.keys[:0]
			for _, p := range run {
				k := int32(p & pos)
				keys = append(keys, sortKey{memberKey(dst, &ms[k]), k})
			}
			e.keys = keys
			d = e.sortRun(dst, ms, keys, 0)
			for _, k := range e.keys {
				e.order = append(e.order, k.idx)
			}
		case !longer:
			// Plain names hold no NUL, so equal windows that cover both
			// names are equal names: in input order already.
			d = int32(run[1] & pos)
			for _, p := range run {
				e.order = append(e.order, int32(p&pos))
			}
		default:
			for x, p := range run {
				k := p & pos
				run[x] = plainWindow(dst, &ms[k], bit+w, w)<<posBits | k
			}
			d = e.sortPacked(dst, ms, run, bit+w, w, posBits)
		}
		if d >= 0 && (dup < 0 || d < dup) {
			dup = d
		}
	}
	return dup
}

// minRadixSort is the size from which sortPacked sorts by radix.
const minRadixSort = 1 << 12

// radixSort sorts a by its bits from lo up, eight at a time from the
// lowest (least significant digit first), each pass stable, so elements
// equal there keep their order: the positions below lo, ascending. tmp
// must be as long as a.
func radixSort(a, tmp []uint64, lo int) {
	src, dst := a, tmp
	for shift := lo; shift < 64; shift += 8 {
		var count [256]int
		for _, v := range src {
			count[v>>shift&0xff]++
		}
		if count[src[0]>>shift&0xff] == len(src) {
			continue // one digit for all: nothing to move
		}
		sum := 0
		for d, c := range count {
			count[d] = sum
			sum += c
		}
		for _, v := range src {
			d := v >> shift & 0xff
			dst[count[d]] = v
			count[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &a[0] {
		copy(a, src)
	}
}

// plainWindow returns w bits (w <= 56) of m's plain name from bit on,
// zero padded.
func plainWindow(dst []byte, m *member, bit, w int) uint64 {
	x := plainKey(dst, m, bit/8) << (bit % 8)
	return x >> (64 - w)
}

func compareKeys(a, b sortKey) int {
	if a.key != b.key {
		return cmp.Compare(a.key, b.key)
	}
	return cmp.Compare(a.idx, b.idx)
}

// sortRun sorts keys, whose names agree before byte 8×level, and returns
// the first repeated name's position or -1.
func (e *encoder) sortRun(dst []byte, ms []member, keys []sortKey, level int) int32 {
	slices.SortFunc(keys, compareKeys)
	dup := int32(-1)
	for i := 0; i < len(keys); {
		j := i + 1
		for j < len(keys) && keys[j].key == keys[i].key {
			j++
		}
		if j-i > 1 {
			if d := e.resolveTie(dst, ms, keys[i:j], level); d >= 0 && (dup < 0 || d < dup) {
				dup = d
			}
		}
		i = j
	}
	return dup
}

// resolveTie orders a run of members whose keys at level are equal.
func (e *encoder) resolveTie(dst []byte, ms []member, run []sortKey, level int) int32 {
	off := 8 * (level + 1) // the names agree on their first off bytes (plain) or on their keys
	plain, longer := true, false
	for _, k := range run {
		m := &ms[k.idx]
		plain = plain && m.plain()
		longer = longer || m.nameEnd()-m.start-2 > off
	}
	if !plain {
		// Keys of escaped names are only a first guess: compare in full.
		slices.SortFunc(run, func(a, b sortKey) int {
			if c := compareMembers(dst, &ms[a.idx], &ms[b.idx]); c != 0 {
				return c
			}
			return cmp.Compare(a.idx, b.idx)
		})
		dup := int32(-1)
		for j := 1; j < len(run); j++ {
			if a, b := run[j-1].idx, run[j].idx; compareMembers(dst, &ms[a], &ms[b]) == 0 && (dup < 0 || b < dup) {
				dup = b
			}
		}
		return dup
	}
	if !longer {
		// Plain names hold no NUL, so equal keys that cover both names
		// are equal names: already in input order.
		return run[1].idx
	}
	for j := range run {
		m := &ms[run[j].idx]
		run[j].key = plainKey(dst, m, off)
	}
	return e.sortRun(dst, ms, run, level+1)
}

// memberKey returns the first key of m's name: its first eight bytes in
// an encoding whose byte order is the order of UTF-16 code units.
func memberKey(dst []byte, m *member) uint64 {
	if m.plain() {
		return plainKey(dst, m, 0)
	}
	return escapedKey(name(dst, m))
}

// plainKey packs the bytes of m's plain name from off on, big-endian, zero
// padded: they order as UTF-16 code units do (see plainName).
func plainKey(dst []byte, m *member, off int) uint64 {
	from, to := m.start+1+off, m.nameEnd()-1
	if from >= to {
		return 0
	}
	if from+8 <= len(dst) {
		// Read eight bytes at once and clear those past the name.
		x := binary.BigEndian.Uint64(dst[from:])
		if n := to - from; n < 8 {
			x &^= math.MaxUint64 >> (8 * n)
		}
		return x
	}
	var b [8]byte
	copy(b[:], dst[from:to])
	return binary.BigEndian.Uint64(b[:])
}

// escapedKey is plainKey for a name with escapes or code points from
// U+E000 on: the key of its unescaped UTF-8, with the lead bytes of U+E000
// to U+FFFF (0xEE, 0xEF) moved above those of the astral code points
// (0xF0 to 0xF4), as their code units sort after the surrogates. Equal
// keys say nothing; compareMembers decides them.
func escapedKey(nm []byte) uint64 {
	var b [8]byte
	n := 0
	for i := 0; i < len(nm) && n < len(b); {
		r, size := decodeCanonical(nm[i:])
		i += size
		var u [utf8.UTFMax]byte
		w := utf8.EncodeRune(u[:], r)
		if r >= 0xe000 && r <= 0xffff {
			u[0] += 0xf5 - 0xee
		}
		n += copy(b[n:], u[:w])
	}
	return binary.BigEndian.Uint64(b[:])
}
