package main

import (
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/idemprint/idemprint/fingerprint"
	"github.com/idemprint/idemprint/policy"
)

// listFlag collects a repeated flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }

const fingerprintSynopsis = `[--intent PATH]... [--ignore NAME|PATH]... [--required PATH]...
       [--method M] [--path P] [--header NAME:VALUE]... [--query NAME=VALUE]...
       [--numbers exact|jcs] [--show] [FILE]
   or: idemprint fingerprint --policy POLICY --route 'METHOD /concrete/path'
       [--header NAME:VALUE]... [--query NAME=VALUE]... [--show] [FILE]`

func runFingerprint(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var (
		spec                  fingerprint.Spec
		intent, ignore, req   listFlag
		headers, query        listFlag
		method, path, numbers string
		policyFile, route     string
		show                  bool
	)
	fs := newFlags("fingerprint", fingerprintSynopsis, stderr)
	fs.Var(&intent, "intent", "a body path that counts (repeatable); none: the whole body counts")
	fs.Var(&ignore, "ignore", "a member name dropped at every depth, or an exact dotted path (repeatable)")
	fs.Var(&req, "required", "an intent path that must be present (repeatable)")
	fs.StringVar(&method, "method", "POST", "the request method")
	fs.StringVar(&path, "path", "/", "the concrete request path")
	fs.Var(&headers, "header", "a header that identifies the operation, as NAME:VALUE (repeatable)")
	fs.Var(&query, "query", "a query parameter that identifies the operation, as NAME=VALUE (repeatable)")
	fs.StringVar(&numbers, "numbers", "exact", "number mode: exact or jcs")
	fs.StringVar(&policyFile, "policy", "", "take the spec from this policy file's rule for --route")
	fs.StringVar(&route, "route", "", "with --policy: the method and concrete path, e.g. 'POST /v1/payments'")
	fs.BoolVar(&show, "show", false, "also print the canonical intent document that was hashed")
	if code, stop := parseFlags(fs, args); stop {
		return code
	}
	if fs.NArg() > 1 {
		fs.Usage()
		return exitUsage
	}

	r := fingerprint.Request{Method: method, Path: path, Header: http.Header{}, Query: url.Values{}}
	for _, h := range headers {
		name, value, ok := strings.Cut(h, ":")
		if !ok || name == "" {
			fmt.Fprintf(stderr, "idemprint: --header %q: want NAME:VALUE\n", h)
			return exitUsage
		}
		r.Header.Add(name, strings.TrimSpace(value))
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

	var f *fingerprint.Fingerprinter
	if policyFile != "" {
		if len(intent)+len(ignore)+len(req) > 0 || isSet(fs, "numbers") || isSet(fs, "method") || isSet(fs, "path") {
			fmt.Fprintln(stderr, "idemprint: --policy takes the spec and the request line from the policy and --route; drop --intent, --ignore, --required, --numbers, --method and --path")
			return exitUsage
		}
		var code int
		if f, r.Method, r.Path, code = ruleFingerprinter(policyFile, route, stderr); f == nil {
			return code
		}
	} else {
		if route != "" {
			fmt.Fprintln(stderr, "idemprint: --route needs --policy")
			return exitUsage
		}
		spec.Intent, spec.Ignore, spec.Required, spec.Numbers = intent, ignore, req, numbers
		var err error
		if f, err = fingerprint.Compile(spec); err != nil {
			fmt.Fprintln(stderr, "idemprint:", err)
			return exitUsage
		}
	}

	body, name, err := readInput(fs.Arg(0), stdin)
	if err != nil {
		fmt.Fprintln(stderr, "idemprint:", err)
		return exitUsage
	}
	r.Body = body
	doc, err := f.AppendIntent(nil, r)
	if err != nil {
		fmt.Fprintln(stderr, formatError(name, body, err))
		return exitFail
	}
	sum, err := f.Sum(r)
	if err != nil {
		fmt.Fprintln(stderr, formatError(name, body, err))
		return exitFail
	}
	fmt.Fprintln(stdout, sum)
	if show {
		fmt.Fprintf(stdout, "%s\n", doc)
	}
	return exitOK
}

// ruleFingerprinter loads a policy and returns the fingerprinter of the rule
// that route ("METHOD /path") matches, with the method and path; on failure
// it reports and returns a nil fingerprinter and the exit status.
func ruleFingerprinter(policyFile, route string, stderr io.Writer) (*fingerprint.Fingerprinter, string, string, int) {
	method, path, ok := strings.Cut(strings.TrimSpace(route), " ")
	path = strings.TrimSpace(path)
	if !ok || method == "" || !strings.HasPrefix(path, "/") {
		fmt.Fprintf(stderr, "idemprint: --route %q: want 'METHOD /concrete/path'\n", route)
		return nil, "", "", exitUsage
	}
	data, err := os.ReadFile(policyFile)
	if err != nil {
		fmt.Fprintln(stderr, "idemprint:", err)
		return nil, "", "", exitUsage
	}
	p, err := policy.Parse(data)
	if err != nil {
		for _, prob := range policyProblems(p, err) {
			fmt.Fprintln(stderr, "idemprint: "+formatProblem(policyFile, data, prob))
		}
		return nil, "", "", exitUsage
	}
	rule, ok := p.Match(method, path)
	if !ok {
		fmt.Fprintf(stderr, "idemprint: %s: no rule matches %s %s\n", policyFile, method, path)
		return nil, "", "", exitUsage
	}
	return rule.Fingerprinter(), method, path, exitOK
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
