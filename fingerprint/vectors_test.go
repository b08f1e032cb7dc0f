package fingerprint_test

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/idemprint/idemprint/canonical"
	"github.com/idemprint/idemprint/fingerprint"
)

// The published vectors of docs/fingerprint-v1.md. Like the golden file,
// they are written only by go test -update and never change within format
// version 1: -update may add vectors and edit the rules a vector cites, but
// refuses to change or drop the inputs or outputs of a vector already there.
var (
	vectorsDir    = filepath.Join("..", "testdata", "vectors")
	vectorFiles   = [2]string{"positive.jsonl", "negative.jsonl"}
	vectorSpecDoc = filepath.Join("..", "docs", "fingerprint-v1.md")
)

// vectorRequest is a request in the vectors' language-neutral shape. The
// body is a string; a body that is not UTF-8, which no JSON string can hold,
// is bodyBase64 instead (RFC 4648 §4, padded), and exactly one of the two is
// present.
type vectorRequest struct {
	Method     string              `json:"method"`
	Path       string              `json:"path"`
	Headers    map[string][]string `json:"headers"`
	Query      map[string][]string `json:"query"`
	Body       *string             `json:"body,omitempty"`
	BodyBase64 *string             `json:"bodyBase64,omitempty"`
}

func (r *vectorRequest) request() (fingerprint.Request, error) {
	out := fingerprint.Request{Method: r.Method, Path: r.Path, Header: http.Header(r.Headers), Query: url.Values(r.Query)}
	switch {
	case r.Body != nil && r.BodyBase64 == nil:
		out.Body = []byte(*r.Body)
	case r.Body == nil && r.BodyBase64 != nil:
		b, err := base64.StdEncoding.Strict().DecodeString(*r.BodyBase64)
		if err != nil {
			return out, err
		}
		out.Body = b
	default:
		return out, errors.New("want exactly one of body and bodyBase64")
	}
	if len(out.Body) == 0 {
		out.Body = nil
	}
	return out, nil
}

// vectorError is the expected rejection of a negative vector.
type vectorError struct {
	// Class names the rule broken; see "Error classes" in the spec.
	Class string `json:"class"`
	// Field is the JSON Pointer of the spec member at fault (spec errors).
	Field string `json:"field,omitempty"`
	// Offset and Pointer locate a body error: the byte offset in the body
	// and the RFC 6901 pointer of the value ("" is the whole body).
	Offset  *int64  `json:"offset,omitempty"`
	Pointer *string `json:"pointer,omitempty"`
	// Part and Name locate a request error: "body" and the concrete path of
	// a missing required value, or "header" and the lower-case name.
	Part string `json:"part,omitempty"`
	Name string `json:"name,omitempty"`
}

// vector is one line of a vector file. A positive vector has specDigest,
// intent and fingerprint; a negative one has error, and specDigest when the
// spec compiles.
type vector struct {
	Name        string           `json:"name"`
	Rules       []string         `json:"rules"`
	Spec        fingerprint.Spec `json:"spec"`
	Request     *vectorRequest   `json:"request,omitempty"`
	SpecDigest  string           `json:"specDigest,omitempty"`
	Intent      string           `json:"intent,omitempty"`
	Fingerprint string           `json:"fingerprint,omitempty"`
	Error       *vectorError     `json:"error,omitempty"`
}

// vectorCase is the input half of a vector.
type vectorCase struct {
	name  string
	rules []string
	spec  fingerprint.Spec
	req   *vectorRequest // nil: the spec alone
}

// classify returns the vector form of an error of Compile or Sum.
func classify(err error) (*vectorError, error) {
	var se *fingerprint.SpecError
	var ce *canonical.Error
	var re *fingerprint.RequestError
	switch {
	case errors.As(err, &se):
		class := "invalid-spec"
		if errors.Is(err, fingerprint.ErrInvalidPath) {
			class = "invalid-path"
		}
		return &vectorError{Class: class, Field: se.Pointer}, nil
	case errors.As(err, &ce):
		classes := []struct {
			sentinel error
			class    string
		}{
			{canonical.ErrSyntax, "syntax"},
			{canonical.ErrDuplicateName, "duplicate-name"},
			{canonical.ErrInvalidUTF8, "invalid-utf8"},
			{canonical.ErrInvalidSurrogate, "lone-surrogate"},
			{canonical.ErrNumberRange, "number-range"},
			{canonical.ErrTooDeep, "depth"},
			{canonical.ErrTooLarge, "size"},
		}
		for _, c := range classes {
			if errors.Is(err, c.sentinel) {
				off, ptr := ce.Offset, ce.Pointer
				return &vectorError{Class: c.class, Offset: &off, Pointer: &ptr}, nil
			}
		}
	case errors.As(err, &re):
		switch {
		case errors.Is(err, fingerprint.ErrMissingRequired):
			return &vectorError{Class: "missing-required", Part: re.Part, Name: re.Name}, nil
		case errors.Is(err, fingerprint.ErrInvalidRequest):
			return &vectorError{Class: "invalid-request", Part: re.Part, Name: re.Name}, nil
		}
	}
	return nil, fmt.Errorf("no vector class for %T: %v", err, err)
}

// evaluate computes the vector of c with the public API.
func evaluate(c vectorCase) (vector, error) {
	v := vector{Name: c.name, Rules: c.rules, Spec: c.spec, Request: c.req}
	f, err := fingerprint.Compile(c.spec)
	if err != nil {
		v.Error, err = classify(err)
		return v, err
	}
	if c.req == nil {
		return v, fmt.Errorf("%s: the spec compiles but the vector has no request", c.name)
	}
	v.SpecDigest = f.SpecDigest()
	r, err := c.req.request()
	if err != nil {
		return v, err
	}
	fp, doc, err := f.SumIntent(nil, r)
	if err != nil {
		v.Error, err = classify(err)
		return v, err
	}
	if fp2, err := f.Sum(r); err != nil || fp2 != fp {
		return v, fmt.Errorf("%s: Sum = %v, %v; SumIntent = %v", c.name, fp2, err, fp)
	}
	v.Intent, v.Fingerprint = string(doc), fp.String()
	return v, nil
}

func encodeVector(v vector) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func readVectors(t *testing.T, file string) []vector {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(vectorsDir, file))
	if err != nil {
		t.Fatalf("%v (generate it with: go test ./fingerprint -run Vectors -update)", err)
	}
	var vs []vector
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<24)
	for line := 1; sc.Scan(); line++ {
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		var v vector
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("%s:%d: %v", file, line, err)
		}
		vs = append(vs, v)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return vs
}

// frozen is a vector without what -update may edit.
func frozen(v vector) vector {
	v.Rules = nil
	return v
}

func TestVectors(t *testing.T) {
	cases := vectorCases()
	if *update {
		writeVectors(t, cases)
	}
	var all []vector
	for i, file := range vectorFiles {
		vs := readVectors(t, file)
		for _, v := range vs {
			if (v.Error != nil) != (i == 1) {
				t.Errorf("%s: %s holds a vector of the other file", v.Name, file)
			}
		}
		all = append(all, vs...)
	}

	names := map[string]bool{}
	for _, v := range all {
		if names[v.Name] {
			t.Errorf("duplicate vector name %q", v.Name)
		}
		names[v.Name] = true
		if len(v.Rules) == 0 {
			t.Errorf("%s: cites no rule", v.Name)
		}
		if _, err := fingerprint.Compile(v.Spec); (err == nil) != (v.Request != nil) {
			t.Errorf("%s: a vector has a request exactly when its spec compiles", v.Name)
		}
		if v.Request != nil && v.Request.Body != nil && !utf8.ValidString(*v.Request.Body) {
			t.Errorf("%s: body is not UTF-8; use bodyBase64", v.Name)
		}
		got, err := evaluate(vectorCase{v.Name, v.Rules, v.Spec, v.Request})
		if err != nil {
			t.Errorf("%s: %v", v.Name, err)
			continue
		}
		if diff := cmp.Diff(v, got); diff != "" {
			t.Errorf("%s: vector mismatch (-file +code):\n%s", v.Name, diff)
		}
		if v.Fingerprint == "" {
			continue
		}
		if p, err := fingerprint.Parse(v.Fingerprint); err != nil || p.String() != v.Fingerprint {
			t.Errorf("%s: Parse(%q) = %v, %v", v.Name, v.Fingerprint, p, err)
		}
		mode := canonical.Exact
		if v.Spec.Numbers == "jcs" {
			mode = canonical.JCS
		}
		// The document nests one level deeper than the body.
		opts := canonical.Options{Numbers: mode, MaxDepth: canonical.DefaultMaxDepth + 1}
		if c, err := opts.Transform([]byte(v.Intent)); err != nil || string(c) != v.Intent {
			t.Errorf("%s: the intent document is not canonical: %v", v.Name, err)
		}
	}

	// The files hold exactly the generated cases.
	var want, have []vector
	for _, c := range cases {
		want = append(want, vector{Name: c.name, Rules: c.rules, Spec: c.spec, Request: c.req})
	}
	for _, v := range all {
		have = append(have, vector{Name: v.Name, Rules: v.Rules, Spec: v.Spec, Request: v.Request})
	}
	sortByName := func(vs []vector) {
		slices.SortFunc(vs, func(a, b vector) int { return strings.Compare(a.Name, b.Name) })
	}
	sortByName(want)
	sortByName(have)
	if diff := cmp.Diff(want, have); diff != "" {
		t.Errorf("%s does not hold the generated cases (-generated +files); rewrite only with -update:\n%s", vectorsDir, diff)
	}
	if len(all) < 1000 {
		t.Errorf("%d vectors; want at least 1000", len(all))
	}
}

// writeVectors regenerates the vector files, refusing to change or drop a
// vector that is already published.
func writeVectors(t *testing.T, cases []vectorCase) {
	t.Helper()
	old := map[string]vector{}
	for _, file := range vectorFiles {
		if _, err := os.Stat(filepath.Join(vectorsDir, file)); err != nil {
			continue
		}
		for _, v := range readVectors(t, file) {
			old[v.Name] = v
		}
	}
	var out [2]bytes.Buffer
	seen := map[string]bool{}
	for _, c := range cases {
		if seen[c.name] {
			t.Fatalf("duplicate case name %q", c.name)
		}
		seen[c.name] = true
		v, err := evaluate(c)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if o, ok := old[c.name]; ok {
			if diff := cmp.Diff(frozen(o), frozen(v)); diff != "" {
				t.Fatalf("%s: a published vector would change (-published +generated); that is a format change:\n%s", c.name, diff)
			}
		}
		line, err := encodeVector(v)
		if err != nil {
			t.Fatal(err)
		}
		i := 0
		if v.Error != nil {
			i = 1
		}
		out[i].Write(line)
	}
	for name := range old {
		if !seen[name] {
			t.Fatalf("%s: a published vector would disappear", name)
		}
	}
	if err := os.MkdirAll(vectorsDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i, file := range vectorFiles {
		if err := os.WriteFile(filepath.Join(vectorsDir, file), out[i].Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("wrote %d vectors to %s", len(cases), vectorsDir)
}

// ruleDef matches a rule's definition in the spec: "**R3.2**" at the start
// of a line, and "*(no vector)*" after it for a rule that vectors cannot
// express.
var ruleDef = regexp.MustCompile(`(?m)^\*\*(R\d+\.\d+)\*\*( \*\(no vector\)\*)?`)

// TestVectorRules checks that every rule of the spec is cited by a vector
// and that every vector cites rules of the spec.
func TestVectorRules(t *testing.T) {
	doc, err := os.ReadFile(vectorSpecDoc)
	if err != nil {
		t.Fatal(err)
	}
	rules := map[string]bool{} // rule -> vectors can cite it
	var order []string
	for _, m := range ruleDef.FindAllSubmatch(doc, -1) {
		id := string(m[1])
		if _, dup := rules[id]; dup {
			t.Errorf("rule %s is defined twice", id)
		}
		rules[id] = len(m[2]) == 0
		order = append(order, id)
	}
	if len(rules) == 0 {
		t.Fatalf("no rules found in %s", vectorSpecDoc)
	}
	cited := map[string]int{}
	for _, file := range vectorFiles {
		for _, v := range readVectors(t, file) {
			for _, r := range v.Rules {
				testable, ok := rules[r]
				switch {
				case !ok:
					t.Errorf("%s cites %s, which the spec does not define", v.Name, r)
				case !testable:
					t.Errorf("%s cites %s, which the spec marks (no vector)", v.Name, r)
				}
				cited[r]++
			}
		}
	}
	for _, id := range order {
		if rules[id] && cited[id] == 0 {
			t.Errorf("rule %s is cited by no vector", id)
		}
	}
}

// vectorCases generates the inputs of every vector, deterministically.
func vectorCases() []vectorCase {
	var cs []vectorCase
	add := func(name string, rules []string, spec fingerprint.Spec, req *vectorRequest) {
		if req != nil && req.Body != nil && !utf8.ValidString(*req.Body) {
			// No JSON string holds it.
			b := base64.StdEncoding.EncodeToString([]byte(*req.Body))
			req.Body, req.BodyBase64 = nil, &b
		}
		cs = append(cs, vectorCase{name, rules, spec, req})
	}
	rs := func(ids ...string) []string { return ids }
	body := func(b string) *vectorRequest {
		return &vectorRequest{Method: "POST", Path: "/v1/orders", Headers: map[string][]string{}, Query: map[string][]string{}, Body: &b}
	}
	whole := fingerprint.Spec{}
	jcs := fingerprint.Spec{Numbers: "jcs"}
	intentA := fingerprint.Spec{Intent: []string{"a"}}

	// The worked example of the spec.
	payment := fingerprint.Spec{
		Intent:   []string{"amountCents", "currency", "destination.iban"},
		Required: []string{"amountCents", "currency"},
		Ignore:   []string{"traceId", "meta.sentAt"},
		Headers:  []string{"X-Account"},
		Query:    []string{"dryRun"},
	}
	const paymentBody = `{"amountCents":1000,"currency":"EUR","destination":{"iban":"DE89370400440532013000","name":"Ada"},"traceId":"t-1","meta":{"sentAt":"2024-05-01T10:00:00Z","client":"ios"}}`
	pay := func(b string) *vectorRequest {
		r := body(b)
		r.Path = "/v1/accounts/acc_1/transfers"
		r.Headers = map[string][]string{"X-Account": {"acc_1"}, "User-Agent": {"curl/8.5"}}
		r.Query = map[string][]string{"dryRun": {"false"}, "utm_source": {"mail"}}
		return r
	}
	add("Example/Payment", rs("R1.1", "R6.5", "R6.10", "R7.1", "R7.2", "R7.3", "R7.4", "R8.1", "R9.1", "R9.2"), payment, pay(paymentBody))
	for _, v := range []struct{ name, body string }{
		{"Reordered", `{"meta":{"client":"ios","sentAt":"2024-05-01T10:00:00Z"},"traceId":"t-1","destination":{"name":"Ada","iban":"DE89370400440532013000"},"currency":"EUR","amountCents":1000}`},
		{"Pretty", "{\n  \"amountCents\": 1000,\n  \"currency\": \"EUR\",\n  \"destination\": {\"iban\": \"DE89370400440532013000\"}\n}\n"},
		{"Escaped", `{"\u0061mountCents":1000,"currency":"\u0045\u0055\u0052","destination":{"iban":"DE89370400440532013000"}}`},
		{"Amount1000.0", `{"amountCents":1000.0,"currency":"EUR","destination":{"iban":"DE89370400440532013000"}}`},
		{"Amount1e3", `{"amountCents":1e3,"currency":"EUR","destination":{"iban":"DE89370400440532013000"}}`},
		{"NewTrace", `{"amountCents":1000,"currency":"EUR","destination":{"iban":"DE89370400440532013000"},"traceId":"t-2","meta":{"sentAt":"2024-05-01T10:00:05Z"}}`},
		{"OtherAmount", `{"amountCents":1001,"currency":"EUR","destination":{"iban":"DE89370400440532013000"}}`},
		{"NoDestination", `{"amountCents":1000,"currency":"EUR"}`},
		{"DestinationNull", `{"amountCents":1000,"currency":"EUR","destination":null}`},
		{"IbanNull", `{"amountCents":1000,"currency":"EUR","destination":{"iban":null}}`},
		{"IbanEmpty", `{"amountCents":1000,"currency":"EUR","destination":{"iban":""}}`},
	} {
		add("Example/Payment/"+v.name, rs("R6.5", "R6.7", "R6.9", "R4.1"), payment, pay(v.body))
	}
	add("Example/Payment/MissingCurrency", rs("R6.10"), payment, pay(`{"amountCents":1000}`))
	add("Example/Payment/CurrencyNull", rs("R6.10", "R6.9"), payment, pay(`{"amountCents":1000,"currency":null}`))
	add("Example/Payment/NoBody", rs("R6.10", "R3.1"), payment, pay(``))

	addInputModel(add, body)
	addBodies(add, body, whole, intentA)
	addNumbers(add, body, whole, jcs)
	addStrings(add, body, whole)
	addPaths(add, body)
	addSelection(add, body)
	addSpecs(add, body)
	addMore(add, body, whole)
	return cs
}

type addFunc func(name string, rules []string, spec fingerprint.Spec, req *vectorRequest)
type bodyFunc func(string) *vectorRequest

func addInputModel(add addFunc, body bodyFunc) {
	rs := func(ids ...string) []string { return ids }
	spec := fingerprint.Spec{Headers: []string{"X-Account", "x-api-version"}, Query: []string{"dryRun", "page"}}
	base := func() *vectorRequest {
		r := body(`{"a":1}`)
		r.Headers = map[string][]string{"X-Account": {"acc_1"}, "X-Api-Version": {"2024-05-01"}}
		r.Query = map[string][]string{"dryRun": {"false"}}
		return r
	}
	edit := func(name string, rules []string, f func(*vectorRequest)) {
		r := base()
		f(r)
		add("Input/"+name, rules, spec, r)
	}
	edit("Base", rs("R1.1", "R7.2", "R7.3"), func(*vectorRequest) {})
	for _, m := range []string{"GET", "POST", "PUT", "PATCH", "DELETE", "post", "Post", "", "PURGE", "M-SEARCH"} {
		edit("Method/"+m, rs("R1.2", "R7.4"), func(r *vectorRequest) { r.Method = m })
	}
	for i, p := range []string{"/v1/orders", "/v1/orders/", "/V1/orders", "/v1//orders", "/v1/a%2Fb", "/v1/a/b", "/v1/a%2fb", "/v1/%C3%A9", "/v1/é", "", "/", "*", "/v1/orders?x=1", "/v1/./orders", "/v1/a b", "/v1/\"q\""} {
		edit(fmt.Sprintf("Path/%02d", i), rs("R1.3", "R7.4"), func(r *vectorRequest) { r.Path = p })
	}
	for i, h := range []map[string][]string{
		{"x-account": {"acc_1"}, "x-api-version": {"2024-05-01"}},
		{"X-ACCOUNT": {"acc_1"}, "X-API-VERSION": {"2024-05-01"}},
		{"x-AcCoUnT": {"acc_1"}, "X-Api-Version": {"2024-05-01"}},
	} {
		edit(fmt.Sprintf("Header/NameCase/%d", i), rs("R1.4", "R7.2"), func(r *vectorRequest) { r.Headers = h })
	}
	for i, vals := range [][]string{
		{"acc_2"}, {"acc_1", "acc_2"}, {"acc_2", "acc_1"}, {"acc_1,acc_2"}, {" acc_1"}, {"acc_1 "}, {""}, {"", ""}, {"ACC_1"}, {"é"}, {"a\"b\\c"}, {"tab\there"},
	} {
		edit(fmt.Sprintf("Header/Values/%02d", i), rs("R1.5", "R7.2"), func(r *vectorRequest) { r.Headers["X-Account"] = vals })
	}
	edit("Header/NoValues", rs("R1.5", "R7.2"), func(r *vectorRequest) { r.Headers["X-Account"] = []string{} })
	edit("Header/Absent", rs("R1.5", "R7.2"), func(r *vectorRequest) { delete(r.Headers, "X-Account") })
	edit("Header/None", rs("R1.5", "R7.2"), func(r *vectorRequest) { r.Headers = map[string][]string{} })
	edit("Header/Undeclared", rs("R1.1"), func(r *vectorRequest) {
		r.Headers["User-Agent"] = []string{"curl/8"}
		r.Headers["X-Request-Id"] = []string{"r-9"}
	})
	edit("Header/UndeclaredCaseCollision", rs("R1.1", "R1.6"), func(r *vectorRequest) {
		r.Headers["User-Agent"] = []string{"curl/8"}
		r.Headers["user-agent"] = []string{"curl/9"}
	})
	edit("Header/CaseCollision", rs("R1.6"), func(r *vectorRequest) { r.Headers["x-account"] = []string{"acc_2"} })
	edit("Header/CaseCollisionSameValue", rs("R1.6"), func(r *vectorRequest) { r.Headers["X-ACCOUNT"] = []string{"acc_1"} })
	edit("Header/CaseCollisionEmpty", rs("R1.6"), func(r *vectorRequest) { r.Headers["x-account"] = []string{} })
	for i, q := range []map[string][]string{
		{"dryRun": {"true"}}, {"dryRun": {"false", "true"}}, {"dryRun": {"true", "false"}}, {"dryRun": {""}}, {"dryRun": {}}, {},
		{"dryrun": {"false"}}, {"DRYRUN": {"false"}}, {"dryRun": {"false"}, "page": {"2"}}, {"page": {"2"}, "dryRun": {"false"}},
		{"dryRun": {"false"}, "utm_source": {"mail"}}, {"dryRun": {"a b"}}, {"dryRun": {"a+b"}}, {"dryRun": {"é"}}, {"page": {"1", "1"}},
	} {
		edit(fmt.Sprintf("Query/%02d", i), rs("R1.7", "R7.3"), func(r *vectorRequest) { r.Query = q })
	}
	edit("Body/Empty", rs("R1.8", "R3.1", "R6.1"), func(r *vectorRequest) { e := ""; r.Body = &e })
	edit("Body/Whitespace", rs("R1.8", "R3.1"), func(r *vectorRequest) { e := " "; r.Body = &e })
	// Order of rejections: the body first, then required values, then
	// headers.
	collide := func(r *vectorRequest) { r.Headers["x-account"] = []string{"acc_2"} }
	add("Input/Precedence/BodyBeforeHeader", rs("R3.16"), spec, func() *vectorRequest { r := base(); collide(r); b := `{"a":`; r.Body = &b; return r }())
	req := fingerprint.Spec{Intent: []string{"a"}, Required: []string{"a"}, Headers: []string{"X-Account"}}
	add("Input/Precedence/RequiredBeforeHeader", rs("R3.16", "R6.10"), req, func() *vectorRequest { r := base(); collide(r); b := `{"b":1}`; r.Body = &b; return r }())
	add("Input/Precedence/BodyBeforeRequired", rs("R3.16", "R3.15"), req, func() *vectorRequest { r := base(); b := `{"b":1,"b":2}`; r.Body = &b; return r }())
	two := fingerprint.Spec{Headers: []string{"X-B", "x-a"}}
	add("Input/Precedence/HeadersInOrder", rs("R3.16", "R1.6"), two, func() *vectorRequest {
		r := base()
		r.Headers = map[string][]string{"X-A": {"1"}, "x-a": {"2"}, "X-B": {"1"}, "x-b": {"2"}}
		return r
	}())
}

func addBodies(add addFunc, body bodyFunc, whole, intentA fingerprint.Spec) {
	rs := func(ids ...string) []string { return ids }
	type bad struct {
		name  string
		rules []string
		body  string
	}
	bads := []bad{
		// Syntax.
		{"Syntax/Whitespace", rs("R3.1"), " \t\r\n"},
		{"Syntax/ByteOrderMark", rs("R3.1"), "\ufeff{}"},
		{"Syntax/ByteOrderMarkAfterSpace", rs("R3.1"), " \ufeff{}"},
		{"Syntax/TwoValues", rs("R3.1"), `{} {}`},
		{"Syntax/TwoScalars", rs("R3.1"), `1 2`},
		{"Syntax/TrailingGarbage", rs("R3.1"), `{"a":1} x`},
		{"Syntax/TrailingBrace", rs("R3.1"), `{"a":1}}`},
		{"Syntax/TrailingNUL", rs("R3.1"), "{}\x00"},
		{"Syntax/FormFeedSpace", rs("R3.1"), "\f{}"},
		{"Syntax/VerticalTab", rs("R3.1"), "{\v}"},
		{"Syntax/NBSP", rs("R3.1"), "\u00a0{}"},
		{"Syntax/Comment", rs("R3.1"), `{"a":1 /* c */}`},
		{"Syntax/LineComment", rs("R3.1"), "{\"a\":1}// c"},
		{"Syntax/SingleQuotes", rs("R3.1"), `{'a':1}`},
		{"Syntax/UnquotedName", rs("R3.1"), `{a:1}`},
		{"Syntax/MissingColon", rs("R3.1"), `{"a" 1}`},
		{"Syntax/MissingValue", rs("R3.1"), `{"a":}`},
		{"Syntax/MissingComma", rs("R3.1"), `{"a":1 "b":2}`},
		{"Syntax/MissingCommaArray", rs("R3.1"), `[1 2]`},
		{"Syntax/TrailingCommaObject", rs("R3.1"), `{"a":1,}`},
		{"Syntax/TrailingCommaArray", rs("R3.1"), `[1,]`},
		{"Syntax/TrailingCommaNested", rs("R3.1"), `{"a":[1,]}`},
		{"Syntax/LeadingCommaArray", rs("R3.1"), `[,1]`},
		{"Syntax/LeadingCommaObject", rs("R3.1"), `{,"a":1}`},
		{"Syntax/DoubleComma", rs("R3.1"), `[1,,2]`},
		{"Syntax/WrongClose", rs("R3.1"), `{"a":[1}`},
		{"Syntax/WrongCloseObject", rs("R3.1"), `[{"a":1]]`},
		{"Syntax/Unclosed", rs("R3.1"), `{"a":1`},
		{"Syntax/UnclosedArray", rs("R3.1"), `[[1]`},
		{"Syntax/UnclosedAfterComma", rs("R3.1"), `[1,2,`},
		{"Syntax/UnclosedName", rs("R3.1"), `{"a`},
		{"Syntax/UnclosedAfterName", rs("R3.1"), `{"a"`},
		{"Syntax/UnclosedString", rs("R3.1", "R3.4"), `{"a":"abc`},
		{"Syntax/NameNotString", rs("R3.1"), `{1:1}`},
		{"Syntax/NameAfterComma", rs("R3.1"), `{"a":1,x}`},
		{"Syntax/Close", rs("R3.1"), `}`},
		{"Syntax/Colon", rs("R3.1"), `:`},
		{"Syntax/ArrayAsName", rs("R3.1"), `{[]:1}`},
		{"Syntax/Deep", rs("R3.1"), `{"a":{"b":[1,{"c":x}]}}`},
		{"Literal/Tru", rs("R3.2"), `{"a":tru}`},
		{"Literal/True", rs("R3.2"), `{"a":True}`},
		{"Literal/NULL", rs("R3.2"), `[NULL]`},
		{"Literal/Nul", rs("R3.2"), `nul`},
		{"Literal/Falsey", rs("R3.2"), `falsey`},
		{"Literal/Undefined", rs("R3.2"), `{"a":undefined}`},
		{"Literal/NaN", rs("R3.2", "R3.3"), `{"a":NaN}`},
		{"Literal/Infinity", rs("R3.2", "R3.3"), `{"a":Infinity}`},
		{"Literal/MinusInfinity", rs("R3.2", "R3.3"), `{"a":-Infinity}`},
		{"Number/Plus", rs("R3.3"), `{"a":+1}`},
		{"Number/LeadingZero", rs("R3.3"), `{"a":01}`},
		{"Number/NegativeLeadingZero", rs("R3.3"), `{"a":-01}`},
		{"Number/LeadingZeros", rs("R3.3"), `[00]`},
		{"Number/LeadingPoint", rs("R3.3"), `{"a":.5}`},
		{"Number/TrailingPoint", rs("R3.3"), `{"a":1.}`},
		{"Number/TrailingPointEnd", rs("R3.3"), `1.`},
		{"Number/PointExponent", rs("R3.3"), `{"a":1.e5}`},
		{"Number/MinusAlone", rs("R3.3"), `{"a":-}`},
		{"Number/MinusEnd", rs("R3.3"), `-`},
		{"Number/MinusPoint", rs("R3.3"), `[-.5]`},
		{"Number/ExponentEmpty", rs("R3.3"), `{"a":1e}`},
		{"Number/ExponentSign", rs("R3.3"), `{"a":1.5e+}`},
		{"Number/ExponentEnd", rs("R3.3"), `1e`},
		{"Number/ExponentTwice", rs("R3.3"), `[1e5e5]`},
		{"Number/Hex", rs("R3.3"), `[0x10]`},
		{"Number/Octal", rs("R3.3"), `[0o7]`},
		{"Number/Underscore", rs("R3.3"), `[1_000]`},
		{"Number/TwoPoints", rs("R3.3"), `[1.2.3]`},
		{"Number/MinusMinus", rs("R3.3"), `[--1]`},
		{"Number/Comma", rs("R3.3"), `{"a":1,5}`},
		{"String/RawTab", rs("R3.4"), "{\"a\":\"\t\"}"},
		{"String/RawNewline", rs("R3.4"), "{\"a\":\"x\ny\"}"},
		{"String/RawNUL", rs("R3.4"), "[\"\x00\"]"},
		{"String/RawUnitSeparator", rs("R3.4"), "[\"\x1f\"]"},
		{"String/RawControlInName", rs("R3.4"), "{\"a\x01\":1}"},
		{"String/EscapeX", rs("R3.4"), `{"a":"\x41"}`},
		{"String/EscapeApostrophe", rs("R3.4"), `["\'"]`},
		{"String/EscapeZero", rs("R3.4"), `["\0"]`},
		{"String/EscapeV", rs("R3.4"), `["\v"]`},
		{"String/EscapeUpperU", rs("R3.4"), `["\U0041"]`},
		{"String/ShortUnicode", rs("R3.4"), `{"a":"\u12"}`},
		{"String/BadHex", rs("R3.4"), `["\u12G4"]`},
		{"String/UnicodeAtEnd", rs("R3.4"), `["\u00`},
		{"String/BackslashAtEnd", rs("R3.4"), `["\`},
		{"String/EscapeInName", rs("R3.4"), `{"\q":1}`},
		{"UTF8/FF", rs("R3.5"), "{\"a\":\"x\xff\"}"},
		{"UTF8/Continuation", rs("R3.5"), "[\"\x80\"]"},
		{"UTF8/Overlong", rs("R3.5"), "[\"\xc0\x80\"]"},
		{"UTF8/OverlongSlash", rs("R3.5"), "[\"\xc0\xaf\"]"},
		{"UTF8/Overlong3", rs("R3.5"), "[\"\xe0\x80\xaf\"]"},
		{"UTF8/EncodedSurrogate", rs("R3.5"), "{\"a\":\"\xed\xa0\x80\"}"},
		{"UTF8/EncodedLowSurrogate", rs("R3.5"), "[\"\xed\xbf\xbf\"]"},
		{"UTF8/BeyondUnicode", rs("R3.5"), "[\"\xf4\x90\x80\x80\"]"},
		{"UTF8/F5", rs("R3.5"), "[\"\xf5\x80\x80\x80\"]"},
		{"UTF8/Truncated2", rs("R3.5"), "[\"\xc3\"]"},
		{"UTF8/Truncated3", rs("R3.5"), "[\"a\xe2\x82\"]"},
		{"UTF8/Truncated4", rs("R3.5"), "[\"\xf0\x9f\x98\"]"},
		{"UTF8/InName", rs("R3.5"), "{\"\xff\":1}"},
		{"UTF8/AfterValid", rs("R3.5"), "[\"é€😀\xfe\"]"},
		{"UTF8/Latin1", rs("R3.5"), "{\"name\":\"Jos\xe9\"}"},
		{"UTF8/OutsideString", rs("R3.1"), "[\xff]"},
		{"Surrogate/LoneHigh", rs("R3.6"), `{"a":"\ud800"}`},
		{"Surrogate/LoneHighUpper", rs("R3.6"), `{"a":"\uD83D"}`},
		{"Surrogate/LoneLow", rs("R3.6"), `["\udc00"]`},
		{"Surrogate/Reversed", rs("R3.6"), `{"a":"\udc00\ud800"}`},
		{"Surrogate/HighThenChar", rs("R3.6"), `"\ud800\u0041"`},
		{"Surrogate/HighThenLiteral", rs("R3.6"), `["\ud800x"]`},
		{"Surrogate/HighHigh", rs("R3.6"), `["\ud800\ud800"]`},
		{"Surrogate/HighAtEnd", rs("R3.6"), `["x\udbff"]`},
		{"Surrogate/InName", rs("R3.6"), `{"a\ud800":1}`},
		{"Surrogate/Nested", rs("R3.6", "R3.13"), `{"~/":[0,"\ud800"]}`},
		{"Surrogate/HighThenEscapedBackslash", rs("R3.6"), `["\ud800\\"]`},
		{"Duplicate/Simple", rs("R3.7"), `{"a":1,"a":2}`},
		{"Duplicate/SameValue", rs("R3.7"), `{"a":1,"a":1}`},
		{"Duplicate/Escaped", rs("R3.7"), `{"b":{"a":1,"\u0061":2}}`},
		{"Duplicate/EscapedBoth", rs("R3.7"), `{"\u0061":1,"\u0061":2}`},
		{"Duplicate/NonASCII", rs("R3.7"), `{"\u00e9":1,"é":2}`},
		{"Duplicate/Pair", rs("R3.7"), `{"😀":1,"\ud83d\ude00":2}`},
		{"Duplicate/Solidus", rs("R3.7"), `{"a/b":1,"a\/b":2}`},
		{"Duplicate/Empty", rs("R3.7"), `{"":1,"":2}`},
		{"Duplicate/Nested", rs("R3.7", "R3.13"), `{"a":[1,{"b":[{"c":1,"c":2}]}]}`},
		{"Duplicate/Pointer", rs("R3.7", "R3.13"), `{"x":{"a/b~c":1,"a/b~c":2}}`},
		{"Duplicate/Three", rs("R3.7", "R3.14"), `{"a":1,"a":2,"a":3}`},
		{"Duplicate/FirstSecondOccurrence", rs("R3.7", "R3.14"), `{"b":1,"a":1,"b":2,"a":2}`},
		{"Duplicate/EarliestSecond", rs("R3.7", "R3.14"), `{"a":1,"b":1,"b":2,"a":2}`},
		{"Duplicate/EarliestSecondLater", rs("R3.7", "R3.14"), `{"c":1,"a":1,"b":1,"b":2,"a":2}`},
		{"Duplicate/Reverse", rs("R3.7", "R3.14"), `{"z":1,"y":1,"y":2,"z":2}`},
		{"Duplicate/BeforeLaterError", rs("R3.7", "R3.14"), `{"b":{"a":1,"a":2}, "c":1e1000000000}`},
		{"Duplicate/AfterEarlierError", rs("R3.7", "R3.14"), `{"a":1,"a":2,"b":x}`},
		{"Duplicate/UnclosedObject", rs("R3.7", "R3.14"), `{"a":1,"a":2`},
		{"Duplicate/ValueError", rs("R3.7", "R3.14"), `{"a":1,"a":x}`},
		{"Duplicate/InArrayThenSyntax", rs("R3.7", "R3.14"), `[{"a":1,"a":2}, x]`},
		{"Duplicate/InnerFirst", rs("R3.7", "R3.14"), `{"a":{"x":1,"x":2},"a":3}`},
		{"Range/Exponent", rs("R3.8", "R4.7"), `{"a":{"b":[1,{"c":1e1000000000}]}}`},
		{"Range/NegativeExponent", rs("R3.8", "R4.7"), `[1e-1000000000]`},
		{"Range/Digits", rs("R3.8", "R4.7"), `[10e999999999]`},
		{"Range/Fraction", rs("R3.8", "R4.7"), `[0.1e-999999999]`},
		{"Range/Negative", rs("R3.8", "R4.7"), `[-5e99999999999999999999]`},
		{"Order/FirstError", rs("R3.14"), "[\"\\ud800\", \"\xff\"]"},
		{"Order/UTF8First", rs("R3.14"), "[\"\xff\", \"\\ud800\"]"},
	}
	deep := func(n int, open, close string) string {
		return strings.Repeat(open, n) + strings.Repeat(close, n)
	}
	bads = append(bads,
		bad{"Depth/Arrays10001", rs("R3.9", "R3.13"), deep(10001, "[", "]")},
		bad{"Depth/Objects10001", rs("R3.9", "R3.13"), strings.Repeat(`{"a":`, 10001) + "1" + strings.Repeat("}", 10001)},
		bad{"Depth/Mixed10001", rs("R3.9"), strings.Repeat(`[{"k":`, 5000) + "[[]]" + strings.Repeat("}]", 5000) + "x"},
		bad{"Depth/Unclosed", rs("R3.9", "R3.14"), strings.Repeat("[", 20000)},
		bad{"Depth/BeforeSyntax", rs("R3.9", "R3.14"), strings.Repeat("[", 10001) + "x"},
		bad{"Depth/SyntaxFirst", rs("R3.9", "R3.14"), `[x` + strings.Repeat("[", 10001)},
	)
	for _, b := range bads {
		add("Body/Invalid/"+b.name+"/Whole", append(rs("R3.12", "R3.13"), b.rules...), whole, body(b.body))
		add("Body/Invalid/"+b.name+"/Intent", append(rs("R3.12", "R3.13", "R3.15"), b.rules...), intentA, body(b.body))
	}
	// Bodies the rules accept.
	goods := []struct {
		name  string
		rules []string
		body  string
	}{
		{"Space", rs("R3.1"), " \t\r\n{ \"a\" : [ 1 , 2 ] , \"b\" : { } } \t\r\n"},
		{"TrailingNewline", rs("R3.1"), "{\"a\":1}\n"},
		{"TopLevelNumber", rs("R3.1"), `42`},
		{"TopLevelString", rs("R3.1"), `"a"`},
		{"TopLevelTrue", rs("R3.1", "R3.2"), `true`},
		{"TopLevelFalse", rs("R3.1", "R3.2"), `false`},
		{"TopLevelNull", rs("R3.1", "R3.2"), `null`},
		{"TopLevelArray", rs("R3.1"), `[1,"a",null,true,false,{},[]]`},
		{"EmptyObject", rs("R3.1"), `{}`},
		{"EmptyArray", rs("R3.1"), `[]`},
		{"EmptyString", rs("R3.1"), `""`},
		{"NestedEmpty", rs("R3.1"), `{"a":{},"b":[],"c":[{}],"d":[[]]}`},
		{"Depth10000Arrays", rs("R3.9"), deep(10000, "[", "]")},
		{"Depth10000Objects", rs("R3.9"), strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000)},
		{"Noncharacter", rs("R3.11"), `{"a":"` + "\ufdd0\ufffe\U0010ffff" + `"}`},
		{"NoncharacterEscaped", rs("R3.11"), `{"a":"\ufdd0\uFFFE\udbff\udfff"}`},
		{"NULEscaped", rs("R3.11", "R4.2"), `{"a":"\u0000"}`},
		{"PrivateUse", rs("R3.11"), `["\ue000` + "\U000f0000" + `"]`},
		{"MaxCodePoint", rs("R3.11", "R3.6"), `["\uDBFF\uDFFF"]`},
		{"SurrogatePair", rs("R3.6"), `["\ud83d\ude00"]`},
		{"SurrogatePairUpper", rs("R3.6"), `["\uD83D\uDE00"]`},
		{"DEL", rs("R3.4", "R4.2"), "[\"\x7f\"]"},
		{"AllEscapes", rs("R3.4", "R4.2"), `["\"\\\/\b\f\n\r\t\u0041\u00e9"]`},
		{"DistinctNames", rs("R3.7"), `{"a":1,"A":2,"a ":3,"\u00e9":4,"e\u0301":5}`},
		{"DuplicateInDifferentObjects", rs("R3.7"), `{"a":{"x":1},"b":{"x":2},"c":[{"x":1},{"x":1}]}`},
	}
	for _, g := range goods {
		add("Body/Valid/"+g.name+"/Whole", g.rules, whole, body(g.body))
		add("Body/Valid/"+g.name+"/Intent", g.rules, intentA, body(g.body))
	}
}

func addNumbers(add addFunc, body bodyFunc, whole, jcs fingerprint.Spec) {
	rs := func(ids ...string) []string { return ids }
	zeros := []string{"0", "-0", "0.0", "-0.0", "0e0", "0E5", "-0e-5", "0.000", "0e999999999999", "-0.0e+10", "0.0e-1000000000"}
	edges := []string{
		"9007199254740991", "9007199254740992", "9007199254740993", "9007199254740994", "9007199254740995",
		"-9007199254740991", "-9007199254740993", "18014398509481985",
		"1e21", "1E21", "1e+21", "1e20", "100000000000000000000", "1000000000000000000000", "999999999999999999999", "123456789012345678901",
		"1.5e21", "12345678901234567890.5", "1e22", "1e-6", "1e-7", "0.000001", "0.0000001", "0.00000123", "1.5e-7", "123e-20",
		"1E400", "-1E400", "1e-400", "-1e-400", "1e999999999", "1e-999999999", "9.999e999999999",
		"123456789012345678901234567890", "1.23456789012345678901234567890", "0.123456789012345678901234567890e-5",
		"-123456789012345678901234567890e10", "3.14159265358979323846264338327950288",
		"5e-324", "4.9e-324", "4.9406564584124654e-324", "2e-324", "2.4703282292062328e-324", "1e-323",
		"2.2250738585072014e-308", "2.2250738585072011e-308",
		"1.7976931348623157e308", "1.7976931348623158e308", "1.7976931348623159e308", "1.8e308", "-1.7976931348623157e308",
		"0.1", "0.2", "0.3", "0.30000000000000004", "0.1e1", "10E-1", "1.0", "1.00", "1e0", "1E0", "1e+0", "1e-0", "1E-0", "01e0",
		"1", "-1", "100", "1e2", "1E2", "1e+2", "100.0", "1000.000", "1e3", "10E2", "1000", "0.01e5",
		"12.340", "-1.5E-3", "-0.0015", "1.0000000000000000001", "1.00000000000000001", "0.99999999999999999", "0.9999999999999999",
		"123456789", "1234567890123456", "12345678901234567", "123456789012345678", "1.2345678901234567e-7",
		"4.35", "0.000001234", "1e-5", "1.0e-5", "10e-6", "1e+30", "1e30", "1.5e300", "2e-300", "7e-310",
		"295147905179352825856", "295147905179352825857", "-1e-7", "-1e21", "1e-1", "1e-2", "1e-3", "1e-4", "1e1", "1e5", "1e10", "1e15", "1e16", "1e17", "1e18", "1e19",
		"333333333.3333333", "333333333.33333333333", "1.5", "-1.5", "2.5e-5", "65536.0e-3",
	}
	for i, lit := range append(zeros, edges...) {
		if lit == "01e0" {
			continue // not JSON: a leading zero
		}
		rules := rs("R4.4", "R4.5", "R4.9")
		if i < len(zeros) {
			rules = rs("R4.4", "R4.6")
		}
		if strings.Contains(lit, "999999999") || strings.Contains(lit, "1000000000") {
			rules = append(rules, "R4.7")
		}
		add("Number/Exact/"+lit, rules, whole, body(`{"n":`+lit+`}`))
		add("Number/JCS/"+lit, rs("R4.8"), jcs, body(`{"n":`+lit+`}`))
	}
	for _, lit := range []string{"1", "1e21", "-0", "9007199254740993", "1E400", "0.1", "123456789012345678901234567890"} {
		add("Number/Exact/TopLevel/"+lit, rs("R4.4", "R4.5", "R3.1"), whole, body(lit))
		add("Number/JCS/TopLevel/"+lit, rs("R4.8", "R3.1"), jcs, body(lit))
	}
	exactSpec := fingerprint.Spec{Numbers: "exact"}
	add("Number/ExactNamed/9007199254740993", rs("R2.1", "R4.9"), exactSpec, body(`{"n":9007199254740993}`))
	add("Number/ExactNamed/1E400", rs("R2.1", "R4.9"), exactSpec, body(`{"n":1E400}`))
	// Numbers in selected values, through the intent path.
	sel := fingerprint.Spec{Intent: []string{"n", "m.#.0"}}
	for _, lit := range []string{"1.0", "1e3", "9007199254740993", "-0", "1E400"} {
		add("Number/Exact/Selected/"+lit, rs("R4.4", "R4.5", "R6.5"), sel, body(`{"n":`+lit+`,"m":[[`+lit+`]]}`))
		add("Number/JCS/Selected/"+lit, rs("R4.8", "R6.5"), fingerprint.Spec{Intent: sel.Intent, Numbers: "jcs"}, body(`{"n":`+lit+`,"m":[[`+lit+`]]}`))
	}
}

func addStrings(add addFunc, body bodyFunc, whole fingerprint.Spec) {
	rs := func(ids ...string) []string { return ids }
	for c := 0; c < 0x20; c++ {
		add(fmt.Sprintf("String/Control/%02x", c), rs("R4.2"), whole, body(fmt.Sprintf(`{"s":"\u%04x"}`, c)))
		add(fmt.Sprintf("String/ControlUpper/%02x", c), rs("R4.2"), whole, body(fmt.Sprintf(`{"s":"\u%04X"}`, c)))
	}
	for i, s := range []string{
		`\"`, `\\`, `\/`, `/`, `\b`, `\f`, `\n`, `\r`, `\t`, `\u0022`, `\u005c`, `\u005C`, `\u002f`, `\u0041`, `\u007f`, "\x7f",
		`\u0080`, `\u00e9`, `é`, `\u20ac`, `€`, `\u2028`, "\u2028", `\u2029`, `\ufeff`, "\ufeff", `\ud83d\ude00`, "😀", `\uD834\uDD1E`,
		`<>&`, `\u003c\u003e\u0026`, `'`, "\u0301", `e\u0301`, `\u00C5`, `A\u030a`, `\uffff`, "\uffff", " ", "  ", `\u0020`,
	} {
		add(fmt.Sprintf("String/Escape/%02d", i), rs("R4.2"), whole, body(`{"s":"`+s+`"}`))
	}
	// Member order: UTF-16 code units of the unescaped names.
	for i, names := range [][]string{
		{"b", "a"}, {"aa", "a"}, {"a", ""}, {"B", "a", "A", "b"}, {"é", "z", "e"}, {"\uffff", "😀"}, {"\ufb01", "\U0001f600", "\ue000"},
		{"\u0080", "\u007f"}, {"1", "10", "2", "-1"}, {`\u0062`, "a"}, {`a\u0000`, "a"}, {"ab", "a\u00ff", "a\U00010000"}, {"\u20ac", "\u00e9", "\u0100"},
		{"peach", "péché", "pêche", "sin"}, {"\u00e9", "e\u0301"},
	} {
		var b strings.Builder
		b.WriteByte('{')
		for j, n := range names {
			if j > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `"%s":%d`, n, j)
		}
		b.WriteByte('}')
		add(fmt.Sprintf("Order/%02d", i), rs("R4.3", "R4.1"), whole, body(b.String()))
		add(fmt.Sprintf("Order/Nested/%02d", i), rs("R4.3", "R4.1"), whole, body(`[{"x":`+b.String()+`}]`))
	}
	// RFC 8785's own example, in both modes.
	const rfc = `{"numbers":[333333333.33333329,1E30,4.50,2e-3,0.000000000000000000000000001],"string":"\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/","literals":[null,true,false]}`
	add("RFC8785/Example/JCS", rs("R4.1", "R4.2", "R4.8"), fingerprint.Spec{Numbers: "jcs"}, body(rfc))
	add("RFC8785/Example/Exact", rs("R4.1", "R4.2", "R4.5"), whole, body(rfc))
	add("RFC8785/Sorting", rs("R4.3"), whole, body(`{"\u20ac":"Euro Sign","\r":"Carriage Return","\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One","\ud83d\ude00":"Emoji: Grinning Face","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis"}`))
}

func addPaths(add addFunc, body bodyFunc) {
	rs := func(ids ...string) []string { return ids }
	rejected := []struct {
		rule  string
		paths []string
	}{
		{"R5.5", []string{"", "a..b", ".a", "a.", ".", ".."}},
		{"R5.6", []string{`a\`, `\`, `a.b\`}},
		{"R5.7", []string{"a|b", "|a", "a.b|c", "a|"}},
		{"R5.8", []string{"a*", "c?de", "*", "?", "a.*.b", "*a"}},
		{"R5.9", []string{"@reverse", "a.@this", "@"}},
		{"R5.10", []string{"[a,b]", "{a,b}", "a.[0]", "a.{b}", "["}},
		{"R5.11", []string{"!true", "a.!x", "!"}},
		{"R5.12", []string{"#(qty>1)", "items.#(qty>1)", "#a", "a#", "a.b#c", "##", "a.#.b#"}},
		{"R5.13", []string{"01", "a.00", "a.007", "99999999999999999999", "items.01.sku"}},
	}
	for _, g := range rejected {
		for i, p := range g.paths {
			n := fmt.Sprintf("%s/%d", g.rule, i)
			add("Path/Rejected/Intent/"+n, rs(g.rule, "R2.2"), fingerprint.Spec{Intent: []string{"ok", p}}, nil)
			add("Path/Rejected/Ignore/"+n, rs(g.rule, "R2.2"), fingerprint.Spec{Ignore: []string{p}}, nil)
			add("Path/Rejected/Required/"+n, rs(g.rule, "R2.2"), fingerprint.Spec{Required: []string{p}}, nil)
		}
	}
	// Characters that are special only where gjson reads them as such.
	const doc = `{"a@b":1,"a!":2,"a[0]":3,"a{b}":4,"#":5,"a.b":6,"@x":7,"01":8,"a*":9,"a|b":10,"\\":11,"-1":12,"+1":13,"é":14," ":15,"a b":16,"!x":17,"[":18,"a#":19,"?":20}`
	for i, p := range []string{"a@b", "a!", "a[0]", "a{b}", `\#`, `a\.b`, `\@x`, `\01`, `a\*`, `a\|b`, `\\`, "-1", "+1", "é", " ", "a b", `\!x`, `\[`, `a\#`, `\?`} {
		add(fmt.Sprintf("Path/Accepted/%02d", i), rs("R5.1", "R5.4"), fingerprint.Spec{Intent: []string{p}}, body(doc))
	}
}

func addSelection(add addFunc, body bodyFunc) {
	rs := func(ids ...string) []string { return ids }
	intent := func(paths ...string) fingerprint.Spec { return fingerprint.Spec{Intent: paths} }
	const shop = `{"amountCents":1000,"destination":{"iban":"DE89","name":"Ada"},"items":[{"sku":"A","qty":2,"note":"x"},{"sku":"B","note":"y"}],"fav.movie":"x","1":"one","tags":["a","b"]}`
	for i, c := range []struct {
		rules []string
		spec  fingerprint.Spec
		body  string
	}{
		{rs("R5.4"), intent("amountCents"), shop},
		{rs("R5.4"), intent("destination"), shop},
		{rs("R5.4"), intent("destination.iban"), shop},
		{rs("R5.4", "R5.1"), intent(`fav\.movie`), shop},
		{rs("R5.4", "R6.7"), intent("fav.movie"), shop},
		{rs("R5.1", "R6.12"), intent("amountCents", `\amountCents`, `amount\Cents`), shop},
		{rs("R5.4", "R6.7"), intent("items.sku"), shop},
		{rs("R5.4", "R6.7"), intent("amountCents.x"), shop},
		{rs("R5.4", "R6.7"), intent("missing"), shop},
		{rs("R5.2"), intent("items.1.sku"), shop},
		{rs("R5.2"), intent("items.0"), shop},
		{rs("R5.2", "R6.7"), intent("items.2"), shop},
		{rs("R5.2"), intent("1"), shop},
		{rs("R5.2", "R5.1"), intent(`\1`), shop},
		{rs("R5.2", "R6.7"), intent(`items.\1`), shop},
		{rs("R5.2"), intent("tags.0", "tags.1"), shop},
		{rs("R5.2"), intent("a.0"), `{"a":{"0":"zero"}}`},
		{rs("R5.2"), intent("0"), `["first","second"]`},
		{rs("R5.2", "R6.7"), intent("0"), `{"x":1}`},
		{rs("R5.3", "R6.6"), intent("items.#.sku"), shop},
		{rs("R5.3", "R6.6", "R6.7"), intent("items.#.qty"), shop},
		{rs("R2.3"), intent("tags.#.#"), ""},
		{rs("R5.3", "R6.6", "R6.7"), intent("items.#.missing"), shop},
		{rs("R5.3", "R6.6"), intent("items.#.sku"), `{"items":[]}`},
		{rs("R5.3", "R6.7"), intent("items.#.sku"), `{"items":{"sku":1}}`},
		{rs("R5.3", "R6.7"), intent("items.#.sku"), `{"items":{"#":{"sku":1}}}`},
		{rs("R5.3", "R6.7"), intent("items.#.sku"), `{"items":"A"}`},
		{rs("R5.3", "R6.6"), intent(`items.\#`), `{"items":{"#":3}}`},
		{rs("R5.3", "R6.6"), intent("#.a"), `[{"a":1},{"b":2},{"a":3}]`},
		{rs("R5.3", "R6.6", "R6.7", "R6.8"), intent("a.#.b.#.c"), `{"a":[{"b":[{"c":1},{}]},{"q":1},{"b":[]},{"b":[{}]}]}`},
		{rs("R5.3", "R6.6"), intent("a.#.b.#.c"), `{"a":[{"b":[{"c":1}]}]}`},
		{rs("R6.6", "R6.8"), intent(`a\.b.#.c`), `{"a.b":[{"c":1},{"d":2}]}`},
		{rs("R6.6", "R6.8"), intent(`a.#.\1`), `{"a":[{"1":1},{"2":2}]}`},
		{rs("R6.6", "R6.8"), intent("a.#.é"), `{"a":[{"é":1},{"e":2}]}`},
		{rs("R6.6", "R6.8"), intent("a.#.b.c"), `{"a":[{"b":{"c":1}},{"b":{}},{"b":2}]}`},
		{rs("R6.6"), intent("a.#.1"), `{"a":[[0,1],[0],{"1":"x"}]}`},
		{rs("R6.6", "R6.7"), intent("items.#.sku", "items.#.qty", "items.0.sku"), shop},
		{rs("R6.5", "R4.1"), intent("destination", "items"), `{"destination":{"name":"Ada","iban":"DE89"},"items":[{"qty":2,"sku":"A"}]}`},
		{rs("R6.5", "R4.3"), intent("b", "a", "B", "é", "A"), `{"a":1,"b":2,"A":3,"B":4,"é":5}`},
		{rs("R6.5", "R6.7"), intent("a", "b"), ``},
		{rs("R6.5"), intent("a"), `{"a":{"b":1,"a":2}}`},
		{rs("R6.5"), intent("a"), `{"a":"\u00e9\/"}`},
		{rs("R6.5", "R3.15"), intent("a"), `{"a":1,"b":{"deep":[1,2,{"x":null}]}}`},
		{rs("R5.4"), intent("\u00e9"), `{"\u00e9":1}`},
		{rs("R5.4"), intent("é"), `{"e\u0301":1}`},
		{rs("R5.4"), intent("a b.c"), `{"a b":{"c":true}}`},
		{rs("R5.4"), intent(`tr\u0061ce`), `{"tru0061ce":1,"trace":2}`},
		{rs("R5.4"), intent("😀"), `{"\ud83d\ude00":1}`},
		{rs("R5.4"), intent("\\\""), `{"\"":1}`},
		{rs("R5.4"), intent("a/b"), `{"a/b":1,"a\/c":2}`},
		{rs("R5.4"), intent("a/c"), `{"a/b":1,"a\/c":2}`},
	} {
		r := body(c.body)
		if _, err := fingerprint.Compile(c.spec); err != nil {
			r = nil // the spec alone
		}
		add(fmt.Sprintf("Select/%02d", i), c.rules, c.spec, r)
	}

	// Absent, null, "", [], {} and false are different.
	for i, b := range []string{`{}`, `{"a":null}`, `{"a":""}`, `{"a":[]}`, `{"a":{}}`, `{"a":false}`, `{"a":0}`, `{"a":"null"}`, `{"a":[null]}`, ``, `null`, `[]`} {
		add(fmt.Sprintf("Absent/%02d", i), rs("R6.9", "R6.7"), intent("a"), body(b))
		add(fmt.Sprintf("Absent/Through/%02d", i), rs("R6.9", "R6.7"), intent("x.#.a"), body(`{"x":[`+strings.TrimSpace(orNull(b))+`]}`))
	}

	// Ignore.
	ignore := func(entries ...string) fingerprint.Spec { return fingerprint.Spec{Ignore: entries} }
	const noisy = `{"traceId":"t","a":{"traceId":"t2","b":1},"items":[{"traceId":"t3","note":"n","sku":"A"},{"sku":"B","note":"m"}],"meta":{"sentAt":"now","client":"ios"},"1":"one","x":{"1":"deep"}}`
	for i, c := range []struct {
		rules []string
		spec  fingerprint.Spec
		body  string
	}{
		{rs("R6.1"), ignore(), noisy},
		{rs("R6.2"), ignore("traceId"), noisy},
		{rs("R6.2"), ignore("traceId"), `{"tr\u0061ceId":1,"b":2}`},
		{rs("R6.2"), ignore(`tr\aceId`), noisy},
		{rs("R6.2", "R2.4"), ignore("1"), noisy},
		{rs("R6.2"), ignore(`\1`), noisy},
		{rs("R6.2"), ignore("traceId"), `[{"traceId":1},[{"traceId":2}]]`},
		{rs("R6.2", "R6.4"), ignore("traceId"), `{"traceId":1}`},
		{rs("R6.2"), ignore("traceId"), `"traceId"`},
		{rs("R6.2"), ignore("traceId"), `{"a":"traceId","traceIds":1,"TraceId":2}`},
		{rs("R6.3"), ignore("meta.sentAt"), noisy},
		{rs("R6.3"), ignore("meta.sentAt"), `{"x":{"meta":{"sentAt":1}},"meta":{"sentAt":2,"k":3}}`},
		{rs("R6.3", "R6.4"), ignore("meta.sentAt", "meta.client"), noisy},
		{rs("R6.3"), ignore("items.#.note"), noisy},
		{rs("R6.3"), ignore("items.0.note"), noisy},
		{rs("R6.3"), ignore("items.0.note"), `{"items":{"0":{"note":1,"k":2},"1":{"note":3}}}`},
		{rs("R6.3"), ignore("items.#.note"), `{"items":{"0":{"note":1}}}`},
		{rs("R6.3"), ignore(`items.\0.note`), `{"items":[{"note":1}],"x":1}`},
		{rs("R6.3"), ignore(`items.\0.note`), `{"items":{"0":{"note":1}}}`},
		{rs("R6.3"), ignore("#.a"), `[{"a":1,"b":2},{"a":3}]`},
		{rs("R6.3"), ignore("a.#.#.b"), `{"a":[[{"b":1,"c":2}],[{"b":3}]]}`},
		{rs("R6.3"), ignore(`a\.b.c`), `{"a.b":{"c":1,"d":2},"a":{"b":{"c":3}}}`},
		{rs("R6.3", "R6.2"), ignore("traceId", "a.b"), noisy},
		{rs("R6.1", "R3.1"), ignore("traceId"), ``},
	} {
		add(fmt.Sprintf("Ignore/%02d", i), c.rules, c.spec, body(c.body))
	}
	// Ignore inside selected values: the paths count from the body's root.
	for i, c := range []struct {
		spec fingerprint.Spec
		body string
	}{
		{fingerprint.Spec{Intent: []string{"meta"}, Ignore: []string{"meta.sentAt"}}, noisy},
		{fingerprint.Spec{Intent: []string{"meta"}, Ignore: []string{"sentAt"}}, noisy},
		{fingerprint.Spec{Intent: []string{"a"}, Ignore: []string{"traceId"}}, noisy},
		{fingerprint.Spec{Intent: []string{"items"}, Ignore: []string{"items.#.note"}}, noisy},
		{fingerprint.Spec{Intent: []string{"items.#.sku", "items.1"}, Ignore: []string{"items.#.note", "traceId"}}, noisy},
		{fingerprint.Spec{Intent: []string{"x"}, Ignore: []string{"sentAt", "meta.client"}}, `{"x":{"meta":{"client":1,"sentAt":2,"k":3}}}`},
		{fingerprint.Spec{Intent: []string{"x.meta"}, Ignore: []string{"meta.client"}}, `{"x":{"meta":{"client":1,"k":3}}}`},
		{fingerprint.Spec{Intent: []string{"items.#"[:5] + ".0"}, Ignore: []string{"items.0.note"}}, noisy},
	} {
		add(fmt.Sprintf("Ignore/Selected/%02d", i), rs("R6.5", "R6.3"), c.spec, body(c.body))
	}

	// Required.
	req := func(intent, required []string) fingerprint.Spec {
		return fingerprint.Spec{Intent: intent, Required: required}
	}
	for i, c := range []struct {
		rules []string
		spec  fingerprint.Spec
		body  string
	}{
		{rs("R6.10"), req([]string{"a", "b"}, []string{"a"}), `{"a":1}`},
		{rs("R6.10"), req([]string{"a", "b"}, []string{"a"}), `{"b":1}`},
		{rs("R6.10", "R6.9"), req([]string{"a"}, []string{"a"}), `{"a":null}`},
		{rs("R6.10", "R6.9"), req([]string{"a"}, []string{"a"}), `{"a":""}`},
		{rs("R6.10", "R6.9"), req([]string{"a"}, []string{"a"}), `{"a":[]}`},
		{rs("R6.10"), req([]string{"a"}, []string{"a"}), ``},
		{rs("R6.10"), req([]string{"a", "b"}, []string{"b", "a"}), `{}`},
		{rs("R6.10"), req([]string{"b", "a"}, []string{"b", "a"}), `{"c":1}`},
		{rs("R6.10"), req([]string{"items.#.sku"}, []string{"items.#.sku"}), `{"items":[{"sku":1},{"x":1},{"y":2}]}`},
		{rs("R6.10"), req([]string{"items.#.sku"}, []string{"items.#.sku"}), `{"items":[{"sku":1},{"sku":2}]}`},
		{rs("R6.10"), req([]string{"items.#.sku"}, []string{"items.#.sku"}), `{"items":[]}`},
		{rs("R6.10"), req([]string{"items.#.sku"}, []string{"items.#.sku"}), `{"items":{}}`},
		{rs("R6.10", "R6.8"), req([]string{`a\.b.#.c`}, []string{`a\.b.#.c`}), `{"a.b":[{"c":1},{"d":1}]}`},
		{rs("R6.10"), req([]string{"a.#.b.#.c"}, []string{"a.#.b.#.c"}), `{"a":[{"b":[{"c":1},{}]},{"q":1}]}`},
		{rs("R6.10"), req([]string{"a.#.b.#.c"}, []string{"a.#.b.#.c"}), `{"a":[{"b":[{"c":1}]},{"q":1}]}`},
		{rs("R6.11"), req(nil, []string{"a"}), `{"a":1,"b":2}`},
		{rs("R6.11"), req(nil, []string{"a"}), `{"b":2}`},
		{rs("R6.11"), req(nil, []string{"a.b", "c"}), `{"a":{"b":null},"c":0}`},
		{rs("R6.11"), req(nil, []string{"a.b", "c"}), `{"a":{},"c":0}`},
		{rs("R6.11"), req(nil, []string{"items.#.sku"}), `{"items":[{"sku":1},{"x":1}]}`},
		{rs("R6.11"), req(nil, []string{"items.#.sku"}), `{"items":[{"sku":1},{"sku":2}]}`},
		{rs("R6.11"), req(nil, []string{"a"}), ``},
		{rs("R6.11", "R6.1"), fingerprint.Spec{Required: []string{"a"}, Ignore: []string{"b"}}, `{"a":1,"b":2}`},
	} {
		add(fmt.Sprintf("Required/%02d", i), c.rules, c.spec, body(c.body))
	}
}

// orNull is b, or null for no body.
func orNull(b string) string {
	if b == "" {
		return "null"
	}
	return b
}

func addSpecs(add addFunc, body bodyFunc) {
	rs := func(ids ...string) []string { return ids }
	bad := func(name string, rules []string, s fingerprint.Spec) { add("Spec/Invalid/"+name, rules, s, nil) }
	for _, m := range []string{"JCS", "Exact", "double", " exact", "decimal", "exact "} {
		bad("Numbers/"+m, rs("R2.1"), fingerprint.Spec{Numbers: m})
	}
	bad("IntentEndsInCount", rs("R2.3"), fingerprint.Spec{Intent: []string{"items.#"}})
	bad("IntentCount", rs("R2.3"), fingerprint.Spec{Intent: []string{"#"}})
	bad("IntentNestedCount", rs("R2.3"), fingerprint.Spec{Intent: []string{"a.#.b.#"}})
	for i, p := range []string{"items.#", "items.0", "a.b.1", "#", "a.#.b.0", "a.00"} {
		bad(fmt.Sprintf("IgnoreEnd/%d", i), rs("R2.4"), fingerprint.Spec{Ignore: []string{"ok", p}})
	}
	bad("Duplicate/Intent", rs("R2.5"), fingerprint.Spec{Intent: []string{"a", "b", "a"}})
	bad("Duplicate/Ignore", rs("R2.5"), fingerprint.Spec{Ignore: []string{"a.b", "c", "a.b"}})
	bad("Duplicate/IgnoreName", rs("R2.5"), fingerprint.Spec{Ignore: []string{"c", "c"}})
	bad("Duplicate/Required", rs("R2.5"), fingerprint.Spec{Intent: []string{"a"}, Required: []string{"a", "a"}})
	bad("Duplicate/RequiredAlone", rs("R2.5"), fingerprint.Spec{Required: []string{"a", "b", "a"}})
	var many []string
	for i := 0; i < 65; i++ {
		many = append(many, fmt.Sprintf("p%d.x", i))
	}
	bad("IgnorePaths65", rs("R2.6"), fingerprint.Spec{Ignore: many})
	add("Spec/IgnorePaths64", rs("R2.6"), fingerprint.Spec{Ignore: append(append([]string(nil), many[:64]...), "n1", "n2", "n3")}, body(`{"p0":{"x":1,"y":2},"p63":{"x":1},"n2":3,"k":4}`))
	bad("RequiredNotIntent", rs("R2.7"), fingerprint.Spec{Intent: []string{"a"}, Required: []string{"b"}})
	bad("RequiredOtherSpelling", rs("R2.7"), fingerprint.Spec{Intent: []string{"a"}, Required: []string{`\a`}})
	bad("RequiredEndsInCount", rs("R2.7"), fingerprint.Spec{Required: []string{"items.#"}})
	bad("RequiredEndsInCountWithIntent", rs("R2.7"), fingerprint.Spec{Intent: []string{"a"}, Required: []string{"items.#"}})
	for i, c := range []struct{ intent, ignore, required []string }{
		{[]string{"traceId"}, []string{"traceId"}, nil},
		{[]string{"a.traceId"}, []string{"traceId"}, nil},
		{[]string{"a.traceId.b"}, []string{"traceId"}, nil},
		{[]string{"a.#.traceId"}, []string{"traceId"}, nil},
		{[]string{`tr\aceId`}, []string{"traceId"}, nil},
		{[]string{"1"}, []string{`\1`}, nil},
		{[]string{"meta.sentAt"}, []string{"meta.sentAt"}, nil},
		{[]string{"meta.sentAt.x"}, []string{"meta.sentAt"}, nil},
		{[]string{"items.0.note"}, []string{"items.#.note"}, nil},
		{[]string{"items.#.note"}, []string{"items.0.note"}, nil},
		{[]string{`items.\0.note`}, []string{"items.0.note"}, nil},
		{[]string{"a.1"}, []string{`a.\1`}, nil},
		{[]string{"ok", "a.b"}, []string{"x.y", "a.b"}, nil},
		{nil, []string{"traceId"}, []string{"traceId"}},
		{nil, []string{"meta.sentAt"}, []string{"meta.sentAt.x"}},
		{nil, []string{"a.#.b"}, []string{"a.3.b"}},
	} {
		bad(fmt.Sprintf("Conflict/%02d", i), rs("R2.8"), fingerprint.Spec{Intent: c.intent, Ignore: c.ignore, Required: c.required})
	}
	for i, c := range []struct{ intent, ignore []string }{
		{[]string{"items.x.note"}, []string{"items.#.note"}},
		{[]string{"meta"}, []string{"meta.sentAt"}},
		{[]string{"a.#"[:1] + ".b"}, []string{"a.b.c"}},
		{[]string{`items.\#.note`}, []string{"items.#.note"}},
		{[]string{"items.1.note"}, []string{"items.0.note"}},
		{[]string{"traceIds"}, []string{"traceId"}},
	} {
		add(fmt.Sprintf("Spec/NoConflict/%02d", i), rs("R2.8"), fingerprint.Spec{Intent: c.intent, Ignore: c.ignore}, body(`{"items":[{"note":1}],"meta":{"sentAt":1,"k":2},"a":{"b":{"c":1,"d":2}},"traceIds":[1]}`))
	}
	for i, h := range [][]string{{""}, {"X A"}, {"X:A"}, {"é"}, {"X-A", "x-a"}, {"Host", "HOST"}, {"a\tb"}, {"X-A,"}, {"(x)"}} {
		bad(fmt.Sprintf("Headers/%d", i), rs("R2.9"), fingerprint.Spec{Headers: h})
	}
	tok := fingerprint.Spec{Headers: []string{"!#$%&'*+-.^_`|~", "X-9", "host"}}
	r := body(`{}`)
	r.Headers = map[string][]string{"!#$%&'*+-.^_`|~": {"1"}, "x-9": {"2"}, "Host": {"example.com"}}
	add("Spec/HeaderTokens", rs("R2.9", "R1.4"), tok, r)
	for i, q := range [][]string{{""}, {"a", "a"}, {"page", "x", "page"}} {
		bad(fmt.Sprintf("Query/%d", i), rs("R2.10"), fingerprint.Spec{Query: q})
	}
	r = body(`{}`)
	r.Query = map[string][]string{"a": {"1"}, "A": {"2"}, "a b": {"3"}, "é": {"4"}, "": {"5"}}
	add("Spec/QueryNames", rs("R2.10", "R1.7"), fingerprint.Spec{Query: []string{"a", "A", "a b", "é"}}, r)
	// The first problem is reported.
	for i, s := range []fingerprint.Spec{
		{Numbers: "x", Intent: []string{"a*"}},
		{Intent: []string{"ok", "a*"}, Ignore: []string{"b*"}},
		{Intent: []string{"a", "a", "b*"}},
		{Ignore: []string{"b*"}, Required: []string{"c*"}},
		{Ignore: []string{"x", "x"}, Required: []string{"c*"}},
		{Intent: []string{"a"}, Required: []string{"z", "a", "a"}},
		{Intent: []string{"x.a", "traceId"}, Ignore: []string{"traceId", "x.a"}},
		{Intent: []string{"traceId"}, Ignore: []string{"traceId"}, Headers: []string{"X A"}},
		{Headers: []string{"X A"}, Query: []string{""}},
		{Required: []string{"a", "traceId"}, Ignore: []string{"traceId"}, Headers: []string{""}},
		{Intent: []string{"b.x", "a"}, Ignore: []string{"x"}, Required: []string{"a"}},
	} {
		bad(fmt.Sprintf("Order/%02d", i), rs("R2.11"), s)
	}

	// The spec digest: a normalized document that lists order, header
	// case and the default number mode do not change.
	same := []fingerprint.Spec{
		{Intent: []string{"b", "a"}, Ignore: []string{"y.z", "x"}, Required: []string{"b", "a"}, Headers: []string{"X-B", "x-a"}, Query: []string{"q", "p"}},
		{Intent: []string{"a", "b"}, Ignore: []string{"x", "y.z"}, Required: []string{"a", "b"}, Headers: []string{"x-a", "X-B"}, Query: []string{"p", "q"}, Numbers: "exact"},
		{Intent: []string{"a", "b"}, Ignore: []string{"x", "y.z"}, Required: []string{"a", "b"}, Headers: []string{"X-A", "x-b"}, Query: []string{"p", "q"}},
	}
	r = body(`{"a":1,"b":2,"x":3,"y":{"z":4}}`)
	r.Headers = map[string][]string{"X-A": {"1"}, "X-B": {"2"}}
	r.Query = map[string][]string{"p": {"1"}, "q": {"2"}}
	for i, s := range same {
		add(fmt.Sprintf("Digest/Same/%d", i), rs("R8.1", "R8.2", "R8.3"), s, r)
	}
	for i, s := range []fingerprint.Spec{
		{},
		{Numbers: "exact"},
		{Numbers: "jcs"},
		{Intent: []string{"a"}},
		{Intent: []string{`\a`}},
		{Intent: []string{"a"}, Required: []string{"a"}},
		{Ignore: []string{"a"}},
		{Required: []string{"a"}},
		{Headers: []string{"A"}},
		{Query: []string{"A"}},
		{Query: []string{"a"}},
		{Intent: []string{"\u00e9", "z", "\U0001f600", "\uffff"}},
		{Ignore: []string{"é.x", "\U0001f600", "\uffff", "a\"b"}},
		{Intent: []string{`a\"b`, `c\\d`}},
	} {
		add(fmt.Sprintf("Digest/%02d", i), rs("R8.1", "R8.2", "R8.3", "R9.1", "R9.2"), s, body(`{"a":1}`))
	}
}

// addMore holds vectors added after the first published batch; new vectors
// go here, so that the files only grow at their ends.
func addMore(add addFunc, body bodyFunc, whole fingerprint.Spec) {
	rs := func(ids ...string) []string { return ids }
	add("Required/NoIntentInOrder", rs("R6.11"), fingerprint.Spec{Required: []string{"b", "a"}}, body(`{}`))
	add("Required/NoIntentInOrderReversed", rs("R6.11"), fingerprint.Spec{Required: []string{"a", "b"}}, body(`{}`))
	add("Required/IntentSorted", rs("R6.10"), fingerprint.Spec{Intent: []string{"b", "a"}, Required: []string{"b", "a"}}, body(`{}`))
	add("Spec/Invalid/Order/ConflictInOrder", rs("R2.11", "R2.8"), fingerprint.Spec{Intent: []string{"z.x", "a.x"}, Ignore: []string{"x"}}, nil)
	add("Spec/Invalid/Order/RequiredConflictInOrder", rs("R2.11", "R2.8"), fingerprint.Spec{Required: []string{"z.x", "a.x"}, Ignore: []string{"x"}}, nil)
	for _, b := range []struct{ name, body string }{
		{"ArrayClosedByBrace", `[}`},
		{"ObjectClosedByBracket", `{]`},
		{"Trux", `[trux]`},
		{"NumberThenLetter", `[1x]`},
		{"ExponentLetter", `[1ex]`},
		{"NameAfterValue", `{"a":1"b"}`},
		{"EmptyName", `{"":}`},
		{"ColonInArray", `[1:2]`},
	} {
		add("Body/Invalid/More/"+b.name+"/Whole", rs("R3.1", "R3.12", "R3.13"), whole, body(b.body))
	}
	for _, b := range []struct{ name, body string }{
		{"HighAtEndOfBody", `"\ud800`},
		{"HighThenBackslashAtEnd", `"\ud800\`},
		{"HighThenUAtEnd", `"\ud800\u`},
		{"HighThenShortAtEnd", `"\ud800\udc`},
		{"HighThenBadHex", `["\ud800\u12G4"]`},
		{"HighThenBadEscape", `["\ud800\x"]`},
		{"HighThenNewline", `"\ud800\n"`},
		{"LowThenBadHex", `["\udc00\u12G4"]`},
	} {
		add("Body/Invalid/Surrogate/"+b.name+"/Whole", rs("R3.6", "R3.12", "R3.13"), whole, body(b.body))
	}
}
