package fuzz

import (
	"math"
	"math/rand"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/leanovate/gopter"

	"github.com/idemprint/idemprint/canonical"
)

// genConfig shapes generated trees.
type genConfig struct {
	// objectRoot makes every tree an object, as request bodies are.
	objectRoot bool
	// inRange keeps to numbers that both modes can write: no double
	// overflow, no exponent beyond Exact's bound.
	inRange bool
}

// generator builds random trees from an rng (the one gopter passes, or one
// seeded from fuzz input).
type generator struct {
	r      *rand.Rand
	cfg    genConfig
	budget int // containers left to open
}

// maxDepth bounds ordinary nesting; the deep shapes below go further.
const maxDepth = 8

func newGenerator(r *rand.Rand, cfg genConfig, size int) *generator {
	return &generator{r: r, cfg: cfg, budget: 1 + size/4}
}

// tree returns a random tree: usually a mix of everything bounded by the
// budget, sometimes one deep chain or one wide container.
func (g *generator) tree() value {
	var v value
	switch g.r.Intn(40) {
	case 0:
		v = g.deep()
	case 1:
		v = g.wideObject(30 + g.r.Intn(170))
	case 2:
		v = value{kind: kindArray, elems: make([]value, 30+g.r.Intn(170))}
		for i := range v.elems {
			v.elems[i] = g.scalar()
		}
	default:
		if g.cfg.objectRoot || g.r.Intn(3) > 0 {
			v = g.object(0)
		} else {
			v = g.value(0)
		}
	}
	if g.cfg.objectRoot && v.kind != kindObject {
		name := g.name()
		if name == "traceId" {
			name = "trace"
		}
		v = value{kind: kindObject, members: []member{{name, v}, {"traceId", g.scalar()}}}
	}
	return v
}

func (g *generator) value(depth int) value {
	if g.budget <= 0 || depth >= maxDepth {
		return g.scalar()
	}
	switch g.r.Intn(10) {
	case 0, 1, 2, 3, 4:
		return g.scalar()
	case 5, 6:
		return g.array(depth)
	}
	return g.object(depth)
}

func (g *generator) array(depth int) value {
	g.budget--
	v := value{kind: kindArray, elems: make([]value, g.r.Intn(6))}
	for i := range v.elems {
		v.elems[i] = g.value(depth + 1)
	}
	return v
}

func (g *generator) object(depth int) value {
	g.budget--
	n := g.r.Intn(7)
	v := value{kind: kindObject, members: make([]member, 0, n)}
	for range n {
		name, ok := g.freshName(v.members)
		if ok {
			v.members = append(v.members, member{name, g.value(depth + 1)})
		}
	}
	return v
}

// wideObject returns an object of up to n scalar members.
func (g *generator) wideObject(n int) value {
	v := value{kind: kindObject, members: make([]member, 0, n)}
	for range n {
		if name, ok := g.freshName(v.members); ok {
			v.members = append(v.members, member{name, g.scalar()})
		}
	}
	return v
}

// deep nests a small value 20 to 300 levels down in arrays and in objects
// with awkward names and siblings.
func (g *generator) deep() value {
	g.budget = 2
	v := g.value(0)
	for range 20 + g.r.Intn(280) {
		switch g.r.Intn(4) {
		case 0:
			v = value{kind: kindArray, elems: []value{v}}
		case 1:
			v = value{kind: kindArray, elems: []value{g.scalar(), v}}
		case 2:
			v = value{kind: kindObject, members: []member{{g.name(), v}}}
		default:
			a := g.name()
			b := g.name()
			for b == a {
				b += "x"
			}
			v = value{kind: kindObject, members: []member{{a, g.scalar()}, {b, v}}}
		}
	}
	return v
}

// freshName returns a name not yet used in ms; it may give up.
func (g *generator) freshName(ms []member) (string, bool) {
	for range 8 {
		n := g.name()
		if !slices.ContainsFunc(ms, func(m member) bool { return m.name == n }) {
			return n, true
		}
	}
	return "", false
}

func (g *generator) scalar() value {
	switch g.r.Intn(10) {
	case 0:
		return value{kind: kindNull}
	case 1, 2:
		return value{kind: kindBool, b: g.r.Intn(2) == 0}
	case 3, 4, 5, 6:
		return value{kind: kindNumber, num: g.number()}
	}
	return value{kind: kindString, s: g.string(12)}
}

// awkwardNames collide often and sort differently by UTF-16 code units and
// by code points: U+E000 to U+FFFF sort after astral characters in UTF-16
// and before them by code point. They also exercise the path syntax.
var awkwardNames = []string{
	"", "a", "A", "b", "aa", "ab", "a ", "1", "10", "2", "-1", "0",
	"\u00e9", "e\u0301", "\u00e9a", "\u00f6", "\u20ac", "\ufb33", "\u0080", "\u007f", "\r", "\x00", "\x01", "\x1f", "\n",
	"\ue000", "\ue000a", "\uf8ff", "\ufb01", "\ufffd", "\ufeff", "\uffff", "\ufffe", "\ufdd0", "\ud7ff",
	"\U00010000", "\U0001f600", "\U0001f600a", "\U0001d11e", "\U0010ffff", "\U000f0000",
	"\"", "\\", "/", "\u2028", "\u2029", "\\u0041", "A\u0000B",
	"a.b", "a*", "a?", "#", "#a", "@reverse", "@this", "[0]", "{a}", "!true", "a|b", "a\\b", ".", "..", "a.", "=", ":", "%", "~1", "~0",
	"traceId", "amount", "amountCents", "items", "sku", "qty", "meta", "sentAt", "note", "id",
}

func (g *generator) name() string {
	if g.r.Intn(2) == 0 {
		return awkwardNames[g.r.Intn(len(awkwardNames))]
	}
	return g.string(4)
}

// string returns up to max awkward characters.
func (g *generator) string(max int) string {
	var b []byte
	for range g.r.Intn(max + 1) {
		b = utf8.AppendRune(b, g.rune())
	}
	return string(b)
}

func (g *generator) rune() rune {
	r := g.r
	switch r.Intn(13) {
	case 0, 1:
		return rune(0x20 + r.Intn(0x5f)) // printable ASCII
	case 2:
		return rune("ab"[r.Intn(2)])
	case 3:
		if r.Intn(8) == 0 {
			return 0x7f
		}
		return rune(r.Intn(0x20)) // controls
	case 4:
		return rune(`"\/`[r.Intn(3)])
	case 5:
		return rune(0x80 + r.Intn(0x80)) // Latin-1
	case 6:
		return rune(0x100 + r.Intn(0xd800-0x100)) // BMP below the surrogates
	case 7:
		return rune(0xe000 + r.Intn(0x10000-0xe000)) // BMP above the surrogates
	case 8, 9:
		return rune(0x10000 + r.Intn(0x110000-0x10000)) // astral
	case 10:
		return []rune{0x1f600, 0x10000, 0x10ffff, 0xe000, 0xffff, 0xfffe, 0xfdd0, 0xfeff, 0xfffd}[r.Intn(9)]
	case 11:
		return []rune{0x2028, 0x2029, 0x0301, 0x00e9, 0x0065, 0x200b}[r.Intn(6)]
	}
	return rune('0' + r.Intn(10))
}

// numberTable lists literals at the edges of doubles, of Number::toString's
// layouts and of Exact's exponent bound, plus those of RFC 8785.
var numberTable = []string{
	"0", "-0", "1", "-1", "0.1", "0.2", "0.3", "0.30000000000000004", "100", "1e2", "4.50", "2e-3",
	"1e21", "1e20", "999999999999999999999", "123456789012345680000", "1e-6", "1e-7", "0.000001", "1.5e-7", "-1e-7", "5e-7",
	"9007199254740991", "9007199254740992", "9007199254740993", "-9007199254740993", "9007199254740994", "9007199254740995",
	"18446744073709551615", "18446744073709551616", "9223372036854775807", "9223372036854775808", "295147905179352825856",
	"4.9e-324", "5e-324", "2.4703282292062327e-324", "2.4703282292062328e-324", "2.2250738585072014e-308", "2.2250738585072011e-308",
	"1.7976931348623157e308", "1.7976931348623158e308", "1e308", "1e-400", "-1e-400",
	"333333333.33333329", "1E30", "0.000000000000000000000000001", "1.0000000000000002", "0.1000000000000000055511151231257827",
	"1e999999999", "1e-999999999", "9.99e999999999", "1e-1000000000", "-1e-1000000000",
	// beyond a double, or beyond Exact's exponent bound
	"1.7976931348623159e308", "1e309", "-1e400", "1e1000000000", "1e-1000000001", "1e99999999999999999999",
}

// number returns an awkward number.
func (g *generator) number() decimal {
	for {
		d := g.anyNumber()
		if !g.cfg.inRange || (!beyond(d, canonical.JCS) && !beyond(d, canonical.Exact)) {
			return d
		}
	}
}

func beyond(d decimal, mode canonical.NumberMode) bool {
	_, err := modelNumber(d, mode)
	return err != nil
}

func (g *generator) anyNumber() decimal {
	r := g.r
	neg := r.Intn(4) == 0
	signed := func(d decimal) decimal {
		if neg {
			d.neg = !d.neg
		}
		return d
	}
	switch r.Intn(14) {
	case 0:
		return mustDecimal(numberTable[r.Intn(len(numberTable))])
	case 1:
		return signed(mustDecimal(strconv.Itoa(r.Intn(21) - 10)))
	case 2:
		return signed(mustDecimal(strconv.Itoa(r.Intn(1_000_000))))
	case 3: // near 2^53, times a power of two
		u := uint64(1)<<53 + uint64(r.Intn(9)) - 4
		return signed(mustDecimal(strconv.FormatUint(u<<r.Intn(11), 10)))
	case 4:
		return signed(mustDecimal(strconv.FormatUint(r.Uint64(), 10)))
	case 5, 6: // any finite double, shortest or with 17 digits
		f := math.Float64frombits(r.Uint64())
		if math.IsNaN(f) || math.IsInf(f, 0) {
			f = math.MaxFloat64
		}
		if r.Intn(3) == 0 {
			return mustDecimal(strconv.FormatFloat(f, 'e', 16+r.Intn(3), 64))
		}
		return shortest(f)
	case 7: // subnormals and their edges
		f := math.Float64frombits(r.Uint64() & (1<<52 - 1))
		if r.Intn(2) == 0 {
			f = math.SmallestNonzeroFloat64 * float64(1+r.Intn(4))
		}
		if r.Intn(3) == 0 {
			f = math.Nextafter(2.2250738585072014e-308, float64(r.Intn(2)))
		}
		return signed(shortest(f))
	case 8: // many digits
		return decimal{neg: neg, digits: g.digits(16 + r.Intn(25)), point: int64(r.Intn(51) - 25)}
	case 9: // huge and tiny exponents, around the double range and beyond
		p := int64(280 + r.Intn(50))
		if r.Intn(4) == 0 {
			p = int64(330 + r.Intn(5000))
		}
		if r.Intn(2) == 0 {
			p = -p
		}
		return decimal{neg: neg, digits: g.digits(1 + r.Intn(5)), point: p}
	case 10: // around Exact's exponent bound
		p := int64(maxExactExponent - 8 + r.Intn(12))
		if r.Intn(2) == 0 {
			p = -p + 2
		}
		return decimal{neg: neg, digits: g.digits(1 + r.Intn(3)), point: p}
	case 11: // small decimals and the layout boundaries
		return decimal{neg: neg, digits: g.digits(1 + r.Intn(6)), point: int64(r.Intn(31) - 8)}
	case 12:
		return decimal{neg: neg} // zero, sometimes -0
	}
	return decimal{neg: neg, digits: g.digits(1 + r.Intn(15)), point: int64(r.Intn(45) - 22)}
}

// digits returns k random digits without leading or trailing zeros.
func (g *generator) digits(k int) string {
	b := make([]byte, k)
	for i := range b {
		b[i] = byte('0' + g.r.Intn(10))
	}
	b[0] = byte('1' + g.r.Intn(9))
	b[k-1] = byte('1' + g.r.Intn(9))
	return string(b)
}

// sample is one generated case: a tree and a seed for everything derived
// from it (spellings, mutations, specs), so that shrinking the tree keeps
// the rest of the case.
type sample struct {
	v    value
	seed int64
}

func (s sample) String() string {
	return "seed " + strconv.FormatInt(s.seed, 10) + " tree " + s.v.String()
}

func (s sample) rng() *rand.Rand { return rand.New(rand.NewSource(s.seed)) }

// genSample is the gopter generator of samples.
func genSample(cfg genConfig) gopter.Gen {
	return func(p *gopter.GenParameters) *gopter.GenResult {
		g := newGenerator(p.Rng, cfg, p.MaxSize)
		s := sample{v: g.tree(), seed: p.Rng.Int63()}
		return gopter.NewGenResult(s, func(v any) gopter.Shrink {
			s := v.(sample)
			cands := shrinkTree(s.v)
			if cfg.objectRoot {
				cands = slices.DeleteFunc(cands, func(c value) bool { return c.kind != kindObject })
			}
			i := 0
			return func() (any, bool) {
				if i == len(cands) {
					return nil, false
				}
				i++
				return sample{v: cands[i-1], seed: s.seed}, true
			}
		})
	}
}

// shrinkTree lists simpler trees: a child instead of its container, a
// container less one child, a simpler scalar, and all of that one level
// down.
func shrinkTree(v value) []value {
	var out []value
	if v.kind != kindNull {
		out = append(out, value{kind: kindNull})
	}
	switch v.kind {
	case kindBool:
		if v.b {
			out = append(out, value{kind: kindBool})
		}
	case kindNumber:
		d := v.num
		if !d.isZero() {
			out = append(out, value{kind: kindNumber})
			if len(d.digits) > 1 {
				e := d
				e.digits = strings.TrimRight(d.digits[:len(d.digits)-1], "0")
				out = append(out, value{kind: kindNumber, num: e})
			}
			if d.point != 1 {
				e := d
				e.point = 1
				out = append(out, value{kind: kindNumber, num: e})
			}
		}
	case kindString:
		if v.s != "" {
			rs := []rune(v.s)
			out = append(out, value{kind: kindString}, value{kind: kindString, s: string(rs[1:])}, value{kind: kindString, s: string(rs[:len(rs)-1])})
		}
	case kindArray:
		out = append(out, v.elems...)
		for i := range v.elems {
			out = append(out, value{kind: kindArray, elems: slices.Delete(slices.Clone(v.elems), i, i+1)})
		}
		for i, e := range v.elems {
			for _, c := range shrinkTree(e) {
				elems := slices.Clone(v.elems)
				elems[i] = c
				out = append(out, value{kind: kindArray, elems: elems})
			}
		}
	case kindObject:
		for _, m := range v.members {
			out = append(out, m.val)
		}
		for i := range v.members {
			out = append(out, value{kind: kindObject, members: slices.Delete(slices.Clone(v.members), i, i+1)})
		}
		for i, m := range v.members {
			for _, c := range shrinkTree(m.val) {
				ms := slices.Clone(v.members)
				ms[i].val = c
				out = append(out, value{kind: kindObject, members: ms})
			}
		}
	}
	return out
}
