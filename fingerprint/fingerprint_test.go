package fingerprint_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/idemprint/idemprint/canonical"
	"github.com/idemprint/idemprint/fingerprint"
)

type (
	Spec    = fingerprint.Spec
	Request = fingerprint.Request
)

// The running example: a payment whose intent is the amount, the currency and
// the destination account, with client noise (a trace ID, a timestamp).
const paymentBody = `{"amountCents":1000,"currency":"EUR","destination":{"iban":"DE89370400440532013000","name":"Ada"},"traceId":"t-1","meta":{"sentAt":"2024-05-01T10:00:00Z","client":"ios"}}`

const paymentPath = "/v1/accounts/acc_1/transfers"

func paymentSpec() Spec {
	return Spec{
		Intent:  []string{"amountCents", "currency", "destination.iban"},
		Ignore:  []string{"traceId", "meta.sentAt"},
		Headers: []string{"X-Account"},
		Query:   []string{"dryRun"},
	}
}

// orderSpec selects through "#": the positions of holes count.
func orderSpec() Spec {
	return Spec{Intent: []string{"customer", "items.#.sku", "items.#.qty"}, Ignore: []string{"items.#.note", "traceId"}}
}

// wholeSpec counts the whole body less the noise.
func wholeSpec() Spec {
	return Spec{Ignore: []string{"traceId", "requestId", "meta.sentAt", "items.#.note"}}
}

func post(body string) Request {
	return Request{Method: http.MethodPost, Path: paymentPath, Body: []byte(body)}
}

func noBody() Request { return Request{Method: http.MethodPost, Path: paymentPath} }

func withHeader(r Request, h http.Header) Request { r.Header = h; return r }

func withQuery(r Request, rawQuery string) Request {
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		panic(err)
	}
	r.Query = q
	return r
}

func compile(t testing.TB, s Spec) *fingerprint.Fingerprinter {
	t.Helper()
	f, err := fingerprint.Compile(s)
	if err != nil {
		t.Fatalf("Compile(%+v): %v", s, err)
	}
	return f
}

// sum returns the fingerprint and the intent document of r, turning a panic
// into an error so that one bad case does not stop the others. It also
// holds SumIntent to returning what Sum and AppendIntent return.
func sum(f *fingerprint.Fingerprinter, r Request) (fp fingerprint.Fingerprint, doc []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	fp, err = f.Sum(r)
	if err == nil {
		doc, err = f.AppendIntent(nil, r)
	}
	const prefix = "dst:"
	fp2, doc2, err2 := f.SumIntent([]byte(prefix), r)
	switch {
	case (err == nil) != (err2 == nil) || err != nil && err.Error() != err2.Error():
		return fp, doc, fmt.Errorf("SumIntent error %v; Sum and AppendIntent: %v", err2, err)
	case err != nil && string(doc2) != prefix:
		return fp, doc, fmt.Errorf("SumIntent changed dst on error: %q", doc2)
	case err == nil && (fp2 != fp || string(doc2) != prefix+string(doc)):
		return fp, doc, fmt.Errorf("SumIntent = %v, %q; Sum and AppendIntent: %v, %q", fp2, doc2, fp, doc)
	}
	return fp, doc, err
}

func TestCompileErrors(t *testing.T) {
	tooMany := make([]string, 65)
	for i := range tooMany {
		tooMany[i] = "meta.f" + strconv.Itoa(i)
	}
	tests := []struct {
		name    string
		spec    Spec
		reason  string
		pointer string
		want    error
	}{
		{"Path/Modifier", Spec{Intent: []string{"amount", "@reverse"}}, "gjson modifiers are registered process-wide", "/intent/1", fingerprint.ErrInvalidPath},
		{"Path/ModifierAfterDot", Spec{Intent: []string{"items.@this"}}, "a modifier may start any segment", "/intent/0", fingerprint.ErrInvalidPath},
		{"Path/Pipe", Spec{Intent: []string{"a|b"}}, "pipes re-root the path", "/intent/0", fingerprint.ErrInvalidPath},
		{"Path/PipeAfterDot", Spec{Intent: []string{"a.|b"}}, "", "/intent/0", fingerprint.ErrInvalidPath},
		{"Path/MultipathArray", Spec{Intent: []string{"[amount,currency]"}}, "declare each path on its own", "/intent/0", fingerprint.ErrInvalidPath},
		{"Path/MultipathObject", Spec{Intent: []string{"{amount,currency}"}}, "", "/intent/0", fingerprint.ErrInvalidPath},
		{"Path/MultipathInSegment", Spec{Intent: []string{"a.[b,c]"}}, "", "/intent/0", fingerprint.ErrInvalidPath},
		{"Path/Query", Spec{Intent: []string{"items.#(qty>1)"}}, "a query hides which elements count", "/intent/0", fingerprint.ErrInvalidPath},
		{"Path/QueryAll", Spec{Intent: []string{"items.#(qty>1)#.sku"}}, "", "/intent/0", fingerprint.ErrInvalidPath},
		{"Path/NameStartingWithHash", Spec{Intent: []string{"#tag"}}, "a literal '#' must be escaped", "/intent/0", fingerprint.ErrInvalidPath},
		{"Path/HashInsideName", Spec{Intent: []string{"a#b"}}, "", "/intent/0", fingerprint.ErrInvalidPath},
		{"Path/WildcardStar", Spec{Intent: []string{"amount*"}}, "a wildcard selects fields nobody declared", "/intent/0", fingerprint.ErrInvalidPath},
		{"Path/WildcardQuestion", Spec{Intent: []string{"c?de"}}, "", "/intent/0", fingerprint.ErrInvalidPath},
		{"Path/WildcardInLaterSegment", Spec{Intent: []string{"destination.*"}}, "", "/intent/0", fingerprint.ErrInvalidPath},
		{"Path/Literal", Spec{Intent: []string{"!true"}}, "a literal is not in the request", "/intent/0", fingerprint.ErrInvalidPath},
		{"Path/LiteralAfterDot", Spec{Intent: []string{"a.!1"}}, "", "/intent/0", fingerprint.ErrInvalidPath},
		{"Path/Empty", Spec{Intent: []string{""}}, "", "/intent/0", fingerprint.ErrInvalidPath},
		{"Path/EmptySegment", Spec{Intent: []string{"a..b"}}, "", "/intent/0", fingerprint.ErrInvalidPath},
		{"Path/DotDotPrefix", Spec{Intent: []string{"..a"}}, "gjson reads '..' as JSON lines", "/intent/0", fingerprint.ErrInvalidPath},
		{"Path/LeadingDot", Spec{Intent: []string{".a"}}, "", "/intent/0", fingerprint.ErrInvalidPath},
		{"Path/TrailingDot", Spec{Intent: []string{"a."}}, "", "/intent/0", fingerprint.ErrInvalidPath},
		{"Path/FinalHash", Spec{Intent: []string{"items.#"}}, "gjson reads a final '#' as a count", "/intent/0", fingerprint.ErrInvalidPath},
		{"Path/OnlyHash", Spec{Intent: []string{"#"}}, "", "/intent/0", fingerprint.ErrInvalidPath},
		{"Path/LoneBackslash", Spec{Intent: []string{`amount\`}}, "a backslash escapes the next character; there is none", "/intent/0", fingerprint.ErrInvalidPath},
		{"Path/InvalidUTF8", Spec{Intent: []string{"amo\xffunt"}}, "a path must be text", "/intent/0", fingerprint.ErrInvalidPath},
		{"Path/Third", Spec{Intent: []string{"a", "b", "c|d"}}, "the pointer names the entry", "/intent/2", fingerprint.ErrInvalidPath},

		{"Ignore/Modifier", Spec{Ignore: []string{"traceId", "@this"}}, "", "/ignore/1", fingerprint.ErrInvalidPath},
		{"Ignore/Wildcard", Spec{Ignore: []string{"*Id"}}, "", "/ignore/0", fingerprint.ErrInvalidPath},
		{"Ignore/FinalHash", Spec{Ignore: []string{"items.#"}}, "ignore a member, not array elements", "/ignore/0", fingerprint.ErrInvalidPath},
		{"Ignore/EmptySegment", Spec{Ignore: []string{"meta..sentAt"}}, "", "/ignore/0", fingerprint.ErrInvalidPath},
		{"Ignore/TooManyPaths", Spec{Ignore: tooMany}, "paths are matched with one bit each", "/ignore/64", fingerprint.ErrInvalidSpec},
		{"Required/Pipe", Spec{Required: []string{"a|b"}}, "", "/required/0", fingerprint.ErrInvalidPath},
		{"Required/FinalHashWholeBody", Spec{Required: []string{"items.#"}}, "", "/required/0", fingerprint.ErrInvalidPath},

		{"Duplicate/Intent", Spec{Intent: []string{"a", "b", "a"}}, "", "/intent/2", fingerprint.ErrInvalidSpec},
		{"Duplicate/Ignore", Spec{Ignore: []string{"traceId", "traceId"}}, "", "/ignore/1", fingerprint.ErrInvalidSpec},
		{"Duplicate/Required", Spec{Intent: []string{"a"}, Required: []string{"a", "a"}}, "", "/required/1", fingerprint.ErrInvalidSpec},
		{"Duplicate/HeaderDifferingInCase", Spec{Headers: []string{"X-Account", "x-account"}}, "header names are case-insensitive", "/headers/1", fingerprint.ErrInvalidSpec},
		{"Duplicate/Query", Spec{Query: []string{"dryRun", "dryRun"}}, "", "/query/1", fingerprint.ErrInvalidSpec},

		{"Numbers/Unknown", Spec{Numbers: "float"}, "", "/numbers", fingerprint.ErrInvalidSpec},
		{"Numbers/UpperCase", Spec{Numbers: "JCS"}, "strict: no case folding", "/numbers", fingerprint.ErrInvalidSpec},

		{"Required/NotIntent", Spec{Intent: []string{"amount"}, Required: []string{"currency"}}, "with Intent, Required is a subset", "/required/0", fingerprint.ErrInvalidSpec},
		{"Required/HashOfIntentArray", Spec{Intent: []string{"items.#.sku"}, Required: []string{"items.#"}}, "", "/required/0", fingerprint.ErrInvalidSpec},
		{"Required/RemovedByIgnoreWholeBody", Spec{Required: []string{"meta.sentAt"}, Ignore: []string{"meta.sentAt"}}, "", "/required/0", fingerprint.ErrInvalidSpec},
		{"Required/ThroughIgnoredName", Spec{Required: []string{"meta.sentAt"}, Ignore: []string{"meta"}}, "", "/required/0", fingerprint.ErrInvalidSpec},

		{"IntentIgnored/ByName", Spec{Intent: []string{"zeta", "meta.sentAt"}, Ignore: []string{"meta"}}, "the pointer is the index in the Spec, not in sorted order", "/intent/1", fingerprint.ErrInvalidSpec},
		{"IntentIgnored/ByNameLastSegment", Spec{Intent: []string{"meta.traceId"}, Ignore: []string{"traceId"}}, "", "/intent/0", fingerprint.ErrInvalidSpec},
		{"IntentIgnored/ByEscapedName", Spec{Intent: []string{`fav\.movie`}, Ignore: []string{`fav\.movie`}}, "", "/intent/0", fingerprint.ErrInvalidSpec},
		{"IntentIgnored/ByPath", Spec{Intent: []string{"meta.sentAt"}, Ignore: []string{"meta.sentAt"}}, "", "/intent/0", fingerprint.ErrInvalidSpec},
		{"IntentIgnored/BelowIgnoredPath", Spec{Intent: []string{"meta.sentAt.ms"}, Ignore: []string{"meta.sentAt"}}, "", "/intent/0", fingerprint.ErrInvalidSpec},
		{"IntentIgnored/ThroughHash", Spec{Intent: []string{"items.#.note"}, Ignore: []string{"items.#.note"}}, "", "/intent/0", fingerprint.ErrInvalidSpec},
		{"IntentIgnored/HashIgnoreIndexedIntent", Spec{Intent: []string{"items.0.note"}, Ignore: []string{"items.#.note"}}, "", "/intent/0", fingerprint.ErrInvalidSpec},
		{"IntentIgnored/IndexIgnoreHashIntent", Spec{Intent: []string{"items.#.note"}, Ignore: []string{"items.1.note"}}, "element 1 would lose its note", "/intent/0", fingerprint.ErrInvalidSpec},
		{"IntentIgnored/NameThroughHash", Spec{Intent: []string{"items.#.note"}, Ignore: []string{"note"}}, "", "/intent/0", fingerprint.ErrInvalidSpec},

		{"Header/Space", Spec{Headers: []string{"X Account"}}, "not an RFC 9110 token", "/headers/0", fingerprint.ErrInvalidSpec},
		{"Header/Colon", Spec{Headers: []string{"X-Account", "X-Api-Version:"}}, "", "/headers/1", fingerprint.ErrInvalidSpec},
		{"Header/Empty", Spec{Headers: []string{""}}, "", "/headers/0", fingerprint.ErrInvalidSpec},
		{"Header/NonASCII", Spec{Headers: []string{"X-Äccount"}}, "", "/headers/0", fingerprint.ErrInvalidSpec},
		{"Query/Empty", Spec{Query: []string{"dryRun", ""}}, "", "/query/1", fingerprint.ErrInvalidSpec},
		{"Query/InvalidUTF8", Spec{Query: []string{"\xff"}}, "", "/query/0", fingerprint.ErrInvalidSpec},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := fingerprint.Compile(tt.spec)
			if f != nil || err == nil {
				t.Fatalf("Compile(%+v) = %v, %v; want an error (%s)", tt.spec, f, err, tt.reason)
			}
			var se *fingerprint.SpecError
			if !errors.As(err, &se) {
				t.Fatalf("Compile(%+v) error %v (%T) is not a *SpecError", tt.spec, err, err)
			}
			if diff := cmp.Diff(tt.pointer, se.Pointer); diff != "" {
				t.Errorf("Compile(%+v) pointer mismatch (-want +got):\n%s", tt.spec, diff)
			}
			if !errors.Is(err, tt.want) {
				t.Errorf("Compile(%+v) = %v; want errors.Is %v", tt.spec, err, tt.want)
			}
			if prefix := "fingerprint: spec " + tt.pointer + ": "; !strings.HasPrefix(err.Error(), prefix) || strings.Count(err.Error(), "fingerprint:") != 1 {
				t.Errorf("Compile(%+v) message %q; want one prefix %q", tt.spec, err, prefix)
			}
		})
	}
}

func TestCompileAccepts(t *testing.T) {
	sixtyFour := make([]string, 64)
	for i := range sixtyFour {
		sixtyFour[i] = "meta.f" + strconv.Itoa(i)
	}
	tests := []struct {
		name   string
		spec   Spec
		reason string
	}{
		{"Zero", Spec{}, "the zero Spec counts the whole body"},
		{"Numbers/Exact", Spec{Numbers: "exact"}, ""},
		{"Numbers/JCS", Spec{Numbers: "jcs"}, ""},
		{"Path/EscapedDot", Spec{Intent: []string{`fav\.movie`}}, ""},
		{"Path/EscapedHash", Spec{Intent: []string{`\#tag`}}, ""},
		{"Path/EscapedAt", Spec{Intent: []string{`\@type`}}, ""},
		{"Path/EscapedWildcards", Spec{Intent: []string{`a\*b`, `c\?de`}}, ""},
		{"Path/EscapedPipe", Spec{Intent: []string{`a\|b`}}, ""},
		{"Path/EscapedBackslash", Spec{Intent: []string{`back\\slash`}}, ""},
		{"Path/EscapedBrackets", Spec{Intent: []string{`\[a]`, `\{b}`, `\!c`}}, ""},
		{"Path/BracketInsideName", Spec{Intent: []string{"a[0]"}}, "only a leading '[' starts a multipath"},
		{"Path/Index", Spec{Intent: []string{"items.1.sku", "0"}}, ""},
		{"Path/Hash", Spec{Intent: []string{"items.#.sku", "#.id"}}, ""},
		{"Path/NestedHash", Spec{Intent: []string{"orders.#.lines.#.sku"}}, ""},
		{"Path/Unicode", Spec{Intent: []string{"café", "😀", "日本.語"}}, ""},
		{"Path/Space", Spec{Intent: []string{"with space", `quote"d`}}, ""},
		{"Ignore/InsideIntent", Spec{Intent: []string{"meta"}, Ignore: []string{"meta.sentAt", "traceId"}}, "Ignore removes inside selected values"},
		{"Ignore/SiblingOfHashIntent", Spec{Intent: []string{"items.#.sku"}, Ignore: []string{"items.#.note"}}, ""},
		{"Ignore/SixtyFourPaths", Spec{Ignore: sixtyFour}, ""},
		{"Required/WholeBody", Spec{Required: []string{"amountCents", "items.#.sku"}}, "without Intent any path may be required"},
		{"Required/Intent", Spec{Intent: []string{"amountCents", "items.#.sku"}, Required: []string{"items.#.sku"}}, ""},
		{"Header/TokenCharacters", Spec{Headers: []string{"X-Api_Version!#$%&'*+-.^`|~"}}, ""},
		{"Query/Unicode", Spec{Query: []string{"ñ", "a b"}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := fingerprint.Compile(tt.spec); err != nil {
				t.Errorf("Compile(%+v): %v (%s)", tt.spec, err, tt.reason)
			}
		})
	}
}

func TestCompileCopiesSpec(t *testing.T) {
	s := paymentSpec()
	f := compile(t, s)
	want := paymentSpec()
	s.Intent[0], s.Ignore[0], s.Headers[0] = "x", "y", "Z"
	if diff := cmp.Diff(want, f.Spec()); diff != "" {
		t.Errorf("Spec() after changing the caller's slices (-want +got):\n%s", diff)
	}
	got := f.Spec()
	got.Intent[0] = "changed"
	if diff := cmp.Diff(want, f.Spec()); diff != "" {
		t.Errorf("Spec() after changing a returned copy (-want +got):\n%s", diff)
	}
}

// TestPathTable checks the table of the package documentation.
func TestPathTable(t *testing.T) {
	const body = `{"amountCents":1000,"destination":{"iban":"DE89…"},"items":[{"sku":"A","qty":2},{"sku":"B"}],"fav.movie":"x"}`
	tests := []struct {
		path   string
		value  string // "" when absent
		absent string // the absent member, "" when none
	}{
		{"amountCents", `1000`, ""},
		{"destination", `{"iban":"DE89…"}`, ""},
		{"destination.iban", `"DE89…"`, ""},
		{"items.1.sku", `"B"`, ""},
		{"items.#.sku", `["A","B"]`, ""},
		{"items.#.qty", `[2]`, `{"items.#.qty":["items.1.qty"]}`},
		{`fav\.movie`, `"x"`, ""},
		{"items.2.sku", ``, `{"items.2.sku":["items.2.sku"]}`},
		{"items.sku", ``, `{"items.sku":["items.sku"]}`},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			f := compile(t, Spec{Intent: []string{tt.path}})
			_, got, err := sum(f, Request{Method: "POST", Path: "/p", Body: []byte(body)})
			if err != nil {
				t.Fatal(err)
			}
			absent, intent := "{}", "{}"
			if tt.absent != "" {
				absent = tt.absent
			}
			if tt.value != "" {
				intent = `{` + strconv.Quote(tt.path) + `:` + tt.value + `}`
			}
			want := `{"absent":` + absent + `,"headers":{},"intent":` + intent + `,"method":"POST","path":"/p","query":{}}`
			if diff := cmp.Diff(want, string(got)); diff != "" {
				t.Errorf("AppendIntent mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

type pairTest struct {
	name   string
	spec   Spec
	reason string
	a, b   Request
}

// sums compiles the pair's spec and returns the fingerprints and intent
// documents of a and b.
func (tt pairTest) sums(t *testing.T) (fa, fb fingerprint.Fingerprint, da, db []byte) {
	t.Helper()
	f := compile(t, tt.spec)
	fa, da, err := sum(f, tt.a)
	if err != nil {
		t.Fatalf("Sum(a): %v", err)
	}
	fb, db, err = sum(f, tt.b)
	if err != nil {
		t.Fatalf("Sum(b): %v", err)
	}
	return fa, fb, da, db
}

func TestRetryStability(t *testing.T) {
	h := func(kv ...string) http.Header {
		hdr := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			hdr[kv[i]] = append(hdr[kv[i]], kv[i+1])
		}
		return hdr
	}
	tests := []pairTest{
		{"Payment/ReorderedMembers", paymentSpec(), "member order carries no meaning",
			post(paymentBody),
			post(`{"meta":{"client":"ios","sentAt":"2024-05-01T10:00:00Z"},"traceId":"t-1","destination":{"name":"Ada","iban":"DE89370400440532013000"},"currency":"EUR","amountCents":1000}`)},
		{"Payment/Whitespace", paymentSpec(), "",
			post(paymentBody),
			post("{\n\t\"amountCents\" : 1000 ,\r\n  \"currency\":\"EUR\", \"destination\" : { \"iban\" : \"DE89370400440532013000\" , \"name\":\"Ada\"},\"traceId\":\"t-1\",\"meta\":{\"sentAt\":\"2024-05-01T10:00:00Z\",\"client\":\"ios\"}}\n")},
		{"Payment/EscapedName", paymentSpec(), "names are compared after unescaping",
			post(`{"amountCents":1000,"currency":"EUR","destination":{"iban":"DE89370400440532013000"}}`),
			post(`{"\u0061mountCents":1000,"curr\u0065ncy":"\u0045UR","destination":{"\u0069ban":"DE89370400440532013000"}}`)},
		{"Payment/TraceIdChanged", paymentSpec(), "ignored by name",
			post(paymentBody), post(strings.Replace(paymentBody, `"t-1"`, `"t-2"`, 1))},
		{"Payment/TraceIdRemoved", paymentSpec(), "",
			post(paymentBody), post(strings.Replace(paymentBody, `"traceId":"t-1",`, ``, 1))},
		{"Payment/SentAtChanged", paymentSpec(), "ignored by exact path",
			post(paymentBody), post(strings.Replace(paymentBody, `10:00:00Z`, `10:00:07Z`, 1))},
		{"Payment/UndeclaredChanged", paymentSpec(), "destination.name and meta.client are not intent",
			post(paymentBody), post(strings.NewReplacer(`"Ada"`, `"Grace"`, `"ios"`, `"android"`).Replace(paymentBody))},
		{"Payment/UndeclaredAdded", paymentSpec(), "",
			post(paymentBody), post(strings.Replace(paymentBody, `{"amountCents"`, `{"memo":"rent","amountCents"`, 1))},
		{"Payment/AmountSpellings/1000.0", paymentSpec(), "one amount, many spellings",
			post(`{"amountCents":1000,"currency":"EUR"}`), post(`{"amountCents":1000.0,"currency":"EUR"}`)},
		{"Payment/AmountSpellings/1e3", paymentSpec(), "",
			post(`{"amountCents":1000,"currency":"EUR"}`), post(`{"amountCents":1e3,"currency":"EUR"}`)},
		{"Payment/AmountSpellings/10E2", paymentSpec(), "",
			post(`{"amountCents":1000,"currency":"EUR"}`), post(`{"amountCents":10E2,"currency":"EUR"}`)},
		{"Payment/AmountSpellings/100000e-2", paymentSpec(), "",
			post(`{"amountCents":1000,"currency":"EUR"}`), post(`{"amountCents":100000e-2,"currency":"EUR"}`)},
		{"Payment/AmountSpellings/1.000E+3", paymentSpec(), "",
			post(`{"amountCents":1000,"currency":"EUR"}`), post(`{"amountCents":1.000E+3,"currency":"EUR"}`)},
		{"Payment/AmountSpellings/JCS", Spec{Intent: []string{"amountCents"}, Numbers: "jcs"}, "",
			post(`{"amountCents":1000}`), post(`{"amountCents":1.0e3}`)},
		{"Payment/HeaderNameCase", paymentSpec(), "net/http stores the canonical key; a hand-built map may not",
			withHeader(post(paymentBody), h("X-Account", "acc_1")), withHeader(post(paymentBody), h("x-account", "acc_1"))},
		{"Payment/HeaderNonCanonicalKey", paymentSpec(), "",
			withHeader(post(paymentBody), h("X-Account", "acc_1")), withHeader(post(paymentBody), h("X-ACCOUNT", "acc_1"))},
		{"Payment/UndeclaredHeader", paymentSpec(), "",
			withHeader(post(paymentBody), h("X-Account", "acc_1", "User-Agent", "a")),
			withHeader(post(paymentBody), h("X-Account", "acc_1", "User-Agent", "b", "X-Request-Id", "r"))},
		{"Payment/QueryOrder", Spec{Query: []string{"dryRun", "mode"}}, "parameter order in the URL does not matter",
			withQuery(post(paymentBody), "dryRun=false&mode=fast"), withQuery(post(paymentBody), "mode=fast&dryRun=false")},
		{"Payment/QueryInterleaved", Spec{Query: []string{"tag", "mode"}}, "repeated values keep their own order",
			withQuery(post(paymentBody), "tag=a&mode=x&tag=b"), withQuery(post(paymentBody), "mode=x&tag=a&tag=b")},
		{"Payment/QueryEscaping", Spec{Query: []string{"note"}}, "values are compared decoded",
			withQuery(post(paymentBody), "note=a+b%2Fc"), withQuery(post(paymentBody), "note=a%20b/c")},
		{"Payment/UndeclaredQuery", paymentSpec(), "",
			withQuery(post(paymentBody), "dryRun=false&utm=x"), withQuery(post(paymentBody), "dryRun=false&utm=y&page=2")},
		{"Method/EmptyIsGET", Spec{}, "as in net/http",
			Request{Path: "/v1/x"}, Request{Method: "GET", Path: "/v1/x"}},

		{"Escapes/UnicodeEscape", wholeSpec(), `\u00e9 is é`,
			post(`{"name":"caf\u00e9"}`), post(`{"name":"café"}`)},
		{"Escapes/UpperCaseHex", wholeSpec(), "",
			post(`{"name":"caf\u00E9"}`), post(`{"name":"café"}`)},
		{"Escapes/Solidus", wholeSpec(), `\/ is /`,
			post(`{"url":"https:\/\/example.com\/a"}`), post(`{"url":"https://example.com/a"}`)},
		{"Escapes/SurrogatePair", wholeSpec(), "an escaped pair is the astral character",
			post(`{"emoji":"\ud83d\ude00","\ud83d\ude01":1}`), post(`{"emoji":"😀","😁":1}`)},
		{"Escapes/ShortEscapes", wholeSpec(), "",
			post(`{"s":"\u0009\u000a\u0022\u005c"}`), post(`{"s":"\t\n\"\\"}`)},
		{"Escapes/NameInIntent", Spec{Intent: []string{"café.prix"}}, "",
			post(`{"caf\u00e9":{"prix":5}}`), post(`{"café":{"prix":5}}`)},
		{"Escapes/AstralNameInIntent", Spec{Intent: []string{"😀"}}, "",
			post(`{"\uD83D\uDE00":5}`), post(`{"😀":5}`)},

		{"Ignore/NameAtDepth", wholeSpec(), "a one-segment entry drops the name everywhere",
			post(`{"a":{"b":{"traceId":1,"c":[{"traceId":2,"d":3}]}},"traceId":0}`),
			post(`{"a":{"b":{"traceId":9,"c":[{"d":3,"traceId":8}]}}}`)},
		{"Ignore/NameInsideIntent", Spec{Intent: []string{"destination"}, Ignore: []string{"traceId"}}, "",
			post(`{"destination":{"iban":"DE","traceId":"x"}}`), post(`{"destination":{"iban":"DE"}}`)},
		{"Ignore/ExactPathInsideIntent", Spec{Intent: []string{"meta"}, Ignore: []string{"meta.sentAt"}}, "",
			post(`{"meta":{"client":"ios","sentAt":"1"}}`), post(`{"meta":{"client":"ios","sentAt":"2"}}`)},
		{"Ignore/ExactPathOnlyThere", wholeSpec(), "meta.sentAt drops that path only",
			post(`{"meta":{"sentAt":"1"},"x":{"sentAt":"s"}}`), post(`{"meta":{"sentAt":"2"},"x":{"sentAt":"s"}}`)},
		{"Ignore/HashPath", wholeSpec(), "items.#.note drops the note of every item",
			post(`{"items":[{"sku":"A","note":"x"},{"sku":"B","note":"y"}]}`),
			post(`{"items":[{"sku":"A"},{"sku":"B","note":"z"}]}`)},
		{"Ignore/HashPathInOrder", orderSpec(), "",
			post(`{"items":[{"sku":"A","qty":1,"note":"x"}]}`), post(`{"items":[{"note":"y","sku":"A","qty":1}]}`)},
		{"Ignore/HashPathInsideIntentArray", Spec{Intent: []string{"items"}, Ignore: []string{"items.#.note"}}, "",
			post(`{"items":[{"sku":"A","note":"x"}]}`), post(`{"items":[{"sku":"A","note":"y"}]}`)},
		{"Ignore/EscapedName", Spec{Ignore: []string{`fav\.movie`}}, "",
			post(`{"a":{"fav.movie":"x"}}`), post(`{"a":{"fav.movie":"y"}}`)},
		{"Undeclared/IntentMode", orderSpec(), "only intent counts",
			post(`{"customer":"c1","items":[{"sku":"A","qty":1,"color":"red"}],"coupon":"X"}`),
			post(`{"customer":"c1","items":[{"sku":"A","qty":1,"color":"blue"}]}`)},
		{"Holes/SamePositions", orderSpec(), "",
			post(`{"items":[{"sku":"A","qty":1},{"sku":"B"}]}`), post(`{"items":[{"qty":1,"sku":"A"},{"sku":"B","note":"n"}]}`)},
		{"IntentMode/NoBodyIsAllAbsent", paymentSpec(), "without a body every path is absent",
			noBody(), post(`{}`)},

		{"Numbers/Exact/NegativeZero", Spec{}, "-0 and 0 are the same number",
			post(`{"n":-0}`), post(`{"n":0}`)},
		{"Numbers/Exact/Fraction", Spec{}, "",
			post(`{"n":0.1}`), post(`{"n":1e-1}`)},
		{"Numbers/Exact/BigInteger", Spec{}, "exact keeps every digit and merges equal spellings",
			post(`{"n":9007199254740993}`), post(`{"n":9.007199254740993e15}`)},
		{"Numbers/JCS/BigIntegersMerge", Spec{Numbers: "jcs"}, "JCS reads both as the same double",
			post(`{"n":9007199254740993}`), post(`{"n":9007199254740992}`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fa, fb, da, db := tt.sums(t)
			if fa != fb {
				t.Errorf("fingerprints differ (%s):\n a: %s\n b: %s\nintent mismatch (-a +b):\n%s", tt.reason, fa, fb, cmp.Diff(string(da), string(db)))
			}
		})
	}
}

func TestSensitivity(t *testing.T) {
	h := func(kv ...string) http.Header {
		hdr := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			hdr[kv[i]] = append(hdr[kv[i]], kv[i+1])
		}
		return hdr
	}
	payment := func(r Request) Request {
		return withQuery(withHeader(r, h("X-Account", "acc_1")), "dryRun=false")
	}
	tests := []pairTest{
		{"Intent/Amount", paymentSpec(), "10 EUR is not 10,000 EUR",
			post(`{"amountCents":1000,"currency":"EUR"}`), post(`{"amountCents":1000000,"currency":"EUR"}`)},
		{"Intent/AmountFraction", paymentSpec(), "",
			post(`{"amountCents":1000}`), post(`{"amountCents":1000.5}`)},
		{"Intent/AmountSign", paymentSpec(), "",
			post(`{"amountCents":1000}`), post(`{"amountCents":-1000}`)},
		{"Intent/NumberVsString", paymentSpec(), "",
			post(`{"amountCents":1000}`), post(`{"amountCents":"1000"}`)},
		{"Intent/Currency", paymentSpec(), "",
			post(`{"amountCents":1000,"currency":"EUR"}`), post(`{"amountCents":1000,"currency":"USD"}`)},
		{"Intent/CurrencyCase", paymentSpec(), "values are not case-folded",
			post(`{"amountCents":1000,"currency":"EUR"}`), post(`{"amountCents":1000,"currency":"eur"}`)},
		{"Intent/NestedIBAN", paymentSpec(), "",
			post(paymentBody), post(strings.Replace(paymentBody, "DE89370400440532013000", "DE89370400440532013001", 1))},
		{"Intent/Unnormalized", Spec{Intent: []string{"name"}}, "no Unicode normalization: NFC and NFD differ",
			post(`{"name":"\u00e9"}`), post(`{"name":"e\u0301"}`)},
		{"Intent/StringVsArray", Spec{Intent: []string{"tags"}}, "",
			post(`{"tags":"a"}`), post(`{"tags":["a"]}`)},
		{"Intent/ObjectMemberAdded", Spec{Intent: []string{"destination"}}, "a selected object counts whole",
			post(`{"destination":{"iban":"DE"}}`), post(`{"destination":{"iban":"DE","bic":"X"}}`)},
		{"Intent/ArrayOrder", Spec{Intent: []string{"items.#.sku"}}, "document order counts",
			post(`{"items":[{"sku":"A"},{"sku":"B"}]}`), post(`{"items":[{"sku":"B"},{"sku":"A"}]}`)},
		{"Intent/ArrayLength", Spec{Intent: []string{"items.#.sku"}}, "",
			post(`{"items":[{"sku":"A"}]}`), post(`{"items":[{"sku":"A"},{"sku":"A"}]}`)},
		{"Intent/IndexPath", Spec{Intent: []string{"items.1.sku"}}, "",
			post(`{"items":[{"sku":"A"},{"sku":"B"}]}`), post(`{"items":[{"sku":"A"},{"sku":"C"}]}`)},
		{"Intent/UnderStringLooksLikeArray", Spec{Intent: []string{"note.0"}}, "a string is a scalar: nothing is below it",
			post(`{"note":"[7]"}`), post(`{"note":[7]}`)},

		{"Holes/Moved", orderSpec(), "items [{sku:A,qty:1},{sku:B}] and [{sku:A},{sku:B,qty:1}] are different orders",
			post(`{"items":[{"sku":"A","qty":1},{"sku":"B"}]}`), post(`{"items":[{"sku":"A"},{"sku":"B","qty":1}]}`)},
		{"Holes/TrailingHole", orderSpec(), "",
			post(`{"items":[{"sku":"A","qty":1}]}`), post(`{"items":[{"sku":"A","qty":1},{}]}`)},
		{"Holes/EmptyVsAbsentArray", orderSpec(), "[] is not absent",
			post(`{"items":[]}`), post(`{}`)},
		{"Holes/EmptyArrayVsOneHole", orderSpec(), "",
			post(`{"items":[]}`), post(`{"items":[{}]}`)},
		{"Holes/NullVsHole", orderSpec(), "null is a value",
			post(`{"items":[{"sku":"A","qty":null}]}`), post(`{"items":[{"sku":"A"}]}`)},
		{"Holes/Nested", Spec{Intent: []string{"orders.#.lines.#.sku"}}, "",
			post(`{"orders":[{"lines":[{"sku":"A"},{}]},{"lines":[{}]}]}`),
			post(`{"orders":[{"lines":[{},{"sku":"A"}]},{"lines":[{}]}]}`)},

		{"Numbers/Exact/BeyondDoubles", Spec{Intent: []string{"amountCents"}}, "exact mode: one double apart is another amount",
			post(`{"amountCents":9007199254740993}`), post(`{"amountCents":9007199254740992}`)},
		{"Numbers/Exact/LongFraction", Spec{}, "",
			post(`{"n":0.10000000000000000001}`), post(`{"n":0.1}`)},
		{"Numbers/ModeIsPartOfSpec", Spec{}, "same body, the digest differs: checked in TestSpecDigest",
			post(`{"n":1}`), post(`{"n":2}`)},

		{"Method/PostVsPut", paymentSpec(), "",
			payment(post(paymentBody)), func() Request { r := payment(post(paymentBody)); r.Method = "PUT"; return r }()},
		{"Method/CaseSensitive", paymentSpec(), "RFC 9110 §9.1",
			payment(post(paymentBody)), func() Request { r := payment(post(paymentBody)); r.Method = "post"; return r }()},
		{"Path/PathParameter", paymentSpec(), "path parameters are intent",
			payment(post(paymentBody)), func() Request { r := payment(post(paymentBody)); r.Path = "/v1/accounts/acc_2/transfers"; return r }()},
		{"Path/TrailingSlash", paymentSpec(), "",
			payment(post(paymentBody)), func() Request { r := payment(post(paymentBody)); r.Path += "/"; return r }()},
		{"Header/Value", paymentSpec(), "",
			withHeader(post(paymentBody), h("X-Account", "acc_1")), withHeader(post(paymentBody), h("X-Account", "acc_2"))},
		{"Header/AbsentVsEmpty", paymentSpec(), "",
			post(paymentBody), withHeader(post(paymentBody), h("X-Account", ""))},
		{"Header/AbsentVsPresent", paymentSpec(), "",
			post(paymentBody), withHeader(post(paymentBody), h("X-Account", "acc_1"))},
		{"Header/RepeatedOrder", paymentSpec(), "repeated values count in order",
			withHeader(post(paymentBody), h("X-Account", "a", "X-Account", "b")), withHeader(post(paymentBody), h("X-Account", "b", "X-Account", "a"))},
		{"Header/RepeatedVsOne", paymentSpec(), "",
			withHeader(post(paymentBody), h("X-Account", "a")), withHeader(post(paymentBody), h("X-Account", "a", "X-Account", "a"))},
		{"Query/Value", paymentSpec(), "",
			withQuery(post(paymentBody), "dryRun=false"), withQuery(post(paymentBody), "dryRun=true")},
		{"Query/AbsentVsEmpty", paymentSpec(), "",
			post(paymentBody), withQuery(post(paymentBody), "dryRun=")},
		{"Query/RepeatedOrder", paymentSpec(), "repeated values count in order",
			withQuery(post(paymentBody), "dryRun=a&dryRun=b"), withQuery(post(paymentBody), "dryRun=b&dryRun=a")},
		{"Query/RepeatedVsOne", paymentSpec(), "",
			withQuery(post(paymentBody), "dryRun=a"), withQuery(post(paymentBody), "dryRun=a&dryRun=a")},
		{"Query/NameCase", paymentSpec(), "query names are case-sensitive",
			withQuery(post(paymentBody), "dryRun=a"), withQuery(post(paymentBody), "dryrun=a")},

		{"WholeBody/NoBodyVsNull", wholeSpec(), "no body is not the body null",
			noBody(), post(`null`)},
		{"WholeBody/NoBodyVsEmptyObject", wholeSpec(), "", noBody(), post(`{}`)},
		{"WholeBody/NullVsEmptyObject", wholeSpec(), "", post(`null`), post(`{}`)},
		{"WholeBody/EmptyObjectVsEmptyArray", wholeSpec(), "", post(`{}`), post(`[]`)},
		{"WholeBody/UndeclaredCounts", wholeSpec(), "without Intent every field counts",
			post(`{"a":1}`), post(`{"a":1,"b":2}`)},
		{"WholeBody/ExactPathOnlyFromRoot", wholeSpec(), "meta.sentAt is not x.meta.sentAt",
			post(`{"x":{"meta":{"sentAt":1}}}`), post(`{"x":{"meta":{"sentAt":2}}}`)},
		{"WholeBody/NoteOutsideItems", wholeSpec(), "items.#.note drops nothing else",
			post(`{"note":"a"}`), post(`{"note":"b"}`)},
	}
	// Absent, null, "", [], {}, 0 and false are seven different things.
	values := []struct{ name, body string }{
		{"Absent", `{}`}, {"Null", `{"note":null}`}, {"EmptyString", `{"note":""}`},
		{"EmptyArray", `{"note":[]}`}, {"EmptyObject", `{"note":{}}`}, {"Zero", `{"note":0}`}, {"False", `{"note":false}`},
	}
	for i, a := range values {
		for _, b := range values[i+1:] {
			tests = append(tests, pairTest{"Absent/" + a.name + "Vs" + b.name, Spec{Intent: []string{"note"}}, "", post(a.body), post(b.body)})
		}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fa, fb, da, db := tt.sums(t)
			if fa == fb {
				t.Errorf("fingerprints are equal (%s): %s\n a: %s\n b: %s", tt.reason, fa, da, db)
			}
			if bytes.Equal(da, db) {
				t.Errorf("intent documents are equal (%s): %s", tt.reason, da)
			}
		})
	}
}

// TestIntentBelowScalar checks that a path never looks inside a string: a
// string that happens to contain JSON text is a scalar, like any other.
func TestIntentBelowScalar(t *testing.T) {
	tests := []struct {
		name, path, body string
	}{
		{"ArrayText", "note.0", `{"note":"[7]"}`},
		{"ArrayOfStringsText", "note.0", `{"note":"[\"A\"]"}`},
		{"ObjectInArrayText", "note.0.sku", `{"note":"[{\"sku\":\"A\"}]"}`},
		{"UnterminatedArrayText", "note.0", `{"note":"[{"}`},
		{"ArrayTextAfterPrefix", "note.1", `{"note":"x[1,2]"}`},
		{"HashElementText", "tags.#.0", `{"tags":["[1]"]}`},
		{"Number", "n.0", `{"n":5}`},
		{"Bool", "b.x", `{"b":true}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := compile(t, Spec{Intent: []string{tt.path}, Ignore: []string{"zz"}})
			_, doc, err := sum(f, post(tt.body))
			if err != nil {
				t.Fatalf("Sum(%s) with intent %q: %v", tt.body, tt.path, err)
			}
			if _, err := (canonical.Options{Numbers: canonical.Exact}).Transform(doc); err != nil {
				t.Errorf("intent document %s is not JSON: %v", doc, err)
			}
			var d struct {
				Intent map[string]json.RawMessage `json:"intent"`
			}
			json.Unmarshal(doc, &d)
			if v, ok := d.Intent[tt.path]; ok && !strings.Contains(tt.path, "#") {
				t.Errorf("%q selected %s below a scalar in %s; want absent\ndocument: %s", tt.path, v, tt.body, doc)
			}
			if strings.Contains(tt.path, "#") && !bytes.Contains(doc, []byte(`"intent":{"tags.#.0":[]}`)) {
				t.Errorf("%q: want an empty selection with a hole in %s\ndocument: %s", tt.path, tt.body, doc)
			}
		})
	}
}

func TestInvalidBody(t *testing.T) {
	tests := []struct {
		name    string
		spec    Spec
		body    string
		reason  string
		want    error
		offset  int64
		pointer string
	}{
		{"Duplicate/Amount", paymentSpec(), `{"amount":10,"amount":10000}`, "gjson would read 10, encoding/json 10000", canonical.ErrDuplicateName, 13, "/amount"},
		{"Duplicate/IntentName", paymentSpec(), `{"amountCents":10,"currency":"EUR","amountCents":10000}`, "", canonical.ErrDuplicateName, 35, "/amountCents"},
		{"Duplicate/AfterUnescape", paymentSpec(), `{"amountCents":10,"\u0061mountCents":10000}`, "", canonical.ErrDuplicateName, 18, "/amountCents"},
		{"Duplicate/InIgnoredMember", paymentSpec(), `{"amountCents":1,"traceId":"a","traceId":"b"}`, "the whole body is validated, ignored parts too", canonical.ErrDuplicateName, 31, "/traceId"},
		{"Duplicate/Nested", wholeSpec(), `{"a":{"b":1,"b":2}}`, "", canonical.ErrDuplicateName, 12, "/a/b"},
		{"InvalidUTF8/Value", paymentSpec(), "{\"currency\":\"EU\xff\"}", "", canonical.ErrInvalidUTF8, 15, "/currency"},
		{"InvalidUTF8/UndeclaredName", paymentSpec(), "{\"amountCents\":1,\"n\xc3\":1}", "", canonical.ErrInvalidUTF8, 19, ""},
		{"LoneSurrogate/High", paymentSpec(), `{"currency":"\ud800"}`, "", canonical.ErrInvalidSurrogate, 13, "/currency"},
		{"LoneSurrogate/Low", wholeSpec(), `{"a":[1,{"x":"\udfff"}]}`, "", canonical.ErrInvalidSurrogate, 14, "/a/1/x"},
		{"LoneSurrogate/Reversed", wholeSpec(), `{"a":"\ude00\ud83d"}`, "", canonical.ErrInvalidSurrogate, 6, "/a"},
		{"Syntax/TrailingData", paymentSpec(), `{"amountCents":1} {}`, "one JSON text", canonical.ErrSyntax, 18, ""},
		{"Syntax/WhitespaceOnly", paymentSpec(), "  ", "only an empty body is no body", canonical.ErrSyntax, 2, ""},
		{"Syntax/ByteOrderMark", wholeSpec(), "\xef\xbb\xbf{}", "", canonical.ErrSyntax, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := compile(t, tt.spec)
			fp, err := f.Sum(post(tt.body))
			if !fp.IsZero() {
				t.Errorf("Sum(%q) = %v; want no fingerprint", tt.body, fp)
			}
			var ce *canonical.Error
			if !errors.As(err, &ce) {
				t.Fatalf("Sum(%q) error %v (%T); want a *canonical.Error (%s)", tt.body, err, err, tt.reason)
			}
			if !errors.Is(err, tt.want) {
				t.Errorf("Sum(%q) = %v; want errors.Is %v", tt.body, err, tt.want)
			}
			type where struct {
				Offset  int64
				Pointer string
			}
			if diff := cmp.Diff(where{tt.offset, tt.pointer}, where{ce.Offset, ce.Pointer}); diff != "" {
				t.Errorf("Sum(%q) location mismatch (-want +got):\n%s", tt.body, diff)
			}
			dst := []byte("prefix")
			out, err2 := f.AppendIntent(dst, post(tt.body))
			if string(out) != "prefix" || err2 == nil || err2.Error() != err.Error() {
				t.Errorf("AppendIntent(%q) = %q, %v; want dst unchanged and %v", tt.body, out, err2, err)
			}
		})
	}
}

func TestRequestErrors(t *testing.T) {
	tests := []struct {
		name   string
		spec   Spec
		req    Request
		reason string
		want   fingerprint.RequestError // Err is checked with errors.Is
		is     error
	}{
		{"Required/Missing", Spec{Intent: []string{"amountCents", "currency"}, Required: []string{"currency"}},
			post(`{"amountCents":1}`), "", fingerprint.RequestError{Part: "body", Name: "currency"}, fingerprint.ErrMissingRequired},
		{"Required/NoBody", Spec{Intent: []string{"amountCents"}, Required: []string{"amountCents"}},
			noBody(), "", fingerprint.RequestError{Part: "body", Name: "amountCents"}, fingerprint.ErrMissingRequired},
		{"Required/NestedMissing", Spec{Intent: []string{"destination.iban"}, Required: []string{"destination.iban"}},
			post(`{"destination":{}}`), "", fingerprint.RequestError{Part: "body", Name: "destination.iban"}, fingerprint.ErrMissingRequired},
		{"Required/BelowScalar", Spec{Intent: []string{"destination.iban"}, Required: []string{"destination.iban"}},
			post(`{"destination":"DE89"}`), "", fingerprint.RequestError{Part: "body", Name: "destination.iban"}, fingerprint.ErrMissingRequired},
		{"Required/HashHole", Spec{Intent: []string{"items.#.sku", "items.#.qty"}, Required: []string{"items.#.sku"}},
			post(`{"items":[{"sku":"A"},{"qty":1},{}]}`), "the first concrete path that is missing", fingerprint.RequestError{Part: "body", Name: "items.1.sku"}, fingerprint.ErrMissingRequired},
		{"Required/HashNotArray", Spec{Intent: []string{"items.#.sku"}, Required: []string{"items.#.sku"}},
			post(`{"items":{"sku":"A"}}`), "", fingerprint.RequestError{Part: "body", Name: "items.#.sku"}, fingerprint.ErrMissingRequired},
		{"Required/NestedHashHole", Spec{Intent: []string{"orders.#.lines.#.sku"}, Required: []string{"orders.#.lines.#.sku"}},
			post(`{"orders":[{"lines":[{"sku":"A"}]},{"lines":[{"sku":"B"},{"qty":2}]}]}`), "", fingerprint.RequestError{Part: "body", Name: "orders.1.lines.1.sku"}, fingerprint.ErrMissingRequired},
		{"Required/NestedHashMissingArray", Spec{Intent: []string{"orders.#.lines.#.sku"}, Required: []string{"orders.#.lines.#.sku"}},
			post(`{"orders":[{"lines":[{"sku":"A"}]},{}]}`), "", fingerprint.RequestError{Part: "body", Name: "orders.1.lines.#.sku"}, fingerprint.ErrMissingRequired},
		{"Required/WholeBody", Spec{Required: []string{"amountCents"}},
			post(`{"amount":1}`), "", fingerprint.RequestError{Part: "body", Name: "amountCents"}, fingerprint.ErrMissingRequired},
		{"Required/WholeBodyNoBody", Spec{Required: []string{"amountCents"}},
			noBody(), "", fingerprint.RequestError{Part: "body", Name: "amountCents"}, fingerprint.ErrMissingRequired},
		{"Required/WholeBodyHashHole", Spec{Required: []string{"items.#.sku"}},
			post(`{"items":[{"sku":"A"},{"sku":"B"},{"qty":1}]}`), "", fingerprint.RequestError{Part: "body", Name: "items.2.sku"}, fingerprint.ErrMissingRequired},
		{"InvalidUTF8/Header", paymentSpec(),
			withHeader(post(paymentBody), http.Header{"X-Account": {"acc\xff"}}), "", fingerprint.RequestError{Part: "header", Name: "x-account"}, fingerprint.ErrInvalidRequest},
		{"InvalidUTF8/SecondHeaderValue", paymentSpec(),
			withHeader(post(paymentBody), http.Header{"X-Account": {"ok", "\xc3"}}), "", fingerprint.RequestError{Part: "header", Name: "x-account"}, fingerprint.ErrInvalidRequest},
		{"InvalidUTF8/Query", paymentSpec(),
			func() Request { r := post(paymentBody); r.Query = url.Values{"dryRun": {"\xff"}}; return r }(), "", fingerprint.RequestError{Part: "query", Name: "dryRun"}, fingerprint.ErrInvalidRequest},
		{"InvalidUTF8/Method", paymentSpec(),
			func() Request { r := post(paymentBody); r.Method = "P\xffST"; return r }(), "", fingerprint.RequestError{Part: "method"}, fingerprint.ErrInvalidRequest},
		{"InvalidUTF8/Path", paymentSpec(),
			func() Request { r := post(paymentBody); r.Path = "/v1/\xff"; return r }(), "", fingerprint.RequestError{Part: "path"}, fingerprint.ErrInvalidRequest},
		{"Header/KeysDifferingInCase", paymentSpec(),
			withHeader(post(paymentBody), http.Header{"x-account": {"acc_1"}, "X-ACCOUNT": {"acc_2"}}), "which one counts would depend on map order", fingerprint.RequestError{Part: "header", Name: "x-account"}, fingerprint.ErrInvalidRequest},
		{"Header/CanonicalKeyAndOtherCase", paymentSpec(),
			withHeader(post(paymentBody), http.Header{"X-Account": {"acc_1"}, "x-account": {"acc_2"}}), "strict: never pick one of two values silently", fingerprint.RequestError{Part: "header", Name: "x-account"}, fingerprint.ErrInvalidRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := compile(t, tt.spec)
			fp, err := f.Sum(tt.req)
			if !fp.IsZero() || err == nil {
				t.Fatalf("Sum = %v, %v; want an error (%s)", fp, err, tt.reason)
			}
			var re *fingerprint.RequestError
			if !errors.As(err, &re) {
				t.Fatalf("Sum error %v (%T); want a *RequestError", err, err)
			}
			if diff := cmp.Diff(tt.want, fingerprint.RequestError{Part: re.Part, Name: re.Name}); diff != "" {
				t.Errorf("Sum error %v mismatch (-want +got):\n%s", err, diff)
			}
			if !errors.Is(err, tt.is) {
				t.Errorf("Sum = %v; want errors.Is %v", err, tt.is)
			}
			if !strings.HasPrefix(err.Error(), "fingerprint: "+tt.want.Part) || strings.Count(err.Error(), "fingerprint:") != 1 {
				t.Errorf("Sum error message %q; want one prefix %q", err, "fingerprint: "+tt.want.Part)
			}
		})
	}
}

// TestRequiredPresent checks that a required path is satisfied by any value,
// null included, and by a "#" path that matches in every element.
func TestRequiredPresent(t *testing.T) {
	tests := []struct {
		name string
		spec Spec
		body string
	}{
		{"Null", Spec{Intent: []string{"a"}, Required: []string{"a"}}, `{"a":null}`},
		{"EmptyString", Spec{Intent: []string{"a"}, Required: []string{"a"}}, `{"a":""}`},
		{"HashEverywhere", Spec{Intent: []string{"items.#.sku"}, Required: []string{"items.#.sku"}}, `{"items":[{"sku":"A"},{"sku":null}]}`},
		{"HashEmptyArray", Spec{Intent: []string{"items.#.sku"}, Required: []string{"items.#.sku"}}, `{"items":[]}`},
		{"WholeBody", Spec{Required: []string{"a.b"}}, `{"a":{"b":false}}`},
		{"WholeBodyHash", Spec{Required: []string{"items.#.sku"}}, `{"items":[{"sku":"A"}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, _, err := sum(compile(t, tt.spec), post(tt.body)); err != nil {
				t.Errorf("Sum(%s): %v", tt.body, err)
			}
		})
	}
}

func TestFingerprintText(t *testing.T) {
	f := compile(t, paymentSpec())
	fp, err := f.Sum(post(paymentBody))
	if err != nil {
		t.Fatal(err)
	}
	s := fp.String()
	if !strings.HasPrefix(s, "v1:sha256:") || len(s) != len("v1:sha256:")+43 {
		t.Fatalf("String() = %q; want v1:sha256: and 43 base64url characters", s)
	}
	got, err := fingerprint.Parse(s)
	if err != nil || got != fp {
		t.Errorf("Parse(%q) = %v, %v; want %v", s, got, err, fp)
	}
	text, err := fp.MarshalText()
	if err != nil || string(text) != s {
		t.Errorf("MarshalText() = %q, %v; want %q", text, err, s)
	}
	app, _ := fp.AppendText([]byte("fp="))
	if string(app) != "fp="+s {
		t.Errorf("AppendText = %q; want %q", app, "fp="+s)
	}
	var u fingerprint.Fingerprint
	if err := u.UnmarshalText(text); err != nil || u != fp {
		t.Errorf("UnmarshalText(%q) = %v, %v; want %v", text, u, err, fp)
	}
	if err := u.UnmarshalText(nil); err != nil || !u.IsZero() {
		t.Errorf("UnmarshalText(nil) = %v, %v; want the zero value", u, err)
	}

	var zero fingerprint.Fingerprint
	if !zero.IsZero() || zero.String() != "" || fp.IsZero() {
		t.Errorf("zero: IsZero %v String %q; fp.IsZero %v", zero.IsZero(), zero.String(), fp.IsZero())
	}
	if text, err := zero.MarshalText(); err != nil || len(text) != 0 {
		t.Errorf("zero.MarshalText() = %q, %v; want empty", text, err)
	}

	// Comparable with == and usable as a map key.
	fp2, _ := f.Sum(post(paymentBody))
	other, _ := f.Sum(post(`{}`))
	if fp != fp2 || fp == other || fp == zero {
		t.Errorf("== is not equality of intent: %v %v %v", fp, fp2, other)
	}
	if m := map[fingerprint.Fingerprint]int{fp: 1, fp2: 2, other: 3}; len(m) != 2 {
		t.Errorf("map of 3 fingerprints, 2 distinct, has %d keys", len(m))
	}

	// Through encoding/json as a struct field.
	type record struct {
		Key         string                  `json:"key"`
		Fingerprint fingerprint.Fingerprint `json:"fingerprint"`
		Previous    fingerprint.Fingerprint `json:"previous"`
	}
	in := record{Key: "k1", Fingerprint: fp}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"key":"k1","fingerprint":"` + s + `","previous":""}`; string(b) != want {
		t.Errorf("json.Marshal = %s; want %s", b, want)
	}
	var out record
	if err := json.Unmarshal(b, &out); err != nil || out != in {
		t.Errorf("json.Unmarshal(%s) = %+v, %v; want %+v", b, out, err, in)
	}
	if err := json.Unmarshal([]byte(`{"fingerprint":"v1:sha256:x"}`), &out); !errors.Is(err, fingerprint.ErrInvalidFingerprint) {
		t.Errorf("json.Unmarshal of a bad fingerprint: %v; want ErrInvalidFingerprint", err)
	}
}

func TestParseErrors(t *testing.T) {
	const good = "v1:sha256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
	if _, err := fingerprint.Parse(good); err != nil {
		t.Fatalf("Parse(%q): %v", good, err)
	}
	digest := good[len("v1:sha256:"):]
	tests := []struct {
		name, in, reason string
	}{
		{"Empty", "", ""},
		{"NoPrefix", digest, ""},
		{"OnlyPrefix", "v1:sha256:", ""},
		{"Version2", "v2:sha256:" + digest, "an unknown version is not v1"},
		{"Version0", "v0:sha256:" + digest, ""},
		{"UpperCaseVersion", "V1:sha256:" + digest, ""},
		{"OtherAlgorithm", "v1:sha512:" + digest, ""},
		{"UpperCaseAlgorithm", "v1:SHA256:" + digest, ""},
		{"NoVersion", "sha256:" + digest, "a spec digest is not a fingerprint"},
		{"Short", "v1:sha256:" + digest[:42], ""},
		{"Long", "v1:sha256:" + digest + "A", ""},
		{"Padding", "v1:sha256:" + digest + "=", ""},
		{"PaddingInPlace", "v1:sha256:" + digest[:42] + "=", ""},
		{"NonCanonicalTrailingBits", "v1:sha256:" + digest[:42] + "B", "the last character carries 2 unused bits that must be zero"},
		{"StdAlphabetPlus", "v1:sha256:+" + digest[1:], "base64url, not standard base64"},
		{"StdAlphabetSlash", "v1:sha256:/" + digest[1:], ""},
		{"Newline", "v1:sha256:" + digest[:20] + "\n" + digest[21:], "the decoder must not skip newlines"},
		{"CarriageReturn", "v1:sha256:" + digest[:42] + "\r", ""},
		{"Space", " " + good, ""},
		{"TrailingSpace", good[:len(good)-1] + " ", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fp, err := fingerprint.Parse(tt.in)
			if !errors.Is(err, fingerprint.ErrInvalidFingerprint) || !fp.IsZero() {
				t.Errorf("Parse(%q) = %v, %v; want the zero value and ErrInvalidFingerprint (%s)", tt.in, fp, err, tt.reason)
			}
			var u fingerprint.Fingerprint
			if err := u.UnmarshalText([]byte(tt.in)); tt.in != "" && !errors.Is(err, fingerprint.ErrInvalidFingerprint) {
				t.Errorf("UnmarshalText(%q) = %v; want ErrInvalidFingerprint", tt.in, err)
			}
		})
	}
}

func TestSpecDigest(t *testing.T) {
	base := Spec{
		Intent:   []string{"amountCents", "currency", "items.#.sku"},
		Ignore:   []string{"traceId", "meta.sentAt"},
		Required: []string{"amountCents", "currency"},
		Headers:  []string{"X-Account", "X-Api-Version"},
		Query:    []string{"dryRun", "mode"},
	}
	same := []struct {
		name string
		spec Spec
	}{
		{"ListOrder", Spec{
			Intent:   []string{"items.#.sku", "currency", "amountCents"},
			Ignore:   []string{"meta.sentAt", "traceId"},
			Required: []string{"currency", "amountCents"},
			Headers:  []string{"X-Api-Version", "X-Account"},
			Query:    []string{"mode", "dryRun"},
		}},
		{"HeaderCase", Spec{Intent: base.Intent, Ignore: base.Ignore, Required: base.Required, Headers: []string{"x-account", "X-API-VERSION"}, Query: base.Query}},
		{"ExplicitExact", Spec{Intent: base.Intent, Ignore: base.Ignore, Required: base.Required, Headers: base.Headers, Query: base.Query, Numbers: "exact"}},
	}
	want := compile(t, base).SpecDigest()
	if !strings.HasPrefix(want, "sha256:") || len(want) != len("sha256:")+43 {
		t.Errorf("SpecDigest() = %q; want sha256: and 43 base64url characters", want)
	}
	for _, tt := range same {
		t.Run("Same/"+tt.name, func(t *testing.T) {
			f := compile(t, tt.spec)
			if got := f.SpecDigest(); got != want {
				t.Errorf("SpecDigest() = %s; want %s", got, want)
			}
			// Same digest, same rules: the same request has the same fingerprint.
			r := withQuery(withHeader(post(`{"amountCents":1,"currency":"EUR","items":[]}`), http.Header{"X-Account": {"a"}, "X-Api-Version": {"2"}}), "mode=x&dryRun=1")
			a, _, err1 := sum(compile(t, base), r)
			b, _, err2 := sum(f, r)
			if a != b || err1 != nil || err2 != nil {
				t.Errorf("Sum differs: %v (%v), %v (%v)", a, err1, b, err2)
			}
		})
	}

	differ := []struct {
		name string
		spec Spec
	}{
		{"Base", base},
		{"Zero", Spec{}},
		{"ZeroJCS", Spec{Numbers: "jcs"}},
		{"NumbersJCS", func() Spec { s := base; s.Numbers = "jcs"; return s }()},
		{"IntentAdded", func() Spec { s := base; s.Intent = append(s.Intent[:3:3], "items.#.qty"); return s }()},
		{"IntentRemoved", func() Spec { s := base; s.Intent = []string{"amountCents", "currency"}; return s }()},
		{"IntentRespelled", func() Spec { s := base; s.Intent = []string{"amountCents", "currency", "items.0.sku"}; return s }()},
		{"IgnoreAdded", func() Spec { s := base; s.Ignore = []string{"traceId", "meta.sentAt", "requestId"}; return s }()},
		{"IgnoreNameVsPath", func() Spec { s := base; s.Ignore = []string{"traceId", "sentAt"}; return s }()},
		{"RequiredRemoved", func() Spec { s := base; s.Required = []string{"amountCents"}; return s }()},
		{"RequiredAdded", func() Spec { s := base; s.Required = []string{"amountCents", "currency", "items.#.sku"}; return s }()},
		{"HeaderRemoved", func() Spec { s := base; s.Headers = []string{"X-Account"}; return s }()},
		{"HeaderRenamed", func() Spec { s := base; s.Headers = []string{"X-Account", "X-Api-Versions"}; return s }()},
		{"QueryRemoved", func() Spec { s := base; s.Query = []string{"dryRun"}; return s }()},
		{"QueryCase", func() Spec { s := base; s.Query = []string{"dryrun", "mode"}; return s }()},
		{"HeaderAsQuery", func() Spec {
			s := base
			s.Headers = []string{"X-Account"}
			s.Query = []string{"dryRun", "mode", "x-api-version"}
			return s
		}()},
		{"IgnoreAsIntent", Spec{Intent: []string{"traceId"}}},
		{"IntentAsIgnore", Spec{Ignore: []string{"traceId"}}},
		{"RequiredWholeBody", Spec{Required: []string{"traceId"}}},
	}
	seen := map[string]string{}
	for _, tt := range differ {
		d := compile(t, tt.spec).SpecDigest()
		if prev, ok := seen[d]; ok {
			t.Errorf("Differ/%s has the digest of Differ/%s: %s", tt.name, prev, d)
		}
		seen[d] = tt.name
	}
}

func TestSumHTTP(t *testing.T) {
	f := compile(t, paymentSpec())
	body := strings.Replace(paymentBody, "{", "{ ", 1)
	r := httptest.NewRequest("POST", "http://example.com"+paymentPath+"?utm=1&dryRun=false", strings.NewReader(body))
	r.Header.Set("X-Account", "acc_1")
	got, err := f.SumHTTP(r)
	if err != nil {
		t.Fatal(err)
	}
	rest, err := io.ReadAll(r.Body)
	if err != nil || string(rest) != body {
		t.Errorf("body after SumHTTP = %q, %v; want %q", rest, err, body)
	}
	want, err := f.Sum(Request{Method: "POST", Path: paymentPath, Query: url.Values{"dryRun": {"false"}}, Header: http.Header{"X-Account": {"acc_1"}}, Body: []byte(body)})
	if err != nil || got != want {
		t.Errorf("SumHTTP = %v; Sum = %v, %v", got, want, err)
	}

	noBodyWant, _ := f.Sum(Request{Method: "POST", Path: paymentPath})
	for _, tt := range []struct {
		name string
		body io.ReadCloser
	}{{"NilBody", nil}, {"NoBody", http.NoBody}, {"EmptyReader", io.NopCloser(strings.NewReader(""))}} {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", paymentPath, nil)
			r.Body = tt.body
			got, err := f.SumHTTP(r)
			if err != nil || got != noBodyWant {
				t.Errorf("SumHTTP = %v, %v; want %v", got, err, noBodyWant)
			}
		})
	}

	t.Run("InvalidBodyStillReadable", func(t *testing.T) {
		const bad = `{"amountCents":10,"amountCents":10000}`
		r := httptest.NewRequest("POST", paymentPath, strings.NewReader(bad))
		if _, err := f.SumHTTP(r); !errors.Is(err, canonical.ErrDuplicateName) {
			t.Errorf("SumHTTP = %v; want ErrDuplicateName", err)
		}
		if rest, _ := io.ReadAll(r.Body); string(rest) != bad {
			t.Errorf("body after SumHTTP = %q; want %q", rest, bad)
		}
	})

	t.Run("ReadError", func(t *testing.T) {
		r := httptest.NewRequest("POST", paymentPath, nil)
		r.Body = io.NopCloser(io.MultiReader(strings.NewReader(`{"amo`), errReader{}))
		_, err := f.SumHTTP(r)
		var re *fingerprint.RequestError
		if !errors.As(err, &re) || re.Part != "body" || !errors.Is(err, fingerprint.ErrInvalidRequest) {
			t.Errorf("SumHTTP with a failing body = %v; want a *RequestError for the body wrapping ErrInvalidRequest", err)
		}
	})

	// A declared query parameter that does not parse is not the same as no
	// parameter: url.URL.Query silently drops it.
	t.Run("MalformedDeclaredQuery", func(t *testing.T) {
		for _, raw := range []string{"dryRun=%zz", "dryRun=true;x=1"} {
			r := httptest.NewRequest("POST", paymentPath+"?"+raw, strings.NewReader(paymentBody))
			got, err := f.SumHTTP(r)
			without, _ := f.Sum(post(paymentBody))
			if err == nil && got == without {
				t.Errorf("SumHTTP(?%s) = %v, the fingerprint without dryRun; want an ErrInvalidRequest for query \"dryRun\"", raw, got)
			}
		}
	})
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("connection reset") }

func TestAppendIntent(t *testing.T) {
	tests := []struct {
		name string
		spec Spec
		req  Request
		want string
	}{
		{"Payment", paymentSpec(),
			withQuery(withHeader(post(paymentBody), http.Header{"X-Account": {"acc_1"}, "User-Agent": {"x"}}), "dryRun=false&utm=1"),
			`{"absent":{},"headers":{"x-account":["acc_1"]},"intent":{"amountCents":1000,"currency":"EUR","destination.iban":"DE89370400440532013000"},"method":"POST","path":"/v1/accounts/acc_1/transfers","query":{"dryRun":["false"]}}`},
		{"PaymentAbsent", paymentSpec(), post(`{"amountCents":1e3,"destination":null}`),
			`{"absent":{"currency":["currency"],"destination.iban":["destination.iban"]},"headers":{},"intent":{"amountCents":1000},"method":"POST","path":"/v1/accounts/acc_1/transfers","query":{}}`},
		{"Holes", orderSpec(), post(`{"customer":{"id":"c1","traceId":"x"},"items":[{"sku":"A","qty":1,"note":"gift"},{"sku":"B"},{"qty":3}]}`),
			`{"absent":{"items.#.qty":["items.1.qty"],"items.#.sku":["items.2.sku"]},"headers":{},"intent":{"customer":{"id":"c1"},"items.#.qty":[1,3],"items.#.sku":["A","B"]},"method":"POST","path":"/v1/accounts/acc_1/transfers","query":{}}`},
		{"NestedHoles", Spec{Intent: []string{"orders.#.lines.#.sku"}}, post(`{"orders":[{"lines":[{"sku":"A"},{}]},{},{"lines":[]}]}`),
			`{"absent":{"orders.#.lines.#.sku":["orders.0.lines.1.sku","orders.1.lines.#.sku"]},"headers":{},"intent":{"orders.#.lines.#.sku":[["A"],[]]},"method":"POST","path":"/v1/accounts/acc_1/transfers","query":{}}`},
		{"UTF16Order", Spec{Intent: []string{"\uff61", "😀", "a", "é"}, Query: []string{"\uff61", "😀"}},
			withQuery(post(`{"😀":1,"\uff61":2,"a":3,"é":4}`), "%EF%BD%A1=x&%F0%9F%98%80=y"),
			`{"absent":{},"headers":{},"intent":{"a":3,"é":4,"😀":1,"｡":2},"method":"POST","path":"/v1/accounts/acc_1/transfers","query":{"😀":["y"],"｡":["x"]}}`},
		{"WholeBody", wholeSpec(), post(`{"traceId":"t","b":[{"note":"n","x":1.50}],"items":[{"note":"n","sku":"A"}],"a":"\u00e9\/","meta":{"sentAt":1,"v":2}}`),
			`{"absent":{},"body":{"a":"é/","b":[{"note":"n","x":1.5}],"items":[{"sku":"A"}],"meta":{"v":2}},"headers":{},"method":"POST","path":"/v1/accounts/acc_1/transfers","query":{}}`},
		{"WholeBodyNoBody", Spec{Headers: []string{"X-Api-Version"}}, withHeader(Request{Path: "/v1/x"}, http.Header{"X-Api-Version": {"1", "2"}}),
			`{"absent":{},"headers":{"x-api-version":["1","2"]},"method":"GET","path":"/v1/x","query":{}}`},
		{"WholeBodyNull", Spec{}, post(`null`),
			`{"absent":{},"body":null,"headers":{},"method":"POST","path":"/v1/accounts/acc_1/transfers","query":{}}`},
		{"ExactBigNumber", Spec{Intent: []string{"n"}}, post(`{"n":9007199254740993.0}`),
			`{"absent":{},"headers":{},"intent":{"n":9007199254740993},"method":"POST","path":"/v1/accounts/acc_1/transfers","query":{}}`},
		{"JCSBigNumber", Spec{Intent: []string{"n"}, Numbers: "jcs"}, post(`{"n":9007199254740993}`),
			`{"absent":{},"headers":{},"intent":{"n":9007199254740992},"method":"POST","path":"/v1/accounts/acc_1/transfers","query":{}}`},
		{"EscapedPaths", Spec{Intent: []string{`fav\.movie`, `\#tag`, `back\\slash`, `quote"d`}}, post(`{"fav.movie":"x","#tag":1,"back\\slash":2,"quote\"d":3}`),
			`{"absent":{},"headers":{},"intent":{"\\#tag":1,"back\\\\slash":2,"fav\\.movie":"x","quote\"d":3},"method":"POST","path":"/v1/accounts/acc_1/transfers","query":{}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := compile(t, tt.spec)
			got, err := f.AppendIntent([]byte("dst:"), tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasPrefix(got, []byte("dst:")) {
				t.Fatalf("AppendIntent did not append to dst: %q", got)
			}
			got = got[len("dst:"):]
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("AppendIntent mismatch (-want +got):\n%s", diff)
			}
			mode := canonical.Exact
			if tt.spec.Numbers == "jcs" {
				mode = canonical.JCS
			}
			if canon, err := (canonical.Options{Numbers: mode}).Transform(got); err != nil || !bytes.Equal(canon, got) {
				t.Errorf("the document is not its own canonical form: %s, %v", canon, err)
			}
			if mode == canonical.JCS || !bytes.Contains(got, []byte("9007199254740993")) {
				if canon, err := canonical.Transform(got); err != nil || !bytes.Equal(canon, got) {
					t.Errorf("the document is not its own RFC 8785 form: %s, %v", canon, err)
				}
			}
			fp, err := f.Sum(tt.req)
			if err != nil {
				t.Fatal(err)
			}
			h := sha256.Sum256([]byte("idemprint/fingerprint/v1\n" + f.SpecDigest() + "\n" + string(got)))
			if want := "v1:sha256:" + base64.RawURLEncoding.EncodeToString(h[:]); fp.String() != want {
				t.Errorf("Sum = %s; want sha256 of the preimage %s", fp, want)
			}
		})
	}
}

func TestDiff(t *testing.T) {
	type D = fingerprint.Difference
	// v turns "" into nil: absent.
	v := func(s string) []byte {
		if s == "" {
			return nil
		}
		return []byte(s)
	}
	d := func(part, path, first, second string) D {
		return D{Part: part, Path: path, First: v(first), Second: v(second)}
	}
	put := func(r Request) Request { r.Method = "PUT"; return r }
	tests := []struct {
		name string
		spec Spec
		a, b Request
		want []D
	}{
		{"Equal", paymentSpec(), post(paymentBody), post(strings.Replace(paymentBody, "t-1", "t-2", 1)), nil},
		{"Amount", paymentSpec(), post(`{"amountCents":1000}`), post(`{"amountCents":1000000}`),
			[]D{d("body", "amountCents", "1000", "1000000")}},
		{"AbsentVsNull", paymentSpec(), post(`{"currency":"EUR"}`), post(`{"currency":"EUR","amountCents":null}`),
			[]D{d("body", "amountCents", "", "null")}},
		{"NestedLeaf", Spec{Intent: []string{"destination"}}, post(`{"destination":{"iban":"A","bic":"X","addr":{"city":"B"}}}`), post(`{"destination":{"iban":"B","bic":"X","addr":{"city":"C","zip":"1"}}}`),
			[]D{d("body", "destination.addr.city", `"B"`, `"C"`), d("body", "destination.addr.zip", "", `"1"`), d("body", "destination.iban", `"A"`, `"B"`)}},
		{"ObjectVsScalar", Spec{Intent: []string{"destination"}}, post(`{"destination":{"iban":"A"}}`), post(`{"destination":"A"}`),
			[]D{d("body", "destination", `{"iban":"A"}`, `"A"`)}},
		{"ArrayElements", Spec{Intent: []string{"tags"}}, post(`{"tags":["a","b"]}`), post(`{"tags":["a","c"]}`),
			[]D{d("body", "tags.1", `"b"`, `"c"`)}},
		{"ArrayLength", Spec{Intent: []string{"tags"}}, post(`{"tags":["a"]}`), post(`{"tags":["a","c"]}`),
			[]D{d("body", "tags", `["a"]`, `["a","c"]`)}},
		{"Method", paymentSpec(), post(paymentBody), put(post(paymentBody)),
			[]D{d("method", "", `"POST"`, `"PUT"`)}},
		{"Path", paymentSpec(), post(paymentBody), func() Request { r := post(paymentBody); r.Path = "/v1/accounts/acc_2/transfers"; return r }(),
			[]D{d("path", "", `"/v1/accounts/acc_1/transfers"`, `"/v1/accounts/acc_2/transfers"`)}},
		{"Header", Spec{Headers: []string{"X-Account", "X-Api-Version"}},
			withHeader(noBody(), http.Header{"X-Account": {"acc_1"}}), withHeader(noBody(), http.Header{"X-Account": {"acc_2"}, "X-Api-Version": {"2"}}),
			[]D{d("header", "x-account", `["acc_1"]`, `["acc_2"]`), d("header", "x-api-version", "", `["2"]`)}},
		{"Query", paymentSpec(), withQuery(noBody(), "dryRun=true"), withQuery(noBody(), "dryRun=false&dryRun=true"),
			[]D{d("query", "dryRun", `["true"]`, `["false","true"]`)}},
		{"HashHoles", orderSpec(), post(`{"items":[{"sku":"A","qty":1},{"sku":"B"}]}`), post(`{"items":[{"sku":"A"},{"sku":"B","qty":1}]}`),
			[]D{{Part: "body", Path: "items.#.qty", First: v("[1]"), Second: v("[1]"), FirstAbsent: []string{"items.1.qty"}, SecondAbsent: []string{"items.0.qty"}}}},
		{"HashValues", orderSpec(), post(`{"items":[{"sku":"A"}]}`), post(`{"items":[{"sku":"B"}]}`),
			[]D{d("body", "items.#.sku", `["A"]`, `["B"]`)}},
		{"HashAbsentAltogether", orderSpec(), post(`{}`), post(`{"items":[{"sku":"A","qty":1}]}`),
			[]D{d("body", "items.#.qty", "", "[1]"), d("body", "items.#.sku", "", `["A"]`)}},
		{"WholeBodyLeaves", wholeSpec(), post(`{"a":{"b":1},"list":[1,2],"fav.movie":"x"}`), post(`{"a":{"b":2},"list":[1,3],"fav.movie":"y"}`),
			[]D{d("body", "a.b", "1", "2"), d("body", `fav\.movie`, `"x"`, `"y"`), d("body", "list.1", "2", "3")}},
		{"WholeBodyAbsent", wholeSpec(), noBody(), post(`{}`),
			[]D{d("body", "", "", "{}")}},
		{"WholeBodyRoot", wholeSpec(), post(`{}`), post(`[]`),
			[]D{d("body", "", "{}", "[]")}},
		{"Order", Spec{Intent: []string{"amountCents"}, Headers: []string{"X-Account"}, Query: []string{"dryRun"}},
			withQuery(withHeader(post(`{"amountCents":1}`), http.Header{"X-Account": {"a"}}), "dryRun=1"),
			withQuery(withHeader(put(Request{Path: "/other", Body: []byte(`{"amountCents":2}`)}), http.Header{"X-Account": {"b"}}), "dryRun=2"),
			[]D{d("method", "", `"POST"`, `"PUT"`), d("path", "", `"/v1/accounts/acc_1/transfers"`, `"/other"`), d("header", "x-account", `["a"]`, `["b"]`), d("query", "dryRun", `["1"]`, `["2"]`), d("body", "amountCents", "1", "2")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := compile(t, tt.spec)
			_, a, err := sum(f, tt.a)
			if err != nil {
				t.Fatal(err)
			}
			_, b, err := sum(f, tt.b)
			if err != nil {
				t.Fatal(err)
			}
			got, err := fingerprint.Diff(a, b)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Diff mismatch (-want +got):\n%s\na: %s\nb: %s", diff, a, b)
			}
			if back, err := fingerprint.Diff(a, a); err != nil || back != nil {
				t.Errorf("Diff(a, a) = %v, %v; want no differences", back, err)
			}
		})
	}
	for _, bad := range []string{``, `{}`, `[]`, `{"method":"GET"}`, `not json`, `{"method":"GET","path":"/","intent":[]}`} {
		if _, err := fingerprint.Diff([]byte(bad), []byte(`{"absent":{},"headers":{},"method":"GET","path":"","query":{}}`)); err == nil {
			t.Errorf("Diff(%q, doc): want an error", bad)
		}
	}
}

func TestSumConcurrent(t *testing.T) {
	f := compile(t, Spec{Intent: []string{"amountCents", "currency", "items.#.sku", "items.#.qty"}, Ignore: []string{"traceId", "items.#.note"}, Headers: []string{"X-Account"}, Query: []string{"dryRun"}})
	var reqs []Request
	for i := 0; i < 32; i++ {
		body := fmt.Sprintf(`{"amountCents":%d,"currency":"EUR","traceId":"%d","items":[{"sku":"A","qty":%d,"note":"n"},{"sku":"B%d"}]}`, i*100, i, i, i)
		reqs = append(reqs, withQuery(withHeader(post(body), http.Header{"X-Account": {"acc_" + strconv.Itoa(i%3)}}), "dryRun=false"))
	}
	want := make([]fingerprint.Fingerprint, len(reqs))
	for i, r := range reqs {
		var err error
		if want[i], err = f.Sum(r); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; n < 50; n++ {
				i := (g*7 + n) % len(reqs)
				got, err := f.Sum(reqs[i])
				if err != nil || got != want[i] {
					errs <- fmt.Sprintf("goroutine %d: Sum(req %d) = %v, %v; want %v", g, i, got, err, want[i])
					return
				}
				if _, err := f.AppendIntent(nil, reqs[i]); err != nil {
					errs <- err.Error()
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func TestSumAllocs(t *testing.T) {
	if testing.CoverMode() != "" || raceEnabled {
		t.Skip("coverage instrumentation allocates; the race detector empties sync.Pool at random")
	}
	f := compile(t, Spec{
		Intent:  []string{"amountCents", "currency", "destination.iban", "items.#.sku", "items.#.qty"},
		Ignore:  []string{"traceId", "items.#.note"},
		Headers: []string{"X-Account", "X-Api-Version"},
		Query:   []string{"dryRun", "mode"},
	})
	r := withQuery(withHeader(post(`{"amountCents":1000,"currency":"EUR","destination":{"iban":"DE89"},"traceId":"t","items":[{"sku":"A","qty":1,"note":"x"},{"sku":"B"}]}`),
		http.Header{"X-Account": {"acc_1"}, "X-Api-Version": {"2024-05-01"}}), "mode=fast&dryRun=false")
	want, err := f.Sum(r)
	if err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(100, func() {
		if got, _ := f.Sum(r); got != want {
			panic("fingerprint changed")
		}
	})
	if allocs != 0 {
		t.Errorf("Sum allocates %v times per call in steady state; want 0", allocs)
	}
	dst := make([]byte, 0, 4096)
	allocs = testing.AllocsPerRun(100, func() {
		if got, _, _ := f.SumIntent(dst[:0], r); got != want {
			panic("fingerprint changed")
		}
	})
	if allocs != 0 {
		t.Errorf("SumIntent into a large enough dst allocates %v times per call in steady state; want 0", allocs)
	}
}

// TestIgnorePathEndingInIndex: an Ignore entry whose last segment is a
// decimal, such as "matrix.1", is accepted and drops a member named "1", but
// silently drops nothing from an array. It must either be rejected by
// Compile or drop the element.
func TestIgnorePathEndingInIndex(t *testing.T) {
	spec := Spec{Ignore: []string{"matrix.1"}}
	f, err := fingerprint.Compile(spec)
	if err != nil {
		if !errors.Is(err, fingerprint.ErrInvalidPath) && !errors.Is(err, fingerprint.ErrInvalidSpec) {
			t.Errorf("Compile(%+v) = %v; want ErrInvalidPath or ErrInvalidSpec", spec, err)
		}
		return
	}
	obj1, _, _ := sum(f, post(`{"matrix":{"0":"a","1":"b"}}`))
	obj2, _, _ := sum(f, post(`{"matrix":{"0":"a","1":"c"}}`))
	if obj1 != obj2 {
		t.Errorf("ignore %q does not drop the member \"1\" of an object", spec.Ignore[0])
	}
	a, da, _ := sum(f, post(`{"matrix":[[1],[2],[3]]}`))
	b, db, _ := sum(f, post(`{"matrix":[[1],[9],[3]]}`))
	if a != b {
		t.Errorf("ignore %q is accepted but drops nothing from an array:\n a: %s\n b: %s", spec.Ignore[0], da, db)
	}
}
