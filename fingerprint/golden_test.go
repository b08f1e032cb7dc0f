package fingerprint_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/idemprint/idemprint/canonical"
	"github.com/idemprint/idemprint/fingerprint"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden from the generators")

// goldenFile holds the version 1 vectors. Once landed, no row may change
// within format version 1: a change here is a format change.
var goldenFile = filepath.Join("..", "testdata", "golden", "fingerprints.json")

// goldenRequest is a Request as stored in the golden file. The body is a
// string because its exact bytes matter; "" is no body.
type goldenRequest struct {
	Method  string              `json:"method,omitempty"`
	Path    string              `json:"path,omitempty"`
	Query   map[string][]string `json:"query,omitempty"`
	Headers map[string][]string `json:"headers,omitempty"`
	Body    string              `json:"body"`
}

func (g goldenRequest) request() Request {
	r := Request{Method: g.Method, Path: g.Path}
	if g.Query != nil {
		r.Query = url.Values(g.Query)
	}
	if g.Headers != nil {
		r.Header = http.Header(g.Headers)
	}
	if g.Body != "" {
		r.Body = []byte(g.Body)
	}
	return r
}

type goldenRow struct {
	Name        string        `json:"name"`
	Spec        Spec          `json:"spec"`
	Request     goldenRequest `json:"request"`
	SpecDigest  string        `json:"specDigest"`
	Fingerprint string        `json:"fingerprint"`
	Intent      string        `json:"intent"`
}

// goldenCase is the input half of a row.
type goldenCase struct {
	name string
	spec Spec
	req  goldenRequest
}

// goldenCases generates the inputs of every row, deterministically.
func goldenCases() []goldenCase {
	var cs []goldenCase
	add := func(name string, spec Spec, req goldenRequest) {
		cs = append(cs, goldenCase{name, spec, req})
	}
	body := func(b string) goldenRequest { return goldenRequest{Method: "POST", Path: "/v1/orders", Body: b} }

	// Payment: the README's story, with every kind of retry and change.
	payment := Spec{
		Intent:   []string{"amountCents", "currency", "destination.iban"},
		Required: []string{"amountCents", "currency"},
		Ignore:   []string{"traceId", "requestId", "clientTimestamp", "meta.sentAt"},
		Headers:  []string{"X-Account", "X-Api-Version"},
		Query:    []string{"dryRun"},
	}
	pay := func(b string) goldenRequest {
		return goldenRequest{
			Method:  "POST",
			Path:    "/v1/accounts/acc_1/transfers",
			Query:   map[string][]string{"dryRun": {"false"}},
			Headers: map[string][]string{"X-Account": {"acc_1"}, "X-Api-Version": {"2024-05-01"}},
			Body:    b,
		}
	}
	const payBody = `{"amountCents":1000,"currency":"EUR","destination":{"iban":"DE89370400440532013000","name":"Ada"},"traceId":"t-1","requestId":"r-1","clientTimestamp":1714557600,"meta":{"sentAt":"2024-05-01T10:00:00Z","client":"ios"}}`
	for _, v := range []struct{ name, body string }{
		{"Base", payBody},
		{"Reordered", `{"meta":{"client":"ios","sentAt":"2024-05-01T10:00:00Z"},"clientTimestamp":1714557600,"requestId":"r-1","traceId":"t-1","destination":{"name":"Ada","iban":"DE89370400440532013000"},"currency":"EUR","amountCents":1000}`},
		{"Pretty", "{\n  \"amountCents\": 1000,\n  \"currency\": \"EUR\",\n  \"destination\": {\n    \"iban\": \"DE89370400440532013000\",\n    \"name\": \"Ada\"\n  }\n}\n"},
		{"EscapedNames", `{"\u0061mountCents":1000,"\u0063urrency":"\u0045\u0055\u0052","destination":{"iban":"DE89370400440532013000"}}`},
		{"NewTraceId", strings.NewReplacer(`"t-1"`, `"t-2"`, `"r-1"`, `"r-2"`, "1714557600", "1714557601", "10:00:00Z", "10:00:05Z").Replace(payBody)},
		{"NoNoise", `{"amountCents":1000,"currency":"EUR","destination":{"iban":"DE89370400440532013000"}}`},
		{"UndeclaredChanged", strings.NewReplacer(`"Ada"`, `"Grace"`, `"ios"`, `"web"`).Replace(payBody)},
		{"Amount1000.0", `{"amountCents":1000.0,"currency":"EUR","destination":{"iban":"DE89370400440532013000"}}`},
		{"Amount1e3", `{"amountCents":1e3,"currency":"EUR","destination":{"iban":"DE89370400440532013000"}}`},
		{"Amount10E2", `{"amountCents":10E2,"currency":"EUR","destination":{"iban":"DE89370400440532013000"}}`},
		{"Amount1000000", `{"amountCents":1000000,"currency":"EUR","destination":{"iban":"DE89370400440532013000"}}`},
		{"AmountString", `{"amountCents":"1000","currency":"EUR","destination":{"iban":"DE89370400440532013000"}}`},
		{"AmountNegative", `{"amountCents":-1000,"currency":"EUR","destination":{"iban":"DE89370400440532013000"}}`},
		{"CurrencyUSD", `{"amountCents":1000,"currency":"USD","destination":{"iban":"DE89370400440532013000"}}`},
		{"CurrencyLower", `{"amountCents":1000,"currency":"eur","destination":{"iban":"DE89370400440532013000"}}`},
		{"OtherIBAN", `{"amountCents":1000,"currency":"EUR","destination":{"iban":"FR7630006000011234567890189"}}`},
		{"NoDestination", `{"amountCents":1000,"currency":"EUR"}`},
		{"DestinationNull", `{"amountCents":1000,"currency":"EUR","destination":null}`},
		{"DestinationEmpty", `{"amountCents":1000,"currency":"EUR","destination":{}}`},
		{"IBANNull", `{"amountCents":1000,"currency":"EUR","destination":{"iban":null}}`},
		{"IBANEmpty", `{"amountCents":1000,"currency":"EUR","destination":{"iban":""}}`},
		{"CurrencyNull", `{"amountCents":1000,"currency":null}`},
	} {
		add("Payment/Body/"+v.name, payment, pay(v.body))
	}
	for _, v := range []struct {
		name string
		edit func(*goldenRequest)
	}{
		{"OtherAccountPath", func(r *goldenRequest) { r.Path = "/v1/accounts/acc_2/transfers" }},
		{"Put", func(r *goldenRequest) { r.Method = "PUT" }},
		{"LowerCaseMethod", func(r *goldenRequest) { r.Method = "post" }},
		{"HeaderKeysLowerCase", func(r *goldenRequest) {
			r.Headers = map[string][]string{"x-account": {"acc_1"}, "x-api-version": {"2024-05-01"}}
		}},
		{"HeaderKeysUpperCase", func(r *goldenRequest) {
			r.Headers = map[string][]string{"X-ACCOUNT": {"acc_1"}, "X-API-VERSION": {"2024-05-01"}}
		}},
		{"OtherAccountHeader", func(r *goldenRequest) { r.Headers["X-Account"] = []string{"acc_2"} }},
		{"OtherApiVersion", func(r *goldenRequest) { r.Headers["X-Api-Version"] = []string{"2025-01-01"} }},
		{"NoAccountHeader", func(r *goldenRequest) { delete(r.Headers, "X-Account") }},
		{"UndeclaredHeaders", func(r *goldenRequest) {
			r.Headers["User-Agent"] = []string{"curl/8"}
			r.Headers["X-Request-Id"] = []string{"r-9"}
		}},
		{"DryRunTrue", func(r *goldenRequest) { r.Query["dryRun"] = []string{"true"} }},
		{"NoDryRun", func(r *goldenRequest) { r.Query = nil }},
		{"UndeclaredQuery", func(r *goldenRequest) { r.Query["utm_source"] = []string{"mail"} }},
		{"NoHeadersNoQuery", func(r *goldenRequest) { r.Headers, r.Query = nil, nil }},
	} {
		r := pay(payBody)
		v.edit(&r)
		add("Payment/Request/"+v.name, payment, r)
	}

	// Orders: "#" paths, holes, and an ignored path below "#".
	order := Spec{Intent: []string{"customer.id", "items.#.sku", "items.#.qty"}, Ignore: []string{"items.#.note", "traceId"}}
	for _, v := range []struct{ name, body string }{
		{"Base", `{"customer":{"id":"c1","name":"Ada"},"items":[{"sku":"A","qty":1,"note":"gift"},{"sku":"B","qty":2}],"traceId":"t"}`},
		{"NoteChanged", `{"customer":{"id":"c1"},"items":[{"sku":"A","qty":1,"note":"wrap it"},{"sku":"B","qty":2,"note":"x"}]}`},
		{"Reordered", `{"items":[{"qty":1,"sku":"A"},{"qty":2,"sku":"B"}],"customer":{"id":"c1"}}`},
		{"ItemsSwapped", `{"customer":{"id":"c1"},"items":[{"sku":"B","qty":2},{"sku":"A","qty":1}]}`},
		{"HoleSecondQty", `{"customer":{"id":"c1"},"items":[{"sku":"A","qty":1},{"sku":"B"}]}`},
		{"HoleFirstQty", `{"customer":{"id":"c1"},"items":[{"sku":"A"},{"sku":"B","qty":1}]}`},
		{"HoleEverywhere", `{"customer":{"id":"c1"},"items":[{},{}]}`},
		{"NullQty", `{"customer":{"id":"c1"},"items":[{"sku":"A","qty":null}]}`},
		{"ElementNotObject", `{"customer":{"id":"c1"},"items":[{"sku":"A","qty":1},7,null,"x",[]]}`},
		{"ItemsEmpty", `{"customer":{"id":"c1"},"items":[]}`},
		{"ItemsAbsent", `{"customer":{"id":"c1"}}`},
		{"ItemsNull", `{"customer":{"id":"c1"},"items":null}`},
		{"ItemsObject", `{"customer":{"id":"c1"},"items":{"sku":"A","qty":1}}`},
		{"ThreeItems", `{"customer":{"id":"c1"},"items":[{"sku":"A","qty":1},{"sku":"A","qty":1},{"sku":"C","qty":10}]}`},
		{"NestedTraceInItem", `{"customer":{"id":"c1","traceId":"t"},"items":[{"sku":"A","qty":1,"traceId":"u"}]}`},
		{"CustomerIdNumber", `{"customer":{"id":1},"items":[]}`},
		{"Empty", `{}`},
	} {
		add("Order/"+v.name, order, body(v.body))
	}
	nested := Spec{Intent: []string{"orders.#.lines.#.sku", "orders.#.id"}}
	for _, v := range []struct{ name, body string }{
		{"Full", `{"orders":[{"id":1,"lines":[{"sku":"A"},{"sku":"B"}]},{"id":2,"lines":[{"sku":"C"}]}]}`},
		{"InnerHole", `{"orders":[{"id":1,"lines":[{"sku":"A"},{}]},{"id":2,"lines":[{"sku":"C"}]}]}`},
		{"InnerHoleMoved", `{"orders":[{"id":1,"lines":[{},{"sku":"A"}]},{"id":2,"lines":[{"sku":"C"}]}]}`},
		{"OuterHole", `{"orders":[{"lines":[{"sku":"A"}]},{"id":2}]}`},
		{"EmptyLines", `{"orders":[{"id":1,"lines":[]}]}`},
	} {
		add("NestedHash/"+v.name, nested, body(v.body))
	}
	add("NestedHash/Required", Spec{Intent: []string{"orders.#.lines.#.sku"}, Required: []string{"orders.#.lines.#.sku"}},
		body(`{"orders":[{"lines":[{"sku":"A"}]},{"lines":[]}]}`))

	// Every path form, each with a body that has it and one that does not.
	const rich = `{"amountCents":1000,"destination":{"iban":"DE89","bank":{"bic":"X"}},"items":[{"sku":"A","qty":2},{"sku":"B"}],` +
		`"matrix":[[1,2],[3,4]],"byIndex":{"0":"zero","1":"one"},"fav.movie":"x","#tag":"h","@type":"t","a*b":1,"c?de":2,"a|b":3,` +
		`"back\\slash":4,"a[0]":5,"{x}":6,"!bang":7,"café":8,"😀":9,"日本":{"語":10},"with space":11,"quote\"d":12,"123":13,"-1":14,"":15}`
	for _, p := range []string{
		"amountCents", "destination", "destination.iban", "destination.bank.bic", "items", "items.1.sku", "items.0",
		"items.#.sku", "items.#.qty", "matrix.1.0", "matrix.#.1", "matrix.#.0.x", "byIndex.0", "byIndex.1",
		`fav\.movie`, `\#tag`, `\@type`, `a\*b`, `c\?de`, `a\|b`, `back\\slash`, "a[0]", `\{x}`, `\!bang`,
		"café", "😀", "日本.語", "with space", `quote"d`, "123", "-1",
	} {
		add("PathForm/Present/"+p, Spec{Intent: []string{p}}, body(rich))
		add("PathForm/Absent/"+p, Spec{Intent: []string{p}}, body(`{"other":1}`))
	}
	add("PathForm/TopLevelArray/Index", Spec{Intent: []string{"0", "1.id"}}, body(`[{"id":"a"},{"id":"b"}]`))
	add("PathForm/TopLevelArray/Hash", Spec{Intent: []string{"#.id"}}, body(`[{"id":"a"},{"x":1},{"id":"c"}]`))
	add("PathForm/ScalarBody", Spec{Intent: []string{"amount"}}, body(`42`))
	add("PathForm/IndexOnObject", Spec{Intent: []string{"items.0"}}, body(`{"items":{"0":"zero"}}`))
	add("PathForm/NameOnArray", Spec{Intent: []string{"items.sku"}}, body(`{"items":[{"sku":"A"}]}`))
	add("PathForm/Overlapping", Spec{Intent: []string{"destination", "destination.iban"}}, body(rich))

	// Ignore: names at any depth, exact paths, "#" paths, in both modes.
	wholeIgnore := Spec{Ignore: []string{"traceId", "meta.sentAt", "items.#.note", `fav\.movie`, "😀", "matrix.1.x"}}
	for _, v := range []struct{ name, body string }{
		{"Base", `{"traceId":"t","meta":{"sentAt":"s","v":1},"items":[{"sku":"A","note":"n","traceId":"u"}],"fav.movie":"x","deep":{"a":{"traceId":1,"😀":2,"keep":3}},"matrix":[[1],[2],[3]]}`},
		{"NoiseChanged", `{"traceId":"T","meta":{"sentAt":"S","v":1},"items":[{"sku":"A","note":"N","traceId":"U"}],"fav.movie":"y","deep":{"a":{"traceId":2,"😀":3,"keep":3}},"matrix":[[1],[2],[3]]}`},
		{"NoiseRemoved", `{"meta":{"v":1},"items":[{"sku":"A"}],"deep":{"a":{"keep":3}},"matrix":[[1],[2],[3]]}`},
		{"SentAtElsewhere", `{"x":{"meta":{"sentAt":"s"}},"sentAt":"t","note":"n"}`},
		{"NoteOutsideItems", `{"items":{"note":"n"},"other":[{"note":"n"}]}`},
	} {
		add("Ignore/WholeBody/"+v.name, wholeIgnore, body(v.body))
	}
	inside := Spec{Intent: []string{"meta", "items"}, Ignore: []string{"meta.sentAt", "items.#.note", "traceId"}}
	for _, v := range []struct{ name, body string }{
		{"Base", `{"meta":{"sentAt":"s","v":1,"traceId":"t"},"items":[{"sku":"A","note":"n"},{"sku":"B","traces":{"traceId":"u"}}]}`},
		{"NoiseChanged", `{"meta":{"sentAt":"S","v":1,"traceId":"T"},"items":[{"sku":"A","note":"N"},{"sku":"B","traces":{"traceId":"U"}}]}`},
		{"ValueChanged", `{"meta":{"sentAt":"s","v":2},"items":[{"sku":"A"},{"sku":"B","traces":{}}]}`},
	} {
		add("Ignore/InsideIntent/"+v.name, inside, body(v.body))
	}
	add("Ignore/UnicodeName", Spec{Ignore: []string{"clé"}}, body(`{"clé":1,"cle":2,"n":{"cl\u00e9":3}}`))
	add("Ignore/IndexPath", Spec{Ignore: []string{"items.0.note"}}, body(`{"items":[{"note":"a","x":1},{"note":"b"}]}`))
	add("Ignore/HashMiddle", Spec{Ignore: []string{"orders.#.lines.#.note"}}, body(`{"orders":[{"lines":[{"note":"a","sku":"A"}]},{"lines":[{"note":"b"}]}]}`))

	// Required: present in every form.
	for _, v := range []struct {
		name string
		spec Spec
		body string
	}{
		{"Intent/Null", Spec{Intent: []string{"a", "b"}, Required: []string{"a"}}, `{"a":null}`},
		{"Intent/Hash", Spec{Intent: []string{"items.#.sku"}, Required: []string{"items.#.sku"}}, `{"items":[{"sku":"A"},{"sku":""}]}`},
		{"Intent/HashEmpty", Spec{Intent: []string{"items.#.sku"}, Required: []string{"items.#.sku"}}, `{"items":[]}`},
		{"WholeBody/Simple", Spec{Required: []string{"amountCents"}}, `{"amountCents":1,"x":2}`},
		{"WholeBody/Nested", Spec{Required: []string{"a.b", "items.#.sku"}}, `{"a":{"b":false},"items":[{"sku":"A"}]}`},
	} {
		add("Required/"+v.name, v.spec, body(v.body))
	}

	// Numbers in both modes.
	for _, lit := range []string{
		"0", "-0", "0.0", "1", "1.0", "1e0", "10E-1", "1000", "1e3", "10E2", "1.000E+3", "-1.5", "0.1", "1e-7", "1e-6",
		"123e-9", "1e20", "1e21", "100000000000000000000", "9007199254740992", "9007199254740993", "18446744073709551616",
		"123456789012345678901234567890", "0.30000000000000004", "5e-324", "1.7976931348623157e308", "2.5e-3", "333333333.33333329",
	} {
		for _, mode := range []string{"exact", "jcs"} {
			add("Numbers/"+mode+"/"+lit, Spec{Numbers: mode}, body(`{"n":`+lit+`}`))
		}
	}
	for _, lit := range []string{"1e400", "-1e400", "0.10000000000000000001", "1e-400", "12345678901234567890.123"} {
		add("Numbers/exact/"+lit, Spec{}, body(`{"n":`+lit+`}`))
	}
	add("Numbers/jcs/Intent", Spec{Intent: []string{"amount"}, Numbers: "jcs"}, body(`{"amount":9007199254740993}`))
	add("Numbers/exact/Intent", Spec{Intent: []string{"amount"}, Numbers: "exact"}, body(`{"amount":9007199254740993}`))
	add("Numbers/exact/DefaultIntent", Spec{Intent: []string{"amount"}}, body(`{"amount":9007199254740993}`))

	// Headers.
	hspec := Spec{Headers: []string{"X-Account", "x-api-version", "Idempotency-Scope"}}
	for _, v := range []struct {
		name string
		h    map[string][]string
	}{
		{"None", nil},
		{"Canonical", map[string][]string{"X-Account": {"acc_1"}, "X-Api-Version": {"2"}}},
		{"LowerCase", map[string][]string{"x-account": {"acc_1"}, "x-api-version": {"2"}}},
		{"MixedCase", map[string][]string{"X-ACCOUNT": {"acc_1"}, "x-Api-VERSION": {"2"}}},
		{"Repeated", map[string][]string{"X-Account": {"acc_1", "acc_2"}}},
		{"RepeatedReversed", map[string][]string{"X-Account": {"acc_2", "acc_1"}}},
		{"CommaJoined", map[string][]string{"X-Account": {"acc_1, acc_2"}}},
		{"EmptyValue", map[string][]string{"X-Account": {""}}},
		{"Unicode", map[string][]string{"Idempotency-Scope": {"ünïcödé"}}},
		{"Undeclared", map[string][]string{"X-Account": {"acc_1"}, "User-Agent": {"x"}, "Cookie": {"a=b"}}},
	} {
		add("Headers/"+v.name, hspec, goldenRequest{Method: "POST", Path: "/v1/x", Headers: v.h})
	}

	// Query.
	qspec := Spec{Query: []string{"dryRun", "tag", "ñ", "a b"}}
	for _, v := range []struct{ name, raw string }{
		{"None", ""},
		{"One", "dryRun=true"},
		{"Repeated", "tag=a&tag=b"},
		{"RepeatedReversed", "tag=b&tag=a"},
		{"Unicode", "%C3%B1=1"},
		{"SpaceInName", "a+b=1"},
		{"EmptyValue", "dryRun="},
		{"NoEquals", "dryRun"},
		{"Undeclared", "dryRun=true&page=2&utm=x"},
		{"All", "tag=x&dryRun=false&%C3%B1=%F0%9F%98%80&a%20b=c&tag=y"},
	} {
		q, err := url.ParseQuery(v.raw)
		if err != nil {
			panic(err)
		}
		var m map[string][]string
		if len(q) > 0 {
			m = q
		}
		add("Query/"+v.name, qspec, goldenRequest{Method: "GET", Path: "/v1/x", Query: m})
	}

	// Absent, null, "", [], {}, 0, false, in intent mode.
	for _, v := range []struct{ name, body string }{
		{"NoBody", ""}, {"EmptyObject", `{}`}, {"Null", `{"note":null}`}, {"EmptyString", `{"note":""}`},
		{"EmptyArray", `{"note":[]}`}, {"EmptyObjectValue", `{"note":{}}`}, {"Zero", `{"note":0}`}, {"False", `{"note":false}`},
		{"NullString", `{"note":"null"}`}, {"BodyNull", `null`},
	} {
		add("Absent/"+v.name, Spec{Intent: []string{"note"}}, body(v.body))
	}

	// Whole-body mode.
	for _, v := range []struct{ name, body string }{
		{"NoBody", ""}, {"Null", `null`}, {"EmptyObject", `{}`}, {"EmptyArray", `[]`}, {"EmptyString", `""`},
		{"Zero", `0`}, {"True", `true`}, {"String", `"text"`}, {"ArrayOfNull", `[null]`},
		{"Nested", `{"b":[1,{"d":{},"c":[]}],"a":{"z":null,"y":"\u00e9\/\ud83d\ude00"}}`},
		{"Whitespace", " \t\r\n{ \"a\" : [ 1 , 2 ] }\n"},
		{"Escapes", `{"s":"\"\\\/\b\f\n\r\t\u0000\u001f\u007f\u2028"}`},
	} {
		add("WholeBody/"+v.name, Spec{}, body(v.body))
	}

	// Member names that sort differently by UTF-16 code units and by code points.
	const utf16Body = `{"\uff61":1,"😀":2,"a":3,"é":4,"\u0080":5,"\ue000":6,"\ud7ff":7,"A":8,"":9}`
	add("UTF16Order/WholeBody", Spec{}, body(utf16Body))
	add("UTF16Order/WholeBodyShuffled", Spec{}, body(`{"":9,"A":8,"\ud7ff":7,"\ue000":6,"\u0080":5,"é":4,"a":3,"😀":2,"\uff61":1}`))
	add("UTF16Order/Intent", Spec{Intent: []string{"\uff61", "😀", "a", "é", "\ue000", "\ud7ff"}}, body(utf16Body))
	add("UTF16Order/Query", Spec{Query: []string{"\uff61", "😀", "a"}},
		goldenRequest{Method: "GET", Path: "/q", Query: map[string][]string{"\uff61": {"1"}, "😀": {"2"}, "a": {"3"}}})
	add("UTF16Order/Absent", Spec{Intent: []string{"\uff61.x", "😀.x"}}, body(`{}`))

	// Method and path.
	for _, v := range []struct{ name, method, path string }{
		{"ZeroRequest", "", ""}, {"EmptyMethod", "", "/v1/x"}, {"GET", "GET", "/v1/x"}, {"POST", "POST", "/v1/x"},
		{"DELETE", "DELETE", "/v1/x"}, {"PATCH", "PATCH", "/v1/x"}, {"LowerCase", "patch", "/v1/x"},
		{"Root", "GET", "/"}, {"TrailingSlash", "GET", "/v1/x/"}, {"PathParam1", "POST", "/v1/accounts/acc_1/transfers"},
		{"PathParam2", "POST", "/v1/accounts/acc_2/transfers"}, {"UnicodePath", "GET", "/v1/ünï/😀"}, {"EncodedSlash", "GET", "/v1/a%2Fb"},
	} {
		add("Operation/"+v.name, Spec{}, goldenRequest{Method: v.method, Path: v.path})
	}

	// Everything at once.
	all := Spec{
		Intent:   []string{"amount.value", "amount.currency", "lines.#.sku", "lines.#.qty", "beneficiary", `meta\.version`},
		Ignore:   []string{"traceId", "lines.#.comment", "beneficiary.updatedAt"},
		Required: []string{"amount.value", "lines.#.sku"},
		Numbers:  "exact",
		Headers:  []string{"X-Tenant", "Accept-Version"},
		Query:    []string{"mode", "tag"},
	}
	req := func(b string) goldenRequest {
		return goldenRequest{
			Method:  "POST",
			Path:    "/v2/tenants/t_9/invoices",
			Query:   map[string][]string{"tag": {"b", "a"}, "mode": {"strict"}, "page": {"1"}},
			Headers: map[string][]string{"x-tenant": {"t_9"}, "Accept-Version": {"2"}, "User-Agent": {"sdk"}},
			Body:    b,
		}
	}
	for _, v := range []struct{ name, body string }{
		{"Base", `{"amount":{"value":12345678901234567890.5,"currency":"EUR"},"lines":[{"sku":"A","qty":1,"comment":"c"},{"sku":"B"}],"beneficiary":{"name":"Ada","updatedAt":"x","traceId":"t"},"meta.version":3,"traceId":"t"}`},
		{"Respelled", "{ \"meta.version\" : 3.0 , \"lines\" : [ { \"qty\" : 1e0 , \"sku\" : \"\\u0041\" } , { \"sku\" : \"B\" , \"comment\" : \"d\" } ] , \"beneficiary\" : { \"name\" : \"Ada\" } , \"amount\" : { \"currency\" : \"EUR\" , \"value\" : 1234567890123456789.05e1 } }"},
		{"ValueOneUlpAway", `{"amount":{"value":12345678901234567890.6,"currency":"EUR"},"lines":[{"sku":"A","qty":1},{"sku":"B"}],"beneficiary":{"name":"Ada"},"meta.version":3}`},
	} {
		add("Everything/"+v.name, all, req(v.body))
	}
	return cs
}

// goldenRows computes the output half of every row.
func goldenRows(t *testing.T, cs []goldenCase) []goldenRow {
	t.Helper()
	rows := make([]goldenRow, 0, len(cs))
	for _, c := range cs {
		f := compile(t, c.spec)
		fp, doc, err := sum(f, c.req.request())
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		rows = append(rows, goldenRow{Name: c.name, Spec: c.spec, Request: c.req, SpecDigest: f.SpecDigest(), Fingerprint: fp.String(), Intent: string(doc)})
	}
	return rows
}

func encodeGolden(rows []goldenRow) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(rows); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func TestGolden(t *testing.T) {
	cases := goldenCases()
	if *update {
		b, err := encodeGolden(goldenRows(t, cases))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(goldenFile, b, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %d rows to %s", len(cases), goldenFile)
	}

	b, err := os.ReadFile(goldenFile)
	if err != nil {
		t.Fatalf("%v (generate it with: go test ./fingerprint -run Golden -update)", err)
	}
	var rows []goldenRow
	if err := json.Unmarshal(b, &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) < 200 {
		t.Errorf("%s has %d rows; want at least 200", goldenFile, len(rows))
	}

	// Every stored row, recomputed from its stored inputs.
	names := map[string]bool{}
	for _, row := range rows {
		if names[row.Name] {
			t.Errorf("duplicate row name %q", row.Name)
		}
		names[row.Name] = true
		f, err := fingerprint.Compile(row.Spec)
		if err != nil {
			t.Errorf("%s: Compile: %v", row.Name, err)
			continue
		}
		fp, doc, err := sum(f, row.Request.request())
		if err != nil {
			t.Errorf("%s: Sum: %v", row.Name, err)
			continue
		}
		got := goldenRow{Name: row.Name, Spec: row.Spec, Request: row.Request, SpecDigest: f.SpecDigest(), Fingerprint: fp.String(), Intent: string(doc)}
		if diff := cmp.Diff(row, got); diff != "" {
			t.Errorf("%s: golden row mismatch (-want +got):\n%s", row.Name, diff)
		}
		if p, err := fingerprint.Parse(row.Fingerprint); err != nil || p != fp {
			t.Errorf("%s: Parse(%q) = %v, %v", row.Name, row.Fingerprint, p, err)
		}
		mode := canonical.Exact
		if row.Spec.Numbers == "jcs" {
			mode = canonical.JCS
		}
		if c, err := (canonical.Options{Numbers: mode}).Transform(doc); err != nil || !bytes.Equal(c, doc) {
			t.Errorf("%s: the intent document is not canonical: %s, %v", row.Name, doc, err)
		}
	}

	// The file holds exactly the generated inputs, in order.
	type input struct {
		Name    string
		Spec    Spec
		Request goldenRequest
	}
	var want, have []input
	for _, c := range cases {
		want = append(want, input{c.name, c.spec, c.req})
	}
	for _, r := range rows {
		have = append(have, input{r.Name, r.Spec, r.Request})
	}
	if diff := cmp.Diff(want, have); diff != "" {
		t.Errorf("%s does not hold the generated cases (-generated +file); a golden change is a format change, rewrite only with -update:\n%s", goldenFile, diff)
	}
}

// TestGoldenCoverage checks that the golden vectors keep covering what they
// promise and that equal intents in the table share a fingerprint.
func TestGoldenCoverage(t *testing.T) {
	b, err := os.ReadFile(goldenFile)
	if err != nil {
		t.Skip(err)
	}
	var rows []goldenRow
	if err := json.Unmarshal(b, &rows); err != nil {
		t.Fatal(err)
	}
	byName := map[string]goldenRow{}
	for _, r := range rows {
		byName[r.Name] = r
	}
	prefixes := map[string]int{}
	for _, r := range rows {
		prefixes[strings.SplitN(r.Name, "/", 2)[0]]++
	}
	for _, p := range []string{"Payment", "Order", "NestedHash", "PathForm", "Ignore", "Required", "Numbers", "Headers", "Query", "Absent", "WholeBody", "UTF16Order", "Operation", "Everything"} {
		if prefixes[p] == 0 {
			t.Errorf("no golden rows for %s", p)
		}
	}

	groups := [][]string{
		{"Payment/Body/Base", "Payment/Body/Reordered", "Payment/Body/Pretty", "Payment/Body/EscapedNames", "Payment/Body/NewTraceId", "Payment/Body/NoNoise",
			"Payment/Body/UndeclaredChanged", "Payment/Body/Amount1000.0", "Payment/Body/Amount1e3", "Payment/Body/Amount10E2",
			"Payment/Request/HeaderKeysLowerCase", "Payment/Request/HeaderKeysUpperCase", "Payment/Request/UndeclaredHeaders", "Payment/Request/UndeclaredQuery"},
		{"Order/Base", "Order/NoteChanged", "Order/Reordered"},
		{"Ignore/WholeBody/Base", "Ignore/WholeBody/NoiseChanged"},
		{"Ignore/InsideIntent/Base", "Ignore/InsideIntent/NoiseChanged"},
		{"Headers/Canonical", "Headers/LowerCase", "Headers/MixedCase"},
		{"Query/One", "Query/Undeclared"},
		{"Absent/NoBody", "Absent/EmptyObject", "Absent/BodyNull"},
		{"UTF16Order/WholeBody", "UTF16Order/WholeBodyShuffled"},
		{"Operation/EmptyMethod", "Operation/GET"},
		{"Numbers/exact/1000", "Numbers/exact/1e3", "Numbers/exact/10E2", "Numbers/exact/1.000E+3"},
		{"Numbers/exact/0", "Numbers/exact/-0", "Numbers/exact/0.0"},
		{"Numbers/jcs/9007199254740992", "Numbers/jcs/9007199254740993"},
		{"Everything/Base", "Everything/Respelled"},
	}
	inGroup := map[string]bool{}
	for _, g := range groups {
		for _, n := range g {
			r, ok := byName[n]
			if !ok {
				t.Errorf("no golden row %q", n)
				continue
			}
			inGroup[n] = true
			if first := byName[g[0]]; r.Fingerprint != first.Fingerprint {
				t.Errorf("%s and %s mean the same operation but have different fingerprints", g[0], n)
			}
		}
	}
	// Apart from the groups above, rows with distinct intent documents
	// under one spec have distinct fingerprints, and vice versa.
	seen := map[string]string{}
	keys := make([]string, 0, len(rows))
	for _, r := range rows {
		keys = append(keys, r.Name)
	}
	sort.Strings(keys)
	for _, n := range keys {
		r := byName[n]
		k := r.SpecDigest + "\n" + r.Intent
		if prev, ok := seen[r.Fingerprint]; ok && prev != k {
			t.Errorf("%s: one fingerprint for two preimages", n)
		}
		seen[r.Fingerprint] = k
	}
	for _, must := range [][2]string{
		{"Numbers/exact/9007199254740992", "Numbers/exact/9007199254740993"},
		{"Order/HoleSecondQty", "Order/HoleFirstQty"},
		{"Order/ItemsEmpty", "Order/ItemsAbsent"},
		{"Absent/EmptyObject", "Absent/Null"},
		{"Absent/Null", "Absent/EmptyString"},
		{"Absent/EmptyString", "Absent/EmptyArray"},
		{"Absent/EmptyArray", "Absent/EmptyObjectValue"},
		{"WholeBody/NoBody", "WholeBody/Null"},
		{"WholeBody/Null", "WholeBody/EmptyObject"},
		{"Operation/PathParam1", "Operation/PathParam2"},
		{"Payment/Body/Base", "Payment/Body/Amount1000000"},
		{"Payment/Body/Base", "Payment/Request/OtherAccountPath"},
		{"Payment/Body/Base", "Payment/Request/OtherAccountHeader"},
		{"Payment/Body/Base", "Payment/Request/DryRunTrue"},
		{"Headers/Repeated", "Headers/RepeatedReversed"},
		{"Query/Repeated", "Query/RepeatedReversed"},
		{"NestedHash/InnerHole", "NestedHash/InnerHoleMoved"},
		{"Everything/Base", "Everything/ValueOneUlpAway"},
	} {
		if a, b := byName[must[0]], byName[must[1]]; a.Fingerprint == "" || a.Fingerprint == b.Fingerprint {
			t.Errorf("%s and %s are different operations but share fingerprint %q", must[0], must[1], a.Fingerprint)
		}
	}
}
