package policy_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/idemprint/idemprint/policy"
)

// change is a RouteChange reduced to what the table checks.
type change struct {
	Route      string
	Ungoverned bool
	Impact     policy.Impact
	From       string
	Reason     string // a substring of the reasons
}

func TestCompare(t *testing.T) {
	const base = `{"defaults": {"methods": ["POST"]}, "rules": [
  {"route": "POST /v1/payments", "ttl": "24h"},
  {"route": "POST /v1/payments/{id}/refunds"}
]}`
	replace := func(old, new string) string { return strings.Replace(base, old, new, 1) }
	unchanged := []change{
		{Route: "POST /v1/payments"},
		{Route: "POST /v1/payments/{id}/refunds"},
		{Route: "POST *"},
	}
	with := func(i int, c change) []change {
		out := append([]change(nil), unchanged...)
		out[i] = c
		return out
	}
	for _, tc := range []struct {
		name, prev, next string
		want             []change
	}{
		{"Same", base, base, unchanged},
		{"SettingsForNewRecords", base, replace(`"ttl": "24h"`, `"ttl": "48h", "lease": "10s", "cache": ["2xx", "404"], "replay_header": "", "wait": "5s", "exclude_headers": ["X-Request-Id"]`), unchanged},
		{"ParameterRenamed", base, replace(`{id}`, `{payment}`), with(1, change{Route: "POST /v1/payments/{payment}/refunds"})},

		{"Keys/ScopeRoute", base, replace(`"ttl": "24h"`, `"scope": {"route": true}`),
			with(0, change{Route: "POST /v1/payments", Impact: policy.KeysChange, From: "POST /v1/payments", Reason: "scope.route changes from false to true: its records are orphaned, and a retry within the ttl (24h0m0s) executes again"})},
		{"Keys/Header", base, replace(`"ttl": "24h"`, `"key": {"header": "X-Key"}`),
			with(0, change{Route: "POST /v1/payments", Impact: policy.KeysChange, From: "POST /v1/payments", Reason: "key.header changes from Idempotency-Key to X-Key"})},
		{"Keys/HeaderCase", base, replace(`"ttl": "24h"`, `"key": {"header": "idempotency-key"}`), unchanged},
		{"Keys/Syntax", base, replace(`"ttl": "24h"`, `"key": {"syntax": "uuid"}`),
			with(0, change{Route: "POST /v1/payments", Impact: policy.KeysChange, From: "POST /v1/payments", Reason: `key.syntax changes from "printable" to "uuid"`})},
		{"Keys/ScopedEndpoint", replace(`"ttl": "24h"`, `"scope": {"route": true}`), `{"defaults": {"methods": ["POST"]}, "rules": [
  {"route": "POST /v1/{kind}", "scope": {"route": true}},
  {"route": "POST /v1/payments/{id}/refunds"}
]}`, []change{
			{Route: "POST /v1/{kind}", Impact: policy.KeysChange, From: "POST /v1/payments", Reason: "the endpoint, part of its storage keys, changes from POST /v1/payments to POST /v1/{}"},
			{Route: "POST /v1/payments/{id}/refunds"},
			{Route: "POST *"},
		}},
		{"Keys/Ungoverned", base, `{"defaults": {"methods": []}, "rules": [{"route": "POST /v1/payments"}]}`, []change{
			{Route: "POST /v1/payments"},
			{Route: "POST /v1/payments/{id}/refunds", Ungoverned: true, Impact: policy.KeysChange, Reason: "no longer governs"},
			{Route: "POST *", Ungoverned: true, Impact: policy.KeysChange, Reason: "no longer governs"},
		}},

		{"Rejected/RuleRemoved", base, `{"defaults": {"methods": ["POST"]}, "rules": [{"route": "POST /v1/payments"}]}`, []change{
			{Route: "POST /v1/payments"},
			{Route: "POST *", Impact: policy.RetriesRejected, From: "POST /v1/payments/{id}/refunds", Reason: "the endpoint changes from POST /v1/payments/{}/refunds to POST and each path: a retry is rejected as made on another endpoint (422)"},
		}},
		{"Rejected/RuleAdded", base, replace(`{"route": "POST /v1/payments", "ttl": "24h"},`, `{"route": "POST /v1/payments", "ttl": "24h"}, {"route": "POST /v1/orders/{id}", "mismatch_status": 409},`), []change{
			{Route: "POST /v1/payments"},
			{Route: "POST /v1/orders/{id}", Impact: policy.RetriesRejected, From: "POST *", Reason: "from POST and each path to POST /v1/orders/{}: a retry is rejected as made on another endpoint (409)"},
			{Route: "POST /v1/payments/{id}/refunds"},
			{Route: "POST *"},
		}},
		{"Rejected/LiteralRuleAdded", base, replace(`{"route": "POST /v1/payments", "ttl": "24h"},`, `{"route": "POST /v1/payments", "ttl": "24h"}, {"route": "POST /v1/orders"},`), []change{
			{Route: "POST /v1/payments"},
			{Route: "POST /v1/orders"}, // the endpoint of its one path was POST /v1/orders already
			{Route: "POST /v1/payments/{id}/refunds"},
			{Route: "POST *"},
		}},
		{"Rejected/MaxLength", base, replace(`"ttl": "24h"`, `"key": {"max_length": 64}`),
			with(0, change{Route: "POST /v1/payments", Impact: policy.RetriesRejected, From: "POST /v1/payments", Reason: "key.max_length falls from 255 to 64"})},
		{"Rejected/NoMoreNew", replace(`"ttl": "24h"`, `"on_mismatch": "new"`), base,
			with(0, change{Route: "POST /v1/payments", Impact: policy.RetriesRejected, From: "POST /v1/payments", Reason: `on_mismatch "reject" answers it`})},

		{"Fingerprints/Reject", base, replace(`"ttl": "24h"`, `"fingerprint": {"ignore": ["traceId"]}`),
			with(0, change{Route: "POST /v1/payments", Impact: policy.FingerprintsChange, From: "POST /v1/payments", Reason: `on_spec_change "reject" rejects it (409)`})},
		{"Fingerprints/New", base, replace(`"ttl": "24h"`, `"fingerprint": {"ignore": ["traceId"]}, "on_spec_change": "new"`),
			with(0, change{Route: "POST /v1/payments", Impact: policy.FingerprintsChange, From: "POST /v1/payments", Reason: "executes it again, as a new operation"})},

		{"Split/ExceptionScoped", `{"defaults": {"methods": []}, "rules": [{"route": "POST /a/{x}"}]}`,
			`{"defaults": {"methods": []}, "rules": [{"route": "POST /a/b", "scope": {"route": true}}, {"route": "POST /a/{x}"}]}`, []change{
				{Route: "POST /a/b", Impact: policy.KeysChange, From: "POST /a/{x}", Reason: "scope.route"},
				{Route: "POST /a/{x}"},
			}},
		{"Split/Exception", `{"defaults": {"methods": []}, "rules": [{"route": "POST /x/{a}"}]}`,
			`{"defaults": {"methods": []}, "rules": [{"route": "POST /x/y"}, {"route": "POST /x/{a}"}]}`, []change{
				{Route: "POST /x/y", Impact: policy.RetriesRejected, From: "POST /x/{a}", Reason: "from POST /x/{} to POST /x/y"},
				{Route: "POST /x/{a}"},
			}},
		{"Split/TakenByException", `{"defaults": {"methods": []}, "rules": [{"route": "POST /x/y"}, {"route": "POST /x/{a}"}]}`,
			`{"defaults": {"methods": []}, "rules": [{"route": "POST /x/y"}, {"route": "POST /{a}/y"}, {"route": "POST /x/{a}"}]}`, []change{
				{Route: "POST /x/y"},
				{Route: "POST /{a}/y"}, // it shares /x/y with POST /x/{a}, but /x/y went to POST /x/y before and goes there still
				{Route: "POST /x/{a}"},
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := policy.Compare(mustParse(t, tc.prev), mustParse(t, tc.next))
			if err != nil {
				t.Fatal(err)
			}
			var short []change
			for i, c := range got {
				s := change{Route: c.Route, Ungoverned: c.Ungoverned, Impact: c.Impact, From: c.From}
				if i < len(tc.want) && tc.want[i].Reason != "" && strings.Contains(strings.Join(c.Reasons, "\n"), tc.want[i].Reason) {
					s.Reason = tc.want[i].Reason
				} else if len(c.Reasons) > 0 {
					s.Reason = strings.Join(c.Reasons, "\n")
				}
				short = append(short, s)
			}
			if diff := cmp.Diff(tc.want, short); diff != "" {
				t.Errorf("Compare mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCompareNil checks that a nil policy has no rules: deploying a policy
// where there was none changes nothing stored; removing it orphans all.
func TestCompareNil(t *testing.T) {
	pol := mustParse(t, `{"rules": [{"route": "POST /a"}]}`)
	got, err := policy.Compare(nil, pol)
	if err != nil || len(got) != 3 || got[0].Impact != policy.Unchanged {
		t.Errorf("Compare(nil, pol) = %+v, %v", got, err)
	}
	got, err = policy.Compare(pol, nil)
	if err != nil || len(got) != 3 || !got[0].Ungoverned || got[0].Impact != policy.KeysChange {
		t.Errorf("Compare(pol, nil) = %+v, %v", got, err)
	}
}

// crossingPolicies returns a policy of rules POST /x<j>/{a} and one of
// rules POST /{a}/y<k>, n each: every path /x<j>/y<k> goes to a rule of
// each, so there are n*n pairs of rules to compare.
func crossingPolicies(t testing.TB, n int) (prev, next *policy.Policy) {
	var a, b strings.Builder
	for j := 0; j < n; j++ {
		fmt.Fprintf(&a, `{"route":"POST /x%d/{a}"},`, j)
		fmt.Fprintf(&b, `{"route":"POST /{a}/y%d"},`, j)
	}
	return mustParse(t, `{"rules":[`+strings.TrimSuffix(a.String(), ",")+`]}`), mustParse(t, `{"rules":[`+strings.TrimSuffix(b.String(), ",")+`]}`)
}

// TestCompareCrossing compares policies whose rules all share paths.
func TestCompareCrossing(t *testing.T) {
	prev, next := crossingPolicies(t, 500)
	got, err := policy.Compare(prev, next)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 502 { // 500 rules and the defaults of POST and PATCH
		t.Fatalf("%d changes, want 502", len(got))
	}
	for _, c := range got[:500] {
		if c.Impact != policy.RetriesRejected || c.From != "POST /x0/{a}" {
			t.Fatalf("%s: %v from %q, want retries rejected from POST /x0/{a}", c.Route, c.Impact, c.From)
		}
	}
	if c := got[500]; c.Route != "POST *" || c.Impact != policy.RetriesRejected || c.From != "POST /x0/{a}" {
		t.Errorf("defaults: %+v", c)
	}
	if got, err := policy.Compare(prev, prev); err != nil || len(got) != 502 || got[499].Impact != policy.Unchanged {
		t.Errorf("Compare(prev, prev): %d changes, %v", len(got), err)
	}
}

// TestCompareTooComplex checks that comparing policies of 4,000 rules
// that all share paths with each other stops at the bound on its work.
func TestCompareTooComplex(t *testing.T) {
	if testing.Short() {
		t.Skip("seconds of work")
	}
	prev, next := crossingPolicies(t, 4000)
	if _, err := policy.Compare(prev, next); !errors.Is(err, policy.ErrTooComplex) {
		t.Errorf("Compare: %v, want ErrTooComplex", err)
	}
}
