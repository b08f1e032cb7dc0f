package audit

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/idemprint/idemprint/fingerprint"
	"github.com/idemprint/idemprint/policy"
)

// Report is what [Run] found. Its JSON form (the field tags) is the output
// of "idemprint audit --json"; [Report.WriteText] writes it for a person.
type Report struct {
	// Inputs lists the logs read, with their format and the requests read
	// in each (malformed ones included).
	Inputs []InputSummary `json:"inputs"`
	// Requests is the number of requests decided; From and To the times of
	// the first and the last.
	Requests int64     `json:"requests"`
	From     time.Time `json:"from"`
	To       time.Time `json:"to"`
	// ReorderWindow and ReorderRequests are the reordering tolerance in
	// force (see [Options]).
	ReorderWindow   string `json:"reorder_window"`
	ReorderRequests int    `json:"reorder_requests"`
	// TenantHeader is the header the tenant was read from, or "" when it
	// came from the envelope; DefaultTenant counts the requests that named
	// none and got [DefaultTenant].
	TenantHeader  string `json:"tenant_header,omitempty"`
	DefaultTenant int64  `json:"default_tenant"`
	// AssumedStatus counts the executions whose status the log does not
	// give: each was completed with a 2xx that its rule caches (200 when
	// the rule caches none of 200, 201, 202 and 204).
	AssumedStatus int64 `json:"assumed_status"`
	// Malformed counts the requests that could not be read, and
	// MalformedRequests lists the first 20; Late counts the requests timed
	// before others already decided, beyond the reordering tolerance, and
	// LateRequests lists the first 20. Neither is decided.
	Malformed         int64          `json:"malformed"`
	MalformedRequests []InputProblem `json:"malformed_requests"`
	Late              int64          `json:"late"`
	LateRequests      []Ref          `json:"late_requests"`
	// Rules reports each rule that governed a request: the policy's in
	// order, then the defaults' rules.
	Rules []RuleReport `json:"rules"`
	// NoRule counts the requests that no rule governs; Unruled lists the
	// routes among them on which a key came back within [UnruledWindow]:
	// candidates for a rule. UnruledOverflow counts the requests of
	// routes beyond the first 1,000.
	NoRule          int64         `json:"no_rule"`
	Unruled         []RouteReport `json:"unruled"`
	UnruledOverflow int64         `json:"unruled_overflow,omitempty"`
}

// InputSummary describes one log read.
type InputSummary struct {
	Name     string `json:"name"`
	Format   string `json:"format"` // FormatJSONL or FormatHAR
	Requests int64  `json:"requests"`
}

// InputProblem is a request that could not be read.
type InputProblem struct {
	Where Ref    `json:"where"`
	Error string `json:"error"`
}

// RuleReport is what one rule would have done.
type RuleReport struct {
	// Pointer and Route name the rule as [policy.Rule] does; the settings
	// that follow are those that shape its answers.
	Pointer        string `json:"pointer"`
	Route          string `json:"route"`
	OnMismatch     string `json:"on_mismatch"`
	MismatchStatus int    `json:"mismatch_status,omitempty"`
	TTL            string `json:"ttl"`
	Lease          string `json:"lease"`
	// Requests is the number of requests the rule governs; Invalid those
	// answered with a 4xx problem before the engine (no tenant, a body
	// over the limit or not strict JSON, a required value missing),
	// InvalidReasons why; MissingKey and MalformedKey those without a
	// key or with a malformed one.
	Requests       int64   `json:"requests"`
	Invalid        int64   `json:"invalid"`
	InvalidReasons []Count `json:"invalid_reasons"`
	MissingKey     int64   `json:"missing_key"`
	MalformedKey   int64   `json:"malformed_key"`
	// Keys counts the keys whose record was made (counted again when a key
	// comes back after its record's life ended), KeysReused those that
	// came back while it lived.
	Keys       int64 `json:"keys"`
	KeysReused int64 `json:"keys_reused"`
	// Retries counts the requests the engine found equal to the record's
	// (in flight, taken over or replayed), Mismatches those of another
	// fingerprint, OtherRoute those whose key was first used on another
	// endpoint.
	Retries    int64 `json:"retries"`
	Mismatches int64 `json:"mismatches"`
	OtherRoute int64 `json:"other_route"`
	// LateCompletions counts the handlers that finished after their
	// reservation was taken over: their responses are not stored.
	LateCompletions int64 `json:"late_completions"`
	// Answers counts the answers, most frequent first.
	Answers []Answer `json:"answers"`
	// Differences lists what differs in mismatches, most frequent first.
	Differences []Difference `json:"differences"`
	// Suggestions are the ignore entries of Patch; Patch is the rule's
	// fingerprint spec with them, or nil when no mismatch is a false
	// conflict.
	Suggestions []Suggestion `json:"suggestions"`
	Patch       *Patch       `json:"patch"`
	// Unanalysed counts the mismatches that differ in more places than
	// the analysis follows (64 paths, 256 distinct sets of paths a rule):
	// they are never counted as false conflicts.
	Unanalysed int64 `json:"unanalysed"`
}

// Count is a name and how often it occurred.
type Count struct {
	Name  string `json:"name"`
	Count int64  `json:"count"`
}

// Answer is one answer of the rule and how many requests got it.
type Answer struct {
	// Action is a policy.Action's name; Reason a policy.Reason's, or
	// "invalid" for a request answered before the engine.
	Action string `json:"action"`
	Reason string `json:"reason"`
	// Status is the answer's status for a rejection or a replay, 0 for an
	// execution or a pass-through.
	Status int `json:"status,omitempty"`
	// Problem is the rejection's problem type, without policy.ProblemBase.
	Problem  string `json:"problem,omitempty"`
	Requests int64  `json:"requests"`
}

// Difference is an intent path, as policy.DiffLabel names it ("#" standing
// for every array index), at which mismatching requests differ.
type Difference struct {
	Path       string `json:"path"`
	Mismatches int64  `json:"mismatches"`
	// Example is the first pair found: the request that made the record,
	// and the mismatching one.
	Example [2]Ref `json:"example"`
}

// Suggestion is an ignore entry of a rule's patch.
type Suggestion struct {
	// Ignore is the entry: a body path, one segment for a member of the
	// root (which drops that name at every depth), with "#" for array
	// elements.
	Ignore string `json:"ignore"`
	// Varies is the number of pairs of requests of one key, among Pairs
	// whose bodies differ, in which the member differs. An entry is
	// suggested only when it varies in more than half of them, and in at
	// least two.
	Varies int64 `json:"varies"`
	Pairs  int64 `json:"pairs"`
	// Removes is the number of mismatches that the patch makes retries
	// only with this entry: without it, they stay mismatches.
	Removes int64 `json:"removes"`
}

// Patch is a suggested change to a policy file: set the member at Pointer
// (a rule's "fingerprint", or the defaults' for a defaults' rule, which
// every rule without its own inherits) to Fingerprint.
type Patch struct {
	Pointer     string           `json:"pointer"`
	Fingerprint fingerprint.Spec `json:"fingerprint"`
	// Removes is the number of mismatches the patch makes retries:
	// computed by fingerprinting the mismatching pairs again under the
	// patched spec, so exactly those.
	Removes int64 `json:"removes"`
}

// RouteReport is a route without a rule on which keys came back.
type RouteReport struct {
	// Route is the method and the path, with the segments that hold a
	// digit written "{}".
	Route      string `json:"route"`
	Requests   int64  `json:"requests"`
	Keys       int64  `json:"keys"`
	KeysReused int64  `json:"keys_reused"`
	// Example is the first reused key's first request and its return.
	Example []Ref `json:"example"`
}

// Findings reports whether the report has anything to act on: a malformed
// or late request, a rejection, a suggested patch, or a route without a
// rule on which keys were reused.
func (r *Report) Findings() bool {
	if r.Malformed > 0 || r.Late > 0 || len(r.Unruled) > 0 {
		return true
	}
	for _, rr := range r.Rules {
		if rr.Patch != nil {
			return true
		}
		for _, a := range rr.Answers {
			if a.Action == policy.Reject.String() {
				return true
			}
		}
	}
	return false
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteText writes the report for a person.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	for i, in := range r.Inputs {
		label := "logs"
		if i > 0 {
			label = ""
		}
		fmt.Fprintf(&b, "%-10s%s (%s, %d %s)\n", label, in.Name, in.Format, in.Requests, plural(in.Requests, "request", "requests"))
	}
	if r.Requests > 0 {
		fmt.Fprintf(&b, "%-10s%d decided, %s to %s, in time order (reordered within %s or %d requests)\n", "requests", r.Requests,
			r.From.Format(time.RFC3339Nano), r.To.Format(time.RFC3339Nano), r.ReorderWindow, r.ReorderRequests)
	} else {
		fmt.Fprintf(&b, "%-10snone decided\n", "requests")
	}
	switch {
	case r.TenantHeader != "":
		fmt.Fprintf(&b, "%-10sfrom the %s header\n", "tenants", r.TenantHeader)
	case r.DefaultTenant > 0:
		fmt.Fprintf(&b, "%-10sfrom the envelope; %d %s no tenant and share the tenant %q\n", "tenants", r.DefaultTenant,
			plural(r.DefaultTenant, "request names", "requests name"), DefaultTenant)
	default:
		fmt.Fprintf(&b, "%-10sfrom the envelope\n", "tenants")
	}
	if r.AssumedStatus > 0 {
		fmt.Fprintf(&b, "%-10s%d %s no status in the log: completed with a 2xx the rule caches\n", "status", r.AssumedStatus,
			plural(r.AssumedStatus, "execution has", "executions have"))
	}
	for i := range r.Rules {
		b.WriteByte('\n')
		r.Rules[i].writeText(&b)
	}
	b.WriteByte('\n')
	fmt.Fprintf(&b, "%-10s%d %s\n", "no rule", r.NoRule, plural(r.NoRule, "request", "requests"))
	if len(r.Unruled) > 0 {
		b.WriteString("  routes on which keys were reused (candidates for a rule)\n")
		for _, rr := range r.Unruled {
			fmt.Fprintf(&b, "    %-40s %d of %d keys reused, %d %s; first %s\n", rr.Route, rr.KeysReused, rr.Keys, rr.Requests,
				plural(rr.Requests, "request", "requests"), refPair(rr.Example[0], rr.Example[1]))
		}
	}
	if r.UnruledOverflow > 0 {
		fmt.Fprintf(&b, "  %d requests of further routes not followed\n", r.UnruledOverflow)
	}
	if r.Malformed > 0 {
		fmt.Fprintf(&b, "\n%-10s%d %s, not decided\n", "malformed", r.Malformed, plural(r.Malformed, "request", "requests"))
		for _, p := range r.MalformedRequests {
			fmt.Fprintf(&b, "  %s: %s\n", p.Where, p.Error)
		}
	}
	if r.Late > 0 {
		fmt.Fprintf(&b, "\n%-10s%d %s out of time order, not decided\n", "late", r.Late, plural(r.Late, "request", "requests"))
		for _, ref := range r.LateRequests {
			fmt.Fprintf(&b, "  %s\n", ref)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func (rr *RuleReport) writeText(b *strings.Builder) {
	fmt.Fprintf(b, "rule %s %s (on_mismatch %s", rr.Pointer, rr.Route, rr.OnMismatch)
	if rr.MismatchStatus != 0 {
		fmt.Fprintf(b, " %d", rr.MismatchStatus)
	}
	fmt.Fprintf(b, ", ttl %s, lease %s)\n", rr.TTL, rr.Lease)
	line := func(name string, n int64, more string) {
		fmt.Fprintf(b, "  %-14s%d%s\n", name, n, more)
	}
	line("requests", rr.Requests, "")
	line("keys", rr.Keys, ", "+strconv.FormatInt(rr.KeysReused, 10)+" reused")
	line("retries", rr.Retries, "")
	line("mismatches", rr.Mismatches, "")
	if rr.OtherRoute > 0 {
		line("other route", rr.OtherRoute, "")
	}
	line("missing key", rr.MissingKey, "")
	line("malformed key", rr.MalformedKey, "")
	if rr.Invalid > 0 {
		var rs []string
		for _, c := range rr.InvalidReasons {
			rs = append(rs, c.Name+": "+strconv.FormatInt(c.Count, 10))
		}
		line("invalid", rr.Invalid, " ("+strings.Join(rs, "; ")+")")
	}
	if rr.LateCompletions > 0 {
		line("late completions", rr.LateCompletions, ": finished after being taken over; not stored")
	}
	if len(rr.Answers) > 0 {
		b.WriteString("  answers\n")
		for _, a := range rr.Answers {
			fmt.Fprintf(b, "    %8d  %s\n", a.Requests, a.text())
		}
	}
	if len(rr.Differences) > 0 {
		b.WriteString("  what differs in mismatches (first record, mismatching request)\n")
		for _, d := range rr.Differences {
			fmt.Fprintf(b, "    %8d  %-24s %s\n", d.Mismatches, d.Path, refPair(d.Example[0], d.Example[1]))
		}
	}
	if rr.Unanalysed > 0 {
		fmt.Fprintf(b, "  %d %s too different to analyse\n", rr.Unanalysed, plural(rr.Unanalysed, "mismatch", "mismatches"))
	}
	if rr.Patch != nil {
		b.WriteString("  suggested ignore entries (mismatches only it removes; pairs of one key in which it varies)\n")
		for _, s := range rr.Suggestions {
			fmt.Fprintf(b, "    %8d  %-24s varies in %d of %d\n", s.Removes, s.Ignore, s.Varies, s.Pairs)
		}
		spec, _ := json.Marshal(rr.Patch.Fingerprint)
		fmt.Fprintf(b, "  patch: set %s to\n    %s\n  it turns %d of %d mismatches into retries\n", rr.Patch.Pointer, spec, rr.Patch.Removes, rr.Mismatches)
	}
}

// text is an answer as the report prints it: "reject 422
// idempotency-key-reuse (mismatch)".
func (a *Answer) text() string {
	s := a.Action
	if a.Status != 0 {
		s += " " + strconv.Itoa(a.Status)
	}
	if a.Problem != "" {
		s += " " + a.Problem
	}
	return s + " (" + a.Reason + ")"
}

// refPair writes two references, the second without the input's name when
// both are in the same input.
func refPair(a, b Ref) string {
	if a.Input != b.Input {
		return a.String() + ", " + b.String()
	}
	return a.String() + ", " + strings.TrimPrefix(b.String(), b.Input)
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// duration writes d as a policy file would: "24h", "90m", "30s".
func duration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// ruleStats is what the replay counts for one rule.
type ruleStats struct {
	rule    *policy.Rule
	rep     RuleReport
	answers map[Answer]int64
	invalid map[string]int64
	an      *ruleAnalysis
}

func (r *replayer) stats(rule *policy.Rule) *ruleStats {
	rs := r.rules[rule]
	if rs != nil {
		return rs
	}
	rs = &ruleStats{
		rule: rule, answers: map[Answer]int64{}, invalid: map[string]int64{},
		an: newRuleAnalysis(rule.Fingerprinter()),
	}
	rs.rep = RuleReport{
		Pointer: rule.Pointer(), Route: rule.Route(), OnMismatch: rule.OnMismatch().String(),
		TTL: duration(rule.TTL()), Lease: duration(rule.Lease()),
	}
	if rule.OnMismatch() == policy.ResolveReject {
		rs.rep.MismatchStatus = rule.MismatchStatus()
	}
	r.rules[rule] = rs
	return rs
}

// count counts the engine's decision.
func (rs *ruleStats) count(d policy.Decision) {
	a := Answer{Action: d.Action.String(), Reason: d.Reason.String()}
	if d.Action == policy.Replay || d.Action == policy.Reject {
		a.Status = d.Response.Status
	}
	if d.Problem != nil {
		a.Problem = strings.TrimPrefix(d.Problem.Type, policy.ProblemBase)
	}
	rs.answers[a]++
	switch d.Reason {
	case policy.ReasonMissingKey:
		rs.rep.MissingKey++
	case policy.ReasonMalformedKey:
		rs.rep.MalformedKey++
	case policy.ReasonRetry:
		rs.rep.Retries++
	case policy.ReasonMismatch:
		rs.rep.Mismatches++
	case policy.ReasonOtherRoute:
		rs.rep.OtherRoute++
	}
}

// invalidRequest counts a request answered before the engine.
func (rs *ruleStats) invalidRequest(it *item) {
	rs.rep.Invalid++
	rs.answers[Answer{Action: policy.Reject.String(), Reason: "invalid", Status: it.status}]++
	if _, ok := rs.invalid[it.invalid]; ok || len(rs.invalid) < maxReasons {
		rs.invalid[it.invalid]++
	}
}

// assumedStatus is the status of an execution the log gives none for: a
// 2xx the rule caches.
func (rs *ruleStats) assumedStatus() int {
	for _, s := range []int{200, 201, 202, 204} {
		if rs.rule.Caches(s) {
			return s
		}
	}
	return 200
}

// finish returns the rule's report, with the analysis's findings.
func (rs *ruleStats) finish(ref func(pos) Ref) RuleReport {
	rep := rs.rep
	rep.Answers = []Answer{}
	for a, n := range rs.answers {
		a.Requests = n
		rep.Answers = append(rep.Answers, a)
	}
	sort.Slice(rep.Answers, func(i, j int) bool {
		x, y := rep.Answers[i], rep.Answers[j]
		if x.Requests != y.Requests {
			return x.Requests > y.Requests
		}
		return x.text() < y.text()
	})
	rep.InvalidReasons = sortedCounts(rs.invalid)
	an := rs.an
	rep.Differences = []Difference{}
	for p, l := range an.labels {
		rep.Differences = append(rep.Differences, Difference{Path: p, Mismatches: l.count, Example: [2]Ref{ref(l.a), ref(l.b)}})
	}
	sort.Slice(rep.Differences, func(i, j int) bool {
		x, y := rep.Differences[i], rep.Differences[j]
		if x.Mismatches != y.Mismatches {
			return x.Mismatches > y.Mismatches
		}
		return x.Path < y.Path
	})
	rep.Unanalysed = an.unanalysed
	rep.Suggestions, rep.Patch = an.suggest(rs.rule)
	if rep.Suggestions == nil {
		rep.Suggestions = []Suggestion{}
	}
	return rep
}

func sortedCounts(m map[string]int64) []Count {
	out := []Count{}
	for k, n := range m {
		out = append(out, Count{k, n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Name < out[j].Name
	})
	return out
}

func sortedRoutes(m map[string]*RouteReport) []RouteReport {
	out := []RouteReport{}
	for _, rr := range m {
		if rr.KeysReused > 0 {
			out = append(out, *rr)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].KeysReused != out[j].KeysReused {
			return out[i].KeysReused > out[j].KeysReused
		}
		return out[i].Route < out[j].Route
	})
	return out
}

func sortRules(rules []*policy.Rule) {
	sort.Slice(rules, func(i, j int) bool { return rules[i].Route() < rules[j].Route() })
}
