package fuzz

import (
	"math/rand"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// speller writes one spelling of a tree: the same value as another client,
// proxy or SDK might write it on a retry. Each aspect is on or off per
// speller, so some spellings change one thing only.
type speller struct {
	r       *rand.Rand
	shuffle bool // members in random order
	space   bool // whitespace between tokens
	escapes bool // characters escaped at random: \u00e9, \/, surrogate pairs, upper-case hex
	numbers bool // numbers re-spelled with the same value: 1.0, 1e0, 10E-1, 0.1e1
}

// newSpeller returns a speller with each aspect on with probability 3/4.
func newSpeller(r *rand.Rand) *speller {
	on := func() bool { return r.Intn(4) > 0 }
	return &speller{r: r, shuffle: on(), space: on(), escapes: on(), numbers: on()}
}

// spell returns a spelling of v.
func (s *speller) spell(v value) []byte {
	dst := s.ws(nil)
	dst = s.value(dst, v)
	return s.ws(dst)
}

var spaces = []string{"", " ", "\n", "\t", "\r\n", "  ", " \t\n\r "}

func (s *speller) ws(dst []byte) []byte {
	if !s.space || s.r.Intn(2) == 0 {
		return dst
	}
	return append(dst, spaces[s.r.Intn(len(spaces))]...)
}

func (s *speller) value(dst []byte, v value) []byte {
	switch v.kind {
	case kindNumber:
		return s.number(dst, v.num)
	case kindString:
		return s.string(dst, v.s)
	case kindArray:
		dst = append(dst, '[')
		dst = s.ws(dst)
		for i, e := range v.elems {
			if i > 0 {
				dst = append(dst, ',')
				dst = s.ws(dst)
			}
			dst = s.value(dst, e)
			dst = s.ws(dst)
		}
		return append(dst, ']')
	case kindObject:
		dst = append(dst, '{')
		dst = s.ws(dst)
		order := make([]int, len(v.members))
		for i := range order {
			order[i] = i
		}
		if s.shuffle {
			order = s.r.Perm(len(order))
		}
		for i, j := range order {
			if i > 0 {
				dst = append(dst, ',')
				dst = s.ws(dst)
			}
			dst = s.string(dst, v.members[j].name)
			dst = s.ws(dst)
			dst = append(dst, ':')
			dst = s.ws(dst)
			dst = s.value(dst, v.members[j].val)
			dst = s.ws(dst)
		}
		return append(dst, '}')
	}
	return appendPlain(dst, v)
}

// string writes str with every character spelled in one of its ways.
func (s *speller) string(dst []byte, str string) []byte {
	if !s.escapes {
		return appendCanonicalString(dst, str)
	}
	dst = append(dst, '"')
	for _, c := range str {
		must := c == '"' || c == '\\' || c < 0x20
		switch s.r.Intn(4) {
		case 0, 1:
			if !must {
				dst = utf8.AppendRune(dst, c)
				continue
			}
			fallthrough
		case 2:
			if e := shortEscape(c); e != 0 {
				dst = append(dst, '\\', e)
				continue
			}
		}
		if c >= 0x10000 {
			hi, lo := utf16.EncodeRune(c)
			dst = s.uescape(dst, hi)
			dst = s.uescape(dst, lo)
		} else {
			dst = s.uescape(dst, c)
		}
	}
	return append(dst, '"')
}

func shortEscape(c rune) byte {
	switch c {
	case '"', '\\', '/':
		return byte(c)
	case '\b':
		return 'b'
	case '\f':
		return 'f'
	case '\n':
		return 'n'
	case '\r':
		return 'r'
	case '\t':
		return 't'
	}
	return 0
}

// uescape writes \uXXXX with each hex digit in random case.
func (s *speller) uescape(dst []byte, c rune) []byte {
	dst = append(dst, '\\', 'u')
	for shift := 12; shift >= 0; shift -= 4 {
		h := "0123456789abcdef"[c>>shift&0xf]
		if h >= 'a' && s.r.Intn(2) == 0 {
			h -= 'a' - 'A'
		}
		dst = append(dst, h)
	}
	return dst
}

// number writes d with the point moved, the exponent adjusted, zeros added
// where they do not change the value, and the exponent in any of its forms.
func (s *speller) number(dst []byte, d decimal) []byte {
	if !s.numbers {
		return appendLayout(dst, d)
	}
	r := s.r
	if d.neg && !d.isZero() || d.isZero() && r.Intn(3) == 0 {
		dst = append(dst, '-')
	}
	k := int64(len(d.digits))
	// The literal is mantissa × 10^e, the mantissa's point m digits after
	// the start of d.digits.
	m := int64(r.Intn(int(k)+7)) - 3
	if d.isZero() {
		m = 1
	}
	e := d.point - m
	digits := d.digits
	if d.isZero() {
		digits = "0"
		e = int64(r.Intn(7) - 3)
		if r.Intn(10) == 0 {
			e = r.Int63()
		}
	}
	point := false
	switch {
	case m <= 0:
		dst = append(dst, '0', '.')
		for range -m {
			dst = append(dst, '0')
		}
		dst = append(dst, digits...)
		point = true
	case m < int64(len(digits)):
		dst = append(append(append(dst, digits[:m]...), '.'), digits[m:]...)
		point = true
	default:
		dst = append(dst, digits...)
		for range m - int64(len(digits)) {
			dst = append(dst, '0')
		}
		if r.Intn(3) == 0 {
			dst = append(dst, '.', '0')
			point = true
		}
	}
	if point {
		for range r.Intn(3) {
			dst = append(dst, '0')
		}
	}
	if e == 0 && r.Intn(2) == 0 {
		return dst
	}
	dst = append(dst, "eE"[r.Intn(2)])
	switch {
	case e < 0:
		dst = append(dst, '-')
	case r.Intn(2) == 0:
		dst = append(dst, '+')
	case e == 0 && r.Intn(2) == 0:
		dst = append(dst, '-')
	}
	for range r.Intn(3) {
		dst = append(dst, '0')
	}
	return strconv.AppendUint(dst, uint64(abs64(e)), 10)
}
