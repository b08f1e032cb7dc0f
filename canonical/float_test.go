package canonical_test

import (
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/idemprint/idemprint/canonical"
)

// jcsReference is what JCS mode must write for a JSON number literal,
// computed with strconv alone: ParseFloat for the nearest double (an
// error beyond the double range), AppendFloat for its shortest digits and
// layout (the reference model of numbers_test.go) for ECMAScript's form.
func jcsReference(lit string) (string, error) {
	f, err := strconv.ParseFloat(normalize(lit), 64)
	if err != nil {
		if math.IsInf(f, 0) {
			return "", canonical.ErrNumberRange
		}
		return "", err
	}
	if f == 0 {
		return "0", nil
	}
	s := strconv.FormatFloat(math.Abs(f), 'e', -1, 64)
	mant, exp, _ := strings.Cut(s, "e")
	e, _ := strconv.Atoi(exp)
	d := strings.Replace(mant, ".", "", 1)
	out := layout(d, e+1)
	if f < 0 {
		out = "-" + out
	}
	return out, nil
}

// normalize rewrites a JSON number literal as [-]0.D e n, its significant
// digits after the point, for strconv.ParseFloat: given more than 800
// digits before the point, its slow path leaves the rest out of the
// exponent, so 1 followed by 1400 zeros, e-999, parses as 1e-200.
func normalize(lit string) string {
	sign := ""
	if strings.HasPrefix(lit, "-") {
		sign, lit = "-", lit[1:]
	}
	mant, exp, _ := strings.Cut(strings.ToLower(lit), "e")
	e := 0
	if exp != "" {
		v, err := strconv.Atoi(exp)
		if err != nil || v > 1<<40 || v < -1<<40 {
			v = 1 << 40 // beyond any double either way
			if strings.HasPrefix(exp, "-") {
				v = -v
			}
		}
		e = v
	}
	ip, fp, _ := strings.Cut(mant, ".")
	n := len(ip) + e
	d := strings.TrimLeft(ip+fp, "0")
	n -= len(ip+fp) - len(d)
	if d == "" {
		return "0"
	}
	return sign + "0." + d + "e" + strconv.Itoa(n)
}

// checkJCSNumber compares JCS mode with jcsReference on one literal.
func checkJCSNumber(t *testing.T, lit string) bool {
	t.Helper()
	want, wantErr := jcsReference(lit)
	got, err := canonical.Transform([]byte(lit))
	switch {
	case wantErr != nil:
		if !errors.Is(err, wantErr) {
			t.Errorf("Transform(%q) = %q, %v; want error %v", lit, got, err, wantErr)
			return false
		}
	case err != nil:
		t.Errorf("Transform(%q) error %v; want %q", lit, err, want)
		return false
	default:
		if diff := cmp.Diff(want, string(got)); diff != "" {
			t.Errorf("Transform(%q) mismatch with strconv (-want +got):\n%s", lit, diff)
			return false
		}
	}
	return true
}

// exactDecimal returns the exact decimal value of the binary fraction
// m × 2^e in scientific notation.
func exactDecimal(m *big.Int, e int) string {
	f := new(big.Float).SetPrec(uint(m.BitLen()) + 1).SetInt(m)
	f.SetMantExp(f, e)
	s := f.Text('e', 1100) // more digits than any such value has
	mant, exp, _ := strings.Cut(s, "e")
	mant = strings.TrimRight(mant, "0")
	mant = strings.TrimSuffix(mant, ".")
	return mant + "e" + exp
}

// halfway returns the decimal literals exactly halfway between x and the
// next double up, and just below and above that point: the inputs whose
// rounding the first 19 significant digits cannot decide.
func halfway(x float64) []string {
	bits := math.Float64bits(x)
	mant, exp := bits&(1<<52-1), int(bits>>52&0x7ff)
	if exp == 0 {
		exp = 1
	} else {
		mant |= 1 << 52
	}
	if exp == 0x7fe && mant == 1<<53-1 {
		return nil
	}
	// (2m+1) × 2^(exp-1075-1)
	m := new(big.Int).SetUint64(2*mant + 1)
	h := exactDecimal(m, exp-1075-1)
	mantissa, e, _ := strings.Cut(h, "e")
	if !strings.Contains(mantissa, ".") {
		mantissa += "."
	}
	below := []byte(mantissa)
	// Subtract one unit in a position beyond the last digit: ...d → ...(d-1)999.
	for i := len(below) - 1; i >= 0; i-- {
		if below[i] == '.' {
			continue
		}
		if below[i] > '0' {
			below[i]--
			break
		}
		below[i] = '9'
	}
	above := mantissa + "0000001"
	return []string{h, above + "e" + e, string(below) + "99999999e" + e, longInteger(above, e)}
}

// longInteger writes mantissa × 10^exp (mantissa with a point) with more
// than 800 digits before the point, where strconv's slow path goes wrong.
func longInteger(mantissa, exp string) string {
	ip, fp, _ := strings.Cut(mantissa, ".")
	e, _ := strconv.Atoi(exp)
	return ip + fp + strings.Repeat("0", 900) + "e" + strconv.Itoa(e-len(fp)-900)
}

// TestJCSNumbersAgainstStrconv checks the decimal to binary conversion of
// JCS mode against strconv on every vector of es6numbers.txt.gz: the
// double in spellings of 16 to 25 significant digits, its exact binary
// value, and the decimals exactly halfway to the next double and just
// either side of them.
func TestJCSNumbersAgainstStrconv(t *testing.T) {
	vs := loadES6Numbers(t)
	step := 1
	if testing.Short() {
		step = 16
	}
	fails := 0
	for i := 0; i < len(vs) && fails < maxReported; i += step {
		x := math.Abs(vs[i].float())
		lits := []string{
			strconv.FormatFloat(x, 'e', 15, 64),
			strconv.FormatFloat(x, 'e', 16, 64),
			strconv.FormatFloat(x, 'e', 18+i%7, 64),
			strconv.FormatFloat(x, 'e', -1, 64),
		}
		if i%4 == 0 {
			lits = append(lits, halfway(x)...)
		}
		for _, lit := range lits {
			if !checkJCSNumber(t, lit) {
				fails++
			}
		}
	}
}

// TestJCSNumbersRandom checks random decimal literals of 16 to 40 digits
// over the whole exponent range, the subnormals and the edges of the
// double range most of all.
func TestJCSNumbersRandom(t *testing.T) {
	n := 300_000
	if testing.Short() {
		n = 20_000
	}
	r := rand.New(rand.NewPCG(3, 4))
	fails := 0
	for range n {
		var b strings.Builder
		b.WriteByte(byte('1' + r.IntN(9)))
		for range 15 + r.IntN(25) {
			b.WriteByte(byte('0' + r.IntN(10)))
		}
		var e int
		switch r.IntN(4) {
		case 0:
			e = -345 + r.IntN(40) // subnormals and underflow
		case 1:
			e = 280 + r.IntN(40) // the largest doubles and overflow
		default:
			e = -360 + r.IntN(700)
		}
		lit := b.String() + "e" + strconv.Itoa(e)
		if !checkJCSNumber(t, lit) {
			if fails++; fails >= maxReported {
				t.Fatal("too many failures")
			}
		}
	}
}

// jcsNumberSeeds start FuzzJCSNumber: the edges of the double range, ties,
// and literals whose first 19 digits do not settle the rounding.
var jcsNumberSeeds = []string{
	"0", "-0", "1", "5e-324", "4.9406564584124654e-324", "2.4703282292062327e-324", "2.4703282292062328e-324",
	"2.2250738585072011e-308", "2.2250738585072012e-308", "2.2250738585072014e-308", "2.225073858507201136057409796709131975934819546351645648e-308",
	"1.7976931348623157e308", "1.7976931348623158e308", "1.7976931348623159e308", "179769313486231580793728971405301e276",
	"9007199254740993", "9007199254740992.999999999999999999", "9007199254740993.000000000000000001",
	"1e23", "8.41e21", "4.5035996273704985e15", "123456789012345678901234567890", "0.1000000000000000055511151231257827",
	"1e-400", "1e400", "-1e-342", "1e-343", "9999999999999999999e-343", "1e308", "10e308",
	"1" + strings.Repeat("0", 1400) + "e-999", "1" + strings.Repeat("0", 1000) + "e-999",
}

// FuzzJCSNumber compares JCS number formatting with strconv.ParseFloat +
// strconv.AppendFloat on any literal that is a JSON number (normalized
// first; see normalize).
func FuzzJCSNumber(f *testing.F) {
	for _, s := range jcsNumberSeeds {
		f.Add(s)
	}
	for _, tt := range numberTests {
		f.Add(tt.in)
	}
	f.Fuzz(func(t *testing.T, lit string) {
		if !isJSONNumber(lit) || len(lit) > 2000 {
			return
		}
		checkJCSNumber(t, lit)
	})
}

// isJSONNumber reports whether s is one number of the JSON grammar.
func isJSONNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			n++
		}
		return n
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case digits() == 0:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}
