package canonical_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/idemprint/idemprint/canonical"
)

// numberTests cover number formatting in both modes. Exact keeps the
// literal's digits D and point position n (value 0.D × 10^n) and lays them
// out like ECMAScript Number::toString:
//
//	k ≤ n ≤ 21   D, then n−k zeros
//	0 < n ≤ 21   D with a point after n digits
//	−6 < n ≤ 0   "0.", −n zeros, D
//	otherwise    d[.ddd]e±(n−1)
//
// and rejects a printed exponent n−1 beyond ±999,999,999. JCS rounds to the
// nearest double first. Every name starts with the mode.
var numberTests = []struct {
	name    string
	mode    canonical.NumberMode
	in      string
	want    string
	wantErr error
	reason  string
}{
	// Integers beyond 2^53 keep every digit in Exact mode.
	{name: "Exact/BigInteger/TwoPow53Plus1", mode: canonical.Exact, in: "9007199254740993", want: "9007199254740993"},
	{name: "JCS/BigInteger/TwoPow53Plus1", in: "9007199254740993", want: "9007199254740992", reason: "nearest double is 2^53"},
	{name: "Exact/BigInteger/TwoPow64", mode: canonical.Exact, in: "18446744073709551616", want: "18446744073709551616"},
	{name: "JCS/BigInteger/TwoPow64", in: "18446744073709551616", want: "18446744073709552000"},
	{name: "Exact/BigInteger/Int64Max", mode: canonical.Exact, in: "9223372036854775807", want: "9223372036854775807"},
	{name: "JCS/BigInteger/Int64Max", in: "9223372036854775807", want: "9223372036854776000", reason: "RFC 8785 Appendix D's int64Max as a double"},
	{name: "Exact/BigInteger/NegativeBeyondUint64", mode: canonical.Exact, in: "-18446744073709551617", want: "-18446744073709551617"},
	{name: "JCS/BigInteger/NegativeBeyondUint64", in: "-18446744073709551617", want: "-18446744073709552000"},
	{name: "Exact/BigInteger/TwoPow68", mode: canonical.Exact, in: "295147905179352825856", want: "295147905179352825856", reason: "21 digits: still fixed"},
	{name: "JCS/BigInteger/TwoPow68", in: "295147905179352825856", want: "295147905179352830000", reason: "RFC 8785 Appendix B note (2)"},
	{name: "Exact/BigInteger/21Digits", mode: canonical.Exact, in: "123456789012345678901", want: "123456789012345678901", reason: "n = 21"},
	{name: "JCS/BigInteger/21Digits", in: "123456789012345678901", want: "123456789012345680000"},
	{name: "Exact/BigInteger/22Digits", mode: canonical.Exact, in: "1234567890123456789012", want: "1.234567890123456789012e+21", reason: "n = 22 > 21"},
	{name: "JCS/BigInteger/22Digits", in: "1234567890123456789012", want: "1.2345678901234568e+21"},
	{name: "Exact/BigInteger/40Digits", mode: canonical.Exact, in: "1234567890123456789012345678901234567890", want: "1.23456789012345678901234567890123456789e+39"},
	{name: "JCS/BigInteger/40Digits", in: "1234567890123456789012345678901234567890", want: "1.2345678901234568e+39"},
	{name: "Exact/BigInteger/1e20Written", mode: canonical.Exact, in: "100000000000000000000", want: "100000000000000000000"},
	{name: "Exact/BigInteger/1e21Written", mode: canonical.Exact, in: "1000000000000000000000", want: "1e+21"},
	{name: "JCS/BigInteger/1e21Written", in: "1000000000000000000000", want: "1e+21"},
	{name: "Exact/BigInteger/TrailingZeros", mode: canonical.Exact, in: "120000000000000000000000", want: "1.2e+23"},

	// Long fractions keep every significant digit in Exact mode.
	{name: "Exact/LongFraction/PointOne", mode: canonical.Exact, in: "0.1000000000000000055511151231257827", want: "0.1000000000000000055511151231257827"},
	{name: "JCS/LongFraction/PointOne", in: "0.1000000000000000055511151231257827", want: "0.1"},
	{name: "Exact/LongFraction/Pi", mode: canonical.Exact, in: "3.14159265358979323846264338327950288419716939937510", want: "3.1415926535897932384626433832795028841971693993751", reason: "trailing zero dropped"},
	{name: "JCS/LongFraction/Pi", in: "3.14159265358979323846264338327950288419716939937510", want: "3.141592653589793"},
	{name: "Exact/LongFraction/OneAndAHair", mode: canonical.Exact, in: "1.000000000000000000000000000001000", want: "1.000000000000000000000000000001"},
	{name: "JCS/LongFraction/OneAndAHair", in: "1.000000000000000000000000000001000", want: "1"},
	{name: "Exact/LongFraction/PointAfter21", mode: canonical.Exact, in: "123456789012345678901.5", want: "123456789012345678901.5", reason: "k = 22, n = 21"},
	{name: "JCS/LongFraction/PointAfter21", in: "123456789012345678901.5", want: "123456789012345680000"},
	{name: "Exact/LongFraction/SmallFixed", mode: canonical.Exact, in: "0.0000012345678901234567890123", want: "0.0000012345678901234567890123", reason: "n = −5"},
	{name: "Exact/LongFraction/SmallExponent", mode: canonical.Exact, in: "0.00000012345678901234567890123", want: "1.2345678901234567890123e-7", reason: "n = −6"},
	{name: "Exact/LongFraction/RFCSampleDigits", mode: canonical.Exact, in: "333333333.33333329", want: "333333333.33333329", reason: "JCS gives 333333333.3333333"},

	// One value, many spellings, one form.
	{name: "Exact/Spelling/One", mode: canonical.Exact, in: "1", want: "1"},
	{name: "Exact/Spelling/OnePointZero", mode: canonical.Exact, in: "1.0", want: "1"},
	{name: "Exact/Spelling/OneE0", mode: canonical.Exact, in: "1e0", want: "1"},
	{name: "Exact/Spelling/TenEMinus1", mode: canonical.Exact, in: "10E-1", want: "1"},
	{name: "Exact/Spelling/PointOneE1", mode: canonical.Exact, in: "0.1e1", want: "1"},
	{name: "Exact/Spelling/HundredEMinus2", mode: canonical.Exact, in: "100e-2", want: "1"},
	{name: "Exact/Spelling/PaddedE", mode: canonical.Exact, in: "1.000E+0", want: "1"},
	{name: "Exact/Spelling/SmallTimesBig", mode: canonical.Exact, in: "0.00001e5", want: "1"},
	{name: "Exact/Spelling/ExponentLeadingZeros", mode: canonical.Exact, in: "1e0000000000000000000000000001", want: "10"},
	{name: "JCS/Spelling/ExponentLeadingZeros", in: "1e0000000000000000000000000001", want: "10"},
	{name: "Exact/Spelling/NegativeExponentLeadingZeros", mode: canonical.Exact, in: "1e-0000000000000000000000000001", want: "0.1"},
	{name: "Exact/Spelling/FourPointFifty", mode: canonical.Exact, in: "4.50", want: "4.5"},
	{name: "Exact/Spelling/NegativeUpperE", mode: canonical.Exact, in: "-12.5E+3", want: "-12500"},
	{name: "JCS/Spelling/NegativeUpperE", in: "-12.5E+3", want: "-12500"},
	{name: "JCS/Spelling/OnePointZero", in: "1.0", want: "1"},
	{name: "JCS/Spelling/TenEMinus1", in: "10E-1", want: "1"},
	{name: "JCS/Spelling/HundredEMinus2", in: "100e-2", want: "1"},

	// Zero is zero: no sign, no exponent, whatever the exponent's size.
	{name: "Exact/Zero/Plain", mode: canonical.Exact, in: "0", want: "0"},
	{name: "Exact/Zero/Negative", mode: canonical.Exact, in: "-0", want: "0"},
	{name: "Exact/Zero/NegativeFractionExponent", mode: canonical.Exact, in: "-0.0e5", want: "0"},
	{name: "Exact/Zero/NegativeExponent", mode: canonical.Exact, in: "0e-10", want: "0"},
	{name: "Exact/Zero/Fraction", mode: canonical.Exact, in: "0.000", want: "0"},
	{name: "Exact/Zero/HugeExponent", mode: canonical.Exact, in: "0e99999999999999999999999", want: "0"},
	{name: "Exact/Zero/HugeNegativeExponent", mode: canonical.Exact, in: "-0E-99999999999999999999999", want: "0"},
	{name: "Exact/Zero/ExponentPastBound", mode: canonical.Exact, in: "0.0e1000000000", want: "0"},
	{name: "JCS/Zero/Negative", in: "-0", want: "0"},
	{name: "JCS/Zero/NegativeFractionExponent", in: "-0.0e5", want: "0"},
	{name: "JCS/Zero/HugeExponent", in: "0e99999999999999999999999", want: "0"},

	// The Number::toString layout, at each boundary.
	{name: "Exact/Layout/1e400", mode: canonical.Exact, in: "1e400", want: "1e+400"},
	{name: "JCS/Layout/1e400", in: "1e400", wantErr: canonical.ErrNumberRange},
	{name: "Exact/Layout/1e-400", mode: canonical.Exact, in: "1e-400", want: "1e-400"},
	{name: "JCS/Layout/1e-400", in: "1e-400", want: "0", reason: "underflows to zero"},
	{name: "JCS/Layout/Minus1e-400", in: "-1e-400", want: "0", reason: "underflows to -0, written 0"},
	{name: "Exact/Layout/1e21", mode: canonical.Exact, in: "1e21", want: "1e+21"},
	{name: "JCS/Layout/1e21", in: "1e21", want: "1e+21"},
	{name: "Exact/Layout/1e20", mode: canonical.Exact, in: "1e20", want: "100000000000000000000"},
	{name: "JCS/Layout/1e20", in: "1e20", want: "100000000000000000000"},
	{name: "Exact/Layout/12.5e19", mode: canonical.Exact, in: "12.5e19", want: "125000000000000000000"},
	{name: "Exact/Layout/1.25e21", mode: canonical.Exact, in: "1.25e21", want: "1.25e+21"},
	{name: "Exact/Layout/123e-9", mode: canonical.Exact, in: "123e-9", want: "1.23e-7"},
	{name: "JCS/Layout/123e-9", in: "123e-9", want: "1.23e-7"},
	{name: "Exact/Layout/0.000001", mode: canonical.Exact, in: "0.000001", want: "0.000001"},
	{name: "JCS/Layout/0.000001", in: "0.000001", want: "0.000001"},
	{name: "Exact/Layout/0.0000001", mode: canonical.Exact, in: "0.0000001", want: "1e-7"},
	{name: "JCS/Layout/0.0000001", in: "0.0000001", want: "1e-7"},
	{name: "Exact/Layout/1.5e-6", mode: canonical.Exact, in: "1.5e-6", want: "0.0000015"},
	{name: "Exact/Layout/1.5e-7", mode: canonical.Exact, in: "1.5e-7", want: "1.5e-7"},
	{name: "Exact/Layout/2e-3", mode: canonical.Exact, in: "2e-3", want: "0.002"},
	{name: "Exact/Layout/1E30", mode: canonical.Exact, in: "1E30", want: "1e+30"},
	{name: "Exact/Layout/1e-27", mode: canonical.Exact, in: "0.000000000000000000000000001", want: "1e-27"},
	{name: "Exact/Layout/MinSubnormal", mode: canonical.Exact, in: "5e-324", want: "5e-324"},
	{name: "Exact/Layout/GiantNumber", mode: canonical.Exact, in: "1.4e+9999", want: "1.4e+9999", reason: "RFC 8785 Appendix D"},
	{name: "JCS/Layout/GiantNumber", in: "1.4e+9999", wantErr: canonical.ErrNumberRange, reason: "RFC 8785 Appendix D"},
	{name: "Exact/Layout/NegativeInteger", mode: canonical.Exact, in: "-5", want: "-5"},
	{name: "Exact/Layout/NegativeSmall", mode: canonical.Exact, in: "-0.00000123", want: "-0.00000123"},
	{name: "Exact/Layout/NegativeExponent", mode: canonical.Exact, in: "-0.000000123", want: "-1.23e-7"},

	// JCS rounding at the ends of the double range.
	{name: "JCS/Range/MaxDouble", in: "1.7976931348623157e308", want: "1.7976931348623157e+308"},
	{name: "JCS/Range/BelowOverflowMidpoint", in: "1.7976931348623158e+308", want: "1.7976931348623157e+308", reason: "below the midpoint to 2^1024: rounds down"},
	{name: "JCS/Range/AboveOverflowMidpoint", in: "1.7976931348623159e+308", wantErr: canonical.ErrNumberRange, reason: "rounds to Infinity"},
	{name: "JCS/Range/IntegerDigitsBeyond800", in: "1" + strings.Repeat("0", 1400) + "e-999", wantErr: canonical.ErrNumberRange,
		reason: "1e401: strconv.ParseFloat's slow path drops integer digits past the 800th and returned 1e-200"},
	{name: "JCS/Range/IntegerDigitsBeyond800InRange", in: "1" + strings.Repeat("0", 1000) + "e-999", want: "10"},
	{name: "JCS/Range/NegativeOverflow", in: "-1e309", wantErr: canonical.ErrNumberRange},
	{name: "JCS/Range/BelowUnderflowMidpoint", in: "2.4703282292062327e-324", want: "0", reason: "below half of 5e-324: rounds to zero"},
	{name: "JCS/Range/AboveUnderflowMidpoint", in: "2.4703282292062328e-324", want: "5e-324", reason: "above half of 5e-324"},
	{name: "Exact/Range/BelowUnderflowMidpoint", mode: canonical.Exact, in: "2.4703282292062327e-324", want: "2.4703282292062327e-324"},

	// The Exact exponent bound: the printed exponent n−1 must lie within
	// ±999,999,999, whatever the literal's own exponent says.
	{name: "Exact/ExponentBound/Max", mode: canonical.Exact, in: "1e999999999", want: "1e+999999999"},
	{name: "JCS/ExponentBound/Max", in: "1e999999999", wantErr: canonical.ErrNumberRange},
	{name: "Exact/ExponentBound/Min", mode: canonical.Exact, in: "1e-999999999", want: "1e-999999999"},
	{name: "JCS/ExponentBound/Min", in: "1e-999999999", want: "0"},
	{name: "Exact/ExponentBound/MaxTwoDigits", mode: canonical.Exact, in: "10e999999998", want: "1e+999999999"},
	{name: "Exact/ExponentBound/MaxWithFraction", mode: canonical.Exact, in: "9.99e999999999", want: "9.99e+999999999"},
	{name: "Exact/ExponentBound/MinNegative", mode: canonical.Exact, in: "-1.5e-999999999", want: "-1.5e-999999999"},
	{name: "Exact/ExponentBound/LiteralAboveButNormalizedMax", mode: canonical.Exact, in: "0.1e1000000000", want: "1e+999999999", reason: "0.1e1000000000 = 1e999999999"},
	{name: "Exact/ExponentBound/LiteralAboveLeadingZeros", mode: canonical.Exact, in: "0.0000000001e1000000009", want: "1e+999999999", reason: "ten leading zeros: n = 1000000000"},
	{name: "Exact/ExponentBound/LiteralBelowButNormalizedMin", mode: canonical.Exact, in: "100e-1000000001", want: "1e-999999999", reason: "n = 3 − 1000000001"},
	{name: "Exact/ExponentBound/MaxExponentLeadingZeros", mode: canonical.Exact, in: "1e000000000000000000999999999", want: "1e+999999999"},
	{name: "Exact/ExponentBound/AboveMax", mode: canonical.Exact, in: "1e1000000000", wantErr: canonical.ErrNumberRange},
	{name: "Exact/ExponentBound/BelowMin", mode: canonical.Exact, in: "1e-1000000000", wantErr: canonical.ErrNumberRange},
	{name: "Exact/ExponentBound/NegativeBelowMin", mode: canonical.Exact, in: "-1e-1000000000", wantErr: canonical.ErrNumberRange},
	{name: "Exact/ExponentBound/FractionBelowMin", mode: canonical.Exact, in: "0.1e-999999999", wantErr: canonical.ErrNumberRange, reason: "= 1e-1000000000"},
	{name: "Exact/ExponentBound/TwoDigitsAboveMax", mode: canonical.Exact, in: "99.9e999999999", wantErr: canonical.ErrNumberRange, reason: "= 9.99e+1000000000"},
	{name: "Exact/ExponentBound/TenAboveMax", mode: canonical.Exact, in: "10e999999999", wantErr: canonical.ErrNumberRange},
	{name: "Exact/ExponentBound/TrailingZerosAboveMax", mode: canonical.Exact, in: "1000e999999997", wantErr: canonical.ErrNumberRange, reason: "= 1e+1000000000"},
	{name: "Exact/ExponentBound/HugeExponent", mode: canonical.Exact, in: "1e99999999999999999999999", wantErr: canonical.ErrNumberRange},
	{name: "Exact/ExponentBound/HugeNegativeExponent", mode: canonical.Exact, in: "-1e-99999999999999999999999", wantErr: canonical.ErrNumberRange},
	{name: "Exact/ExponentBound/Int64MaxExponent", mode: canonical.Exact, in: "1e9223372036854775807", wantErr: canonical.ErrNumberRange},
	{name: "Exact/ExponentBound/Int64OverflowExponent", mode: canonical.Exact, in: "1e9223372036854775808", wantErr: canonical.ErrNumberRange},
	{name: "Exact/ExponentBound/Int64MinExponent", mode: canonical.Exact, in: "1e-9223372036854775808", wantErr: canonical.ErrNumberRange},
	{name: "Exact/ExponentBound/Uint64OverflowExponent", mode: canonical.Exact, in: "1e18446744073709551617", wantErr: canonical.ErrNumberRange},
	{name: "Exact/ExponentBound/WrapsToSmall", mode: canonical.Exact, in: "1e18446744073709551616", wantErr: canonical.ErrNumberRange, reason: "2^64: a wrapping uint64 exponent would read 0"},
	{name: "JCS/ExponentBound/HugeExponent", in: "1e99999999999999999999999", wantErr: canonical.ErrNumberRange},
	{name: "JCS/ExponentBound/HugeNegativeExponent", in: "1e-99999999999999999999999", want: "0", reason: "underflows to zero, like 1e-400"},
	{name: "JCS/ExponentBound/WrapsToSmall", in: "1e18446744073709551616", wantErr: canonical.ErrNumberRange, reason: "2^64: a wrapping uint64 exponent would read 0"},

	// Numbers inside arrays and objects.
	{name: "Exact/Nested/ArrayAndObject", mode: canonical.Exact, in: `[1.0,{"b":[9007199254740993],"a":100e-2}]`, want: `[1,{"a":1,"b":[9007199254740993]}]`},
	{name: "JCS/Nested/ArrayAndObject", in: `[1.0,{"b":[9007199254740993],"a":100e-2}]`, want: `[1,{"a":1,"b":[9007199254740992]}]`},
	{name: "Exact/Nested/ZeroAndBeyondDouble", mode: canonical.Exact, in: `{"n":-0.0,"m":1e400,"s":1e-400}`, want: `{"m":1e+400,"n":0,"s":1e-400}`},
	{name: "JCS/Nested/BeyondDouble", in: `{"n":-0.0,"m":1e400}`, wantErr: canonical.ErrNumberRange},
	{name: "Exact/Nested/BeyondBound", mode: canonical.Exact, in: `{"a":[1,1e1000000000]}`, wantErr: canonical.ErrNumberRange},
	{name: "Exact/Nested/RFC8785Sample", mode: canonical.Exact, in: rfcSample, want: `{"literals":[null,true,false],"numbers":[333333333.33333329,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`, reason: "§3.2.2 sample: only 333333333.33333329 differs from JCS"},
	{name: "Exact/Nested/AppendixD", mode: canonical.Exact, in: "{\n  \"giantNumber\": 1.4e+9999,\n  \"payMeThis\": 26000.33,\n  \"int64Max\": 9223372036854775807\n}", want: `{"giantNumber":1.4e+9999,"int64Max":9223372036854775807,"payMeThis":26000.33}`},
	{name: "JCS/Nested/AppendixDWithoutGiant", in: "{\n  \"payMeThis\": 26000.33,\n  \"int64Max\": 9223372036854775807\n}", want: `{"int64Max":9223372036854776000,"payMeThis":26000.33}`},
	{name: "Exact/Nested/Whitespace", mode: canonical.Exact, in: " [ 1.50 , -0 ,\n2E+1 ] ", want: `[1.5,0,20]`},
}

func TestNumbers(t *testing.T) {
	for _, tt := range numberTests {
		t.Run(tt.name, func(t *testing.T) {
			prefix := "JCS/"
			if tt.mode == canonical.Exact {
				prefix = "Exact/"
			}
			if !strings.HasPrefix(tt.name, prefix) {
				t.Fatalf("test name %q does not start with %q, its mode", tt.name, prefix)
			}
			opts := canonical.Options{Numbers: tt.mode}
			got, err := opts.Transform([]byte(tt.in))
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("%v Transform(%q) = %q, %v; want error %v %s", tt.mode, tt.in, got, err, tt.wantErr, tt.reason)
				}
				var e *canonical.Error
				if !errors.As(err, &e) {
					t.Errorf("%v Transform(%q) error %T is not *canonical.Error", tt.mode, tt.in, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("%v Transform(%q) error: %v %s", tt.mode, tt.in, err, tt.reason)
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Fatalf("%v Transform(%q) mismatch (-want +got):\n%s%s", tt.mode, tt.in, diff, tt.reason)
			}
			// The canonical form is a fixed point.
			again, err := opts.Transform(got)
			if err != nil {
				t.Fatalf("%v Transform(%q) error: %v", tt.mode, got, err)
			}
			if diff := cmp.Diff(tt.want, string(again)); diff != "" {
				t.Errorf("%v Transform(%q) mismatch (-want +got):\n%s", tt.mode, got, diff)
			}
		})
	}
}

func TestNumberErrorLocation(t *testing.T) {
	giant := "{\n  \"giantNumber\": 1.4e+9999,\n  \"payMeThis\": 26000.33,\n  \"int64Max\": 9223372036854775807\n}"
	tests := []struct {
		name    string
		mode    canonical.NumberMode
		in      string
		at      string // the number; its first occurrence in `in` is the offset
		pointer string
	}{
		{"JCS/Root", canonical.JCS, `1e400`, `1e400`, ""},
		{"JCS/ArrayInObject", canonical.JCS, `{"a":[0,1e309]}`, `1e309`, "/a/1"},
		{"JCS/AppendixD", canonical.JCS, giant, `1.4e+9999`, "/giantNumber"},
		{"JCS/AfterValidNumbers", canonical.JCS, `[1e308,-1e308,-1e309]`, `-1e309`, "/2"},
		{"Exact/Root", canonical.Exact, ` -1e-1000000000`, `-1e-1000000000`, ""},
		{"Exact/Array", canonical.Exact, `[1,1e1000000000]`, `1e1000000000`, "/1"},
		{"Exact/EscapedPointer", canonical.Exact, `{"a~b/c":-1e-1000000000}`, `-1e-1000000000`, "/a~0b~1c"},
		{"Exact/HugeExponent", canonical.Exact, `{"x":{"y":[true,0.5e99999999999999999999999]}}`, `0.5e99999999999999999999999`, "/x/y/1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := canonical.Options{Numbers: tt.mode}.Transform([]byte(tt.in))
			var e *canonical.Error
			if !errors.As(err, &e) {
				t.Fatalf("%v Transform(%q) error = %v, want *canonical.Error", tt.mode, tt.in, err)
			}
			want := canonical.Error{Offset: int64(strings.Index(tt.in, tt.at)), Pointer: tt.pointer, Err: canonical.ErrNumberRange}
			got := canonical.Error{Offset: e.Offset, Pointer: e.Pointer, Err: canonical.ErrNumberRange}
			if !errors.Is(err, canonical.ErrNumberRange) {
				got.Err = e.Err
			}
			if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b error) bool { return a == b })); diff != "" {
				t.Errorf("%v Transform(%q) error mismatch (-want +got):\n%s", tt.mode, tt.in, diff)
			}
		})
	}
}
