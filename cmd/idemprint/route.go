package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/idemprint/idemprint/fingerprint"
	"github.com/idemprint/idemprint/policy"
)

// explain and fingerprint --policy compute what a server computes for a
// request: the *http.Request that net/http reads for --route and --header,
// the rule that Policy.Match finds for its decoded path, the
// fingerprint.Request that fingerprint.HTTPRequest builds (escaped path,
// parsed query, declared Host) and the policy.Request that Rule.NewRequest
// builds from it. The HTTP middleware goes the same way.

// headerFlag collects repeated --header "Name: value" flags.
type headerFlag []string

func (h *headerFlag) String() string { return strings.Join(*h, ", ") }

func (h *headerFlag) Set(s string) error {
	name, value, ok := strings.Cut(s, ":")
	name = strings.TrimSpace(name)
	if !ok || name == "" || strings.ContainsAny(s, "\r\n") {
		return fmt.Errorf(`want "Name: value", got %q`, s)
	}
	*h = append(*h, name+": "+strings.TrimSpace(value))
	return nil
}

// errRoute describes the form of --route.
var errRoute = errors.New(`want "METHOD /path", such as "POST /v1/payments" (a query is allowed)`)

// serverRequest returns the request that a server reads for the request
// line "METHOD /path?query" and the header lines "Name: value", parsed by
// net/http's own reader: the target is split into URL.Path (decoded),
// URL.RawPath and URL.RawQuery, header names are canonicalized and a Host
// header becomes r.Host. It has no body.
func serverRequest(route string, header headerFlag) (*http.Request, error) {
	method, target, ok := strings.Cut(strings.TrimSpace(route), " ")
	target = strings.TrimSpace(target)
	if !ok || method == "" || !strings.HasPrefix(target, "/") || strings.ContainsAny(target, " \t\r\n") {
		return nil, fmt.Errorf("--route %q: %w", route, errRoute)
	}
	var b strings.Builder
	b.WriteString(method + " " + target + " HTTP/1.1\r\n")
	for _, h := range header {
		b.WriteString(h + "\r\n")
	}
	b.WriteString("\r\n")
	r, err := http.ReadRequest(bufio.NewReader(strings.NewReader(b.String())))
	if err != nil {
		return nil, fmt.Errorf("--route %q with --header: %v", route, err)
	}
	return r, nil
}

// requestKeys are the keys explain and fingerprint --policy give a request,
// in order of preference; the first that the rule's key syntax accepts is
// used. A UUID satisfies the "uuid" syntax and a printable one of
// max_length 36 or more; "k" any printable syntax, whose max_length is at
// least 1.
var requestKeys = []string{"00000000-0000-4000-8000-000000000000", "k"}

// ruleRequest computes what a server computes for body sent as r under
// rule: the fingerprint.Request of fingerprint.HTTPRequest, and the
// policy.Request that Rule.NewRequest builds from it. The request carries
// the first of requestKeys that the rule's key syntax accepts, in place of
// a key given with --header, so that it is fingerprinted. The error is a
// rejection of the request: a *canonical.Error for the body, a
// *fingerprint.RequestError for a missing required value or a declared
// query parameter that does not parse.
func ruleRequest(rule *policy.Rule, r *http.Request, tenant string, body []byte) (fingerprint.Request, policy.Request, error) {
	fr, err := rule.Fingerprinter().HTTPRequest(r, body)
	if err != nil {
		return fingerprint.Request{}, policy.Request{}, err
	}
	fr.Header = fr.Header.Clone() // shared with r
	if fr.Header == nil {
		fr.Header = http.Header{}
	}
	req, err := keyedRequest(rule, tenant, fr)
	return fr, req, err
}

// keyedRequest returns the Request for fr under rule, with the first of
// requestKeys that the rule's key syntax accepts in its key header. It sets
// that header in fr.Header.
func keyedRequest(rule *policy.Rule, tenant string, fr fingerprint.Request) (policy.Request, error) {
	for _, key := range requestKeys {
		fr.Header.Set(rule.KeyHeader(), key)
		req, err := rule.NewRequest(tenant, fr)
		if err != nil {
			return policy.Request{}, err
		}
		if _, _, err := rule.StorageKeys(req); !errors.Is(err, policy.ErrMalformedKey) {
			return req, err
		}
	}
	return policy.Request{}, fmt.Errorf("internal error: no key of idemprint is valid under the rule %s", rule.Pointer())
}

// ruleName names a rule as its policy file does: "/rules/0 POST
// /v1/payments", or "/defaults POST *" for the defaults' rule of a method.
func ruleName(rule *policy.Rule) string { return rule.Pointer() + " " + rule.Route() }

// loadPolicy reads and parses a policy file. On failure it reports on
// stderr and returns a nil policy and the exit status: exitUsage for a file
// that cannot be read, exitFail, with every problem, for a policy that has
// problems (as lint does).
func loadPolicy(name string, stderr io.Writer) (*policy.Policy, int) {
	src, err := os.ReadFile(name)
	if err != nil {
		fmt.Fprintln(stderr, "idemprint:", err)
		return nil, exitUsage
	}
	pol, err := policy.Parse(src)
	if err != nil {
		for _, p := range policyProblems(pol, err) {
			fmt.Fprintln(stderr, "idemprint: "+formatProblem(name, src, p))
		}
		return nil, exitFail
	}
	return pol, exitOK
}
