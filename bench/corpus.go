package bench

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// corpusSeed seeds every corpus case; each case mixes in a hash of its name,
// so adding a case leaves the others unchanged.
const corpusSeed = 0x1de3_7417_2025_0001

// A corpusCase is one file of testdata/corpus: a request body written the way
// real clients write them, with shuffled members, irregular whitespace and
// many spellings of one number.
type corpusCase struct {
	name   string
	target int      // intended size in bytes; TestCorpus allows ±20%
	intent []string // gjson paths that BenchmarkSum selects; nil: not a Sum case
	gen    func(g *generator) node
	// A huge case is too large to commit: its gen is genN at 1/hugeScale
	// of members, which the tests run, and a benchmark run with -huge
	// generates it in full (hugeFile).
	huge    bool
	members int
	genN    func(g *generator, members int) node
}

var (
	paymentIntent = []string{"amountCents", "currency", "destination.iban", "reference", "debtor.id"}
	orderIntent   = []string{"amountCents", "currency", "customer.id", "items.#.sku", "items.#.qty"}
	// irregularIntent selects one whole array, the promotions.
	irregularIntent = []string{"amountCents", "currency", "customer.id", "items.#.sku", "promotions"}
)

// corpusCases lists the corpus in benchmark order.
var corpusCases = []corpusCase{
	{name: "payment_small", target: 250, intent: paymentIntent, gen: genPayment},
	{name: "order_medium", target: 2500, intent: orderIntent, gen: func(g *generator) node { return genOrder(g, 10) }},
	{name: "order_large", target: 60000, intent: orderIntent, gen: func(g *generator) node { return genOrder(g, 300) }},
	{name: "numbers", target: 16000, gen: genNumbers},
	{name: "unicode", target: 16000, gen: genUnicode},
	{name: "wide", target: 60000, gen: genWide},
	{name: "deep", target: 8000, gen: genDeep},
	{name: "numbers_long", target: 16000, gen: genNumbersLong},
	{name: "order_irregular_medium", target: 3000, intent: irregularIntent, gen: func(g *generator) node { return genIrregularOrder(g, 7) }},
	{name: "order_irregular_large", target: 60000, intent: irregularIntent, gen: func(g *generator) node { return genIrregularOrder(g, 185) }},
	{name: "wide_huge", target: 36_000_000, gen: func(g *generator) node { return genWideKeys(g, 2_000_000/hugeScale) },
		huge: true, members: 2_000_000, genN: genWideKeys},
}

// hugeScale is how much smaller a huge case is in the tests.
const hugeScale = 200

// generate returns the bytes of c's corpus file. It depends on nothing but
// corpusSeed and c, so the committed files can be checked against it.
func (c corpusCase) generate() []byte {
	return c.generateSeed(corpusSeed)
}

// generateSeed returns a document like c's corpus file, drawn with seed.
func (c corpusCase) generateSeed(seed uint64) []byte {
	return c.draw(seed, c.gen)
}

// generateHuge returns huge case c in full.
func (c corpusCase) generateHuge() []byte {
	return c.draw(corpusSeed, func(g *generator) node { return c.genN(g, c.members) })
}

func (c corpusCase) draw(seed uint64, gen func(g *generator) node) []byte {
	h := fnv.New64a()
	h.Write([]byte(c.name))
	g := &generator{r: rand.New(rand.NewPCG(seed, h.Sum64()))}
	n := gen(g)
	out := g.ws(nil)
	out = g.write(out, n)
	return append(out, '\n')
}

type nodeKind uint8

const (
	literal nodeKind = iota // a number, string, true, false or null token as written
	object
	array
)

// A node is a JSON value whose tokens are already spelled; writing it only
// adds whitespace and shuffles object members.
type node struct {
	kind    nodeKind
	text    string   // literal
	names   []string // object: member names as written string tokens
	members []node   // object values or array elements
}

// A generator draws every choice from one PCG stream.
type generator struct {
	r *rand.Rand
}

var whitespace = []string{" ", " ", "  ", "\n", "\n  ", "\n\t", "\t", "\r\n", " \n ", "    "}

// ws appends irregular insignificant whitespace (often none) to dst.
func (g *generator) ws(dst []byte) []byte {
	if g.r.IntN(10) < 7 {
		return dst
	}
	return append(dst, whitespace[g.r.IntN(len(whitespace))]...)
}

// write appends n with whitespace between tokens and object members in a
// random order.
func (g *generator) write(dst []byte, n node) []byte {
	switch n.kind {
	case object:
		dst = append(dst, '{')
		for i, j := range g.r.Perm(len(n.names)) {
			if i > 0 {
				dst = append(g.ws(dst), ',')
			}
			dst = append(g.ws(dst), n.names[j]...)
			dst = append(g.ws(dst), ':')
			dst = g.write(g.ws(dst), n.members[j])
		}
		return append(g.ws(dst), '}')
	case array:
		dst = append(dst, '[')
		for i, m := range n.members {
			if i > 0 {
				dst = append(g.ws(dst), ',')
			}
			dst = g.write(g.ws(dst), m)
		}
		return append(g.ws(dst), ']')
	}
	return append(dst, n.text...)
}

// obj builds an object from name, value pairs; names are written plainly.
func obj(kv ...any) node {
	n := node{kind: object}
	for i := 0; i < len(kv); i += 2 {
		n.names = append(n.names, strconv.Quote(kv[i].(string)))
		n.members = append(n.members, kv[i+1].(node))
	}
	return n
}

func arr(elems ...node) node { return node{kind: array, members: elems} }

func lit(s string) node { return node{text: s} }

// str is s as a JSON string with only the escapes JSON requires.
func (g *generator) str(s string) node { return lit(g.quote(s, 0)) }

func (g *generator) boolean() node {
	if g.r.IntN(2) == 0 {
		return lit("false")
	}
	return lit("true")
}

// quote writes s as a JSON string token. Characters that must be escaped are,
// each in one of its valid spellings; any other character is written as a \u
// escape (a surrogate pair beyond the BMP) with probability escapeRate.
func (g *generator) quote(s string, escapeRate float64) string {
	b := []byte{'"'}
	for _, r := range s {
		switch {
		case r == '"':
			b = append(b, `\"`...)
		case r == '\\':
			b = append(b, `\\`...)
		case r == '/' && g.r.IntN(3) == 0:
			b = append(b, `\/`...)
		case r < 0x20 && short[r] != 0 && g.r.IntN(4) != 0:
			b = append(b, '\\', short[r])
		case r < 0x20 || escapeRate > 0 && g.r.Float64() < escapeRate:
			b = g.escape(b, r)
		default:
			b = utf8.AppendRune(b, r)
		}
	}
	return string(append(b, '"'))
}

// short holds the two-character escapes of JSON, by the character escaped.
var short = [0x20]byte{'\b': 'b', '\f': 'f', '\n': 'n', '\r': 'r', '\t': 't'}

// escape appends r as \uXXXX, or as a surrogate pair beyond the BMP, in
// random letter case.
func (g *generator) escape(b []byte, r rune) []byte {
	hex := "0123456789abcdef"
	if g.r.IntN(2) == 0 {
		hex = "0123456789ABCDEF"
	}
	units := []rune{r}
	if r > 0xFFFF {
		hi, lo := utf16.EncodeRune(r)
		units = []rune{hi, lo}
	}
	for _, u := range units {
		b = append(b, '\\', 'u', hex[u>>12&15], hex[u>>8&15], hex[u>>4&15], hex[u&15])
	}
	return b
}

// integer spells v in one of its JSON spellings: 12500, 12500.0, 1.25e4,
// 125E2, 0.125e+5, 1250000E-2 ...
func (g *generator) integer(v int64) node {
	return g.decimal(v, 0)
}

// decimal spells coef×10^-scale in one of its JSON spellings.
func (g *generator) decimal(coef int64, scale int) node {
	neg := coef < 0
	if neg {
		coef = -coef
	}
	return lit(g.spell(neg, strconv.FormatInt(coef, 10), scale))
}

// spell writes the value ±digits×10^-scale (digits without leading zeros, or
// "0") as a JSON number, choosing at random between plain and exponent
// forms, letter case, exponent signs and padding zeros. Every spelling names
// the same decimal value, so every peer must canonicalize them alike.
func (g *generator) spell(neg bool, digits string, scale int) string {
	var e int // exponent written
	sci := len(digits)-1-scale > 20 || scale > 20
	switch {
	case sci:
		e = len(digits) - 1 - scale + g.r.IntN(5) - 2
	case g.r.IntN(2) == 0:
		// plain form
	case g.r.IntN(3) == 0:
		e = len(digits) - 1 - scale // d.ddd form
	default:
		e = g.r.IntN(7) - 3
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	f := scale + e // fraction digits of the mantissa
	switch {
	case digits == "0":
		b.WriteByte('0')
		f = 0
	case f <= 0:
		b.WriteString(digits)
		b.WriteString(strings.Repeat("0", -f))
		f = 0
	case f < len(digits):
		b.WriteString(digits[:len(digits)-f])
		b.WriteByte('.')
		b.WriteString(digits[len(digits)-f:])
	default:
		b.WriteString("0.")
		b.WriteString(strings.Repeat("0", f-len(digits)))
		b.WriteString(digits)
	}
	if g.r.IntN(6) == 0 {
		if f == 0 {
			b.WriteByte('.')
		}
		b.WriteString(strings.Repeat("0", 1+g.r.IntN(2)))
	}
	if e != 0 || g.r.IntN(12) == 0 {
		b.WriteByte("eE"[g.r.IntN(2)])
		switch {
		case e < 0:
			b.WriteByte('-')
		case g.r.IntN(3) == 0:
			b.WriteByte('+')
		case e == 0 && g.r.IntN(2) == 0:
			b.WriteByte('-') // 1e-0 is 1
		}
		if g.r.IntN(8) == 0 {
			b.WriteByte('0')
		}
		b.WriteString(strconv.Itoa(abs(e)))
	}
	return b.String()
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

func pick[T any](g *generator, s []T) T { return s[g.r.IntN(len(s))] }

func (g *generator) hex(n int) string {
	const digits = "0123456789abcdef"
	b := make([]byte, n)
	for i := range b {
		b[i] = digits[g.r.IntN(16)]
	}
	return string(b)
}

func (g *generator) digits(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('0' + g.r.IntN(10))
	}
	return string(b)
}

func (g *generator) timestamp() string {
	return "2025-" + pad2(1+g.r.IntN(12)) + "-" + pad2(1+g.r.IntN(28)) + "T" +
		pad2(g.r.IntN(24)) + ":" + pad2(g.r.IntN(60)) + ":" + pad2(g.r.IntN(60)) + "." + g.digits(3) + "Z"
}

func pad2(v int) string {
	if v < 10 {
		return "0" + strconv.Itoa(v)
	}
	return strconv.Itoa(v)
}

var (
	currencies = []string{"EUR", "USD", "GBP", "CHF", "SEK", "PLN"}
	countries  = []string{"DE", "FR", "NL", "AT", "BE", "ES", "IT"}
	firstNames = []string{"Erika", "Jürgen", "Zoë", "Søren", "Ana", "Łukasz", "Chloé", "Mats"}
	lastNames  = []string{"Mustermann", "Müller", "Dubois", "Østergaard", "García", "Nowak", "Rossi"}
	colors     = []string{"navy", "black", "white", "forest", "sand", "crimson", "slate"}
	sizes      = []string{"XS", "S", "M", "L", "XL", "XXL", "one-size"}
	adjectives = []string{"Merino", "Organic Cotton", "Recycled", "Waterproof", "Café Crème", "Linen", "Down"}
	products   = []string{"Sweater", "T-Shirt", "Rain Jacket", "Beanie", "Trousers", "Socks (3 pack)", "Backpack 20 l"}
	cities     = []string{"Berlin", "München", "Paris", "Köln", "Zürich", "Kraków", "Sevilla"}
)

func genPayment(g *generator) node {
	return obj(
		"amountCents", g.integer(int64(100+g.r.IntN(500000))),
		"currency", g.str(pick(g, currencies)),
		"destination", obj(
			"iban", g.str(pick(g, countries)+g.digits(20)),
		),
		"reference", g.str("INV-2025-"+g.digits(6)),
		"traceId", g.str(g.hex(32)),
		"clientTimestamp", g.str(g.timestamp()),
		"debtor", obj("id", g.str("cus_"+g.hex(10))),
	)
}

func genOrder(g *generator, n int) node {
	items := make([]node, n)
	var total float64
	for i := range items {
		qty := int64(1 + g.r.IntN(6))
		cents := int64(199 + g.r.IntN(30000))
		disc := int64(pick(g, []int{0, 0, 0, 5, 10, 15}))
		total += float64(qty*cents) * float64(100-disc) / 100
		items[i] = obj(
			"sku", g.str("SKU-"+g.digits(5)+"-"+pick(g, sizes)),
			"name", g.str(pick(g, adjectives)+" "+pick(g, products)),
			"qty", g.integer(qty),
			"unitPrice", g.decimal(cents, 2),
			"discount", g.decimal(disc, 2),
			"taxRate", pick(g, []func() node{
				func() node { return g.decimal(7, 2) },
				func() node { return g.decimal(19, 2) },
				func() node { return g.decimal(2, 1) },
				func() node { return g.decimal(55, 3) },
			})(),
			"attributes", obj("color", g.str(pick(g, colors)), "size", g.str(pick(g, sizes))),
			"giftWrap", g.boolean(),
		)
	}
	return obj(
		"orderId", g.str("ord_"+g.hex(16)),
		"customer", obj(
			"id", g.str("cus_"+g.hex(10)),
			"email", g.str(strings.ToLower(pick(g, []string{"erika", "jurgen", "zoe", "ana"}))+"."+g.digits(4)+"@example.com"),
			"locale", g.str(pick(g, []string{"de-DE", "fr-FR", "en-GB", "pl-PL"})),
		),
		"currency", g.str(pick(g, currencies)),
		"amountCents", g.integer(int64(math.Round(total))),
		"createdAt", g.str(g.timestamp()),
		"shipping", obj(
			"method", g.str(pick(g, []string{"standard", "express", "pickup"})),
			"costCents", g.integer(int64(g.r.IntN(2000))),
			"address", obj(
				"name", g.str(pick(g, firstNames)+" "+pick(g, lastNames)),
				"line1", g.str("Hauptstraße "+strconv.Itoa(1+g.r.IntN(200))),
				"city", g.str(pick(g, cities)),
				"postalCode", g.str(g.digits(5)),
				"country", g.str(pick(g, countries)),
			),
		),
		"items", arr(items...),
		"metadata", obj(
			"channel", g.str(pick(g, []string{"web", "ios", "android"})),
			"campaign", lit("null"),
			"notes", g.str("Bitte nicht klingeln / please don't ring \u2013 leave at the door"),
		),
	)
}

// group is an array of n values drawn by one.
func group(n int, one func() node) node {
	elems := make([]node, n)
	for i := range elems {
		elems[i] = one()
	}
	return arr(elems...)
}

func genNumbers(g *generator) node {
	randomDouble := func() float64 {
		for {
			f := math.Float64frombits(g.r.Uint64())
			if a := math.Abs(f); a > 1e-300 && a < 1e300 {
				return f
			}
		}
	}
	edge := []string{
		"0", "-0", "0.0", "-0.0", "0e0", "0E+5", "1", "1.0", "1e0", "10E-1", "0.5e1", "1e2", "100",
		"1e21", "1e+21", "999999999999999999999", "1e20", "100000000000000000000", "1e-6", "0.000001",
		"1e-7", "0.0000001", "9007199254740991", "9007199254740992", "9007199254740993",
		"18446744073709551615", "-9223372036854775808", "0.1", "0.2", "0.30000000000000004",
		"5e-324", "2.2250738585072014e-308", "1.7976931348623157e308", "-1.7976931348623157E+308",
		"4.35", "0.07", "1.1e1", "123456789012345678901234567890", "3.141592653589793238462643383279",
	}
	edgeNodes := make([]node, len(edge))
	for i, s := range edge {
		edgeNodes[i] = lit(s)
	}
	return obj(
		"edge", arr(edgeNodes...),
		"integers", group(150, func() node {
			return g.integer(g.r.Int64N(int64(math.Pow10(1+g.r.IntN(15)))) - g.r.Int64N(1000))
		}),
		"money", group(150, func() node { return g.decimal(g.r.Int64N(10_000_000)-2_000_000, 2) }),
		"decimals", group(150, func() node {
			return g.decimal(g.r.Int64N(int64(math.Pow10(1+g.r.IntN(16)))), g.r.IntN(12))
		}),
		"scientific", group(150, func() node {
			d := strconv.FormatInt(1+g.r.Int64N(int64(math.Pow10(1+g.r.IntN(16)))), 10)
			return lit(g.spell(g.r.IntN(3) == 0, d, g.r.IntN(560)-280))
		}),
		"shortest", group(140, func() node {
			return lit(strconv.FormatFloat(randomDouble(), pick(g, []byte("eEg")), -1, 64))
		}),
		"digits17", group(120, func() node {
			return lit(strconv.FormatFloat(randomDouble(), 'e', 16, 64))
		}),
	)
}

// sortTraps start member names: the BMP characters from U+E000 sort after
// every astral character by UTF-16 code units (RFC 8785 §3.2.3) but before
// them by code point.
var sortTraps = []rune{'a', 'Z', 'é', 'ж', '中', '\u2028', '\ue000', '\uf8ff', '\uff21', '\ufffd',
	'\U0001f600', '\U0001d400', '\U00020000', '\U0010fffd'}

// randomRune draws from every range a JSON string may hold, except the
// noncharacters (valid, but rejected by Options.RejectNoncharacters).
func (g *generator) randomRune() rune {
	for {
		var r rune
		switch g.r.IntN(10) {
		case 0:
			r = rune(g.r.IntN(0x20)) // control characters
		case 1, 2:
			r = rune(0x20 + g.r.IntN(0x5f)) // printable ASCII
		case 3:
			r = rune(0x7f + g.r.IntN(0x181)) // DEL, C1, Latin-1, Latin Extended
		case 4, 5:
			r = rune(0x100 + g.r.IntN(0xd800-0x100)) // rest of the BMP below the surrogates
		case 6:
			r = rune(0xe000 + g.r.IntN(0x2000)) // private use up to U+FFFF
		default:
			r = rune(0x10000 + g.r.IntN(0x100000)) // astral
		}
		if r&0xfffe == 0xfffe || r >= 0xfdd0 && r <= 0xfdef {
			continue
		}
		return r
	}
}

func (g *generator) randomString(n int) string {
	var b strings.Builder
	for range n {
		b.WriteRune(g.randomRune())
	}
	return b.String()
}

func genUnicode(g *generator) node {
	texts := make([]node, 60)
	for i := range texts {
		texts[i] = lit(g.quote(g.randomString(4+g.r.IntN(24)), 0.3))
	}
	records := make([]node, 40)
	for i := range records {
		rec := node{kind: object}
		seen := map[string]bool{}
		for len(rec.names) < 10 {
			name := string(pick(g, sortTraps)) + g.randomString(g.r.IntN(3))
			if seen[name] {
				continue
			}
			seen[name] = true
			rec.names = append(rec.names, g.quote(name, 0.4))
			if g.r.IntN(3) == 0 {
				rec.members = append(rec.members, g.integer(g.r.Int64N(1000)))
			} else {
				rec.members = append(rec.members, lit(g.quote(g.randomString(1+g.r.IntN(6)), 0.3)))
			}
		}
		records[i] = rec
	}
	return obj(
		"texts", arr(texts...),
		"records", arr(records...),
		"plain", g.str("Grüße aus Köln – 東京 – Ελλάδα – 🎉 – \u2028\u2029 – \"quoted\" \\ back/slash"),
	)
}

func genWide(g *generator) node {
	prefixes := []string{"metric", "feature", "label", "attr", "sensor"}
	words := []string{"cpu", "mem", "disk", "net", "latency", "errors", "region", "tier"}
	n := node{kind: object}
	for i := range 2000 {
		n.names = append(n.names, strconv.Quote(pick(g, prefixes)+"."+pick(g, words)+"."+strconv.Itoa(i)))
		var v node
		switch g.r.IntN(6) {
		case 0:
			v = g.integer(g.r.Int64N(100000))
		case 1:
			v = g.decimal(g.r.Int64N(1000000), 3)
		case 2:
			v = g.str(g.hex(6))
		case 3:
			v = g.boolean()
		case 4:
			v = lit("null")
		default:
			v = g.str(pick(g, cities))
		}
		n.members = append(n.members, v)
	}
	return n
}

func genDeep(g *generator) node {
	const depth = 200
	var n node
	for i := depth - 1; i >= 0; i-- {
		switch {
		case i == depth-1:
			n = obj("depth", g.integer(int64(i)), "leaf", lit("true"))
		case i%2 == 0:
			n = obj(
				"depth", g.integer(int64(i)),
				"id", g.str("n-"+g.hex(4)),
				"weight", g.decimal(g.r.Int64N(1000), 3),
				"child", n,
			)
		default:
			n = arr(g.integer(int64(i)), g.str("t-"+g.hex(2)), n, g.boolean())
		}
	}
	return n
}

// genNumbersLong is a body of long number literals, the hard case for a JCS
// formatter: 16 and 17 significant digits, integers beyond 2^53, decimals
// of 18 to 30 digits that must round, values near both ends of the double
// range (subnormals included), all in spellings other than the shortest.
func genNumbersLong(g *generator) node {
	// spellDouble writes f with prec+1 significant digits in a random
	// spelling of that decimal.
	spellDouble := func(f float64, prec int) node {
		s := strconv.FormatFloat(math.Abs(f), 'e', prec, 64)
		mant, exp, _ := strings.Cut(s, "e")
		e, _ := strconv.Atoi(exp)
		digits := strings.TrimLeft(strings.Replace(mant, ".", "", 1), "0")
		if digits == "" {
			digits = "0"
		}
		return lit(g.spell(f < 0, digits, prec-e))
	}
	normal := func() float64 {
		for {
			f := math.Float64frombits(g.r.Uint64())
			if a := math.Abs(f); a > 1e-300 && a < 1e300 {
				return f
			}
		}
	}
	return obj(
		"digits17", group(160, func() node { return spellDouble(normal(), 16) }),
		"digits16", group(100, func() node { return spellDouble(normal(), 15) }),
		"bigIntegers", group(100, func() node {
			d := strconv.Itoa(1+g.r.IntN(9)) + g.digits(15+g.r.IntN(10)) // 2^53 is 16 digits
			return lit(g.spell(g.r.IntN(4) == 0, d, 0))
		}),
		"longDecimals", group(100, func() node {
			d := strconv.Itoa(1+g.r.IntN(9)) + g.digits(17+g.r.IntN(13))
			return lit(g.spell(g.r.IntN(4) == 0, d, g.r.IntN(40)))
		}),
		"extreme", group(120, func() node {
			var bits uint64
			switch g.r.IntN(3) {
			case 0: // subnormal
				bits = g.r.Uint64N(1 << 52)
			case 1: // the smallest normal exponents
				bits = uint64(1+g.r.IntN(40))<<52 | g.r.Uint64N(1<<52)
			default: // the largest exponents
				bits = uint64(0x7fe-g.r.IntN(40))<<52 | g.r.Uint64N(1<<52)
			}
			f := math.Float64frombits(bits | uint64(g.r.IntN(2))<<63)
			return spellDouble(f, 16+g.r.IntN(6))
		}),
	)
}

// genIrregularOrder is an order as an untidy client writes it: indentation
// that changes from line to line, non-ASCII characters and tabs escaped
// (\u00E1, \u0009), a few names escaped too, decimals with padding zeros
// and exponents (1.29E1, 898.320), and objects nested three levels deep.
func genIrregularOrder(g *generator, n int) node {
	text := func(s string) node { return lit(g.quoteUntidy(s)) }
	items := make([]node, n)
	var total int64
	for i := range items {
		qty := int64(1 + g.r.IntN(6))
		cents := int64(199 + g.r.IntN(30000))
		total += qty * cents
		items[i] = g.objUntidy(
			"sku", text("SKU-"+g.digits(5)+"-"+pick(g, sizes)),
			"name", text(pick(g, adjectives)+"\t"+pick(g, products)+" – "+pick(g, colors)),
			"qty", g.integer(qty),
			"unitPrice", g.decimal(cents, 2),
			"taxRate", g.decimal(int64(pick(g, []int{70, 190, 200, 55})), 3),
			"attributes", g.objUntidy(
				"color", text(pick(g, colors)),
				"size", text(pick(g, sizes)),
				"dimensions", g.objUntidy(
					"widthCm", g.decimal(int64(50+g.r.IntN(5000)), 2),
					"heightCm", g.decimal(int64(50+g.r.IntN(5000)), 2),
					"weightKg", g.decimal(int64(1+g.r.IntN(20000)), 3),
				),
			),
			"giftWrap", g.boolean(),
			"note", text(pick(g, []string{"", "Geschenk für Ádám", "fragile\tglass", "Café – à emporter"})),
		)
	}
	promotions := make([]node, 1+g.r.IntN(3))
	for i := range promotions {
		promotions[i] = g.objUntidy(
			"code", text(strings.ToUpper(pick(g, []string{"spring", "welcome", "loyal", "été"}))+strconv.Itoa(5*(1+g.r.IntN(6)))),
			"percent", g.decimal(int64(5*(1+g.r.IntN(6))), 0),
		)
	}
	return g.objUntidy(
		"orderId", text("ord_"+g.hex(16)),
		"customer", g.objUntidy(
			"id", text("cus_"+g.hex(10)),
			"name", text(pick(g, firstNames)+" "+pick(g, lastNames)),
			"email", text(strings.ToLower(pick(g, []string{"ádám", "zoë", "søren", "ana"}))+"."+g.digits(4)+"@example.com"),
			"address", g.objUntidy(
				"line1", text("Hauptstraße "+strconv.Itoa(1+g.r.IntN(200))),
				"city", text(pick(g, cities)),
				"country", text(pick(g, countries)),
			),
		),
		"currency", text(pick(g, currencies)),
		"amountCents", g.integer(total),
		"createdAt", text(g.timestamp()),
		"items", arr(items...),
		"promotions", arr(promotions...),
		"metadata", g.objUntidy(
			"channel", text(pick(g, []string{"web", "ios", "android"})),
			"campaign", lit("null"),
			"notes", text("Bitte nicht klingeln\t/ please don't ring – leave at the door"),
		),
	)
}

// quoteUntidy writes s as a JSON string token the way untidy encoders do:
// non-ASCII characters mostly as \u escapes in upper-case hex, tabs as
// \u0009.
func (g *generator) quoteUntidy(s string) string {
	b := []byte{'"'}
	for _, r := range s {
		switch {
		case r == '\t' || r >= utf8.RuneSelf && g.r.IntN(4) != 0:
			units := []rune{r}
			if r > 0xFFFF {
				hi, lo := utf16.EncodeRune(r)
				units = []rune{hi, lo}
			}
			for _, u := range units {
				b = append(b, `\u`+strings.ToUpper(strconv.FormatInt(int64(u)|0x10000, 16)[1:])...)
			}
		case r == '"' || r == '\\':
			b = append(b, '\\', byte(r))
		default:
			b = utf8.AppendRune(b, r)
		}
	}
	return string(append(b, '"'))
}

// objUntidy is obj with one name in twenty spelled with an escaped letter.
func (g *generator) objUntidy(kv ...any) node {
	n := obj(kv...)
	for i, name := range n.names {
		if g.r.IntN(20) == 0 && len(name) > 3 {
			n.names[i] = name[:2] + `\u00` + strconv.FormatInt(int64(name[2]), 16) + name[3:]
		}
	}
	return n
}

// genWideKeys is one object of n members in random order, named like the
// keys of a map: short prefixes and decimal ids that share long prefixes.
func genWideKeys(g *generator, n int) node {
	prefixes := []string{"u_", "id", "k", "sku-", "acct:"}
	w := node{kind: object, names: make([]string, n), members: make([]node, n)}
	for i := range n {
		w.names[i] = `"` + prefixes[g.r.IntN(len(prefixes))] + strconv.Itoa(i) + `"`
		var v node
		switch g.r.IntN(5) {
		case 0:
			v = lit(strconv.Itoa(g.r.IntN(1000)))
		case 1:
			v = lit(`"` + g.hex(2) + `"`)
		case 2:
			v = lit("true")
		case 3:
			v = lit("null")
		default:
			v = lit(strconv.Itoa(g.r.IntN(100)))
		}
		w.members[i] = v
	}
	return w
}
