package canonical_test

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/idemprint/idemprint/canonical"
)

// es6Vector is one line of testdata/es6numbers.txt.gz: the bits of a finite
// IEEE 754 double and its ECMAScript Number::toString rendering as printed by
// Node.js (testdata/gen-es6numbers.mjs), which RFC 8785 §3.2.2.3 makes the
// canonical form of a JSON number.
type es6Vector struct {
	line int
	bits uint64
	want string
}

func (v es6Vector) float() float64 { return math.Float64frombits(v.bits) }

// minES6Vectors guards against a truncated or regenerated-too-small file.
const minES6Vectors = 100000

// maxReported is how many vector failures a test reports before stopping.
const maxReported = 10

func loadES6Numbers(t *testing.T) []es6Vector {
	t.Helper()
	vs, err := es6Numbers()
	if err != nil {
		t.Fatal(err)
	}
	return vs
}

// es6Numbers reads the vectors once for all tests.
var es6Numbers = sync.OnceValues(func() ([]es6Vector, error) {
	f, err := os.Open("testdata/es6numbers.txt.gz")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	var vs []es6Vector
	sc := bufio.NewScanner(zr)
	for n := 1; sc.Scan(); n++ {
		hex, want, ok := strings.Cut(sc.Text(), " ")
		if !ok || len(hex) != 16 || want == "" {
			return nil, fmt.Errorf("es6numbers.txt.gz:%d: malformed line %q", n, sc.Text())
		}
		bits, err := strconv.ParseUint(hex, 16, 64)
		if err != nil {
			return nil, fmt.Errorf("es6numbers.txt.gz:%d: %v", n, err)
		}
		v := es6Vector{line: n, bits: bits, want: want}
		// The file is the oracle, so check it independently of canonical:
		// Node's string must denote exactly the double it was made from.
		x := v.float()
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("es6numbers.txt.gz:%d: %016x is not finite", n, bits)
		}
		back, err := strconv.ParseFloat(want, 64)
		if err != nil || back != x {
			return nil, fmt.Errorf("es6numbers.txt.gz:%d: %q does not round-trip to %016x (%v, %v)", n, want, bits, back, err)
		}
		vs = append(vs, v)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if err := zr.Close(); err != nil {
		return nil, err
	}
	if len(vs) < minES6Vectors {
		return nil, fmt.Errorf("es6numbers.txt.gz has %d vectors, want at least %d", len(vs), minES6Vectors)
	}
	return vs, nil
})

// spelling returns a JSON number literal for x that is not Node's shortest
// rendering: variant picks one of several spellings (17 or more significant
// digits, the exact binary value, an integer significand, a padded fixed
// point, upper-case E, explicit exponent signs and leading exponent zeros).
// Every spelling denotes a decimal that rounds to x.
func spelling(x float64, variant int) string {
	switch variant % 6 {
	case 0:
		return strconv.FormatFloat(x, 'e', 16, 64) // 17 digits: "1.2345678901234567e+05"
	case 1:
		return strconv.FormatFloat(x, 'E', 20, 64) // 21 digits, "E+05"
	case 2:
		// Integer significand: "12345678901234567e-11".
		s := strconv.FormatFloat(x, 'e', 16, 64)
		mant, exp, _ := strings.Cut(s, "e")
		e, _ := strconv.Atoi(exp)
		sign, mant := "", strings.Replace(mant, ".", "", 1)
		if mant[0] == '-' {
			sign, mant = "-", mant[1:]
		}
		if mant = strings.TrimLeft(mant, "0"); mant == "" {
			mant = "0" // only for zero
		}
		return sign + mant + "e" + strconv.Itoa(e-16)
	case 3:
		// The exact value of the double (at most 767 significant digits).
		s := strconv.FormatFloat(x, 'e', 767, 64)
		mant, exp, _ := strings.Cut(s, "e")
		mant = strings.TrimRight(mant, "0")
		mant = strings.TrimSuffix(mant, ".")
		return mant + "e" + exp
	case 4:
		// Fixed point with padding zeros where that stays short.
		if a := math.Abs(x); a >= 1e-9 && a < 1e25 {
			s := strconv.FormatFloat(x, 'f', -1, 64)
			if !strings.Contains(s, ".") {
				s += "."
			}
			return s + "000"
		}
		mant, exp, _ := strings.Cut(strconv.FormatFloat(x, 'e', 18, 64), "e")
		return mant + "0e" + exp
	default:
		// 17 to 25 significant digits, exponent with a plus sign and zeros.
		s := strconv.FormatFloat(x, 'e', 16+variant%9, 64)
		mant, exp, _ := strings.Cut(s, "e")
		e, _ := strconv.Atoi(exp)
		if e >= 0 {
			return mant + "e+000" + strconv.Itoa(e)
		}
		return mant + "E-00" + strconv.Itoa(-e)
	}
}

// failures collects vector failures and stops the test after maxReported.
type failures struct {
	t *testing.T
	n int
}

func (f *failures) add(format string, args ...any) {
	f.t.Helper()
	f.t.Errorf(format, args...)
	f.n++
	if f.n >= maxReported {
		f.t.Fatalf("stopped after %d failures", f.n)
	}
}

// TestES6Numbers checks JCS number formatting (RFC 8785 §3.2.2.3) against
// Node.js for every vector, each fed in a spelling other than the canonical.
func TestES6Numbers(t *testing.T) {
	vs := loadES6Numbers(t)
	fail := failures{t: t}
	for i, v := range vs {
		in := spelling(v.float(), i)
		// Check the test's own input first: valid JSON denoting the same double.
		if x, err := strconv.ParseFloat(in, 64); err != nil || x != v.float() || !json.Valid([]byte(in)) {
			t.Fatalf("line %d (%016x): spelling %q is not a JSON number for %v (%v, %v)", v.line, v.bits, in, v.float(), x, err)
		}
		got, err := canonical.Transform([]byte(in))
		if err != nil {
			fail.add("line %d (%016x): Transform(%q) error: %v", v.line, v.bits, in, err)
			continue
		}
		if diff := cmp.Diff(v.want, string(got)); diff != "" {
			fail.add("line %d (%016x): Transform(%q) mismatch (-want +got):\n%s", v.line, v.bits, in, diff)
		}
	}
}

// TestES6NumbersCanonicalInput checks that Node's rendering is a fixed point
// of both number modes: Exact keeps the digits it is given, and ECMAScript's
// digits are already shortest, so Exact and JCS agree on canonical input.
func TestES6NumbersCanonicalInput(t *testing.T) {
	vs := loadES6Numbers(t)
	exact := canonical.Options{Numbers: canonical.Exact}
	fail := failures{t: t}
	for _, v := range vs {
		in := []byte(v.want)
		for _, m := range []struct {
			name string
			fn   func([]byte) ([]byte, error)
		}{
			{"Transform", canonical.Transform},
			{"Exact.Transform", exact.Transform},
		} {
			got, err := m.fn(in)
			if err != nil {
				fail.add("line %d (%016x): %s(%q) error: %v", v.line, v.bits, m.name, in, err)
				continue
			}
			if diff := cmp.Diff(v.want, string(got)); diff != "" {
				fail.add("line %d (%016x): %s(%q) mismatch (-want +got):\n%s", v.line, v.bits, m.name, in, diff)
			}
		}
	}
}

// TestES6NumbersExactSpellings feeds the same non-canonical spellings to
// Exact mode, which must keep every significant digit and lay them out by the
// Number::toString rules. The expectation comes from exactLayout, a reference
// model that is first checked against Node's renderings.
func TestES6NumbersExactSpellings(t *testing.T) {
	vs := loadES6Numbers(t)
	exact := canonical.Options{Numbers: canonical.Exact}
	fail := failures{t: t}
	for _, v := range vs {
		if got := exactLayout(v.want); got != v.want {
			t.Fatalf("line %d: reference model: exactLayout(%q) = %q, want %q", v.line, v.want, got, v.want)
		}
	}
	for i, v := range vs {
		in := spelling(v.float(), i)
		want := exactLayout(in)
		got, err := exact.Transform([]byte(in))
		if err != nil {
			fail.add("line %d (%016x): Exact.Transform(%q) error: %v", v.line, v.bits, in, err)
			continue
		}
		if diff := cmp.Diff(want, string(got)); diff != "" {
			fail.add("line %d (%016x): Exact.Transform(%q) mismatch (-want +got):\n%s", v.line, v.bits, in, diff)
		}
	}
}

// exactLayout is a reference model of Exact number formatting for a valid
// JSON number literal whose exponent fits an int: strip the digits to D (k
// digits, no leading or trailing zeros) with value 0.D × 10^n, then apply the
// ECMAScript Number::toString layout. It does not check the exponent bound.
func exactLayout(lit string) string {
	neg := strings.HasPrefix(lit, "-")
	lit = strings.TrimPrefix(lit, "-")
	mant, exp, hasExp := strings.Cut(strings.ToLower(lit), "e")
	e := 0
	if hasExp {
		var err error
		if e, err = strconv.Atoi(exp); err != nil {
			panic(fmt.Sprintf("exactLayout(%q): %v", lit, err))
		}
	}
	ip, fp, _ := strings.Cut(mant, ".")
	d := ip + fp
	n := len(ip) + e
	for len(d) > 0 && d[0] == '0' {
		d = d[1:]
		n--
	}
	d = strings.TrimRight(d, "0")
	if d == "" {
		return "0"
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	b.WriteString(layout(d, n))
	return b.String()
}

// layout renders digits d (no leading or trailing zeros) with value
// 0.d × 10^n as ECMAScript Number::toString does (ECMA-262 Number::toString
// steps for k, n), for any length of d.
func layout(d string, n int) string {
	k := len(d)
	switch {
	case k <= n && n <= 21:
		return d + strings.Repeat("0", n-k)
	case 0 < n && n <= 21:
		return d[:n] + "." + d[n:]
	case -6 < n && n <= 0:
		return "0." + strings.Repeat("0", -n) + d
	}
	s := d[:1]
	if k > 1 {
		s += "." + d[1:]
	}
	if n-1 >= 0 {
		return s + "e+" + strconv.Itoa(n-1)
	}
	return s + "e-" + strconv.Itoa(1-n)
}

func TestLayoutModel(t *testing.T) {
	// The reference model itself, against hand-computed cases.
	tests := []struct{ in, want string }{
		{"0", "0"},
		{"-0.000e7", "0"},
		{"123e-9", "1.23e-7"},
		{"1e21", "1e+21"},
		{"1e20", "100000000000000000000"},
		{"0.000001", "0.000001"},
		{"0.0000001", "1e-7"},
		{"-12.5E+3", "-12500"},
		{"1234567890123456789012", "1.234567890123456789012e+21"},
		{"123456789012345678901.5", "123456789012345678901.5"},
		{"0.1e1", "1"},
		{"100e-2", "1"},
	}
	for _, tt := range tests {
		if got := exactLayout(tt.in); got != tt.want {
			t.Errorf("exactLayout(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
