package canonical_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/idemprint/idemprint/canonical"
)

// wantErr is the part of an *Error a test pins down.
type wantErr struct {
	Sentinel error
	Offset   int64
	Pointer  string
}

func TestInvalid(t *testing.T) {
	tests := []struct {
		name string
		in   string
		opts canonical.Options
		want wantErr
	}{
		{"Syntax/Empty", ``, canonical.Options{}, wantErr{canonical.ErrSyntax, 0, ""}},
		{"Syntax/OnlySpace", " \n\t", canonical.Options{}, wantErr{canonical.ErrSyntax, 3, ""}},
		{"Syntax/ByteOrderMark", "\xef\xbb\xbf{}", canonical.Options{}, wantErr{canonical.ErrSyntax, 0, ""}},
		{"Syntax/TrailingData", `{} {}`, canonical.Options{}, wantErr{canonical.ErrSyntax, 3, ""}},
		{"Syntax/TrailingGarbageAfterScalar", `1 x`, canonical.Options{}, wantErr{canonical.ErrSyntax, 2, ""}},
		{"Syntax/TrailingCommaObject", `{"a":1,}`, canonical.Options{}, wantErr{canonical.ErrSyntax, 7, ""}},
		{"Syntax/TrailingCommaArray", `[1,]`, canonical.Options{}, wantErr{canonical.ErrSyntax, 3, ""}},
		{"Syntax/Comment", `{"a":1 /* c */}`, canonical.Options{}, wantErr{canonical.ErrSyntax, 7, ""}},
		{"Syntax/LineComment", "[1, // c\n2]", canonical.Options{}, wantErr{canonical.ErrSyntax, 4, "/1"}},
		{"Syntax/SingleQuotes", `{'a':1}`, canonical.Options{}, wantErr{canonical.ErrSyntax, 1, ""}},
		{"Syntax/SingleQuotedValue", `{"a":'x'}`, canonical.Options{}, wantErr{canonical.ErrSyntax, 5, "/a"}},
		{"Syntax/UnquotedName", `{a:1}`, canonical.Options{}, wantErr{canonical.ErrSyntax, 1, ""}},
		{"Syntax/MissingColon", `{"a" 1}`, canonical.Options{}, wantErr{canonical.ErrSyntax, 5, "/a"}},
		{"Syntax/MissingComma", `[1 2]`, canonical.Options{}, wantErr{canonical.ErrSyntax, 3, ""}},
		{"Syntax/MismatchedClose", `[1}`, canonical.Options{}, wantErr{canonical.ErrSyntax, 2, ""}},
		{"Syntax/UnclosedArray", `[1,[2]`, canonical.Options{}, wantErr{canonical.ErrSyntax, 6, ""}},
		{"Syntax/UnclosedObjectInArray", `[{"a":[true`, canonical.Options{}, wantErr{canonical.ErrSyntax, 11, "/0/a"}},
		{"Syntax/UnterminatedString", `{"a":"abc`, canonical.Options{}, wantErr{canonical.ErrSyntax, 9, "/a"}},
		{"Syntax/RawControlInString", "[\"a\tb\"]", canonical.Options{}, wantErr{canonical.ErrSyntax, 3, "/0"}},
		{"Syntax/RawNewlineInName", "{\"a\nb\":1}", canonical.Options{}, wantErr{canonical.ErrSyntax, 3, ""}},
		{"Syntax/BadEscape", `["\x"]`, canonical.Options{}, wantErr{canonical.ErrSyntax, 2, "/0"}},
		{"Syntax/ShortUnicodeEscape", `["\u12"]`, canonical.Options{}, wantErr{canonical.ErrSyntax, 2, "/0"}},
		{"Syntax/BadHexEscape", `["\u12g4"]`, canonical.Options{}, wantErr{canonical.ErrSyntax, 2, "/0"}},
		{"Syntax/LeadingZero", `{"n":01}`, canonical.Options{}, wantErr{canonical.ErrSyntax, 5, "/n"}},
		{"Syntax/NegativeLeadingZero", `[-01]`, canonical.Options{}, wantErr{canonical.ErrSyntax, 1, "/0"}},
		{"Syntax/PlusSign", `[+1]`, canonical.Options{}, wantErr{canonical.ErrSyntax, 1, "/0"}},
		{"Syntax/LeadingPoint", `[.5]`, canonical.Options{}, wantErr{canonical.ErrSyntax, 1, "/0"}},
		{"Syntax/TrailingPoint", `[1.]`, canonical.Options{}, wantErr{canonical.ErrSyntax, 1, "/0"}},
		{"Syntax/EmptyExponent", `[1e]`, canonical.Options{}, wantErr{canonical.ErrSyntax, 1, "/0"}},
		{"Syntax/SignOnlyExponent", `[1e+]`, canonical.Options{}, wantErr{canonical.ErrSyntax, 1, "/0"}},
		{"Syntax/LoneMinus", `[-]`, canonical.Options{}, wantErr{canonical.ErrSyntax, 1, "/0"}},
		{"Syntax/Hex", `[0x10]`, canonical.Options{}, wantErr{canonical.ErrSyntax, 2, ""}},
		{"Syntax/NaN", `[NaN]`, canonical.Options{}, wantErr{canonical.ErrSyntax, 1, "/0"}},
		{"Syntax/Infinity", `[Infinity]`, canonical.Options{}, wantErr{canonical.ErrSyntax, 1, "/0"}},
		{"Syntax/NegativeInfinity", `[-Infinity]`, canonical.Options{}, wantErr{canonical.ErrSyntax, 1, "/0"}},
		{"Syntax/MisspelledLiteral", `[tru]`, canonical.Options{}, wantErr{canonical.ErrSyntax, 1, "/0"}},
		{"Syntax/TruncatedLiteral", `[nul`, canonical.Options{}, wantErr{canonical.ErrSyntax, 4, "/0"}},
		{"Syntax/UppercaseLiteral", `True`, canonical.Options{}, wantErr{canonical.ErrSyntax, 0, ""}},
		{"Syntax/NonBreakingSpace", "[1,\u00a02]", canonical.Options{}, wantErr{canonical.ErrSyntax, 3, "/1"}},
		{"Syntax/FormFeedSpace", "[1,\f2]", canonical.Options{}, wantErr{canonical.ErrSyntax, 3, "/1"}},

		{"DuplicateName/Plain", `{"amount":10,"amount":10000}`, canonical.Options{}, wantErr{canonical.ErrDuplicateName, 13, "/amount"}},
		{"DuplicateName/AfterUnescape", `{"a":1,"\u0061":2}`, canonical.Options{}, wantErr{canonical.ErrDuplicateName, 7, "/a"}},
		{"DuplicateName/EscapedSolidus", `{"a/b":1,"a\/b":2}`, canonical.Options{}, wantErr{canonical.ErrDuplicateName, 9, "/a~1b"}},
		{"DuplicateName/SurrogatePair", `{"😀":1,"\ud83d\ude00":2}`, canonical.Options{}, wantErr{canonical.ErrDuplicateName, 10, "/😀"}},
		{"DuplicateName/Unsorted", `{"z":1,"b":2,"a":3,"b":4}`, canonical.Options{}, wantErr{canonical.ErrDuplicateName, 19, "/b"}},
		{"DuplicateName/FirstRepeatWins", `{"y":1,"x":2,"y":3,"x":4}`, canonical.Options{}, wantErr{canonical.ErrDuplicateName, 13, "/y"}},
		{"DuplicateName/Nested", `{"a":[{"k":1,"k":2}]}`, canonical.Options{}, wantErr{canonical.ErrDuplicateName, 13, "/a/0/k"}},
		{"DuplicateName/PointerEscapesTilde", `{"~":1,"~":2}`, canonical.Options{}, wantErr{canonical.ErrDuplicateName, 7, "/~0"}},

		{"InvalidUTF8/ContinuationByte", "[\"\x80\"]", canonical.Options{}, wantErr{canonical.ErrInvalidUTF8, 2, "/0"}},
		{"InvalidUTF8/Overlong", "[\"\xc0\xaf\"]", canonical.Options{}, wantErr{canonical.ErrInvalidUTF8, 2, "/0"}},
		{"InvalidUTF8/OverlongThreeByte", "[\"\xe0\x80\xaf\"]", canonical.Options{}, wantErr{canonical.ErrInvalidUTF8, 2, "/0"}},
		{"InvalidUTF8/EncodedSurrogate", "[\"\xed\xa0\x80\"]", canonical.Options{}, wantErr{canonical.ErrInvalidUTF8, 2, "/0"}},
		{"InvalidUTF8/Truncated", "[\"a\xe2\x82\"]", canonical.Options{}, wantErr{canonical.ErrInvalidUTF8, 3, "/0"}},
		{"InvalidUTF8/F5", "[\"\xf5\x80\x80\x80\"]", canonical.Options{}, wantErr{canonical.ErrInvalidUTF8, 2, "/0"}},
		{"InvalidUTF8/FF", "[\"\xff\"]", canonical.Options{}, wantErr{canonical.ErrInvalidUTF8, 2, "/0"}},
		{"InvalidUTF8/AboveMaxRune", "[\"\xf4\x90\x80\x80\"]", canonical.Options{}, wantErr{canonical.ErrInvalidUTF8, 2, "/0"}},
		{"InvalidUTF8/InName", "{\"a\xff\":1}", canonical.Options{}, wantErr{canonical.ErrInvalidUTF8, 3, ""}},
		{"InvalidUTF8/OutsideString", "[\xc3\xa9]", canonical.Options{}, wantErr{canonical.ErrSyntax, 1, "/0"}},

		{"InvalidSurrogate/LoneHigh", `["\ud800"]`, canonical.Options{}, wantErr{canonical.ErrInvalidSurrogate, 2, "/0"}},
		{"InvalidSurrogate/LoneLow", `["\udc00"]`, canonical.Options{}, wantErr{canonical.ErrInvalidSurrogate, 2, "/0"}},
		{"InvalidSurrogate/Reversed", `["\ude00\ud83d"]`, canonical.Options{}, wantErr{canonical.ErrInvalidSurrogate, 2, "/0"}},
		{"InvalidSurrogate/HighThenText", `["\ud83dx"]`, canonical.Options{}, wantErr{canonical.ErrInvalidSurrogate, 2, "/0"}},
		{"InvalidSurrogate/HighHigh", `["\ud83d\ud83d"]`, canonical.Options{}, wantErr{canonical.ErrInvalidSurrogate, 2, "/0"}},
		{"InvalidSurrogate/HighAtEnd", `{"k":"ab\uD83D"}`, canonical.Options{}, wantErr{canonical.ErrInvalidSurrogate, 8, "/k"}},

		{"NumberRange/Overflow", `{"a":1e400}`, canonical.Options{}, wantErr{canonical.ErrNumberRange, 5, "/a"}},
		{"NumberRange/NegativeOverflow", `[-1.8e308]`, canonical.Options{}, wantErr{canonical.ErrNumberRange, 1, "/0"}},
		{"NumberRange/ExactExponent", `[1e1000000000]`, canonical.Options{Numbers: canonical.Exact}, wantErr{canonical.ErrNumberRange, 1, "/0"}},

		{"TooDeep/Default", strings.Repeat("[", 10001) + strings.Repeat("]", 10001), canonical.Options{}, wantErr{canonical.ErrTooDeep, 10000, "/0/0/0/0/0/0/0/0/0/0" + strings.Repeat("/0", 9990)}},
		{"TooDeep/Configured", `{"a":{"b":[1]}}`, canonical.Options{MaxDepth: 2}, wantErr{canonical.ErrTooDeep, 10, "/a/b"}},
		{"TooDeep/NoNesting", `[]`, canonical.Options{MaxDepth: -1}, wantErr{canonical.ErrTooDeep, 0, ""}},
		{"TooLarge", `[1,2,3]`, canonical.Options{MaxBytes: 4}, wantErr{canonical.ErrTooLarge, 4, ""}},

		{"Noncharacter/Literal", "[\"\uFFFE\"]", canonical.Options{RejectNoncharacters: true}, wantErr{canonical.ErrNoncharacter, 2, "/0"}},
		{"Noncharacter/Escaped", `["\uFDD0"]`, canonical.Options{RejectNoncharacters: true}, wantErr{canonical.ErrNoncharacter, 2, "/0"}},
		{"Noncharacter/Astral", `["\ud83f\udfff"]`, canonical.Options{RejectNoncharacters: true}, wantErr{canonical.ErrNoncharacter, 2, "/0"}},
	}
	sentinels := []error{canonical.ErrSyntax, canonical.ErrDuplicateName, canonical.ErrInvalidUTF8, canonical.ErrInvalidSurrogate,
		canonical.ErrNumberRange, canonical.ErrTooDeep, canonical.ErrTooLarge, canonical.ErrNoncharacter}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := []byte("prefix")
			out, err := tt.opts.Append(dst, []byte(tt.in))
			if string(out) != "prefix" {
				t.Errorf("Append on error returned %q, want dst unchanged", out)
			}
			var ce *canonical.Error
			if !errors.As(err, &ce) {
				t.Fatalf("Append(%q) error = %v, want *canonical.Error", tt.in, err)
			}
			got := wantErr{Offset: ce.Offset, Pointer: ce.Pointer}
			for _, s := range sentinels {
				if errors.Is(err, s) {
					if got.Sentinel != nil {
						t.Errorf("error matches both %v and %v", got.Sentinel, s)
					}
					got.Sentinel = s
				}
			}
			if diff := cmp.Diff(tt.want, got, cmp.Comparer(func(a, b error) bool { return a == b })); diff != "" {
				t.Errorf("Append(%.40q) error %v mismatch (-want +got):\n%s", tt.in, err, diff)
			}
			if msg := err.Error(); !strings.HasPrefix(msg, "canonical: ") || strings.Count(msg, "canonical:") != 1 || len(msg) > 200 {
				t.Errorf("message %q: want one prefix and a bounded length", msg)
			}
			checkValidate(t, tt.opts, []byte(tt.in))
		})
	}
}

// checkValidate checks that Validate returns what Append returns, error
// for error (offset, pointer, message) or nil.
func checkValidate(t *testing.T, opts canonical.Options, in []byte) {
	t.Helper()
	_, want := opts.Append(nil, in)
	got := opts.Validate(in)
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b error) bool {
		return a == nil && b == nil || a != nil && b != nil && a.Error() == b.Error() && errors.Is(b, errors.Unwrap(errors.Unwrap(a)))
	})); diff != "" {
		t.Errorf("Validate(%.60q) and Append disagree (-Append +Validate):\n%s", in, diff)
	}
}

// FuzzValidate checks Validate against Append in both number modes.
func FuzzValidate(f *testing.F) {
	for _, tt := range numberTests {
		f.Add("[" + tt.in + "]")
	}
	for _, s := range jcsNumberSeeds {
		f.Add(`{"b":` + s + `,"a":"\u00e9"}`)
	}
	for _, s := range []string{`{"a":1,"a":2}`, `{"b":{"d":1,"c":2},"a":[{"z":0,"y":1}],"c":{"x":1,"x":2}}`, wideUnsorted(40), "[\"\xff\"]", `{"\ud800":1}`, `[1,]`, `{"a":[1e400]}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		for _, opts := range []canonical.Options{{}, {Numbers: canonical.Exact}, {MaxDepth: 3, RejectNoncharacters: true}} {
			checkValidate(t, opts, []byte(in))
		}
	})
}

// TestValid covers the accepted forms that the RFC tables do not.
func TestValid(t *testing.T) {
	tests := []struct {
		name, in, want string
		opts           canonical.Options
	}{
		{"Scalar/String", ` "a" `, `"a"`, canonical.Options{}},
		{"Scalar/True", "\ttrue\r\n", `true`, canonical.Options{}},
		{"Scalar/Null", `null`, `null`, canonical.Options{}},
		{"Empty/Object", `{ }`, `{}`, canonical.Options{}},
		{"Empty/Array", `[ ]`, `[]`, canonical.Options{}},
		{"Empty/Nested", `[{},[],{"":[]}]`, `[{},[],{"":[]}]`, canonical.Options{}},
		{"Order/Nested", `{"b":{"d":1,"c":2},"a":[{"z":0,"y":1}]}`, `{"a":[{"y":1,"z":0}],"b":{"c":2,"d":1}}`, canonical.Options{}},
		{"Order/EmptyNameFirst", `{"a":1,"":2}`, `{"":2,"a":1}`, canonical.Options{}},
		{"Order/PrefixFirst", `{"ab":1,"a":2}`, `{"a":2,"ab":1}`, canonical.Options{}},
		{"Order/UTF16AstralBeforeE000", `{"\ue000":1,"😀":2}`, `{"😀":2,"` + "\ue000" + `":1}`, canonical.Options{}},
		{"Order/ControlEscapes", `{"\u0002":1,"\u0001":2,"\n":3}`, `{"\u0001":2,"\u0002":1,"\n":3}`, canonical.Options{}},
		{"Order/QuoteAndBackslash", `{"\\":1,"\"":2,"#":3}`, `{"\"":2,"#":3,"\\":1}`, canonical.Options{}},
		{"String/Escapes", `"\u00e9\/\u0041\b\f\n\r\t\u001F\u007f\u2028"`, "\"é/A\\b\\f\\n\\r\\t\\u001f\u007f\u2028\"", canonical.Options{}},
		{"String/NoncharacterAcceptedByDefault", `"\uffff"`, "\"\uffff\"", canonical.Options{}},
		{"Depth/AtLimit", strings.Repeat("[", 3) + strings.Repeat("]", 3), `[[[]]]`, canonical.Options{MaxDepth: 3}},
		{"Depth/NoNestingScalar", `1.50`, `1.5`, canonical.Options{MaxDepth: -1}},
		{"Size/AtLimit", `[1]`, `[1]`, canonical.Options{MaxBytes: 3}},
		{"Numbers/ExactKeepsBig", `[9007199254740993]`, `[9007199254740993]`, canonical.Options{Numbers: canonical.Exact}},
		{"Numbers/JCSMergesBig", `[9007199254740993]`, `[9007199254740992]`, canonical.Options{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.opts.Transform([]byte(tt.in))
			if err != nil {
				t.Fatalf("Transform(%q): %v", tt.in, err)
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("Transform(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
			again, err := tt.opts.Transform(got)
			if err != nil || !bytes.Equal(again, got) {
				t.Errorf("Transform is not idempotent on %q: %q, %v", got, again, err)
			}
			checkValidate(t, tt.opts, []byte(tt.in))
		})
	}
}

func TestDepthLimitDefault(t *testing.T) {
	in := strings.Repeat("[", canonical.DefaultMaxDepth) + strings.Repeat("]", canonical.DefaultMaxDepth)
	out, err := canonical.Transform([]byte(in))
	if err != nil || string(out) != in {
		t.Fatalf("Transform of depth %d: err %v, output equal %v", canonical.DefaultMaxDepth, err, string(out) == in)
	}
}

// TestHostileNesting checks that 20 MB of '[' fails fast, at the limit,
// without reading on or holding memory in proportion to the input.
func TestHostileNesting(t *testing.T) {
	in := bytes.Repeat([]byte("["), 20<<20)
	start := time.Now()
	_, err := canonical.Transform(in)
	if !errors.Is(err, canonical.ErrTooDeep) {
		t.Fatalf("Transform(20 MB of '['): %v, want ErrTooDeep", err)
	}
	var ce *canonical.Error
	errors.As(err, &ce)
	if ce.Offset != canonical.DefaultMaxDepth {
		t.Errorf("offset %d, want %d", ce.Offset, canonical.DefaultMaxDepth)
	}
	// Not a speed assertion: a quadratic or input-proportional scan would
	// take minutes, not this bound.
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("took %v", d)
	}
	if raceEnabled {
		return // the race detector empties sync.Pool at random
	}
	allocs := testing.AllocsPerRun(3, func() {
		var buf [64]byte
		canonical.Options{MaxDepth: 5}.Append(buf[:0], in)
	})
	if allocs > 4 { // the *Error and its pointer only
		t.Errorf("rejecting deep input allocated %v times", allocs)
	}
}

func TestAppendKeepsPrefix(t *testing.T) {
	dst := []byte(`prefix:`)
	out, err := canonical.Append(dst, []byte(`{"b":1,"a":2}`))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(`prefix:{"a":2,"b":1}`, string(out)); diff != "" {
		t.Errorf("Append mismatch (-want +got):\n%s", diff)
	}
}

func TestAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector empties sync.Pool at random")
	}
	inputs := map[string]string{
		"sorted":   `{"a":1,"b":[true,false,null],"c":"x"}`,
		"unsorted": `{"z":{"y":1,"x":2},"b":[1.50,2e3,"\u00e9"],"a":"😀","\ue000":9007199254740993}`,
		"numbers":  `[1e400,123456789012345678901234,0.1,-0.0,5e-324,1.7976931348623157e308]`,
		// Sorted by keys: in place at the top, in the final pass inside.
		"wide":       wideUnsorted(300),
		"wideNested": `{"z":` + wideUnsorted(300) + `,"a":[` + wideUnsorted(20) + `]}`,
	}
	for name, in := range inputs {
		for _, opts := range []canonical.Options{{}, {Numbers: canonical.Exact}} {
			src := []byte(in)
			if opts.Numbers == canonical.JCS && name == "numbers" {
				src = []byte(`[123456789012345678901234,0.1,-0.0,5e-324,1.7976931348623157e308]`)
			}
			buf, err := opts.Append(nil, src)
			if err != nil {
				t.Fatalf("%s/%v: %v", name, opts.Numbers, err)
			}
			allocs := testing.AllocsPerRun(100, func() {
				buf, _ = opts.Append(buf[:0], src)
			})
			if allocs != 0 {
				t.Errorf("%s/%v: Append allocated %v times per run, want 0", name, opts.Numbers, allocs)
			}
			if allocs := testing.AllocsPerRun(100, func() { opts.Validate(src) }); allocs != 0 {
				t.Errorf("%s/%v: Validate allocated %v times per run, want 0", name, opts.Numbers, allocs)
			}
		}
	}
}

// wideUnsorted returns an object of n members in a fixed shuffled order,
// named with long shared prefixes and a few escapes.
func wideUnsorted(n int) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		k := (i * 7919) % n
		if k%10 == 0 {
			b.WriteString(`"metric.latency.\u00e9` + strconv.Itoa(k) + `":1`)
		} else {
			b.WriteString(`"metric.latency.p` + strconv.Itoa(k) + `":1`)
		}
	}
	b.WriteByte('}')
	return b.String()
}

func TestAppendString(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", `""`},
		{"plain", `"plain"`},
		{"a\"b\\c/d", `"a\"b\\c/d"`},
		{"\x00\x1f\b\t\n\f\r\x7f", `"\u0000\u001f\b\t\n\f\r` + "\x7f" + `"`},
		{"é😀\ue000\u2028", "\"é😀\ue000\u2028\""},
	}
	for _, tt := range tests {
		got, err := canonical.AppendString([]byte("x"), tt.in)
		if err != nil {
			t.Fatalf("AppendString(%q): %v", tt.in, err)
		}
		if diff := cmp.Diff("x"+tt.want, string(got)); diff != "" {
			t.Errorf("AppendString(%q) mismatch (-want +got):\n%s", tt.in, diff)
		}
		// The output is a canonical JSON string for the same text.
		var s string
		if err := json.Unmarshal(got[1:], &s); err != nil || s != tt.in {
			t.Errorf("AppendString(%q) decodes to %q, %v", tt.in, s, err)
		}
		if canon, err := canonical.Transform(got[1:]); err != nil || !bytes.Equal(canon, got[1:]) {
			t.Errorf("AppendString(%q) = %s is not canonical (%s, %v)", tt.in, got[1:], canon, err)
		}
	}
	out, err := canonical.AppendString([]byte("keep"), "ok\xffno")
	if !errors.Is(err, canonical.ErrInvalidUTF8) || string(out) != "keep" {
		t.Errorf("AppendString(invalid) = %q, %v; want dst unchanged and ErrInvalidUTF8", out, err)
	}
	var ce *canonical.Error
	if errors.As(err, &ce) && ce.Offset != 2 {
		t.Errorf("offset %d, want 2", ce.Offset)
	}
}

func TestNumberModeText(t *testing.T) {
	for _, m := range []canonical.NumberMode{canonical.JCS, canonical.Exact} {
		b, err := m.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var back canonical.NumberMode
		if err := back.UnmarshalText(b); err != nil || back != m {
			t.Errorf("round trip of %v: %v, %v", m, back, err)
		}
	}
	var m canonical.NumberMode
	if err := m.UnmarshalText([]byte("float")); err == nil {
		t.Error(`UnmarshalText("float") succeeded`)
	}
	if _, err := canonical.NumberMode(7).MarshalText(); err == nil {
		t.Error("MarshalText of an unknown mode succeeded")
	}
	if _, err := (canonical.Options{Numbers: 7}).Transform([]byte(`1`)); err == nil {
		t.Error("Transform with an unknown mode succeeded")
	}
}

// TestUnsortedNestingIsLinear guards against moving every nested object
// again at each enclosing unsorted object: with a big member first at each
// of 10,000 levels, that took minutes for this 8 MB input. Not a speed
// assertion: linear work takes milliseconds, so the bound only catches
// quadratic behaviour.
func TestUnsortedNestingIsLinear(t *testing.T) {
	const depth = 10000
	for _, leaf := range []string{strings.Repeat("x", 8<<20), "x"} {
		pad := strings.Repeat(" ", 800) // 8 MB of input with a short leaf too
		if len(leaf) > 1 {
			pad = ""
		}
		in := strings.Repeat(`{"b":`+pad, depth) + `"` + leaf + `"` + strings.Repeat(`,"a":1}`, depth)
		start := time.Now()
		out, err := canonical.Transform([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("Transform of %d bytes took %v", len(in), d)
		}
		want := strings.Repeat(`{"a":1,"b":`, depth) + `"` + leaf + `"` + strings.Repeat(`}`, depth)
		if string(out) != want {
			t.Errorf("Transform of nested unsorted objects: wrong output (len %d, want %d)", len(out), len(want))
		}
	}
}

// TestReorderMatchesModel checks the two ways unsorted objects are put in
// order (in place when small, in one final pass when large or holding
// pending ones) against encoding/json, which sorts the keys of a map, on
// random nested documents with ASCII names and mixed sizes.
func TestReorderMatchesModel(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var gen func(depth int) string
	gen = func(depth int) string {
		switch k := r.IntN(6); {
		case depth > 6 || k == 0:
			return strconv.Quote(strings.Repeat(string(rune('a'+r.IntN(26))), r.IntN(400)))
		case k == 1:
			return strconv.Itoa(r.IntN(1000))
		case k == 2:
			parts := make([]string, r.IntN(4))
			for i := range parts {
				parts[i] = gen(depth + 1)
			}
			return "[" + strings.Join(parts, ",") + "]"
		default:
			n := r.IntN(6)
			perm := r.Perm(26)[:n]
			parts := make([]string, n)
			for i, p := range perm {
				parts[i] = strconv.Quote(string(rune('a'+p))+"k") + ":" + gen(depth+1)
			}
			return "{" + strings.Join(parts, ",") + "}"
		}
	}
	for n := 0; n < 2000; n++ {
		in := gen(0)
		var v any
		if err := json.Unmarshal([]byte(in), &v); err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		got, err := canonical.Transform([]byte(in))
		if err != nil {
			t.Fatalf("Transform(%.80s): %v", in, err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("Transform(%.200s) mismatch (-want +got):\n%s", in, cmp.Diff(string(want), string(got)))
		}
	}
}
