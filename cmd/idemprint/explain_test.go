package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/idemprint/idemprint/fingerprint"
	"github.com/idemprint/idemprint/policy"
)

const (
	seedPolicy   = "../../testdata/policy/payments.json"
	pay10        = "../../testdata/requests/payment-10eur.json"
	pay10Retry   = "../../testdata/requests/payment-10eur-retry.json"
	pay10000     = "../../testdata/requests/payment-10000eur.json"
	brokenPolicy = "../../testdata/policy/broken.json"
)

// fp computes the fingerprint explain must print for file under the
// policy's rule for method and path, with the given headers.
func fp(t *testing.T, policyFile, method, path, file string, header http.Header) string {
	t.Helper()
	sum, err := testRule(t, policyFile, method, path).Fingerprinter().Sum(fingerprint.Request{Method: method, Path: path, Header: header, Body: readFile(t, file)})
	if err != nil {
		t.Fatal(err)
	}
	return sum.String()
}

// testRule returns the rule of the policy in policyFile for method and path.
func testRule(t *testing.T, policyFile, method, path string) *policy.Rule {
	t.Helper()
	pol, err := policy.Parse(readFile(t, policyFile))
	if err != nil {
		t.Fatal(err)
	}
	rule, ok := pol.Match(method, path)
	if !ok {
		t.Fatalf("no rule for %s %s", method, path)
	}
	return rule
}

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestExplain(t *testing.T) {
	refund1 := writeTemp(t, "refund1.json", `{"paymentId": "pay_1", "amountCents": 500}`)
	refund2 := writeTemp(t, "refund2.json", `{"paymentId": "pay_1", "amountCents": 700}`)
	newPolicy := writeTemp(t, "new.json", `{"rules": [{"route": "POST /v1/payments", "on_mismatch": "new"}]}`)
	transfer1 := writeTemp(t, "transfer1.json", `{"amountCents": 100, "currency": "EUR", "counterparty": {"iban": "FR7630006000011234567890189"}, "memo": "rent"}`)
	transfer2 := writeTemp(t, "transfer2.json", `{"amountCents": 100, "currency": "EUR", "counterparty": {"iban": "DE89370400440532013000"}, "memo": "rent"}`)
	apiV2 := http.Header{"X-Api-Version": {"2"}}
	shortKeys := writeTemp(t, "short.json", `{"rules": [{"route": "POST /v1/payments", "key": {"max_length": 8}}]}`)
	uuidKeys := writeTemp(t, "uuid.json", `{"rules": [{"route": "POST /v1/payments", "key": {"syntax": "uuid"}}]}`)
	orders := writeTemp(t, "orders.json", `{"rules": [{"route": "POST /v1/orders", "fingerprint": {"intent": ["items.#.sku", "customer\\.id"]}}]}`)
	order1 := writeTemp(t, "order1.json", `{"customer.id": "c1", "items": [{"sku": "A", "note": "gift"}, {"sku": "B"}], "traceId": "t1"}`)
	order2 := writeTemp(t, "order2.json", `{"customer.id": "c1", "items": [{"sku": "C", "note": "gift"}, {"sku": "B", "note": "x"}], "traceId": "t2"}`)
	order3 := writeTemp(t, "order3.json", `{"customer.id": "c2", "items": [{"sku": "A"}, {"sku": "B"}, {"sku": "D"}]}`)

	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stdout string
	}{{
		name: "MainJob/Conflict",
		args: []string{"--policy", seedPolicy, "--route", "POST /v1/payments", pay10, pay10000},
		code: 1,
		stdout: `rule    /rules/0 POST /v1/payments (on_mismatch reject 422)
first   ` + pay10 + `
        ` + fp(t, seedPolicy, "POST", "/v1/payments", pay10, nil) + `
        execute → 201, stored
second  ` + pay10000 + `
        ` + fp(t, seedPolicy, "POST", "/v1/payments", pay10000, nil) + `
        conflict → 422 idempotency_key_reuse
        amountCents: 1000 → 1000000
        ignored by the rule: clientTimestamp, traceId
`,
	}, {
		name: "MainJob/Retry",
		args: []string{"--policy", seedPolicy, "--route", "POST /v1/payments", pay10, pay10Retry},
		code: 0,
		stdout: `rule    /rules/0 POST /v1/payments (on_mismatch reject 422)
first   ` + pay10 + `
        ` + fp(t, seedPolicy, "POST", "/v1/payments", pay10, nil) + `
        execute → 201, stored
second  ` + pay10Retry + `
        ` + fp(t, seedPolicy, "POST", "/v1/payments", pay10, nil) + `
        retry → replay 201
        ignored by the rule: clientTimestamp, traceId
`,
	}, {
		name: "Replay/OnMismatch",
		args: []string{"--policy", seedPolicy, "--route", "POST /v1/refunds", refund1, refund2},
		code: 1,
		stdout: `rule    /rules/2 POST /v1/refunds (on_mismatch replay)
first   ` + refund1 + `
        ` + fp(t, seedPolicy, "POST", "/v1/refunds", refund1, nil) + `
        execute → 201, stored
second  ` + refund2 + `
        ` + fp(t, seedPolicy, "POST", "/v1/refunds", refund2, nil) + `
        conflict → replay 201 (on_mismatch replay: FIRST's response, not SECOND's)
        amountCents: 500 → 700
`,
	}, {
		name: "New/OnMismatch",
		args: []string{"--policy", newPolicy, "--route", "POST /v1/payments", "--tenant", "acme", pay10, pay10Retry},
		code: 1,
		stdout: `rule    /rules/0 POST /v1/payments (on_mismatch new)
first   ` + pay10 + `
        ` + fp(t, newPolicy, "POST", "/v1/payments", pay10, nil) + `
        execute → 201, stored
second  ` + pay10Retry + `
        ` + fp(t, newPolicy, "POST", "/v1/payments", pay10Retry, nil) + `
        conflict → execute as a new operation (on_mismatch new)
        clientTimestamp: "2025-01-15T09:30:00Z" → "2025-01-15T09:30:41.207Z"
        traceId: "4bf92f3577b34da6a3ce929d0e0e4736" → "00f067aa0ba902b7e3a1c4d5f6a7b8c9"
`,
	}, {
		name: "Uncached/RetryExecutesAgain",
		args: []string{"--policy", seedPolicy, "--route", "POST /v1/payments", "--status", "503", pay10, pay10Retry},
		code: 0,
		stdout: `rule    /rules/0 POST /v1/payments (on_mismatch reject 422)
first   ` + pay10 + `
        ` + fp(t, seedPolicy, "POST", "/v1/payments", pay10, nil) + `
        execute → 503, not stored: the rule does not cache it, so the key is released
second  ` + pay10Retry + `
        ` + fp(t, seedPolicy, "POST", "/v1/payments", pay10, nil) + `
        retry → execute again
        ignored by the rule: clientTimestamp, traceId
`,
	}, {
		name: "Transfers/PathParamAndHeader",
		args: []string{"--policy", seedPolicy, "--route", "POST /v1/accounts/acc_1/transfers", "--header", "X-Api-Version: 2", transfer1, transfer2},
		code: 1,
		stdout: `rule    /rules/1 POST /v1/accounts/{account}/transfers (on_mismatch reject 409)
first   ` + transfer1 + `
        ` + fp(t, seedPolicy, "POST", "/v1/accounts/acc_1/transfers", transfer1, apiV2) + `
        execute → 201, stored
second  ` + transfer2 + `
        ` + fp(t, seedPolicy, "POST", "/v1/accounts/acc_1/transfers", transfer2, apiV2) + `
        conflict → 409 idempotency_key_reuse
        counterparty.iban: "FR7630006000011234567890189" → "DE89370400440532013000"
`,
	}, {
		name: "KeySyntax/ShortPrintable",
		args: []string{"--policy", shortKeys, "--route", "POST /v1/payments", pay10, pay10000},
		code: 1,
		stdout: `rule    /rules/0 POST /v1/payments (on_mismatch reject 422)
first   ` + pay10 + `
        ` + fp(t, shortKeys, "POST", "/v1/payments", pay10, nil) + `
        execute → 201, stored
second  ` + pay10000 + `
        ` + fp(t, shortKeys, "POST", "/v1/payments", pay10000, nil) + `
        conflict → 422 idempotency_key_reuse
        amountCents: 1000 → 1000000
        clientTimestamp: "2025-01-15T09:30:00Z" → "2025-01-15T09:31:02Z"
        traceId: "4bf92f3577b34da6a3ce929d0e0e4736" → "9e1f4c2ab8d34e55a0c6f7e8d9b0a1c2"
`,
	}, {
		name: "KeySyntax/UUID",
		args: []string{"--policy", uuidKeys, "--route", "POST /v1/payments", pay10, pay10},
		code: 0,
		stdout: `rule    /rules/0 POST /v1/payments (on_mismatch reject 422)
first   ` + pay10 + `
        ` + fp(t, uuidKeys, "POST", "/v1/payments", pay10, nil) + `
        execute → 201, stored
second  ` + pay10 + `
        ` + fp(t, uuidKeys, "POST", "/v1/payments", pay10, nil) + `
        retry → replay 201
`,
	}, {
		name: "Hash/ChangedElementIsNotIgnored",
		args: []string{"--policy", orders, "--route", "POST /v1/orders", order1, order2},
		code: 1,
		stdout: `rule    /rules/0 POST /v1/orders (on_mismatch reject 422)
first   ` + order1 + `
        ` + fp(t, orders, "POST", "/v1/orders", order1, nil) + `
        execute → 201, stored
second  ` + order2 + `
        ` + fp(t, orders, "POST", "/v1/orders", order2, nil) + `
        conflict → 422 idempotency_key_reuse
        items.#.sku: ["A","B"] → ["C","B"]
        ignored by the rule: items.1.note, traceId
`,
	}, {
		name: "Hash/LongerArrayAndEscapedName",
		args: []string{"--policy", orders, "--route", "POST /v1/orders", order1, order3},
		code: 1,
		stdout: `rule    /rules/0 POST /v1/orders (on_mismatch reject 422)
first   ` + order1 + `
        ` + fp(t, orders, "POST", "/v1/orders", order1, nil) + `
        execute → 201, stored
second  ` + order3 + `
        ` + fp(t, orders, "POST", "/v1/orders", order3, nil) + `
        conflict → 422 idempotency_key_reuse
        customer\.id: "c1" → "c2"
        items.#.sku: ["A","B"] → ["A","B","D"]
        ignored by the rule: traceId
`,
	}, {
		name: "NoRule/PassThrough",
		args: []string{"--policy", seedPolicy, "--route", "GET /v1/payments", pay10, pay10Retry},
		code: 1,
		stdout: `rule    none: GET /v1/payments matches no rule of ` + seedPolicy + `
second  not a retry → pass through: both requests execute, nothing is deduplicated
`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := runExplain(tc.args, &stdout, &stderr)
			if code != tc.code {
				t.Errorf("runExplain(%q) = %d, want %d; stderr:\n%s", tc.args, code, tc.code, stderr.String())
			}
			if diff := cmp.Diff(tc.stdout, stdout.String()); diff != "" {
				t.Errorf("runExplain(%q) stdout mismatch (-want +got):\n%s", tc.args, diff)
			}
			if stderr.Len() != 0 {
				t.Errorf("runExplain(%q) stderr = %q, want none", tc.args, stderr.String())
			}
		})
	}
}

func TestExplainJSON(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := runExplain([]string{"--json", "--policy", seedPolicy, "--route", "POST /v1/payments", pay10, pay10000}, &stdout, &stderr)
	if code != 1 {
		t.Fatalf("runExplain --json = %d, want 1; stderr: %s", code, stderr.String())
	}
	type step struct {
		File, Fingerprint, Action, Reason string
		Status                            int
		Stored                            bool
		Problem                           struct {
			Type, Title, Detail string
			Status              int
			DifferingPaths      []string `json:"differing_paths"`
		}
	}
	var got struct {
		Policy, Route string
		Rule          struct {
			Pointer, Route string
			OnMismatch     string `json:"on_mismatch"`
			MismatchStatus int    `json:"mismatch_status"`
		}
		First, Second step
		Retry         bool
		Differences   []struct {
			Path          string
			First, Second json.RawMessage
		}
		Ignored []string
	}
	dec := json.NewDecoder(&stdout)
	dec.DisallowUnknownFields() // the struct lists the whole output
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("output is not the documented JSON: %v\n%s", err, stdout.String())
	}
	if got.Policy != seedPolicy || got.Route != "POST /v1/payments" || got.Rule.Pointer != "/rules/0" || got.Rule.Route != "POST /v1/payments" || got.Rule.OnMismatch != "reject" {
		t.Errorf("policy or rule wrong: %q %q %+v", got.Policy, got.Route, got.Rule)
	}
	if got.Rule.MismatchStatus != 422 || got.First.Action != "execute" || got.First.Status != 201 || !got.First.Stored {
		t.Errorf("rule or first step wrong: %+v %+v", got.Rule, got.First)
	}
	if got.Second.Action != "reject" || got.Second.Reason != "mismatch" || got.Second.Status != 422 ||
		got.Second.Problem.Type != policy.TypeKeyReuse || got.Second.Problem.Status != 422 ||
		!cmp.Equal(got.Second.Problem.DifferingPaths, []string{"amountCents"}) {
		t.Errorf("second step wrong: %+v", got.Second)
	}
	if got.Second.Fingerprint != fp(t, seedPolicy, "POST", "/v1/payments", pay10000, nil) {
		t.Errorf("second fingerprint = %s", got.Second.Fingerprint)
	}
	if got.Retry || len(got.Differences) != 1 || got.Differences[0].Path != "amountCents" ||
		string(got.Differences[0].First) != "1000" || string(got.Differences[0].Second) != "1000000" {
		t.Errorf("differences wrong: retry %v, %+v", got.Retry, got.Differences)
	}
	if !cmp.Equal(got.Ignored, []string{"clientTimestamp", "traceId"}) {
		t.Errorf("ignored = %q", got.Ignored)
	}
}

func TestExplainErrors(t *testing.T) {
	notJSON := writeTemp(t, "bad.json", "{\"amountCents\": 1000,\n \"amountCents\": 1000000}")
	noIBAN := writeTemp(t, "noiban.json", `{"amountCents": 1000, "currency": "EUR"}`)
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stderr string // a substring
	}{
		{"Usage/NoArgs", nil, 2, "usage: idemprint explain"},
		{"Usage/OneFile", []string{"--policy", seedPolicy, "--route", "POST /v1/payments", pay10}, 2, "usage: idemprint explain"},
		{"Usage/NoPolicy", []string{"--route", "POST /v1/payments", pay10, pay10}, 2, "usage: idemprint explain"},
		{"Usage/NoRoute", []string{"--policy", seedPolicy, pay10, pay10}, 2, "usage: idemprint explain"},
		{"Usage/BadRoute", []string{"--policy", seedPolicy, "--route", "/v1/payments", pay10, pay10}, 2, `--route "/v1/payments"`},
		{"Usage/Status", []string{"--policy", seedPolicy, "--route", "POST /v1/payments", "--status", "102", pay10, pay10}, 2, "--status"},
		{"Usage/Header", []string{"--policy", seedPolicy, "--route", "POST /v1/payments", "--header", "nocolon", pay10, pay10}, 2, `want "Name: value"`},
		{"Policy/Missing", []string{"--policy", "nope.json", "--route", "POST /v1/payments", pay10, pay10}, 2, "no such file"},
		{"Policy/Problems", []string{"--policy", brokenPolicy, "--route", "POST /v1/payments", pay10, pay10}, 1,
			"idemprint: " + brokenPolicy + ":3:12 (byte 29) at /defaults/ttl: invalid duration"},
		{"Body/Missing", []string{"--policy", seedPolicy, "--route", "POST /v1/payments", pay10, "nope.json"}, 2, "no such file"},
		{"Body/DuplicateName", []string{"--policy", seedPolicy, "--route", "POST /v1/payments", pay10, notJSON}, 1, notJSON + ":2:2 (byte 23) at /amountCents: "},
		{"Body/MissingRequired", []string{"--policy", seedPolicy, "--route", "POST /v1/payments", noIBAN, pay10}, 1, "destination.iban"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := runExplain(tc.args, &stdout, &stderr); code != tc.code {
				t.Errorf("runExplain(%q) = %d, want %d", tc.args, code, tc.code)
			}
			if !strings.Contains(stderr.String(), tc.stderr) {
				t.Errorf("runExplain(%q) stderr = %q, want it to contain %q", tc.args, stderr.String(), tc.stderr)
			}
			if stdout.Len() != 0 {
				t.Errorf("runExplain(%q) stdout = %q, want none", tc.args, stdout.String())
			}
		})
	}
	t.Run("Policy/EveryProblem", func(t *testing.T) {
		var stdout, stderr bytes.Buffer
		runExplain([]string{"--policy", brokenPolicy, "--route", "POST /v1/payments", pay10, pay10}, &stdout, &stderr)
		if n := strings.Count(stderr.String(), "\n"); n != 7 {
			t.Errorf("explain printed %d problem lines, want the policy's 7:\n%s", n, stderr.String())
		}
	})
}

// TestExplainThroughRun checks that run dispatches to explain: the README's
// main job.
func TestExplainThroughRun(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run([]string{"explain", "--policy", seedPolicy, "--route", "POST /v1/payments", pay10, pay10000}, nil, &stdout, &stderr)
	if code != 1 || !strings.Contains(stdout.String(), "conflict → 422 idempotency_key_reuse\n        amountCents: 1000 → 1000000\n") {
		t.Errorf("run explain = %d:\n%s%s", code, stdout.String(), stderr.String())
	}
}

// TestExplainFirstDecision checks that explain refuses to explain when FIRST,
// meeting no record, is not executed: that is explain's own error.
func TestExplainFirstDecision(t *testing.T) {
	pol, err := policy.Parse([]byte(`{"rules": [{"route": "POST /v1/payments"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	rule, _ := pol.Match("POST", "/v1/payments")
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		req  policy.Request
	}{
		{"MalformedKey", policy.Request{Tenant: "t", Key: []string{"a", "b"}}},
		{"MissingKey", policy.Request{Tenant: "t"}},
		{"NoTenant", policy.Request{Key: []string{"k"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if d, err := decideFirst(rule, tc.req, t0); err == nil {
				t.Errorf("decideFirst = %v %v, want an error", d.Action, d.Reason)
			}
		})
	}
	fr := fingerprint.Request{Method: "POST", Path: "/v1/payments", Header: http.Header{}, Body: []byte(`{"a":1}`)}
	req, err := keyedRequest(rule, "t", fr)
	if err != nil {
		t.Fatal(err)
	}
	if d, err := decideFirst(rule, req, t0); err != nil || d.Action != policy.Execute {
		t.Errorf("decideFirst = %v, %v; want execute", d.Action, err)
	}
}

func TestProblemName(t *testing.T) {
	for typ, want := range map[string]string{
		policy.TypeKeyReuse:    "idempotency_key_reuse",
		policy.TypeInFlight:    "idempotency_key_in_flight",
		policy.TypeSpecChanged: "idempotency_spec_changed",
		policy.TypeOtherRoute:  "idempotency_key_other_route",
	} {
		if got := problemName(typ); got != want {
			t.Errorf("problemName(%q) = %q, want %q", typ, got, want)
		}
	}
}

func TestRelated(t *testing.T) {
	for _, tc := range []struct {
		concrete, intent string
		want             bool
		reason           string
	}{
		{"amountCents", "amountCents", true, "the path itself"},
		{"destination.iban", "destination", true, "below an intent path"},
		{"items", "items.#.sku", true, "an array that holds the intent path"},
		{"items.0.sku", "items.#.sku", true, `"#" matches every index`},
		{"items.12.sku", "items.#.sku", true, `"#" matches every index`},
		{"items.1.note", "items.#.sku", false, "another member of the element"},
		{"items.a.sku", "items.#.sku", false, `"#" matches indexes, not member names`},
		{"items.01.sku", "items.#.sku", false, "not an index as Diff writes one"},
		{`items.\#.sku`, "items.#.sku", false, `"\#" is a member named "#"`},
		{`customer\.id`, `customer\.id`, true, "escaped dots do not split"},
		{"customer.id", `customer\.id`, false, "a member customer with a member id is another path"},
		{"amount", "amountCents", false, "a prefix of a name is not a prefix of the path"},
	} {
		if got := related(tc.concrete, tc.intent); got != tc.want {
			t.Errorf("related(%q, %q) = %v, want %v: %s", tc.concrete, tc.intent, got, tc.want, tc.reason)
		}
	}
}

// TestExplainJSONIgnoredHash checks that --json lists the same ignored
// paths as the text: an element that changed an intent path through "#" is
// not among them.
func TestExplainJSONIgnoredHash(t *testing.T) {
	orders := writeTemp(t, "orders.json", `{"rules": [{"route": "POST /v1/orders", "fingerprint": {"intent": ["items.#.sku"]}}]}`)
	order1 := writeTemp(t, "order1.json", `{"items": [{"sku": "A"}, {"sku": "B"}], "traceId": "t1"}`)
	order2 := writeTemp(t, "order2.json", `{"items": [{"sku": "C"}, {"sku": "B", "note": "x"}], "traceId": "t2"}`)
	got := runCLI([]string{"explain", "--json", "--policy", orders, "--route", "POST /v1/orders", order1, order2}, "")
	var ex struct{ Ignored []string }
	if err := json.Unmarshal([]byte(got.Stdout), &ex); err != nil || got.Code != 1 {
		t.Fatalf("explain --json = %+v: %v", got, err)
	}
	if diff := cmp.Diff([]string{"items.1.note", "traceId"}, ex.Ignored); diff != "" {
		t.Errorf("ignored mismatch (-want +got):\n%s", diff)
	}
}
