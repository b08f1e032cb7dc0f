package main

import (
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/idemprint/idemprint/fingerprint"
)

// listFlag collects a repeated flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }

const fingerprintSynopsis = `[--intent PATH]... [--ignore NAME|PATH]... [--required PATH]...
       [--method M] [--path P] [--header 'Name: value']... [--query NAME=VALUE]...
       [--numbers exact|jcs] [--show] [FILE]
   or: idemprint fingerprint --policy POLICY --route 'METHOD /path[?query]'
       [--header 'Name: value']... [--show] [FILE]`

func runFingerprint(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var (
		intent, ignore, req, query listFlag
		header                     headerFlag
		method, path, numbers      string
		policyFile, route          string
		show                       bool
	)
	fs := newFlags("fingerprint", fingerprintSynopsis, stderr)
	fs.Var(&intent, "intent", "a body path that counts (repeatable); none: the whole body counts")
	fs.Var(&ignore, "ignore", "a member name dropped at every depth, or an exact dotted path (repeatable)")
	fs.Var(&req, "required", "an intent path that must be present (repeatable)")
	fs.StringVar(&method, "method", "POST", "the request method")
	fs.StringVar(&path, "path", "/", "the concrete request path")
	fs.Var(&header, "header", "a header, as 'Name: value' (repeatable); without --policy, each one counts")
	fs.Var(&query, "query", "a query parameter that identifies the operation, as NAME=VALUE (repeatable)")
	fs.StringVar(&numbers, "numbers", "exact", "number mode: exact or jcs")
	fs.StringVar(&policyFile, "policy", "", "take the spec from the rule of this policy file that --route matches")
	fs.StringVar(&route, "route", "", "with --policy: the request line, such as 'POST /v1/payments' (a query is allowed)")
	fs.BoolVar(&show, "show", false, "also print the canonical intent document that was hashed")
	if code, stop := parseFlags(fs, args); stop {
		return code
	}
	if fs.NArg() > 1 {
		fs.Usage()
		return exitUsage
	}
	if policyFile != "" {
		if len(intent)+len(ignore)+len(req)+len(query) > 0 || isSet(fs, "numbers") || isSet(fs, "method") || isSet(fs, "path") {
			fmt.Fprintln(stderr, "idemprint: --policy takes the spec from the policy and the request line, query included, from --route; drop --intent, --ignore, --required, --numbers, --method, --path and --query")
			return exitUsage
		}
		return fingerprintRule(policyFile, route, header, fs.Arg(0), show, stdin, stdout, stderr)
	}
	if route != "" {
		fmt.Fprintln(stderr, "idemprint: --route needs --policy")
		return exitUsage
	}

	spec := fingerprint.Spec{Intent: intent, Ignore: ignore, Required: req, Numbers: numbers}
	r := fingerprint.Request{Method: method, Path: path, Header: http.Header{}, Query: url.Values{}}
	for _, h := range header {
		name, value, _ := strings.Cut(h, ": ")
		r.Header.Add(name, value)
		spec.Headers = appendNew(spec.Headers, http.CanonicalHeaderKey(name))
	}
	for _, q := range query {
		name, value, ok := strings.Cut(q, "=")
		if !ok || name == "" {
			fmt.Fprintf(stderr, "idemprint: --query %q: want NAME=VALUE\n", q)
			return exitUsage
		}
		r.Query.Add(name, value)
		spec.Query = appendNew(spec.Query, name)
	}
	f, err := fingerprint.Compile(spec)
	if err != nil {
		fmt.Fprintln(stderr, "idemprint:", err)
		return exitUsage
	}
	body, name, err := readInput(fs.Arg(0), stdin)
	if err != nil {
		fmt.Fprintln(stderr, "idemprint:", err)
		return exitUsage
	}
	r.Body = body
	sum, err := f.Sum(r)
	if err != nil {
		fmt.Fprintln(stderr, formatError(name, body, err))
		return exitFail
	}
	out := append([]byte(sum.String()), '\n')
	if show {
		out, _ = f.AppendIntent(out, r) // Sum succeeded, so AppendIntent does
		out = append(out, '\n')
	}
	return writeOutput(stdout, stderr, out)
}

// fingerprintRule is fingerprint --policy: it prints the fingerprint a
// server computes for the body in file sent as route with header, and the
// rule it used.
func fingerprintRule(policyFile, route string, header headerFlag, file string, show bool, stdin io.Reader, stdout, stderr io.Writer) int {
	r, err := serverRequest(route, header)
	if err != nil {
		fmt.Fprintln(stderr, "idemprint:", err)
		return exitUsage
	}
	pol, code := loadPolicy(policyFile, stderr)
	if pol == nil {
		return code
	}
	body, name, err := readInput(file, stdin)
	if err != nil {
		fmt.Fprintln(stderr, "idemprint:", err)
		return exitUsage
	}
	rule, ok := pol.Match(r.Method, r.URL.Path)
	if !ok {
		fmt.Fprintf(stderr, "idemprint: %s: no rule matches %s %s: the request passes through without a fingerprint\n", policyFile, r.Method, r.URL.Path)
		return exitFail
	}
	fr, req, err := ruleRequest(rule, r, "idemprint", body)
	if err != nil {
		fmt.Fprintln(stderr, formatError(name, body, err))
		return exitFail
	}
	out := []byte(req.Fingerprint.String() + "\nrule " + ruleName(rule) + "\n")
	if show {
		out, _ = rule.Fingerprinter().AppendIntent(out, fr) // NewRequest's Sum succeeded, so AppendIntent does
		out = append(out, '\n')
	}
	return writeOutput(stdout, stderr, out)
}

func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == name {
			set = true
		}
	})
	return set
}

func appendNew(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}
