package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/idemprint/idemprint/fingerprint"
	"github.com/idemprint/idemprint/internal/fpwire"
	"github.com/idemprint/idemprint/policy"
)

// listFlag collects a repeated flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }

const fingerprintSynopsis = `[--intent PATH]... [--ignore NAME|PATH]... [--required PATH]...
       [--method M] [--path P] [--header 'Name: value']... [--query NAME=VALUE]...
       [--numbers exact|jcs] [--show] [FILE]
   or: idemprint fingerprint --policy POLICY --route 'METHOD /path[?query]'
       [--header 'Name: value']... [--show] [FILE]
   or: idemprint fingerprint --jsonl (--spec JSON | --policy POLICY --route 'METHOD /path')
       [--show]`

func runFingerprint(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var (
		intent, ignore, req, query listFlag
		header                     headerFlag
		method, path, numbers      string
		policyFile, route          string
		show, jsonl                bool
		specJSON                   string
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
	fs.BoolVar(&jsonl, "jsonl", false, "read one request a line from stdin and write one result a line (the line protocol)")
	fs.StringVar(&specJSON, "spec", "", "with --jsonl: the spec, as the JSON of a policy's fingerprint object")
	if code, stop := parseFlags(fs, args); stop {
		return code
	}
	if jsonl || specJSON != "" {
		if !jsonl || fs.NArg() > 0 || len(intent)+len(ignore)+len(req)+len(query)+len(header) > 0 ||
			isSet(fs, "numbers") || isSet(fs, "method") || isSet(fs, "path") || (specJSON != "") == (policyFile != "") || (policyFile != "") != (route != "") {
			fmt.Fprintln(stderr, "idemprint: --jsonl takes the spec from --spec, or from --policy and --route, and the requests from stdin; --spec needs --jsonl")
			return exitUsage
		}
		return runJSONL(specJSON, policyFile, route, show, stdin, stdout, stderr)
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

// runJSONL is fingerprint --jsonl, the line protocol: it reads one request
// a line from stdin in the vectors' request shape (fpwire.ParseRequest)
// and writes one result a line, in order: {"fingerprint": "v1:sha256:..."}
// (with --show also "intent"), or {"error": {"class", "message", and the
// members of its class}} (fpwire.Error). A line that is not a request gets
// an error of class "invalid-input" and the stream goes on. Results are
// flushed whenever no further input is waiting, so a caller that sends one
// line and waits always gets its answer, and one that sends many gets
// them in few writes. The exit status is 0 at the end of the input, 1 for
// a policy with problems or a --route no rule matches, 2 for a spec that
// does not compile, a read or write error, or a usage error.
func runJSONL(specJSON, policyFile, route string, show bool, stdin io.Reader, stdout, stderr io.Writer) int {
	var f *fingerprint.Fingerprinter
	var pol *policy.Policy
	var rule *policy.Rule
	if policyFile != "" {
		r, err := serverRequest(route, nil)
		if err != nil {
			fmt.Fprintln(stderr, "idemprint:", err)
			return exitUsage
		}
		var code int
		if pol, code = loadPolicy(policyFile, stderr); pol == nil {
			return code
		}
		var ok bool
		if rule, ok = pol.Match(r.Method, r.URL.Path); !ok {
			fmt.Fprintf(stderr, "idemprint: %s: no rule matches %s %s: the request passes through without a fingerprint\n", policyFile, r.Method, r.URL.Path)
			return exitFail
		}
		f = rule.Fingerprinter()
	} else {
		spec, err := fpwire.ParseSpec([]byte(specJSON))
		if err == nil {
			f, err = fingerprint.Compile(spec)
		}
		if err != nil {
			fmt.Fprintln(stderr, "idemprint: --spec:", err)
			return exitUsage
		}
	}

	in := bufio.NewReaderSize(stdin, 64<<10)
	out := bufio.NewWriterSize(stdout, 64<<10)
	var line, res, doc []byte
	for {
		var err error
		line, err = readLine(in, line[:0])
		if len(line) > 0 || err == nil {
			res = append(jsonlResult(res[:0], f, pol, rule, line, show, &doc), '\n')
			if _, werr := out.Write(res); werr != nil {
				fmt.Fprintln(stderr, "idemprint:", werr)
				return exitUsage
			}
		}
		if err == nil && in.Buffered() > 0 {
			continue
		}
		if ferr := out.Flush(); ferr != nil {
			fmt.Fprintln(stderr, "idemprint:", ferr)
			return exitUsage
		}
		if errors.Is(err, io.EOF) {
			return exitOK
		}
		if err != nil {
			fmt.Fprintln(stderr, "idemprint: reading stdin:", err)
			return exitUsage
		}
	}
}

// readLine appends the next line of in, without its newline, to dst. At the
// end of the input it returns what was left (maybe nothing) and io.EOF.
func readLine(in *bufio.Reader, dst []byte) ([]byte, error) {
	for {
		chunk, err := in.ReadSlice('\n')
		dst = append(dst, chunk...)
		switch {
		case err == nil:
			return dst[:len(dst)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return dst, err
		}
	}
}

// jsonlResult appends the result for one line to dst. Under a policy, the
// line's method and path must be matched by the rule of --route: another
// rule would fingerprint it otherwise.
func jsonlResult(dst []byte, f *fingerprint.Fingerprinter, pol *policy.Policy, rule *policy.Rule, line []byte, show bool, doc *[]byte) []byte {
	r, err := fpwire.ParseRequest(line)
	if err == nil && pol != nil {
		err = checkRule(pol, rule, r)
	}
	if err != nil {
		return fpwire.AppendResult(dst, fingerprint.Fingerprint{}, nil, err)
	}
	if !show {
		fp, err := f.Sum(r)
		return fpwire.AppendResult(dst, fp, nil, err)
	}
	fp, d, err := f.SumIntent((*doc)[:0], r)
	*doc = d
	if d == nil {
		d = []byte{}
	}
	return fpwire.AppendResult(dst, fp, d, err)
}

// checkRule reports a request that pol does not send to rule.
func checkRule(pol *policy.Policy, rule *policy.Rule, r fingerprint.Request) error {
	u, err := url.Parse(r.Path)
	if err == nil && (u.Scheme != "" || u.Host != "" || u.RawQuery != "" || u.Fragment != "" || !strings.HasPrefix(r.Path, "/")) {
		err = errors.New("want an absolute path without a query")
	}
	if err != nil {
		return &fpwire.InputError{Pointer: "/path", Err: fmt.Errorf("%w: path %q: %v", fpwire.ErrInvalidInput, r.Path, err)}
	}
	method := r.Method
	if method == "" {
		method = http.MethodGet
	}
	if got, ok := pol.Match(method, u.Path); !ok || got != rule {
		other := "no rule"
		if ok {
			other = "the rule " + ruleName(got)
		}
		return &fpwire.InputError{Pointer: "/path", Err: fmt.Errorf("%w: %s %s is matched by %s, not by %s of --route", fpwire.ErrInvalidInput, method, r.Path, other, ruleName(rule))}
	}
	return nil
}
