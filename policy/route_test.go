package policy_test

import (
	"testing"

	"github.com/idemprint/idemprint/policy"
)

func TestMatch(t *testing.T) {
	pol := mustParse(t, `{
  "defaults": {"methods": ["PATCH"]},
  "rules": [
    {"route": "POST /"},
    {"route": "POST /v1/payments"},
    {"route": "POST /v1/payments/batch"},
    {"route": "POST /v1/payments/{id}"},
    {"route": "POST /v1/accounts/{account}/transfers"},
    {"route": "POST /v1/{resource}/{id}/capture"},
    {"route": "PUT /v1/payments/{id}"},
    {"route": "POST /v1/odd:name/@x"}
  ]
}`)
	for _, tc := range []struct {
		method, path, want string // want "" for no rule
	}{
		{"POST", "/", "POST /"},
		{"POST", "/v1/payments", "POST /v1/payments"},
		{"POST", "/v1/payments/batch", "POST /v1/payments/batch"},
		{"POST", "/v1/payments/pay_1", "POST /v1/payments/{id}"},
		{"POST", "/v1/accounts/acc_1/transfers", "POST /v1/accounts/{account}/transfers"},
		{"POST", "/v1/payments/pay_1/capture", "POST /v1/{resource}/{id}/capture"},
		{"PUT", "/v1/payments/pay_1", "PUT /v1/payments/{id}"},
		{"POST", "/v1/odd:name/@x", "POST /v1/odd:name/@x"},
		{"PATCH", "/v1/payments/pay_1", "PATCH *"},
		{"PATCH", "", "PATCH *"},

		{"POST", "", ""},
		{"POST", "v1/payments", ""},
		{"POST", "/v1/payments/", ""},
		{"POST", "//v1/payments", ""},
		{"POST", "/v1//payments", ""},
		{"POST", "/v1/accounts//transfers", ""},
		{"POST", "/v1/accounts/acc_1/transfers/", ""},
		{"POST", "/v1/accounts/acc_1/transfers/x", ""},
		{"POST", "/v1/accounts/acc_1", ""},
		{"POST", "/V1/payments", ""},
		{"POST", "/v1/payments?x=1", ""},
		{"post", "/v1/payments", ""},
		{"GET", "/v1/payments", ""},
		{"PUT", "/v1/payments", ""},
		{"DELETE", "/", ""},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			r, ok := pol.Match(tc.method, tc.path)
			got := ""
			if ok {
				got = r.Route()
			}
			if got != tc.want || ok != (tc.want != "") {
				t.Errorf("Match(%q, %q) = %q, %v; want %q", tc.method, tc.path, got, ok, tc.want)
			}
		})
	}
	t.Run("ZeroPolicy", func(t *testing.T) {
		var zero policy.Policy
		if r, ok := zero.Match("POST", "/v1/payments"); ok || r != nil {
			t.Errorf("zero Policy matched: %v", r)
		}
	})
}

func TestMatchAllocs(t *testing.T) {
	pol := mustParse(t, `{"rules": [{"route": "POST /v1/payments"}, {"route": "POST /v1/accounts/{account}/transfers"}]}`)
	allocs := testing.AllocsPerRun(100, func() {
		if _, ok := pol.Match("POST", "/v1/accounts/acc_1/transfers"); !ok {
			t.Fatal("no match")
		}
	})
	if allocs != 0 {
		t.Errorf("Match allocates %v times per call, want 0", allocs)
	}
}
