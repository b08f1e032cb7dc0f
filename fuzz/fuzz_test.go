package fuzz

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/idemprint/idemprint/canonical"
	"github.com/idemprint/idemprint/fingerprint"
)

// seedTexts start every fuzz target (with f.Add) and TestSeeds, which holds
// them to the same checks without fuzzing.
var seedTexts = []struct{ name, text string }{
	{"RFC8785/Sample", `{"numbers":[333333333.33333329,1E30,4.50,2e-3,0.000000000000000000000000001],"string":"\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/","literals":[null,true,false]}`},
	{"RFC8785/Sorting", `{"\u20ac":"Euro Sign","\r":"Carriage Return","\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One","\ud83d\ude00":"Emoji: Grinning Face","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis"}`},
	{"Valid/Scalars", `[null,true,false,0,-0,"",[],{}]`},
	{"Valid/Whitespace", " \t\r\n{ \"a\" : [ 1 , 2 ] } \n"},
	{"Valid/UTF16OrderDiffersFromCodePoints", `{"\ue000":1,"\ud83d\ude00":2,"\uffff":3,"` + "\U0010ffff\U0001f601" + `":4}`},
	{"Valid/Escapes", `"\u00e9\u00E9\/\b\f\n\r\t\u0000\u001F\u007f\uD83D\uDE00\ud83d\ude00"`},
	{"Valid/ControlsAsUnicodeEscapes", `"\u0008\u0009\u000a\u000c\u000d\u0022\u005c\u002f"`},
	{"Valid/Noncharacters", "[\"\\uffff\",\"\\ufdd0\",\"\uffff\",\"\U0010fffe\"]"},
	{"Valid/NamesLikePaths", `{"a.b":1,"#":2,"@reverse":3,"a|b":4,"[0]":5,"{a}":6,"!true":7,"a*":8,"a\\b":9,"0":10}`},
	{"Valid/NestedIntent", `{"amountCents":1000,"destination":{"iban":"DE89"},"items":[{"sku":"A","qty":2},{"sku":"B"}],"fav.movie":"x","traceId":"t1","meta":{"sentAt":"now"}}`},
	{"Numbers/Spellings", `[1,1.0,1e0,10E-1,0.1e1,100e-2,1E+0,1e00,0.00001e5]`},
	{"Numbers/Near2p53", `[9007199254740991,9007199254740992,9007199254740993,-9007199254740993,18446744073709551616]`},
	{"Numbers/Subnormal", `[4.9e-324,5e-324,2.2250738585072011e-308,2.2250738585072014e-308,2.4703282292062328e-324]`},
	{"Numbers/Layout", `[1e21,1e20,999999999999999999999,1e-6,1e-7,0.000001,123e-9,1.5e300]`},
	{"Numbers/NotShortest", `[0.1000000000000000055511151231257827,1.0000000000000002,0.30000000000000004,0.3000000000000000444]`},
	{"Range/ExactBound", `[1e999999999,-1e-999999999,9.99e999999999,1e-1000000000]`},
	{"Numbers/ZeroWithHugeExponent", `[0e99999999999999999999,-0.000e-7]`},
	{"Range/DoubleOverflow", `[1.7976931348623159e308]`},
	{"Range/Exponent", `1e1000000000`},
	{"Range/ExponentSaturates", `1e99999999999999999999999`},
	{"Invalid/DuplicateName", `{"a":1,"a":2}`},
	{"Invalid/DuplicateNameAfterUnescape", `{"a":1,"\u0061":2}`},
	{"Invalid/DuplicateNameAstral", `{"\ud83d\ude00":1,"` + "\U0001f600" + `":2}`},
	{"Invalid/DuplicateNameDeep", `{"x":[{"b":1,"a":2,"b":3}]}`},
	{"Invalid/LoneHighSurrogate", `"\ud800"`},
	{"Invalid/LoneLowSurrogate", `"\udc00"`},
	{"Invalid/ReversedSurrogates", `"\udc00\ud800"`},
	{"Invalid/HighHighLow", `"\ud800\ud800\udc00"`},
	{"Invalid/SurrogateName", `{"\ud800":1}`},
	{"Invalid/UTF8", "\"\xff\""},
	{"Invalid/UTF8Overlong", "\"\xc0\xaf\""},
	{"Invalid/UTF8Surrogate", "\"\xed\xa0\x80\""},
	{"Invalid/UTF8Truncated", "\"\xe2\x82\""},
	{"Invalid/UTF8InName", "{\"\xfe\":1,\"\xff\":2}"},
	{"Invalid/ByteOrderMark", "\xef\xbb\xbf{}"},
	{"Invalid/TrailingComma", `[1,]`},
	{"Invalid/TrailingCommaObject", `{"a":1,}`},
	{"Invalid/LeadingZero", `01`},
	{"Invalid/Point", `1.`},
	{"Invalid/Exponent", `1e`},
	{"Invalid/NaN", `NaN`},
	{"Invalid/Plus", `+1`},
	{"Invalid/RawControl", "\"\x01\""},
	{"Invalid/BadEscape", `"\x"`},
	{"Invalid/ShortEscape", `"\u12"`},
	{"Invalid/TrailingData", `{} {}`},
	{"Invalid/Empty", ``},
	{"Invalid/Literal", `tru`},
	{"Invalid/NUL", "\x00"},
}

// deepSeeds are nested at the default depth limit and one beyond it. Only
// TestSeeds runs them: as fuzz seeds, their mutants take the fuzzer's
// minimizer a minute each.
var deepSeeds = []string{
	strings.Repeat("[", canonical.DefaultMaxDepth) + strings.Repeat("]", canonical.DefaultMaxDepth),
	strings.Repeat("[", canonical.DefaultMaxDepth+1) + strings.Repeat("]", canonical.DefaultMaxDepth+1),
	strings.Repeat(`{"a":`, canonical.DefaultMaxDepth) + "1" + strings.Repeat("}", canonical.DefaultMaxDepth),
}

func addSeeds(f *testing.F, add func(text []byte, i int)) {
	for i, s := range seedTexts {
		add([]byte(s.text), i)
	}
	for i, lit := range numberTable {
		add([]byte(lit), i)
	}
}

// options returns the settings FuzzCanonical holds to the model for in:
// both modes, noncharacters rejected, and limits that in may exceed.
func options(in []byte) []canonical.Options {
	return []canonical.Options{
		{},
		{Numbers: canonical.Exact},
		{Numbers: canonical.Exact, RejectNoncharacters: true},
		{MaxDepth: []int{-1, 1, 2, 3}[len(in)%4], MaxBytes: max(1, len(in)-len(in)%3)},
	}
}

// FuzzCanonical: canonicalization never panics; it fails with an
// *canonical.Error wrapping a sentinel exactly when encoding/json rejects
// the input or the input has a duplicate name, invalid UTF-8, a lone
// surrogate or a number the mode cannot write (or a noncharacter, nesting or
// length beyond the limits, when those are set); otherwise its output is the model's canonical form, valid JSON
// of the same value, idempotent and not much longer than the input.
//
// Known divergence from encoding/json, all on the side of strictness:
// encoding/json replaces invalid UTF-8 and lone surrogates with U+FFFD and
// keeps the last of duplicate names; it has no number range. Both reject a
// byte-order mark and nesting deeper than 10,000.
func FuzzCanonical(f *testing.F) {
	addSeeds(f, func(b []byte, _ int) { f.Add(b) })
	f.Fuzz(func(t *testing.T, in []byte) {
		if msg := checkCanonical(in); msg != "" {
			t.Fatal(msg)
		}
	})
}

// checkCanonical holds canonical's verdict on in to the model's. It
// returns "" or what failed.
func checkCanonical(in []byte) string {
	v := judge(in)
	for _, o := range options(in) {
		wanted := v.want(o)
		const prefix = "prefix"
		out, err := o.Append([]byte(prefix), in)
		if !bytes.HasPrefix(out, []byte(prefix)) {
			return fmt.Sprintf("%+v: Append(%q, %s) changed dst", o, prefix, excerpt(in))
		}
		if err != nil {
			if len(out) != len(prefix) {
				return fmt.Sprintf("%+v: Append(%q, %s) = %q on error", o, prefix, excerpt(in), out)
			}
			if wanted == nil {
				return fmt.Sprintf("%+v: rejected %s: %v", o, excerpt(in), err)
			}
			if msg := checkError(err, in, wanted); msg != "" {
				return fmt.Sprintf("%+v: %s: %s", o, excerpt(in), msg)
			}
			continue
		}
		out = out[len(prefix):]
		if wanted != nil {
			return fmt.Sprintf("%+v: accepted %s (json.Valid %v, want %s) as %s", o, excerpt(in), v.valid, sentinelNames(wanted), excerpt(out))
		}
		want, _ := canonModel(nil, v.tree, o.Numbers)
		if !bytes.Equal(out, want) {
			return fmt.Sprintf("%+v: Append(%s)\n got %s\nwant %s", o, excerpt(in), excerpt(out), excerpt(want))
		}
		unlimited := o
		unlimited.MaxBytes = 0 // the output may be longer than the input
		again, err := unlimited.Transform(out)
		if err != nil || !bytes.Equal(again, out) {
			return fmt.Sprintf("%+v: not idempotent on %s: %s, %v", o, excerpt(out), excerpt(again), err)
		}
		if !json.Valid(out) || !utf8.Valid(out) {
			return fmt.Sprintf("%+v: invalid output %s", o, excerpt(out))
		}
		if !sameValue(in, out, o.Numbers) {
			return fmt.Sprintf("%+v: output %s means another value than %s: %s", o, excerpt(out), excerpt(in), valueDiff(in, out, o.Numbers))
		}
		if limit := len(in) + growthPerNumber*v.numbers; len(out) > limit {
			return fmt.Sprintf("%+v: output of %d bytes for %d input bytes with %d numbers", o, len(out), len(in), v.numbers)
		}
	}
	return ""
}

func excerpt(b []byte) string {
	if len(b) > 300 {
		return strconv.Quote(string(b[:300])) + "..."
	}
	return strconv.Quote(string(b))
}

// FuzzExactVsJCS: where every number of the input already is the shortest
// form of a double, both modes write the same bytes. Everywhere, their
// outputs mean the same doubles, and they disagree on accepting an input
// only over a number that one of them cannot write.
func FuzzExactVsJCS(f *testing.F) {
	addSeeds(f, func(b []byte, _ int) { f.Add(b) })
	f.Fuzz(func(t *testing.T, in []byte) {
		if msg := checkExactVsJCS(in); msg != "" {
			t.Fatal(msg)
		}
	})
}

func checkExactVsJCS(in []byte) string {
	jcs, errJ := canon(canonical.JCS, in)
	exact, errE := canon(canonical.Exact, in)
	switch {
	case errJ != nil && errE != nil:
		if !errors.Is(errJ, canonical.ErrNumberRange) && !errors.Is(errE, canonical.ErrNumberRange) && errJ.Error() != errE.Error() {
			return fmt.Sprintf("modes reject %s differently: %v; %v", excerpt(in), errJ, errE)
		}
	case errJ != nil:
		if !errors.Is(errJ, canonical.ErrNumberRange) {
			return fmt.Sprintf("only JCS rejects %s: %v", excerpt(in), errJ)
		}
	case errE != nil:
		if !errors.Is(errE, canonical.ErrNumberRange) {
			return fmt.Sprintf("only Exact rejects %s: %v", excerpt(in), errE)
		}
	default:
		if !sameValue(jcs, exact, canonical.JCS) {
			return fmt.Sprintf("JCS %s and Exact %s of %s differ as doubles: %s", excerpt(jcs), excerpt(exact), excerpt(in), valueDiff(jcs, exact, canonical.JCS))
		}
		v, _, err := decodeTree(in)
		if err != nil {
			return fmt.Sprintf("accepted %s, which encoding/json rejects: %v", excerpt(in), err)
		}
		if allShortest(v) && !bytes.Equal(jcs, exact) {
			return fmt.Sprintf("numbers of %s are shortest doubles, yet\n  JCS %s\nExact %s", excerpt(in), excerpt(jcs), excerpt(exact))
		}
	}
	return ""
}

// allShortest reports whether every number of v is, as a decimal value,
// the shortest decimal that reads back as its nearest double (a strconv
// round trip).
func allShortest(v value) bool {
	switch v.kind {
	case kindNumber:
		f, err := strconv.ParseFloat(v.num.literal(), 64)
		return err == nil && !math.IsInf(f, 0) && shortest(f).equal(v.num)
	case kindArray:
		for _, e := range v.elems {
			if !allShortest(e) {
				return false
			}
		}
	case kindObject:
		for _, m := range v.members {
			if !allShortest(m.val) {
				return false
			}
		}
	}
	return true
}

// wholeBody holds whole-body Fingerprinters in each number mode.
var wholeBody = func() map[canonical.NumberMode]*fingerprint.Fingerprinter {
	m := map[canonical.NumberMode]*fingerprint.Fingerprinter{}
	for mode, numbers := range map[canonical.NumberMode]string{canonical.JCS: "jcs", canonical.Exact: "exact"} {
		f, err := fingerprint.Compile(fingerprint.Spec{Numbers: numbers})
		if err != nil {
			panic(err)
		}
		m[mode] = f
	}
	return m
}()

// FuzzFingerprintRetry: a body has a fingerprint exactly when it has a
// canonical form (else Sum returns canonical's error); every re-spelling of
// it has the same fingerprint; and under a Spec derived from the body and
// the seed, changes of counted values change the fingerprint and changes of
// ignored or undeclared values do not.
func FuzzFingerprintRetry(f *testing.F) {
	addSeeds(f, func(b []byte, i int) { f.Add(b, int64(i)) })
	f.Fuzz(func(t *testing.T, body []byte, seed int64) {
		if msg := checkFingerprintRetry(body, seed); msg != "" {
			t.Fatal(msg)
		}
	})
}

// maxIntentDepth bounds the trees checkIntent gets: it lists the path of
// every value, which takes time quadratic in the depth.
const maxIntentDepth = 400

func checkFingerprintRetry(body []byte, seed int64) string {
	if len(body) == 0 {
		return "" // no body: nothing to re-spell
	}
	r := rand.New(rand.NewSource(seed))
	mode := modes[seed&1]
	fw := wholeBody[mode]
	_, cerr := canon(mode, body)
	fp, err := fw.Sum(request(body))
	if cerr != nil {
		if err == nil || err.Error() != cerr.Error() {
			return fmt.Sprintf("%v: canonical rejects %s (%v), Sum gives %v", mode, excerpt(body), cerr, err)
		}
		return ""
	}
	if err != nil {
		return fmt.Sprintf("%v: Sum(%s): %v", mode, excerpt(body), err)
	}
	v, _, err := decodeTree(body)
	if err != nil {
		return fmt.Sprintf("canonical accepts %s, which encoding/json rejects: %v", excerpt(body), err)
	}
	y := newSpeller(r).spell(v)
	if fy, err := fw.Sum(request(y)); err != nil || fy != fp {
		return fmt.Sprintf("%v: Sum differs for %s and its re-spelling %s (%v)", mode, excerpt(body), excerpt(y), err)
	}
	if numbersBeyond(v, canonical.JCS) || numbersBeyond(v, canonical.Exact) || depth(v) > maxIntentDepth {
		return "" // checkIntent picks either mode, and lists every path
	}
	return checkIntent(v, body, r, nil)
}

// TestSeeds runs the fuzz targets' checks on their seeds.
func TestSeeds(t *testing.T) {
	texts := append([]string(nil), deepSeeds...)
	for _, s := range seedTexts {
		texts = append(texts, s.text)
	}
	texts = append(texts, numberTable...)
	for i, text := range texts {
		for name, msg := range map[string]string{
			"FuzzCanonical":        checkCanonical([]byte(text)),
			"FuzzExactVsJCS":       checkExactVsJCS([]byte(text)),
			"FuzzFingerprintRetry": checkFingerprintRetry([]byte(text), int64(i)),
		} {
			if msg != "" {
				t.Errorf("%s: %s", name, msg)
			}
		}
	}
}
