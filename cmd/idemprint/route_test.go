package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestServerRequest(t *testing.T) {
	type got struct {
		Method, Path, RawPath, RawQuery, Host string
		Header                                http.Header
	}
	for _, tc := range []struct {
		name   string
		route  string
		header headerFlag
		want   got
		reason string
	}{
		{"Plain", "POST /v1/payments", nil, got{Method: "POST", Path: "/v1/payments", Header: http.Header{}}, "the request line as written"},
		{"Escaped", "POST /v1/accounts/acc%201/transfers", nil,
			got{Method: "POST", Path: "/v1/accounts/acc 1/transfers", Header: http.Header{}},
			"URL.Path is decoded for Match; URL.EscapedPath() gives the escaped form back"},
		{"EscapedSlash", "POST /a%2Fb", nil, got{Method: "POST", Path: "/a/b", RawPath: "/a%2Fb", Header: http.Header{}}, "RawPath keeps what Path loses"},
		{"Query", "POST /v1/refunds?x=1&y=%zz", nil, got{Method: "POST", Path: "/v1/refunds", RawQuery: "x=1&y=%zz", Header: http.Header{}}, "the query is split off, unparsed"},
		{"Headers", " PATCH   /v1/x ", headerFlag{"x-api-version: 2", "Host: api.example.com", "X-Api-Version: 3"},
			got{Method: "PATCH", Path: "/v1/x", Host: "api.example.com", Header: http.Header{"X-Api-Version": {"2", "3"}}},
			"names canonical, values in order, Host moved to r.Host as net/http does"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := serverRequest(tc.route, tc.header)
			if err != nil {
				t.Fatalf("serverRequest(%q, %q): %v", tc.route, tc.header, err)
			}
			g := got{r.Method, r.URL.Path, r.URL.RawPath, r.URL.RawQuery, r.Host, r.Header}
			if diff := cmp.Diff(tc.want, g); diff != "" {
				t.Errorf("serverRequest(%q, %q) mismatch (-want +got), %s:\n%s", tc.route, tc.header, tc.reason, diff)
			}
		})
	}
	for _, tc := range []struct {
		name   string
		route  string
		header headerFlag
	}{
		{"NoMethod", "/v1/payments", nil},
		{"NoPath", "POST", nil},
		{"RelativePath", "POST v1/payments", nil},
		{"AbsoluteURL", "POST http://example.com/v1/payments", nil},
		{"SpaceInPath", "POST /v1/pay ments", nil},
		{"BadMethod", "PO\x01ST /v1/payments", nil},
		{"TwoHosts", "POST /v1/payments", headerFlag{"Host: a", "Host: b"}},
		{"BadHeaderName", "POST /v1/payments", headerFlag{"(x): 1"}},
		{"BadHeaderValue", "POST /v1/payments", headerFlag{"X-Y: a\x01b"}},
	} {
		t.Run("Invalid/"+tc.name, func(t *testing.T) {
			if r, err := serverRequest(tc.route, tc.header); err == nil {
				t.Errorf("serverRequest(%q, %q) = %s %s, want an error", tc.route, tc.header, r.Method, r.URL)
			}
		})
	}
}

// TestServerAgreement checks that explain and fingerprint --policy print
// the fingerprint a server computes (Match on URL.Path, then SumHTTP) for
// the same request line, headers and body, and name the rule it used.
func TestServerAgreement(t *testing.T) {
	transfer := writeTemp(t, "transfer.json", `{"amountCents": 100, "currency": "EUR", "counterparty": {"iban": "FR7630006000011234567890189"}}`)
	refund := writeTemp(t, "refund.json", `{"paymentId": "pay_1", "amountCents": 500, "note": "x"}`)
	hostPolicy := writeTemp(t, "host.json", `{"rules": [{"route": "POST /v1/payments", "fingerprint": {"headers": ["Host"], "query": ["dryRun"]}}]}`)
	for _, tc := range []struct {
		name, policy, route string
		header              headerFlag
		file                string
		rule                string
	}{
		{"EscapedPath", seedPolicy, "POST /v1/accounts/acc%201/transfers", headerFlag{"X-Api-Version: 2"}, transfer, "/rules/1 POST /v1/accounts/{account}/transfers"},
		{"Query", seedPolicy, "POST /v1/refunds?x=1", nil, refund, "/rules/2 POST /v1/refunds"},
		{"Plain", seedPolicy, "POST /v1/payments", nil, pay10, "/rules/0 POST /v1/payments"},
		{"Defaults", seedPolicy, "PATCH /v1/payments/pay%2F1?expand=all", nil, refund, "/defaults PATCH *"},
		{"HostAndQuery", hostPolicy, "POST /v1/payments?dryRun=true", headerFlag{"Host: api.example.com"}, pay10, "/rules/0 POST /v1/payments"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := serverFingerprint(t, tc.policy, tc.route, tc.header, tc.file)

			args := []string{"fingerprint", "--policy", tc.policy, "--route", tc.route}
			for _, h := range tc.header {
				args = append(args, "--header", h)
			}
			got := runCLI(append(args, tc.file), "")
			if diff := cmp.Diff(result{0, want + "\nrule " + tc.rule + "\n", ""}, got); diff != "" {
				t.Errorf("fingerprint --policy mismatch (-want +got):\n%s", diff)
			}

			args[0] = "explain"
			got = runCLI(append(args, tc.file, tc.file), "")
			if got.Code != 0 || got.Stderr != "" {
				t.Fatalf("explain = %+v, want a retry", got)
			}
			lines := strings.Split(got.Stdout, "\n")
			if !strings.HasPrefix(lines[0], "rule    "+tc.rule+" (") || strings.TrimSpace(lines[2]) != want || strings.TrimSpace(lines[5]) != want {
				t.Errorf("explain printed\n%s\nwant the rule %s and the fingerprint %s", got.Stdout, tc.rule, want)
			}
		})
	}
}

// serverFingerprint is what a server computes: net/http's request for the
// route, the rule Match finds for its decoded path, SumHTTP.
func serverFingerprint(t *testing.T, policyFile, route string, header headerFlag, file string) string {
	t.Helper()
	method, target, _ := strings.Cut(route, " ")
	r := httptest.NewRequest(method, target, bytes.NewReader(readFile(t, file)))
	r.Host = ""
	for _, h := range header {
		name, value, _ := strings.Cut(h, ": ")
		if strings.EqualFold(name, "Host") {
			r.Host = value
			continue
		}
		r.Header.Add(name, value)
	}
	sum, err := testRule(t, policyFile, r.Method, r.URL.Path).Fingerprinter().SumHTTP(r)
	if err != nil {
		t.Fatal(err)
	}
	return sum.String()
}
