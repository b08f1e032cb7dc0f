package fingerprint_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/idemprint/idemprint/fingerprint"
)

// Compile a Spec once, then fingerprint every request. A retry that spells
// the same payment differently has the same fingerprint.
func Example() {
	f, err := fingerprint.Compile(fingerprint.Spec{
		Intent:   []string{"amountCents", "currency", "destination.iban"},
		Required: []string{"amountCents", "currency"},
		Ignore:   []string{"traceId"},
	})
	if err != nil {
		panic(err)
	}
	first, err := f.Sum(fingerprint.Request{
		Method: "POST",
		Path:   "/v1/accounts/acc_1/transfers",
		Body:   []byte(`{"amountCents":1000,"currency":"EUR","destination":{"iban":"DE89370400440532013000"},"traceId":"a1"}`),
	})
	if err != nil {
		panic(err)
	}
	retry, err := f.Sum(fingerprint.Request{
		Method: "POST",
		Path:   "/v1/accounts/acc_1/transfers",
		Body:   []byte(`{ "traceId": "b2", "destination": { "iban": "DE89370400440532013000" }, "currency": "\u0045UR", "amountCents": 1e3 }`),
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(first)
	fmt.Println(first == retry)

	_, err = f.Sum(fingerprint.Request{Method: "POST", Path: "/v1/accounts/acc_1/transfers", Body: []byte(`{"amountCents":1000}`)})
	fmt.Println(err, errors.Is(err, fingerprint.ErrMissingRequired))
	// Output:
	// v1:sha256:M-J4irQ0VrivWZzJwuJyHSCaI6D9z2Tdar8gxYGDMpI
	// true
	// fingerprint: body "currency": required value missing true
}

// AppendIntent returns the canonical document that Sum hashes: what counted,
// what was absent, and nothing else.
func ExampleFingerprinter_AppendIntent() {
	f, err := fingerprint.Compile(fingerprint.Spec{
		Intent:  []string{"items.#.sku", "items.#.qty", "coupon"},
		Ignore:  []string{"items.#.note"},
		Headers: []string{"X-Account"},
	})
	if err != nil {
		panic(err)
	}
	doc, err := f.AppendIntent(nil, fingerprint.Request{
		Method: "POST",
		Path:   "/v1/orders",
		Header: http.Header{"X-Account": {"acc_1"}, "User-Agent": {"app/1.2"}},
		Body:   []byte(`{"items":[{"sku":"A","qty":2,"note":"gift"},{"sku":"B"}],"traceId":"t-9"}`),
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(string(doc))
	// Output:
	// {"absent":{"coupon":["coupon"],"items.#.qty":["items.1.qty"]},"headers":{"x-account":["acc_1"]},"intent":{"items.#.qty":[2],"items.#.sku":["A","B"]},"method":"POST","path":"/v1/orders","query":{}}
}

// SumIntent returns the fingerprint and the intent document together, as a
// record that keeps the intent needs them, building the document once.
func ExampleFingerprinter_SumIntent() {
	f, err := fingerprint.Compile(fingerprint.Spec{Intent: []string{"amountCents", "currency"}})
	if err != nil {
		panic(err)
	}
	fp, doc, err := f.SumIntent(nil, fingerprint.Request{
		Method: "POST",
		Path:   "/v1/payments",
		Body:   []byte(`{"currency":"EUR","amountCents":1000,"traceId":"t-9"}`),
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(fp)
	fmt.Println(string(doc))
	// Output:
	// v1:sha256:NTuqpwjo84uG5mZpc_BMx_usww6CAfX1kNy8NYNysZY
	// {"absent":{},"headers":{},"intent":{"amountCents":1000,"currency":"EUR"},"method":"POST","path":"/v1/payments","query":{}}
}

// Diff explains why two requests have different fingerprints.
func ExampleDiff() {
	f, err := fingerprint.Compile(fingerprint.Spec{Intent: []string{"items.#.sku", "items.#.qty", "shipping"}})
	if err != nil {
		panic(err)
	}
	a, _ := f.AppendIntent(nil, fingerprint.Request{Method: "POST", Path: "/v1/orders",
		Body: []byte(`{"items":[{"sku":"A","qty":1},{"sku":"B"}],"shipping":{"speed":"express","to":"DE"}}`)})
	b, _ := f.AppendIntent(nil, fingerprint.Request{Method: "PUT", Path: "/v1/orders",
		Body: []byte(`{"items":[{"sku":"A"},{"sku":"B","qty":1}],"shipping":{"speed":"standard","to":"DE"}}`)})
	diffs, err := fingerprint.Diff(a, b)
	if err != nil {
		panic(err)
	}
	for _, d := range diffs {
		fmt.Printf("%s %s: %s -> %s", d.Part, d.Path, d.First, d.Second)
		if d.FirstAbsent != nil || d.SecondAbsent != nil {
			fmt.Printf(" (absent %v -> %v)", d.FirstAbsent, d.SecondAbsent)
		}
		fmt.Println()
	}
	// Output:
	// method : "POST" -> "PUT"
	// body items.#.qty: [1] -> [1] (absent [items.1.qty] -> [items.0.qty])
	// body shipping.speed: "express" -> "standard"
}

// Parse reads a stored fingerprint back; anything but the version 1 text
// form is rejected.
func ExampleParse() {
	fp, err := fingerprint.Parse("v1:sha256:M-J4irQ0VrivWZzJwuJyHSCaI6D9z2Tdar8gxYGDMpI")
	fmt.Println(fp, err)

	_, err = fingerprint.Parse("v2:sha256:M-J4irQ0VrivWZzJwuJyHSCaI6D9z2Tdar8gxYGDMpI")
	fmt.Println(errors.Is(err, fingerprint.ErrInvalidFingerprint))
	// Output:
	// v1:sha256:M-J4irQ0VrivWZzJwuJyHSCaI6D9z2Tdar8gxYGDMpI <nil>
	// true
}

// SumHTTP fingerprints an *http.Request in a middleware and leaves the body
// for the handler.
func ExampleFingerprinter_SumHTTP() {
	f, err := fingerprint.Compile(fingerprint.Spec{
		Intent:  []string{"amountCents", "currency"},
		Headers: []string{"X-Account"},
		Query:   []string{"dryRun"},
	})
	if err != nil {
		panic(err)
	}
	handler := func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		fmt.Printf("handler reads %s\n", body)
	}
	middleware := func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, 1<<20)
		fp, err := f.SumHTTP(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		fmt.Println("fingerprint", fp)
		handler(w, r)
	}

	r := httptest.NewRequest("POST", "/v1/accounts/acc_1/transfers?dryRun=false&utm_source=mail", strings.NewReader(`{"amountCents":1000,"currency":"EUR"}`))
	r.Header.Set("x-account", "acc_1")
	middleware(httptest.NewRecorder(), r)
	// Output:
	// fingerprint v1:sha256:Uw3rfnuYVvPsrifrh8wHvDN6BB81HQU6jf1GheCOCUw
	// handler reads {"amountCents":1000,"currency":"EUR"}
}

// HTTPRequest builds the Request a server fingerprints: the escaped path
// (the policy matches the decoded one), the parsed query and, because the
// Spec declares it, the Host. A tool that builds the same *http.Request
// computes the same fingerprint as the server.
func ExampleFingerprinter_HTTPRequest() {
	f, err := fingerprint.Compile(fingerprint.Spec{
		Intent:  []string{"amountCents"},
		Headers: []string{"Host"},
		Query:   []string{"dryRun"},
	})
	if err != nil {
		panic(err)
	}
	r := httptest.NewRequest("POST", "http://api.example.com/v1/accounts/acc%201/transfers?dryRun=false&utm_source=mail", nil)
	req, err := f.HTTPRequest(r, []byte(`{"amountCents":1000,"traceId":"t-1"}`))
	if err != nil {
		panic(err)
	}
	fmt.Println("match:", r.URL.Path) // what policy.Match is given
	doc, err := f.AppendIntent(nil, req)
	if err != nil {
		panic(err)
	}
	fmt.Println("intent:", string(doc))

	r = httptest.NewRequest("POST", "/v1/refunds?dryRun=%zz", nil)
	_, err = f.HTTPRequest(r, nil)
	fmt.Println(err)
	// Output:
	// match: /v1/accounts/acc 1/transfers
	// intent: {"absent":{},"headers":{"host":["api.example.com"]},"intent":{"amountCents":1000},"method":"POST","path":"/v1/accounts/acc%201/transfers","query":{"dryRun":["false"]}}
	// fingerprint: query: invalid request: invalid URL escape "%zz"
}

// The story of an idempotency key reused for another payment: a retry of a
// 10 EUR payment, re-spelled by another SDK with a new trace ID, is the same
// operation; the same key with 10,000 EUR is not, and Diff says why.
func Example_keyReuseDifferentBody() {
	f, err := fingerprint.Compile(fingerprint.Spec{
		Intent: []string{"amountCents", "currency", "destination.iban"},
		Ignore: []string{"traceId", "clientTimestamp"},
	})
	if err != nil {
		panic(err)
	}
	request := func(body string) fingerprint.Request {
		return fingerprint.Request{Method: "POST", Path: "/v1/accounts/acc_1/transfers", Body: []byte(body)}
	}
	original := request(`{"amountCents":1000,"currency":"EUR","destination":{"iban":"DE89370400440532013000"},"traceId":"7f3a","clientTimestamp":1714557600}`)
	retry := request(`{"destination":{"iban":"DE89370400440532013000"},"currency":"EUR","amountCents":1000.0,"traceId":"c0de","clientTimestamp":1714557631}`)
	reuse := request(`{"amountCents":1000000,"currency":"EUR","destination":{"iban":"DE89370400440532013000"},"traceId":"9b1e"}`)

	stored, _ := f.Sum(original)
	fp, _ := f.Sum(retry)
	fmt.Println("retry:", fp == stored)
	fp, _ = f.Sum(reuse)
	fmt.Println("reuse:", fp == stored)

	a, _ := f.AppendIntent(nil, original)
	b, _ := f.AppendIntent(nil, reuse)
	diffs, _ := fingerprint.Diff(a, b)
	for _, d := range diffs {
		fmt.Printf("%s: %s -> %s\n", d.Path, d.First, d.Second)
	}
	// Output:
	// retry: true
	// reuse: false
	// amountCents: 1000 -> 1000000
}
