package fuzz

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
)

// kind is the type of a JSON value.
type kind uint8

const (
	kindNull kind = iota
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

// value is a JSON value as a Go tree: the generators build it, the spelling
// renderer writes it in many ways, and the model renders its canonical form.
// Member order is kept; names within one object are distinct Go strings.
type value struct {
	kind    kind
	b       bool
	num     decimal
	s       string // kindString: valid UTF-8, so no lone surrogate
	elems   []value
	members []member
}

type member struct {
	name string
	val  value
}

// decimal is an exact number: 0.digits × 10^point, with digits free of
// leading and trailing zeros. Zero has no digits (and point 0); neg on zero
// records -0, which equals 0.
type decimal struct {
	neg    bool
	digits string
	point  int64
}

func (d decimal) isZero() bool { return d.digits == "" }

// equal compares exact decimal values: -0 equals 0.
func (d decimal) equal(e decimal) bool {
	if d.isZero() || e.isZero() {
		return d.isZero() && e.isZero()
	}
	return d == e
}

// sciExp is the exponent of the number in scientific notation d.ddd×10^x,
// which Exact mode bounds by ±999,999,999.
func (d decimal) sciExp() int64 { return d.point - 1 }

// literal writes d as a plain JSON number, readable by strconv.ParseFloat.
func (d decimal) literal() string {
	if d.isZero() {
		return "0"
	}
	s := "0." + d.digits + "e" + strconv.FormatInt(d.point, 10)
	if d.neg {
		s = "-" + s
	}
	return s
}

// expSaturation bounds the exponents parseDecimal keeps exactly; larger ones
// are out of the range of both number modes for any input of sane length.
const expSaturation = 1_000_000_000_000_000

// parseDecimal reads a literal of the JSON number grammar (RFC 8259 §6). It
// is the test's own reading, independent of package canonical's.
func parseDecimal(lit string) (decimal, bool) {
	var d decimal
	i := 0
	if i < len(lit) && lit[i] == '-' {
		d.neg = true
		i++
	}
	start := i
	for i < len(lit) && isDigit(lit[i]) {
		i++
	}
	intPart := lit[start:i]
	if intPart == "" || len(intPart) > 1 && intPart[0] == '0' {
		return decimal{}, false
	}
	var frac string
	if i < len(lit) && lit[i] == '.' {
		i++
		f := i
		for i < len(lit) && isDigit(lit[i]) {
			i++
		}
		if i == f {
			return decimal{}, false
		}
		frac = lit[f:i]
	}
	var exp int64
	if i < len(lit) && (lit[i] == 'e' || lit[i] == 'E') {
		i++
		neg := false
		if i < len(lit) && (lit[i] == '+' || lit[i] == '-') {
			neg = lit[i] == '-'
			i++
		}
		f := i
		for ; i < len(lit) && isDigit(lit[i]); i++ {
			if exp < expSaturation {
				exp = exp*10 + int64(lit[i]-'0')
			}
		}
		if i == f {
			return decimal{}, false
		}
		if neg {
			exp = -exp
		}
	}
	if i != len(lit) {
		return decimal{}, false
	}
	digits := strings.TrimLeft(intPart+frac, "0")
	lead := int64(len(intPart) + len(frac) - len(digits))
	d.point = int64(len(intPart)) + exp - lead
	d.digits = strings.TrimRight(digits, "0")
	if d.digits == "" {
		d.point = 0
	}
	return d, true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func mustDecimal(lit string) decimal {
	d, ok := parseDecimal(lit)
	if !ok {
		panic("bad literal " + lit)
	}
	return d
}

// String renders v compactly, so that failure reports show JSON.
func (v value) String() string { return string(appendPlain(nil, v)) }

// appendPlain writes v as compact JSON in member order, with Exact numbers
// and the canonical string escapes.
func appendPlain(dst []byte, v value) []byte {
	switch v.kind {
	case kindNull:
		return append(dst, "null"...)
	case kindBool:
		return strconv.AppendBool(dst, v.b)
	case kindNumber:
		return appendLayout(dst, v.num)
	case kindString:
		return appendCanonicalString(dst, v.s)
	case kindArray:
		dst = append(dst, '[')
		for i, e := range v.elems {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendPlain(dst, e)
		}
		return append(dst, ']')
	}
	dst = append(dst, '{')
	for i, m := range v.members {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendCanonicalString(dst, m.name)
		dst = append(dst, ':')
		dst = appendPlain(dst, m.val)
	}
	return append(dst, '}')
}

// countNumbers returns how many numbers v holds.
func countNumbers(v value) int {
	switch v.kind {
	case kindNumber:
		return 1
	case kindArray:
		n := 0
		for _, e := range v.elems {
			n += countNumbers(e)
		}
		return n
	case kindObject:
		n := 0
		for _, m := range v.members {
			n += countNumbers(m.val)
		}
		return n
	}
	return 0
}

// decodeTree reads one JSON text with encoding/json's tokenizer (UseNumber)
// into a tree and reports whether some object repeats a name (the tree then
// keeps both members). It is faithful only for input that is valid UTF-8
// without lone surrogate escapes: encoding/json replaces those with U+FFFD.
func decodeTree(b []byte) (v value, dup bool, err error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	v, err = decodeValue(dec, &dup)
	if err != nil {
		return value{}, false, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return value{}, false, errors.New("data after the value")
	}
	return v, dup, nil
}

func decodeValue(dec *json.Decoder, dup *bool) (value, error) {
	tok, err := dec.Token()
	if err != nil {
		return value{}, err
	}
	switch t := tok.(type) {
	case nil:
		return value{kind: kindNull}, nil
	case bool:
		return value{kind: kindBool, b: t}, nil
	case json.Number:
		d, ok := parseDecimal(string(t))
		if !ok {
			return value{}, errors.New("bad number " + string(t))
		}
		return value{kind: kindNumber, num: d}, nil
	case string:
		return value{kind: kindString, s: t}, nil
	case json.Delim:
		if t == '[' {
			v := value{kind: kindArray, elems: []value{}}
			for dec.More() {
				e, err := decodeValue(dec, dup)
				if err != nil {
					return value{}, err
				}
				v.elems = append(v.elems, e)
			}
			_, err := dec.Token()
			return v, err
		}
		v := value{kind: kindObject, members: []member{}}
		seen := map[string]bool{}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return value{}, err
			}
			name := tok.(string)
			if seen[name] {
				*dup = true
			}
			seen[name] = true
			e, err := decodeValue(dec, dup)
			if err != nil {
				return value{}, err
			}
			v.members = append(v.members, member{name, e})
		}
		_, err := dec.Token()
		return v, err
	}
	return value{}, errors.New("unexpected token")
}
