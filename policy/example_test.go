package policy_test

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/idemprint/idemprint/fingerprint"
	"github.com/idemprint/idemprint/policy"
)

const paymentsPolicy = `{
  "rules": [{
    "route": "POST /v1/payments",
    "fingerprint": {"ignore": ["traceId", "clientTimestamp"]},
    "on_mismatch": "reject",
    "store_intent": true
  }]
}`

// The story of the README: a client pays 10 EUR with a key, retries the
// same payment (re-encoded, with a new trace ID) and gets the stored answer,
// then sends 10,000 EUR with the same key by mistake and is refused.
func Example_keyReuseDifferentBody() {
	pol, err := policy.Parse([]byte(paymentsPolicy))
	if err != nil {
		panic(err)
	}
	rule, _ := pol.Match("POST", "/v1/payments")
	store := map[string]policy.Record{}
	now := time.Date(2025, 1, 15, 9, 30, 0, 0, time.UTC)

	read := func(sk string) *policy.Record {
		if r, ok := store[sk]; ok {
			return &r
		}
		return nil // also for "", the new identity of a rule without "new"
	}
	send := func(body string) policy.Decision {
		req, err := rule.NewRequest("acme", fingerprint.Request{
			Method: "POST",
			Path:   "/v1/payments",
			Header: http.Header{"Idempotency-Key": {"pay-7f3a"}},
			Body:   []byte(body),
		})
		if err != nil {
			panic(err)
		}
		pk, nk, _ := rule.StorageKeys(req)
		d, err := rule.Decide(req, read(pk), read(nk), now)
		if err != nil {
			panic(err)
		}
		if d.Action == policy.Execute { // the store is ours alone: the write cannot lose
			store[d.StorageKey] = *d.Reserve
			done, _ := rule.Complete(d.Reserve, policy.Response{Status: 201, Body: []byte(`{"id":"pay_1"}`)}, now)
			store[d.StorageKey] = done
		}
		return d
	}

	d := send(`{"amountCents":1000,"currency":"EUR","traceId":"4bf9"}`)
	fmt.Println("first: ", d.Action, d.Reason)

	now = now.Add(2 * time.Second)
	d = send(`{ "traceId": "00f0", "currency": "\u0045UR", "amountCents": 1000.0 }`)
	fmt.Println("retry: ", d.Action, d.Reason, d.Response.Status, string(d.Response.Body), d.Response.Header.Get("Idempotent-Replayed"))

	d = send(`{"amountCents":1000000,"currency":"EUR","traceId":"9e1f"}`)
	fmt.Println("reuse: ", d.Action, d.Reason, d.Response.Status, d.Response.Header.Get("Content-Type"))
	fmt.Println(string(d.Response.Body))
	// Output:
	// first:  execute first
	// retry:  replay retry 201 {"id":"pay_1"} true
	// reuse:  reject mismatch 422 application/problem+json
	// {"type":"https://idemprint.dev/problems/idempotency-key-reuse","title":"Idempotency key reused with a different request","status":422,"detail":"This key was first used with a request that differs at amountCents. Retry with the original request, or use a new key for a new operation.","differing_paths":["amountCents"]}
}

func ExampleParse() {
	_, err := policy.Parse([]byte(`{
  "rules": [
    {"route": "POST /v1/payments/{id}", "ttl": "-1h", "onMismatch": "replay"},
    {"route": "POST /v1/{resource}/capture", "cache": ["2xx", "201"]},
    {"route": "POST /v1/payments/{payment}"}
  ]
}`))
	var pe *policy.ParseError
	if errors.As(err, &pe) {
		for _, p := range pe.Findings {
			fmt.Printf("%s: %v\n", p.Pointer, p.Err)
		}
	}
	fmt.Println(errors.Is(err, policy.ErrUnknownField))
	// Output:
	// /rules/0/ttl: invalid duration "-1h": must be positive
	// /rules/0/onMismatch: unknown field "onMismatch" (did you mean "on_mismatch"?)
	// /rules/1/route: overlaps /rules/0 (POST /v1/payments/{id}): some paths match both and neither route is the more specific
	// /rules/1/cache/1: "201" is redundant: "2xx" holds it
	// /rules/2/route: unreachable: /rules/0 (POST /v1/payments/{id}) comes first and matches every path this route matches
	// true
}

func ExamplePolicy_Match() {
	pol, err := policy.Parse([]byte(`{
  "rules": [
    {"route": "POST /v1/accounts/{account}/transfers", "on_mismatch": "new"},
    {"route": "DELETE /v1/sessions/{id}"}
  ]
}`))
	if err != nil {
		panic(err)
	}
	for _, r := range []struct{ method, path string }{
		{"POST", "/v1/accounts/acc_1/transfers"},
		{"POST", "/v1/accounts/acc_1/transfers/"},
		{"DELETE", "/v1/sessions/s_9"},
		{"PATCH", "/v1/customers/c_2"},
		{"GET", "/v1/accounts/acc_1/transfers"},
	} {
		rule, ok := pol.Match(r.method, r.path)
		if !ok {
			fmt.Printf("%s %s: pass through\n", r.method, r.path)
			continue
		}
		fmt.Printf("%s %s: %s %s (%s)\n", r.method, r.path, rule.Pointer(), rule.Route(), rule.OnMismatch())
	}
	// Output:
	// POST /v1/accounts/acc_1/transfers: /rules/0 POST /v1/accounts/{account}/transfers (new)
	// POST /v1/accounts/acc_1/transfers/: /defaults POST * (reject)
	// DELETE /v1/sessions/s_9: /rules/1 DELETE /v1/sessions/{id} (reject)
	// PATCH /v1/customers/c_2: /defaults PATCH * (reject)
	// GET /v1/accounts/acc_1/transfers: pass through
}

// A store with conditional writes, and a request that loses the race to
// reserve its key: it decides again on the winner's record, which here
// holds another amount, so it is rejected rather than made to wait for (or
// replay) someone else's payment.
func ExampleRule_Decide() {
	rule, _ := mustParseExample(`{"rules": [{"route": "POST /v1/payments"}]}`).Match("POST", "/v1/payments")
	store := map[string]policy.Record{}
	write := func(rec *policy.Record) bool { // insert generation 1, else replace generation-1
		cur, ok := store[rec.StorageKey]
		if rec.Generation == 1 && ok || rec.Generation > 1 && (!ok || cur.Generation != rec.Generation-1) {
			return false
		}
		store[rec.StorageKey] = *rec
		return true
	}
	request := func(body string) policy.Request {
		req, _ := rule.NewRequest("acme", fingerprint.Request{Method: "POST", Path: "/v1/payments",
			Header: http.Header{"Idempotency-Key": {`"pay-7f3a"`}}, Body: []byte(body)})
		return req
	}
	now := time.Date(2025, 1, 15, 9, 30, 0, 0, time.UTC)
	a, b := request(`{"amountCents":1000}`), request(`{"amountCents":1000000}`)

	da, _ := rule.Decide(a, nil, nil, now) // both read: no record
	db, _ := rule.Decide(b, nil, nil, now)
	fmt.Println("a:", da.Action, "write:", write(da.Reserve))
	fmt.Println("b:", db.Action, "write:", write(db.Reserve))

	winner := store[db.StorageKey] // b reads again; the rule has no new identity
	db, _ = rule.Decide(b, &winner, nil, now)
	fmt.Println("b again:", db.Action, db.Reason, db.Response.Status)

	da, _ = rule.Decide(a, &winner, nil, now.Add(time.Second)) // a's own retry
	fmt.Println("a retried:", da.Action, da.Response.Status, "Retry-After:", da.Response.Header.Get("Retry-After"))
	// Output:
	// a: execute write: true
	// b: execute write: false
	// b again: reject mismatch 422
	// a retried: reject 409 Retry-After: 29
}

// A store that reserves in one step (insert when nothing binds the key)
// starts by deciding with no records: the decision gives the reservation
// to insert, or answers what needs no record.
func ExampleRule_Decide_firstReservation() {
	rule, _ := mustParseExample(`{"rules": [{"route": "POST /v1/payments"}]}`).Match("POST", "/v1/payments")
	now := time.Date(2025, 1, 15, 9, 30, 0, 0, time.UTC)
	for _, key := range []string{"pay-7f3a", ""} {
		h := http.Header{}
		if key != "" {
			h.Set("Idempotency-Key", key)
		}
		req, _ := rule.NewRequest("acme", fingerprint.Request{Method: "POST", Path: "/v1/payments", Header: h, Body: []byte(`{"amountCents":1000}`)})
		d, _ := rule.Decide(req, nil, nil, now)
		fmt.Println(d.Action, d.Reason, d.Response.Status, d.Reserve != nil && d.Reserve.State == policy.StateInFlight && d.Reserve.Generation == 1)
	}
	// Output:
	// execute first 0 true
	// reject missing-key 400 false
}

// Only cached statuses are stored; any other releases the reservation, so a
// retry executes again.
func ExampleRule_Complete() {
	rule, _ := mustParseExample(`{"rules": [{"route": "POST /v1/payments", "cache": ["2xx", "4xx", "!429"]}]}`).Match("POST", "/v1/payments")
	now := time.Date(2025, 1, 15, 9, 30, 0, 0, time.UTC)
	req, _ := rule.NewRequest("acme", fingerprint.Request{Method: "POST", Path: "/v1/payments",
		Header: http.Header{"Idempotency-Key": {"k"}}, Body: []byte(`{"amountCents":1000}`)})
	d, _ := rule.Decide(req, nil, nil, now)
	for _, status := range []int{201, 402, 429, 503} {
		rec, _ := rule.Complete(d.Reserve, policy.Response{Status: status}, now.Add(time.Second))
		next, _ := rule.Decide(req, &rec, nil, now.Add(2*time.Second))
		fmt.Printf("%d: stored as %v; a retry gets %v\n", status, rec.State, next.Action)
	}
	// Output:
	// 201: stored as completed; a retry gets replay
	// 402: stored as completed; a retry gets replay
	// 429: stored as none; a retry gets execute
	// 503: stored as none; a retry gets execute
}

// The storage key holds the tenant and the key's content, length-prefixed;
// the RFC 8941 string form of a key is the same key. A rule with a "new"
// resolution gives each request a second key, its new identity, which adds
// the fingerprint and the spec digest; a scoped rule adds its endpoint, the
// route with parameter names erased.
func ExampleRule_StorageKeys() {
	pol := mustParseExample(`{"rules": [
  {"route": "POST /v1/payments"},
  {"route": "POST /v1/accounts/{account}/transfers", "scope": {"route": true}, "on_mismatch": "new"}
]}`)
	rule, _ := pol.Match("POST", "/v1/payments")
	for _, r := range []policy.Request{
		{Tenant: "acme", Key: []string{"pay-7f3a"}},
		{Tenant: "acme", Key: []string{`"pay-7f3a"`}},
		{Tenant: "a:b", Key: []string{"c"}},
		{Tenant: "a", Key: []string{"b:c"}},
		{Tenant: "acme"},
		{Tenant: "acme", Key: []string{"k", "k"}},
	} {
		pk, nk, err := rule.StorageKeys(r)
		fmt.Printf("%q %q %v\n", pk, nk, err)
	}

	transfers, _ := pol.Match("POST", "/v1/accounts/acc_1/transfers")
	fr := fingerprint.Request{Method: "POST", Path: "/v1/accounts/acc_1/transfers",
		Header: http.Header{"Idempotency-Key": {"t-1"}}, Body: []byte(`{"amountCents":100}`)}
	req, _ := transfers.NewRequest("acme", fr)
	pk, nk, _ := transfers.StorageKeys(req)
	short := strings.NewReplacer(req.Fingerprint.String(), "FINGERPRINT", transfers.Fingerprinter().SpecDigest(), "SPEC-DIGEST")
	fmt.Printf("%q\n%q\n", pk, short.Replace(nk))
	// Output:
	// "idem1:4:acme:0::8:pay-7f3a" "" <nil>
	// "idem1:4:acme:0::8:pay-7f3a" "" <nil>
	// "idem1:3:a:b:0::1:c" "" <nil>
	// "idem1:1:a:0::3:b:c" "" <nil>
	// "" "" policy: the Idempotency-Key header is missing
	// "" "" policy: the Idempotency-Key header appears 2 times
	// "idem1:4:acme:30:POST /v1/accounts/{}/transfers:3:t-1"
	// "idem1:4:acme:30:POST /v1/accounts/{}/transfers:3:t-1:53:FINGERPRINT:50:SPEC-DIGEST"
}

// A deploy that scopes payments by route and generalizes refunds: stored
// payment records are orphaned (their retries would execute again), and
// refund retries are rejected as made on another endpoint.
func ExampleCompare() {
	prev := mustParseExample(`{"rules": [
  {"route": "POST /v1/payments"},
  {"route": "POST /v1/payments/{id}/refunds"}
]}`)
	next := mustParseExample(`{"rules": [
  {"route": "POST /v1/payments", "scope": {"route": true}},
  {"route": "POST /v1/{resource}/{id}/refunds"}
]}`)
	changes, err := policy.Compare(prev, next)
	if err != nil {
		panic(err)
	}
	for _, c := range changes {
		fmt.Printf("%s: %v\n", c.Route, c.Impact)
		for _, r := range c.Reasons {
			fmt.Println("   ", r)
		}
	}
	// Output:
	// POST /v1/payments: storage keys change
	//     scope.route changes from false to true: its records are orphaned, and a retry within the ttl (24h0m0s) executes again
	// POST /v1/{resource}/{id}/refunds: retries rejected
	//     the endpoint changes from POST /v1/payments/{}/refunds to POST /v1/{}/{}/refunds: a retry is rejected as made on another endpoint (422)
	// POST *: unchanged
	// PATCH *: unchanged
}

func mustParseExample(src string) *policy.Policy {
	p, err := policy.Parse([]byte(src))
	if err != nil {
		panic(err)
	}
	return p
}
