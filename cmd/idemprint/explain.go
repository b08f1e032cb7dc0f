package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/idemprint/idemprint/fingerprint"
	"github.com/idemprint/idemprint/policy"
)

// runExplain tells what a policy does with SECOND, a request that reuses
// FIRST's key after FIRST completed. It exits 0 when SECOND is a retry of
// FIRST (equal fingerprints); 1 when it is not, when the policy has
// problems and when a request is rejected (a body that is not strict JSON
// or lacks a required value); 2 on a usage error, a file that cannot be read
// or an error of explain itself.
func runExplain(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("explain", "--policy POLICY --route 'METHOD /path[?query]' [--tenant T] [--status N] [--header 'Name: value']... [--json] FIRST.json SECOND.json", stderr)
	policyName := fs.String("policy", "", "policy file (required)")
	route := fs.String("route", "", `request line of both requests, such as "POST /v1/payments" (required; a query is allowed)`)
	tenant := fs.String("tenant", "explain", "tenant of both requests")
	status := fs.Int("status", http.StatusCreated, "status FIRST completed with")
	asJSON := fs.Bool("json", false, "write the explanation as JSON")
	var header headerFlag
	fs.Var(&header, "header", `header of both requests, "Name: value" (repeatable; Host is the request's host)`)
	if code, stop := parseFlags(fs, args); stop {
		return code
	}
	if fs.NArg() != 2 || *policyName == "" || *route == "" {
		fs.Usage()
		return exitUsage
	}
	if *status < 200 || *status > 599 {
		fmt.Fprintln(stderr, "idemprint: --status must be a final status, 200 to 599")
		return exitUsage
	}
	r, err := serverRequest(*route, header)
	if err != nil {
		fmt.Fprintln(stderr, "idemprint:", err)
		return exitUsage
	}
	pol, code := loadPolicy(*policyName, stderr)
	if pol == nil {
		return code
	}

	ex := explanation{Policy: *policyName, Route: *route}
	files := [2]string{fs.Arg(0), fs.Arg(1)}
	var bodies [2][]byte
	for i, name := range files {
		if bodies[i], err = os.ReadFile(name); err != nil {
			fmt.Fprintln(stderr, "idemprint:", err)
			return exitUsage
		}
	}
	rule, ok := pol.Match(r.Method, r.URL.Path)
	if !ok {
		ex.First, ex.Second = &step{File: files[0]}, &step{File: files[1]}
		return ex.write(stdout, stderr, *asJSON)
	}
	ex.Rule = &ruleInfo{Pointer: rule.Pointer(), Route: rule.Route(), OnMismatch: rule.OnMismatch().String()}
	if rule.OnMismatch() == policy.ResolveReject {
		ex.Rule.MismatchStatus = rule.MismatchStatus()
	}

	var reqs [2]policy.Request
	var intents [2][]byte
	for i, body := range bodies {
		var fr fingerprint.Request
		if fr, reqs[i], err = ruleRequest(rule, r, *tenant, body); err == nil {
			intents[i], err = rule.Fingerprinter().AppendIntent(nil, fr)
		}
		if err != nil {
			fmt.Fprintln(stderr, formatError(files[i], body, err))
			return exitFail
		}
	}

	// FIRST executes and completes with --status; SECOND comes a second later.
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	d1, err := decideFirst(rule, reqs[0], t0)
	if err != nil {
		fmt.Fprintln(stderr, "idemprint:", err)
		return exitUsage
	}
	ex.First = &step{File: files[0], Fingerprint: reqs[0].Fingerprint.String(), Action: d1.Action.String(), Status: *status}
	stored, err := rule.Complete(d1.Reserve, policy.Response{Status: *status, Header: http.Header{}, Body: []byte("{}")}, t0.Add(time.Second))
	if err != nil {
		fmt.Fprintln(stderr, "idemprint:", err)
		return exitUsage
	}
	ex.First.Stored = stored.State == policy.StateCompleted
	// FIRST's record is under the primary key, which SECOND shares; nothing
	// is under SECOND's new identity, if it has one.
	d2, err := rule.Decide(reqs[1], &stored, nil, t0.Add(2*time.Second))
	if err != nil {
		fmt.Fprintln(stderr, "idemprint:", err)
		return exitUsage
	}
	ex.Second = &step{
		File:        files[1],
		Fingerprint: reqs[1].Fingerprint.String(),
		Action:      d2.Action.String(),
		Reason:      d2.Reason.String(),
		Status:      d2.Response.Status,
	}
	if d2.Problem != nil {
		ex.Second.Problem = json.RawMessage(d2.Response.Body)
		ex.Second.ProblemType = d2.Problem.Type
	}
	ex.Retry = reqs[0].Fingerprint == reqs[1].Fingerprint

	diffs, err := fingerprint.Diff(intents[0], intents[1])
	if err != nil {
		fmt.Fprintln(stderr, "idemprint:", err)
		return exitUsage
	}
	for _, d := range diffs {
		ex.Differences = append(ex.Differences, difference{Path: policy.DiffLabel(d), First: rawOrNull(d.First), Second: rawOrNull(d.Second)})
	}
	ex.Ignored = ignored(bodies, diffs)
	return ex.write(stdout, stderr, *asJSON)
}

// decideFirst decides on FIRST, which meets no record: anything but an
// execution is an error of explain itself, not an answer to print.
func decideFirst(rule *policy.Rule, req policy.Request, now time.Time) (policy.Decision, error) {
	d, err := rule.Decide(req, nil, nil, now)
	if err == nil && d.Action != policy.Execute {
		err = fmt.Errorf("internal error: the first request, meeting no record, is answered %v (%v) instead of executed", d.Action, d.Reason)
	}
	return d, err
}

// problemName is the short name of a problem type that explain prints, as
// the issue spells it: "idempotency_key_reuse" for
// https://idemprint.dev/problems/idempotency-key-reuse. The type URI itself,
// in the --json output, is unchanged.
func problemName(typ string) string {
	return strings.ReplaceAll(strings.TrimPrefix(typ, policy.ProblemBase), "-", "_")
}

// ignored lists the body paths at which the two bodies differ although
// their intents do not: what the rule's spec leaves out. A path at which the
// bodies differ is counted when it is, holds or lies below the path of a
// body difference of the intents, "#" standing for every index.
func ignored(bodies [2][]byte, intentDiffs []fingerprint.Difference) []string {
	whole, err := fingerprint.Compile(fingerprint.Spec{})
	if err != nil {
		return nil
	}
	var docs [2][]byte
	for i, b := range bodies {
		if docs[i], err = whole.AppendIntent(nil, fingerprint.Request{Body: b}); err != nil {
			return nil
		}
	}
	raw, err := fingerprint.Diff(docs[0], docs[1])
	if err != nil {
		return nil
	}
	var out []string
	for _, d := range raw {
		counted := false
		for _, id := range intentDiffs {
			if id.Part == "body" && related(d.Path, id.Path) {
				counted = true
			}
		}
		if !counted {
			out = append(out, d.Path)
		}
	}
	return out
}

// related reports whether the concrete body path c is, holds or lies below
// the intent path p, whose "#" segments match every array index.
func related(c, p string) bool {
	cs, ps := splitPath(c), splitPath(p)
	for i := range min(len(cs), len(ps)) {
		if ps[i] == "#" {
			if !isIndex(cs[i]) {
				return false
			}
		} else if cs[i] != ps[i] {
			return false
		}
	}
	return true
}

// splitPath splits a path at its unescaped dots; segments keep their
// escapes, so "#" is every index and "\#" a member named "#".
func splitPath(p string) []string {
	var segs []string
	start := 0
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '.':
			segs = append(segs, p[start:i])
			start = i + 1
		}
	}
	return append(segs, p[start:])
}

// isIndex reports whether seg is a decimal array index, as Diff writes one.
func isIndex(seg string) bool {
	if seg == "" || len(seg) > 1 && seg[0] == '0' {
		return false
	}
	for i := 0; i < len(seg); i++ {
		if seg[i] < '0' || seg[i] > '9' {
			return false
		}
	}
	return true
}

func rawOrNull(b []byte) json.RawMessage {
	if b == nil {
		return nil
	}
	return json.RawMessage(b)
}

// explanation is what explain found; its JSON form is the --json output.
type explanation struct {
	Policy      string       `json:"policy"`
	Route       string       `json:"route"`
	Rule        *ruleInfo    `json:"rule"` // null: no rule, the requests pass through
	First       *step        `json:"first"`
	Second      *step        `json:"second"`
	Retry       bool         `json:"retry"`
	Differences []difference `json:"differences"`
	Ignored     []string     `json:"ignored"`
}

type ruleInfo struct {
	Pointer        string `json:"pointer"`
	Route          string `json:"route"`
	OnMismatch     string `json:"on_mismatch"`
	MismatchStatus int    `json:"mismatch_status,omitempty"`
}

type step struct {
	File        string          `json:"file"`
	Fingerprint string          `json:"fingerprint,omitempty"`
	Action      string          `json:"action"`
	Reason      string          `json:"reason,omitempty"`
	Status      int             `json:"status,omitempty"`
	Stored      bool            `json:"stored"`
	ProblemType string          `json:"-"`
	Problem     json.RawMessage `json:"problem,omitempty"`
}

// difference is one intent field that differs; nil values are absent.
type difference struct {
	Path   string          `json:"path"`
	First  json.RawMessage `json:"first"`
	Second json.RawMessage `json:"second"`
}

func (ex *explanation) write(stdout, stderr io.Writer, asJSON bool) int {
	code := exitFail
	if ex.Retry {
		code = exitOK
	}
	if ex.Rule == nil {
		ex.First.Action, ex.Second.Action = policy.PassThrough.String(), policy.PassThrough.String()
	}
	if ex.Differences == nil {
		ex.Differences = []difference{}
	}
	if ex.Ignored == nil {
		ex.Ignored = []string{}
	}
	var out []byte
	if asJSON {
		b, err := json.MarshalIndent(ex, "", "  ")
		if err != nil {
			fmt.Fprintln(stderr, "idemprint: internal error:", err)
			return exitUsage
		}
		out = append(b, '\n')
	} else {
		out = []byte(ex.text())
	}
	if c := writeOutput(stdout, stderr, out); c != exitOK {
		return c
	}
	return code
}

// text renders the explanation for a terminal.
func (ex *explanation) text() string {
	var b strings.Builder
	if ex.Rule == nil {
		fmt.Fprintf(&b, "rule    none: %s matches no rule of %s\n", ex.Route, ex.Policy)
		fmt.Fprintf(&b, "second  not a retry → pass through: both requests execute, nothing is deduplicated\n")
		return b.String()
	}
	fmt.Fprintf(&b, "rule    %s %s (on_mismatch %s", ex.Rule.Pointer, ex.Rule.Route, ex.Rule.OnMismatch)
	if ex.Rule.MismatchStatus != 0 {
		fmt.Fprintf(&b, " %d", ex.Rule.MismatchStatus)
	}
	b.WriteString(")\n")
	f, s := ex.First, ex.Second
	fmt.Fprintf(&b, "first   %s\n        %s\n", f.File, f.Fingerprint)
	if f.Stored {
		fmt.Fprintf(&b, "        %s → %d, stored\n", f.Action, f.Status)
	} else {
		fmt.Fprintf(&b, "        %s → %d, not stored: the rule does not cache it, so the key is released\n", f.Action, f.Status)
	}
	fmt.Fprintf(&b, "second  %s\n        %s\n", s.File, s.Fingerprint)
	kind := "conflict"
	if ex.Retry {
		kind = "retry"
	}
	fmt.Fprintf(&b, "        %s → %s\n", kind, ex.outcome())
	for _, d := range ex.Differences {
		fmt.Fprintf(&b, "        %s: %s → %s\n", d.Path, valueOrAbsent(d.First), valueOrAbsent(d.Second))
	}
	if len(ex.Ignored) > 0 {
		fmt.Fprintf(&b, "        ignored by the rule: %s\n", strings.Join(ex.Ignored, ", "))
	}
	return b.String()
}

// outcome says what happens to SECOND.
func (ex *explanation) outcome() string {
	s := ex.Second
	switch s.Action {
	case policy.Replay.String():
		if ex.Retry {
			return "replay " + strconv.Itoa(s.Status)
		}
		return "replay " + strconv.Itoa(s.Status) + " (on_mismatch replay: FIRST's response, not SECOND's)"
	case policy.Reject.String():
		return strconv.Itoa(s.Status) + " " + problemName(s.ProblemType)
	case policy.ExecuteAsNew.String():
		return "execute as a new operation (on_mismatch new)"
	case policy.Execute.String():
		return "execute again"
	}
	return s.Action
}

func valueOrAbsent(v json.RawMessage) string {
	if v == nil {
		return "(absent)"
	}
	return string(v)
}
