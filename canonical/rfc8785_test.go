package canonical_test

import (
	"encoding/hex"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/idemprint/idemprint/canonical"
)

// The inputs and expected outputs below are transcribed from RFC 8785; the
// section is in each name. Where the RFC states a rule rather than bytes
// (string escapes, duplicate names), the expected bytes follow from that rule.

// rfcSample is the object of RFC 8785 §3.2.2.
const rfcSample = `{
  "numbers": [333333333.33333329, 1E30, 4.50,
              2e-3, 0.000000000000000000000000001],
  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
  "literals": [null, true, false]
}`

// rfcSampleCanonical is its canonical form from RFC 8785 §3.2.3 (the line
// wrap shown there removed).
const rfcSampleCanonical = `{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`

// rfcSampleUTF8 is the hex dump of RFC 8785 §3.2.4, the same canonical form
// as UTF-8 bytes.
const rfcSampleUTF8 = `
7b 22 6c 69 74 65 72 61 6c 73 22 3a 5b 6e 75 6c 6c 2c 74 72
75 65 2c 66 61 6c 73 65 5d 2c 22 6e 75 6d 62 65 72 73 22 3a
5b 33 33 33 33 33 33 33 33 33 2e 33 33 33 33 33 33 33 2c 31
65 2b 33 30 2c 34 2e 35 2c 30 2e 30 30 32 2c 31 65 2d 32 37
5d 2c 22 73 74 72 69 6e 67 22 3a 22 e2 82 ac 24 5c 75 30 30
30 66 5c 6e 41 27 42 5c 22 5c 5c 5c 5c 5c 22 2f 22 7d`

// rfcSortingSample is the property sorting test data of RFC 8785 §3.2.3.
const rfcSortingSample = `{
  "\u20ac": "Euro Sign",
  "\r": "Carriage Return",
  "\ufb33": "Hebrew Letter Dalet With Dagesh",
  "1": "One",
  "\ud83d\ude00": "Emoji: Grinning Face",
  "\u0080": "Control",
  "\u00f6": "Latin Small Letter O With Diaeresis"
}`

// rfcSortingOrder is the "expected argument order after sorting" of §3.2.3.
var rfcSortingOrder = []string{
	"Carriage Return",
	"One",
	"Control",
	"Latin Small Letter O With Diaeresis",
	"Euro Sign",
	"Emoji: Grinning Face",
	"Hebrew Letter Dalet With Dagesh",
}

func mustHex(t *testing.T, dump string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(dump), ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRFC8785(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		want   string
		reason string
	}{{
		name:   "RFC8785/Section3.2.3/PrimitivesAndOrder",
		in:     rfcSample,
		want:   rfcSampleCanonical,
		reason: "§3.2.2 sample, canonical form as printed in §3.2.3",
	}, {
		name: "RFC8785/Section3.2.3/PropertySorting",
		in:   rfcSortingSample,
		// Names sorted by UTF-16 code units: U+000D, "1", U+0080, U+00F6,
		// U+20AC, U+D83D U+DE00 (U+1F600), U+FB33. Only U+0000..U+001F
		// are escaped (§3.2.2.2), so U+0080 and the rest are raw UTF-8.
		want: "{" +
			`"\r":"Carriage Return",` +
			`"1":"One",` +
			"\"\u0080\":\"Control\"," +
			"\"\u00f6\":\"Latin Small Letter O With Diaeresis\"," +
			"\"\u20ac\":\"Euro Sign\"," +
			"\"\U0001F600\":\"Emoji: Grinning Face\"," +
			"\"\ufb33\":\"Hebrew Letter Dalet With Dagesh\"" +
			"}",
		reason: "UTF-16 order puts the astral U+1F600 (surrogate D83D) before U+FB33, unlike code point order",
	}, {
		name: "RFC8785/Section3.2.3/PropertySortingRawUTF8",
		in: "{\"\u20ac\":\"Euro Sign\",\"\\r\":\"Carriage Return\",\"\ufb33\":\"Hebrew Letter Dalet With Dagesh\"," +
			"\"1\":\"One\",\"\U0001F600\":\"Emoji: Grinning Face\",\"\u0080\":\"Control\"," +
			"\"\u00f6\":\"Latin Small Letter O With Diaeresis\"}",
		want: "{" +
			`"\r":"Carriage Return",` +
			`"1":"One",` +
			"\"\u0080\":\"Control\"," +
			"\"\u00f6\":\"Latin Small Letter O With Diaeresis\"," +
			"\"\u20ac\":\"Euro Sign\"," +
			"\"\U0001F600\":\"Emoji: Grinning Face\"," +
			"\"\ufb33\":\"Hebrew Letter Dalet With Dagesh\"" +
			"}",
		reason: "sorting applies to unescaped names (§3.2.3), so raw UTF-8 names sort the same",
	}, {
		name:   "RFC8785/Section3.2.3/SortingShorterFirst",
		in:     `{"ab":4,"aa":3,"a":2,"":1}`,
		want:   `{"":1,"a":2,"aa":3,"ab":4}`,
		reason: `§3.2.3: "", "a", "aa", "ab"`,
	}, {
		name:   "RFC8785/Section3.2.3/SortingRecursive",
		in:     `{"b":[{"z":1,"y":{"d":0,"c":0}}],"a":{"k":[3,2,1],"j":null}}`,
		want:   `{"a":{"j":null,"k":[3,2,1]},"b":[{"y":{"c":0,"d":0},"z":1}]}`,
		reason: "§3.2.3: child objects and objects in arrays are sorted; array order is kept",
	}, {
		name:   "RFC8785/Section3.2.3/SortingUnescapedNewline",
		in:     `{"a":1,"\n":2,"\u0041":3}`,
		want:   `{"\n":2,"A":3,"a":1}`,
		reason: `§3.2.3: a newline name is sorted as U+000A; "\u0041" is "A"`,
	}, {
		name:   "RFC8785/Section3.2.1/Whitespace",
		in:     " \t\r\n[ 1 , { \"a\" : true } , [ ] , { } ] \n",
		want:   `[1,{"a":true},[],{}]`,
		reason: "§3.2.1: no whitespace between tokens",
	}, {
		name:   "RFC8785/Section3.2.2.1/Literals",
		in:     `[null, true, false]`,
		want:   `[null,true,false]`,
		reason: "§3.2.2.1",
	}, {
		name: "RFC8785/Section3.2.2.2/ControlCharacters",
		in: `"\u0000\u0001\u0002\u0003\u0004\u0005\u0006\u0007\u0008\u0009\u000A\u000B\u000C\u000D\u000E\u000F` +
			`\u0010\u0011\u0012\u0013\u0014\u0015\u0016\u0017\u0018\u0019\u001A\u001B\u001C\u001D\u001E\u001F"`,
		want: `"\u0000\u0001\u0002\u0003\u0004\u0005\u0006\u0007\b\t\n\u000b\f\r\u000e\u000f` +
			`\u0010\u0011\u0012\u0013\u0014\u0015\u0016\u0017\u0018\u0019\u001a\u001b\u001c\u001d\u001e\u001f"`,
		reason: "§3.2.2.2: lowercase \\uhhhh except \\b \\t \\n \\f \\r",
	}, {
		name:   "RFC8785/Section3.2.2.2/ShortEscapes",
		in:     `"\b\t\n\f\r\"\\\/"`,
		want:   `"\b\t\n\f\r\"\\/"`,
		reason: "§3.2.2.2: only \" and \\ stay escaped outside the control range",
	}, {
		name:   "RFC8785/Section3.2.2.2/OutsideControlRange",
		in:     `"\u0020\u007f\u0080\u00e9\u2028\u2029\uffff\ud800\udc00\udbff\udfff ~"`,
		want:   "\" \u007f\u0080\u00e9\u2028\u2029\uffff\U00010000\U0010FFFF ~\"",
		reason: "§3.2.2.2: everything else \"as is\" (DEL, U+2028/9 and astral included)",
	}, {
		name:   "RFC8785/AppendixC/WireFormat",
		in:     "{\n  \"name\": \"John Doe\",\n  \"address\": \"2000 Sunset Boulevard\",\n  \"city\": \"Los Angeles\",\n  \"zip\": \"90001\",\n  \"state\": \"CA\"\n}",
		want:   `{"address":"2000 Sunset Boulevard","city":"Los Angeles","name":"John Doe","state":"CA","zip":"90001"}`,
		reason: `Appendix C: order "address", "city", "name", "state", "zip"; one line`,
	}, {
		name:   "RFC8785/AppendixD/BigNumbersAsStrings",
		in:     `{"giantNumber": "1.4e+9999"}`,
		want:   `{"giantNumber":"1.4e+9999"}`,
		reason: "Appendix D: numbers beyond IEEE 754 travel as strings",
	}, {
		name:   "RFC8785/AppendixE/StringSubtypes",
		in:     "{\n  \"time\": \"2019-01-28T07:45:10Z\",\n  \"big\": \"055\",\n  \"val\": 3.5\n}",
		want:   `{"big":"055","time":"2019-01-28T07:45:10Z","val":3.5}`,
		reason: "Appendix E: subtype strings are kept as is (not \"55\", not \"...10.000Z\")",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := canonical.Transform([]byte(tt.in))
			if err != nil {
				t.Fatalf("Transform(%q) error: %v (%s)", tt.in, err, tt.reason)
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("Transform(%q) mismatch (-want +got):\n%s\n%s", tt.in, diff, tt.reason)
			}
		})
	}
}

func TestRFC8785UTF8Generation(t *testing.T) {
	// §3.2.4: the canonical form of the §3.2.2 sample, byte for byte.
	want := mustHex(t, rfcSampleUTF8)
	if diff := cmp.Diff(string(want), rfcSampleCanonical); diff != "" {
		t.Fatalf("transcription of §3.2.3 and §3.2.4 disagree (-§3.2.4 +§3.2.3):\n%s", diff)
	}
	got, err := canonical.Transform([]byte(rfcSample))
	if err != nil {
		t.Fatalf("Transform(%q) error: %v", rfcSample, err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Transform(%q) mismatch (-want +got):\n%s", rfcSample, diff)
	}
}

func TestRFC8785SortingOrder(t *testing.T) {
	// §3.2.3 states the expected order of the values; check it directly so
	// the test does not depend on how the names above were transcribed.
	got, err := canonical.Transform([]byte(rfcSortingSample))
	if err != nil {
		t.Fatalf("Transform(%q) error: %v", rfcSortingSample, err)
	}
	var seen []string
	rest := string(got)
	for {
		i := strings.Index(rest, `":"`)
		if i < 0 {
			break
		}
		rest = rest[i+3:]
		j := strings.IndexByte(rest, '"')
		seen = append(seen, rest[:j])
		rest = rest[j:]
	}
	if diff := cmp.Diff(rfcSortingOrder, seen); diff != "" {
		t.Errorf("Transform(%q) value order mismatch (-want +got):\n%s", rfcSortingSample, diff)
	}
}

// appendixB is Table 1 of RFC 8785 Appendix B: IEEE 754 bits and the JSON
// representation; "" marks NaN and Infinity, which JSON cannot carry.
var appendixB = []struct {
	bits    uint64
	want    string
	comment string
}{
	{0x0000000000000000, "0", "Zero"},
	{0x8000000000000000, "0", "Minus zero"},
	{0x0000000000000001, "5e-324", "Min pos number"},
	{0x8000000000000001, "-5e-324", "Min neg number"},
	{0x7fefffffffffffff, "1.7976931348623157e+308", "Max pos number"},
	{0xffefffffffffffff, "-1.7976931348623157e+308", "Max neg number"},
	{0x4340000000000000, "9007199254740992", "Max pos int (1)"},
	{0xc340000000000000, "-9007199254740992", "Max neg int (1)"},
	{0x4430000000000000, "295147905179352830000", "~2**68 (2)"},
	{0x7fffffffffffffff, "", "NaN (3)"},
	{0x7ff0000000000000, "", "Infinity (3)"},
	{0x44b52d02c7e14af5, "9.999999999999997e+22", ""},
	{0x44b52d02c7e14af6, "1e+23", ""},
	{0x44b52d02c7e14af7, "1.0000000000000001e+23", ""},
	{0x444b1ae4d6e2ef4e, "999999999999999700000", ""},
	{0x444b1ae4d6e2ef4f, "999999999999999900000", ""},
	{0x444b1ae4d6e2ef50, "1e+21", ""},
	{0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7", ""},
	{0x3eb0c6f7a0b5ed8d, "0.000001", ""},
	{0x41b3de4355555553, "333333333.3333332", ""},
	{0x41b3de4355555554, "333333333.33333325", ""},
	{0x41b3de4355555555, "333333333.3333333", ""},
	{0x41b3de4355555556, "333333333.3333334", ""},
	{0x41b3de4355555557, "333333333.33333343", ""},
	{0xbecbf647612f3696, "-0.0000033333333333333333", ""},
	{0x43143ff3c1cb0959, "1424953923781206.2", "Round to even (4)"},
}

func TestRFC8785AppendixB(t *testing.T) {
	if len(appendixB) != 26 {
		t.Fatalf("Appendix B has 26 rows, table has %d", len(appendixB))
	}
	exact := canonical.Options{Numbers: canonical.Exact}
	for _, row := range appendixB {
		x := math.Float64frombits(row.bits)
		name := "RFC8785/AppendixB/" + strconv.FormatUint(row.bits, 16)
		t.Run(name, func(t *testing.T) {
			if row.want == "" {
				// Note (3): NaN and Infinity are not JSON numbers; no
				// literal can produce them.
				in := "NaN"
				wantErr := canonical.ErrSyntax
				switch {
				case math.IsInf(x, 1):
					in, wantErr = "1e400", canonical.ErrNumberRange
				case math.IsInf(x, -1):
					in, wantErr = "-1e400", canonical.ErrNumberRange
				case !math.IsNaN(x):
					t.Fatalf("%016x is finite (%v); table has no JSON form for it", row.bits, x)
				}
				if got, err := canonical.Transform([]byte(in)); !errors.Is(err, wantErr) {
					t.Errorf("Transform(%q) = %q, %v; want error %v", in, got, err, wantErr)
				}
				return
			}
			// The literal of every row must be valid input to both modes
			// and come out unchanged (JCS output is a fixed point; Exact
			// keeps digits that are already shortest).
			for _, m := range []struct {
				name string
				fn   func([]byte) ([]byte, error)
			}{{"Transform", canonical.Transform}, {"Exact.Transform", exact.Transform}} {
				got, err := m.fn([]byte(row.want))
				if err != nil {
					t.Errorf("%s(%q) error: %v", m.name, row.want, err)
				} else if diff := cmp.Diff(row.want, string(got)); diff != "" {
					t.Errorf("%s(%q) mismatch (-want +got):\n%s", m.name, row.want, diff)
				}
			}
			// Other spellings of the same double must give the row's form.
			for _, in := range []string{
				strconv.FormatFloat(x, 'e', 16, 64),
				strconv.FormatFloat(x, 'E', 25, 64),
				strconv.FormatFloat(x, 'e', 767, 64), // the exact value
				"[" + strconv.FormatFloat(x, 'g', 17, 64) + "]",
			} {
				want := row.want
				if strings.HasPrefix(in, "[") {
					want = "[" + want + "]"
				}
				got, err := canonical.Transform([]byte(in))
				if err != nil {
					t.Errorf("Transform(%q) error: %v", in, err)
				} else if diff := cmp.Diff(want, string(got)); diff != "" {
					t.Errorf("Transform(%q) mismatch (-want +got):\n%s", in, diff)
				}
			}
		})
	}
	if t.Failed() {
		return
	}
	// Note (4): 1424953923781206.25 is exactly the double 43143ff3c1cb0959
	// and is written with its last digit rounded to even.
	if x := math.Float64frombits(0x43143ff3c1cb0959); x != 1424953923781206.25 {
		t.Fatalf("43143ff3c1cb0959 is %v, RFC says 1424953923781206.25", x)
	}
}

func TestRFC8785Rejections(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		wantErr error
		reason  string
	}{
		// Appendix B note (3), §3.2.2.3: NaN and Infinity cannot be
		// expressed in JSON, and a literal beyond the double range must
		// not become Infinity (nor be clamped to the largest double).
		{"RFC8785/AppendixB/NaNLiteral", `NaN`, canonical.ErrSyntax, "not JSON"},
		{"RFC8785/AppendixB/NaNInArray", `[1,NaN]`, canonical.ErrSyntax, "not JSON"},
		{"RFC8785/AppendixB/InfinityLiteral", `Infinity`, canonical.ErrSyntax, "not JSON"},
		{"RFC8785/AppendixB/NegativeInfinityLiteral", `-Infinity`, canonical.ErrSyntax, "not JSON"},
		{"RFC8785/AppendixB/Overflow1e400", `1e400`, canonical.ErrNumberRange, "rounds to +Infinity"},
		{"RFC8785/AppendixB/OverflowNegative", `-1e400`, canonical.ErrNumberRange, "rounds to -Infinity"},
		{"RFC8785/AppendixB/OverflowJustAboveMax", `1.7976931348623159e308`, canonical.ErrNumberRange, "past the midpoint between the largest double and 2^1024"},
		{"RFC8785/AppendixB/Overflow2Pow1024", `179769313486231590772930519078902473361797697894230657273430081157732675805500963132708477322407536021120113879871393357658789768814416622492847430639474124377767893424865485276302219601246094119453082952085005768838150682342462881473913110540827237163350510684586298239947245938479716304835356329624224137216`, canonical.ErrNumberRange, "2^1024 written out"},
		{"RFC8785/AppendixB/OverflowInObject", `{"a":[0,1e309]}`, canonical.ErrNumberRange, "nested"},
		// Appendix D: "giantNumber": 1.4e+9999 is valid JSON, but not an
		// IEEE 754 double, so JCS (§3.1) must refuse it rather than round.
		{"RFC8785/AppendixD/GiantNumber", "{\n  \"giantNumber\": 1.4e+9999,\n  \"payMeThis\": 26000.33,\n  \"int64Max\": 9223372036854775807\n}", canonical.ErrNumberRange, "Appendix D sample"},
		// §3.1 (I-JSON): no duplicate names, strings must be Unicode.
		{"RFC8785/Section3.1/DuplicateName", `{"a":1,"a":2}`, canonical.ErrDuplicateName, "I-JSON §2.3"},
		{"RFC8785/Section3.1/DuplicateNameAfterUnescape", `{"a":1,"\u0061":1}`, canonical.ErrDuplicateName, "names compare unescaped"},
		{"RFC8785/Section3.1/DuplicateNameNested", `[{"x":{"b":1,"c":2,"b":3}}]`, canonical.ErrDuplicateName, "in a nested object"},
		// §3.2.2.2 note: lone surrogates such as U+DEAD must be an error.
		{"RFC8785/Section3.2.2.2/LoneSurrogateDEAD", `"\udead"`, canonical.ErrInvalidSurrogate, "the RFC's example"},
		{"RFC8785/Section3.2.2.2/LoneHighSurrogate", `"\ud83d"`, canonical.ErrInvalidSurrogate, "high without low"},
		{"RFC8785/Section3.2.2.2/ReversedSurrogates", `"\ude00\ud83d"`, canonical.ErrInvalidSurrogate, "low before high"},
		{"RFC8785/Section3.2.2.2/LoneSurrogateInName", `{"\udead":1}`, canonical.ErrInvalidSurrogate, "property names too"},
		{"RFC8785/Section3.2.2.2/InvalidUTF8", "\"\xff\"", canonical.ErrInvalidUTF8, "not Unicode"},
		{"RFC8785/Section3.2.2.2/EncodedSurrogate", "\"\xed\xba\xad\"", canonical.ErrInvalidUTF8, "U+DEAD encoded in UTF-8 is not UTF-8"},
	}
	exact := canonical.Options{Numbers: canonical.Exact}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := canonical.Transform([]byte(tt.in))
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Transform(%q) = %q, %v; want error %v (%s)", tt.in, got, err, tt.wantErr, tt.reason)
			}
			var e *canonical.Error
			if !errors.As(err, &e) {
				t.Errorf("Transform(%q) error %T is not *canonical.Error", tt.in, err)
			}
			if tt.wantErr == canonical.ErrNumberRange {
				return // Exact mode accepts these; see exact_test.go
			}
			if _, err := exact.Transform([]byte(tt.in)); !errors.Is(err, tt.wantErr) {
				t.Errorf("Exact.Transform(%q) error %v, want %v", tt.in, err, tt.wantErr)
			}
		})
	}
}
