package fuzz

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/idemprint/idemprint/canonical"
)

// This file is the test's own model of RFC 8785 and of the strictness rules
// of package canonical, written from the specifications rather than from the
// package's code, plus the decode-and-compare oracles.

// maxExactExponent is the documented bound of Exact mode on the exponent of
// a number in scientific notation.
const maxExactExponent = 999_999_999

// growthPerNumber bounds how much longer than its input a canonical output
// may be, per number in the input. Strings never grow (the input must already
// escape what the canonical form escapes, and the canonical form escapes
// nothing else), whitespace only goes, and the worst number is a literal of
// four bytes such as 1e20 that Number::toString writes as 21 digits.
const growthPerNumber = 17

// canonModel appends the canonical form of v in the given number mode. It
// reports canonical.ErrNumberRange for a number the mode cannot write.
func canonModel(dst []byte, v value, mode canonical.NumberMode) ([]byte, error) {
	var err error
	switch v.kind {
	case kindNull:
		return append(dst, "null"...), nil
	case kindBool:
		return strconv.AppendBool(dst, v.b), nil
	case kindNumber:
		d, err := modelNumber(v.num, mode)
		if err != nil {
			return dst, err
		}
		return appendLayout(dst, d), nil
	case kindString:
		return appendCanonicalString(dst, v.s), nil
	case kindArray:
		dst = append(dst, '[')
		for i, e := range v.elems {
			if i > 0 {
				dst = append(dst, ',')
			}
			if dst, err = canonModel(dst, e, mode); err != nil {
				return dst, err
			}
		}
		return append(dst, ']'), nil
	}
	ms := slices.Clone(v.members)
	slices.SortStableFunc(ms, func(a, b member) int { return compareUTF16(a.name, b.name) })
	dst = append(dst, '{')
	for i, m := range ms {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendCanonicalString(dst, m.name)
		dst = append(dst, ':')
		if dst, err = canonModel(dst, m.val, mode); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

// compareUTF16 orders strings by their UTF-16 code units (RFC 8785 §3.2.3).
func compareUTF16(a, b string) int {
	return slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b)))
}

// modelNumber returns the decimal that mode writes for d: d itself in Exact
// mode, the shortest decimal of the nearest double in JCS mode.
func modelNumber(d decimal, mode canonical.NumberMode) (decimal, error) {
	if d.isZero() {
		return decimal{}, nil
	}
	if mode == canonical.Exact {
		if x := d.sciExp(); x > maxExactExponent || x < -maxExactExponent {
			return decimal{}, canonical.ErrNumberRange
		}
		return d, nil
	}
	f, _ := strconv.ParseFloat(d.literal(), 64)
	if math.IsInf(f, 0) {
		return decimal{}, canonical.ErrNumberRange
	}
	return shortest(f), nil
}

// shortest returns the shortest decimal that reads back as f; -0 is 0.
func shortest(f float64) decimal {
	if f == 0 {
		return decimal{}
	}
	return mustDecimal(strconv.FormatFloat(f, 'e', -1, 64))
}

// appendLayout writes d as ECMA-262 Number::toString lays out a number of
// decimal digits s (k of them) and exponent n, value s × 10^(n−k).
func appendLayout(dst []byte, d decimal) []byte {
	if d.isZero() {
		return append(dst, '0')
	}
	if d.neg {
		dst = append(dst, '-')
	}
	s, k, n := d.digits, int64(len(d.digits)), d.point
	switch {
	case k <= n && n <= 21:
		dst = append(dst, s...)
		for range n - k {
			dst = append(dst, '0')
		}
	case 0 < n && n <= 21:
		dst = append(append(append(dst, s[:n]...), '.'), s[n:]...)
	case -6 < n && n <= 0:
		dst = append(dst, '0', '.')
		for range -n {
			dst = append(dst, '0')
		}
		dst = append(dst, s...)
	default:
		dst = append(dst, s[0])
		if k > 1 {
			dst = append(append(dst, '.'), s[1:]...)
		}
		dst = append(dst, 'e')
		if n-1 >= 0 {
			dst = append(dst, '+')
		}
		dst = strconv.AppendInt(dst, n-1, 10)
	}
	return dst
}

// appendCanonicalString writes s as RFC 8785 §3.2.2.2 requires: the
// two-character escapes \b \t \n \f \r \" \\, \u00xx (lower-case hex) for the
// other controls, and every other character as itself.
func appendCanonicalString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			dst = append(dst, '\\', byte(r))
		case '\b':
			dst = append(dst, `\b`...)
		case '\t':
			dst = append(dst, `\t`...)
		case '\n':
			dst = append(dst, `\n`...)
		case '\f':
			dst = append(dst, `\f`...)
		case '\r':
			dst = append(dst, `\r`...)
		default:
			if r < 0x20 {
				dst = append(dst, `\u00`...)
				dst = append(dst, "0123456789abcdef"[r>>4], "0123456789abcdef"[r&0xf])
			} else {
				dst = utf8.AppendRune(dst, r)
			}
		}
	}
	return append(dst, '"')
}

func isNoncharacter(r rune) bool { return r >= 0xfdd0 && r <= 0xfdef || r&0xfffe == 0xfffe }

// hasNoncharacter reports a Unicode noncharacter in a name or string of v.
func hasNoncharacter(v value) bool {
	has := func(s string) bool { return slices.ContainsFunc([]rune(s), isNoncharacter) }
	switch v.kind {
	case kindString:
		return has(v.s)
	case kindArray:
		return slices.ContainsFunc(v.elems, hasNoncharacter)
	case kindObject:
		for _, m := range v.members {
			if has(m.name) || hasNoncharacter(m.val) {
				return true
			}
		}
	}
	return false
}

// numbersBeyond reports whether v holds a number that the mode cannot write.
func numbersBeyond(v value, mode canonical.NumberMode) bool {
	switch v.kind {
	case kindNumber:
		_, err := modelNumber(v.num, mode)
		return err != nil
	case kindArray:
		return slices.ContainsFunc(v.elems, func(e value) bool { return numbersBeyond(e, mode) })
	case kindObject:
		return slices.ContainsFunc(v.members, func(m member) bool { return numbersBeyond(m.val, mode) })
	}
	return false
}

// loneSurrogate reports a \u escape of a surrogate that is not the high half
// followed directly by an escaped low half, in input that json.Valid accepts.
func loneSurrogate(b []byte) bool {
	inString := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if !inString {
			inString = c == '"'
			continue
		}
		switch c {
		case '"':
			inString = false
		case '\\':
			if b[i+1] != 'u' {
				i++
				continue
			}
			r := hexRune(b[i+2 : i+6])
			i += 5
			switch {
			case r >= 0xd800 && r <= 0xdbff:
				if i+6 < len(b) && b[i+1] == '\\' && b[i+2] == 'u' {
					if r2 := hexRune(b[i+3 : i+7]); r2 >= 0xdc00 && r2 <= 0xdfff {
						i += 6
						continue
					}
				}
				return true
			case r >= 0xdc00 && r <= 0xdfff:
				return true
			}
		}
	}
	return false
}

func hexRune(b []byte) rune {
	n, err := strconv.ParseUint(string(b), 16, 32)
	if err != nil {
		return -1
	}
	return rune(n)
}

// verdict is what the model expects of one input.
type verdict struct {
	size    int   // input length
	valid   bool  // json.Valid
	tree    value // when valid
	numbers int   // numbers in the input, when valid
	depth   int   // nesting depth, when valid
	// problems that make the input invalid for package canonical although
	// encoding/json accepts it
	invalidUTF8, surrogate, duplicate, noncharacter bool
	beyondJCS, beyondExact                          bool
}

// judge inspects an input with encoding/json and the scanners above.
func judge(in []byte) verdict {
	v := verdict{size: len(in)}
	if v.valid = json.Valid(in); !v.valid {
		return v
	}
	tree, dup, err := decodeTree(in)
	if err != nil {
		panic("json.Valid accepted what the decoder rejects: " + err.Error())
	}
	v.tree, v.duplicate = tree, dup
	v.numbers = countNumbers(tree)
	v.depth = depth(tree)
	v.invalidUTF8 = !utf8.Valid(in)
	v.surrogate = loneSurrogate(in)
	v.noncharacter = hasNoncharacter(tree)
	v.beyondJCS = numbersBeyond(tree, canonical.JCS)
	v.beyondExact = numbersBeyond(tree, canonical.Exact)
	return v
}

// want returns the sentinels canonical may report for the input under o, or
// nil when it must accept. For input that encoding/json rejects, any
// sentinel of a problem o can detect may come first (a bad byte before a
// syntax error is reported as such). With several problems, any of them may
// come first.
func (v verdict) want(o canonical.Options) []error {
	if o.MaxBytes > 0 && v.size > o.MaxBytes {
		return []error{canonical.ErrTooLarge}
	}
	if !v.valid {
		errs := []error{canonical.ErrSyntax, canonical.ErrDuplicateName, canonical.ErrInvalidUTF8,
			canonical.ErrInvalidSurrogate, canonical.ErrNumberRange, canonical.ErrTooDeep}
		if o.RejectNoncharacters {
			errs = append(errs, canonical.ErrNoncharacter)
		}
		return errs
	}
	var errs []error
	add := func(cond bool, err error) {
		if cond {
			errs = append(errs, err)
		}
	}
	add(v.invalidUTF8, canonical.ErrInvalidUTF8)
	add(v.surrogate, canonical.ErrInvalidSurrogate)
	add(v.duplicate, canonical.ErrDuplicateName)
	add(o.RejectNoncharacters && v.noncharacter, canonical.ErrNoncharacter)
	add(o.Numbers == canonical.JCS && v.beyondJCS || o.Numbers == canonical.Exact && v.beyondExact, canonical.ErrNumberRange)
	limit := o.MaxDepth
	switch {
	case limit == 0:
		limit = canonical.DefaultMaxDepth
	case limit < 0:
		limit = 0
	}
	add(v.depth > limit, canonical.ErrTooDeep)
	return errs
}

// checkError verifies that err is an *canonical.Error wrapping one of the
// wanted sentinels, with an offset inside the input. It returns a problem
// description or "".
func checkError(err error, in []byte, wanted []error) string {
	var ce *canonical.Error
	if !errors.As(err, &ce) {
		return "error is not a *canonical.Error: " + err.Error()
	}
	if ce.Offset < 0 || ce.Offset > int64(len(in)) {
		return "offset " + strconv.FormatInt(ce.Offset, 10) + " outside the input: " + err.Error()
	}
	if len(err.Error()) > 512 {
		return "error message longer than 512 bytes"
	}
	for _, s := range wanted {
		if errors.Is(err, s) {
			return ""
		}
	}
	return "error " + strconv.Quote(err.Error()) + " wraps none of the expected sentinels " + sentinelNames(wanted)
}

func sentinelNames(errs []error) string {
	b := []byte{'['}
	for i, e := range errs {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, e.Error()...)
	}
	return string(append(b, ']'))
}

// decodeAny decodes a JSON text with encoding/json and UseNumber.
func decodeAny(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// exactNumbers compares json.Numbers by exact decimal value. Where both
// exponents are moderate it also compares with math/big and panics if the
// two readings disagree, so the oracle checks itself.
var exactNumbers = gocmp.Comparer(func(a, b json.Number) bool {
	da, db := mustDecimal(string(a)), mustDecimal(string(b))
	eq := da.equal(db)
	if moderate(string(a)) && moderate(string(b)) {
		ra, ok1 := new(big.Rat).SetString(string(a))
		rb, ok2 := new(big.Rat).SetString(string(b))
		if !ok1 || !ok2 || (ra.Cmp(rb) == 0) != eq {
			panic("decimal oracle disagrees with math/big on " + string(a) + " and " + string(b))
		}
	}
	return eq
})

// doubleNumbers compares json.Numbers by their nearest doubles; -0 equals 0.
var doubleNumbers = gocmp.Comparer(func(a, b json.Number) bool {
	fa, _ := strconv.ParseFloat(string(a), 64)
	fb, _ := strconv.ParseFloat(string(b), 64)
	return fa == fb
})

// numberComparer is the comparer matching a number mode.
func numberComparer(mode canonical.NumberMode) gocmp.Option {
	if mode == canonical.Exact {
		return exactNumbers
	}
	return doubleNumbers
}

// sameValue decodes two texts and compares them with go-cmp and the mode's
// number comparison.
func sameValue(a, b []byte, mode canonical.NumberMode) bool {
	va, err := decodeAny(a)
	if err != nil {
		return false
	}
	vb, err := decodeAny(b)
	if err != nil {
		return false
	}
	if anyDepth(va) > cmpMaxDepth || anyDepth(vb) > cmpMaxDepth {
		ta, _, _ := decodeTree(a)
		tb, _, _ := decodeTree(b)
		return treeEqual(ta, tb, mode)
	}
	return gocmp.Equal(va, vb, numberComparer(mode))
}

// valueDiff describes how two texts differ as values, for messages.
func valueDiff(a, b []byte, mode canonical.NumberMode) string {
	va, errA := decodeAny(a)
	vb, errB := decodeAny(b)
	switch {
	case errA != nil || errB != nil:
		return fmt.Sprintf("decoding: %v; %v", errA, errB)
	case anyDepth(va) > cmpMaxDepth || anyDepth(vb) > cmpMaxDepth:
		return "(too deep for a diff)"
	}
	return "(-first +second):\n" + gocmp.Diff(va, vb, numberComparer(mode))
}

// cmpMaxDepth bounds the nesting given to go-cmp, which compares the
// elements of equal slices twice and so takes time exponential in the depth
// of nested arrays. Deeper values are compared by treeEqual.
const cmpMaxDepth = 10

// anyDepth returns the nesting depth of a decoded value.
func anyDepth(v any) int {
	d := 0
	switch v := v.(type) {
	case []any:
		for _, e := range v {
			d = max(d, anyDepth(e))
		}
		return d + 1
	case map[string]any:
		for _, e := range v {
			d = max(d, anyDepth(e))
		}
		return d + 1
	}
	return 0
}

// depth returns the nesting depth of a tree.
func depth(v value) int {
	d := 0
	for _, e := range v.elems {
		d = max(d, depth(e))
	}
	for _, m := range v.members {
		d = max(d, depth(m.val))
	}
	if v.kind == kindArray || v.kind == kindObject {
		d++
	}
	return d
}

func abs64(x int64) int64 { return max(x, -x) }

// moderate reports whether the literal is short with an exponent of at most
// three digits, so math/big can read it quickly.
func moderate(lit string) bool {
	i := strings.IndexAny(lit, "eE")
	return len(lit) < 100 && (i < 0 || len(strings.TrimLeft(strings.TrimLeft(lit[i+1:], "+-"), "0")) <= 3)
}

// treeEqual compares two trees as values: members in any order, numbers by
// the mode's rule.
func treeEqual(a, b value, mode canonical.NumberMode) bool {
	if a.kind != b.kind {
		return false
	}
	switch a.kind {
	case kindBool:
		return a.b == b.b
	case kindNumber:
		da, err1 := modelNumber(a.num, mode)
		db, err2 := modelNumber(b.num, mode)
		if err1 != nil || err2 != nil {
			return err1 != nil && err2 != nil && a.num.equal(b.num)
		}
		return da.equal(db)
	case kindString:
		return a.s == b.s
	case kindArray:
		return slices.EqualFunc(a.elems, b.elems, func(x, y value) bool { return treeEqual(x, y, mode) })
	case kindObject:
		if len(a.members) != len(b.members) {
			return false
		}
		for _, m := range a.members {
			i := slices.IndexFunc(b.members, func(n member) bool { return n.name == m.name })
			if i < 0 || !treeEqual(m.val, b.members[i].val, mode) {
				return false
			}
		}
	}
	return true
}

// The tests below check the model itself against the specifications, so
// that agreement between model and package means something.

// TestModel checks the model's canonical forms against RFC 8785's own
// examples and against the edges of Number::toString.
func TestModel(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		mode  canonical.NumberMode
		want  string
		wantE error
	}{
		{"RFC8785/Sample", `{"numbers":[333333333.33333329,1E30,4.50,2e-3,0.000000000000000000000000001],"string":"\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/","literals":[null,true,false]}`,
			canonical.JCS, `{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`, nil},
		{"RFC8785/Sorting", `{"\u20ac":1,"\r":2,"\ufb33":3,"1":4,"\ud83d\ude00":5,"\u0080":6,"\u00f6":7}`,
			canonical.JCS, "{\"\\r\":2,\"1\":4,\"\u0080\":6,\"\u00f6\":7,\"\u20ac\":1,\"\U0001f600\":5,\"\ufb33\":3}", nil},
		{"Layout/Integer21Digits", `[1e20,123456789012345678901e0]`, canonical.Exact, `[100000000000000000000,123456789012345678901]`, nil},
		{"Layout/Exponent22Digits", `[1e21,-1.5e21]`, canonical.Exact, `[1e+21,-1.5e+21]`, nil},
		{"Layout/SmallFraction", `[1e-6,1.5e-6,1e-7]`, canonical.Exact, `[0.000001,0.0000015,1e-7]`, nil},
		{"Exact/Beyond2p53", `9007199254740993`, canonical.Exact, `9007199254740993`, nil},
		{"JCS/Beyond2p53", `9007199254740993`, canonical.JCS, `9007199254740992`, nil},
		{"JCS/Subnormal", `[5e-324,2.4703282292062328e-324,2e-324]`, canonical.JCS, `[5e-324,5e-324,0]`, nil},
		{"JCS/Overflow", `1.7976931348623159e308`, canonical.JCS, "", canonical.ErrNumberRange},
		{"Exact/Overflow", `1.7976931348623159e308`, canonical.Exact, `1.7976931348623159e+308`, nil},
		{"Exact/ExponentBound", `[9e999999999,1e-999999999]`, canonical.Exact, `[9e+999999999,1e-999999999]`, nil},
		{"Exact/BeyondExponentBound", `1e1000000000`, canonical.Exact, "", canonical.ErrNumberRange},
		{"JCS/UnderflowBeyondExponentBound", `1e-1000000000`, canonical.JCS, `0`, nil},
		{"Zero/Negative", `[-0,-0.0e5,0e99999999999999999999]`, canonical.Exact, `[0,0,0]`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, _, err := decodeTree([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			got, err := canonModel(nil, v, tt.mode)
			if !errors.Is(err, tt.wantE) || tt.wantE == nil && string(got) != tt.want {
				t.Errorf("canonModel(%s, %v) = %s, %v; want %s, %v", tt.in, tt.mode, got, err, tt.want, tt.wantE)
			}
		})
	}
}

// TestJudge checks the model's verdicts on the seeds whose verdict their
// names state.
func TestJudge(t *testing.T) {
	for _, s := range seedTexts {
		v := judge([]byte(s.text))
		jcs, exact := v.want(canonical.Options{}), v.want(canonical.Options{Numbers: canonical.Exact})
		var reject bool
		switch cat, _, _ := strings.Cut(s.name, "/"); cat {
		case "Invalid":
			reject = true
		case "Range": // every Range seed is beyond a double; some are within Exact's bound
			if jcs == nil {
				t.Errorf("%s: judge(%q) accepts in JCS mode", s.name, s.text)
			}
			continue
		}
		if got := jcs != nil || exact != nil; got != reject {
			t.Errorf("%s: judge(%q) rejects: %v (JCS %v, Exact %v)", s.name, s.text, got, sentinelNames(jcs), sentinelNames(exact))
		}
	}
}

// TestDecimalOracle checks parseDecimal's equality against math/big on
// random re-spellings of random decimals and on near misses.
func TestDecimalOracle(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	g := newGenerator(r, genConfig{}, 0)
	s := &speller{r: r, numbers: true}
	for range 20_000 {
		d := decimal{neg: r.Intn(2) == 0, digits: g.digits(1 + r.Intn(20)), point: int64(r.Intn(80) - 40)}
		e := d
		if r.Intn(2) == 0 {
			e = nearMiss(value{kind: kindNumber, num: d}, r).num
		}
		a, b := s.number(nil, d), s.number(nil, e)
		if !moderate(string(a)) || !moderate(string(b)) {
			continue // a literal of numberTable beyond what math/big reads quickly
		}
		ra, ok1 := new(big.Rat).SetString(string(a))
		rb, ok2 := new(big.Rat).SetString(string(b))
		if !ok1 || !ok2 {
			t.Fatalf("math/big cannot read %s or %s", a, b)
		}
		if got, want := mustDecimal(string(a)).equal(mustDecimal(string(b))), ra.Cmp(rb) == 0; got != want {
			t.Fatalf("%s = %s: decimal says %v, math/big %v", a, b, got, want)
		}
	}
}

// TestGrowthBound shows that growthPerNumber is tight: a four-byte literal
// becomes 21 digits.
func TestGrowthBound(t *testing.T) {
	for _, mode := range modes {
		out, err := canonical.Options{Numbers: mode}.Transform([]byte("1e20"))
		if err != nil || len(out) != len("1e20")+growthPerNumber {
			t.Errorf("%v: Transform(1e20) = %s, %v; want %d bytes", mode, out, err, 4+growthPerNumber)
		}
	}
}
