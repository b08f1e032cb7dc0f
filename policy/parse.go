package policy

import (
	"cmp"
	"errors"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/idemprint/idemprint/canonical"
	"github.com/idemprint/idemprint/fingerprint"
	"github.com/idemprint/idemprint/internal/httpsyntax"
)

// Bounds of a policy file.
const (
	maxPolicyBytes = 1 << 20
	maxPolicyDepth = 32
)

// defaultMethods are the methods governed by the defaults when no rule
// matches: the non-idempotent ones. Others pass through unless a rule names
// them.
var defaultMethods = []string{http.MethodPost, http.MethodPatch}

// Parse parses a policy file. The file is strict JSON (RFC 8259 with unique
// member names and valid UTF-8, as package canonical requires) of the shape
// described in the package documentation. Unknown fields, wrong types, bad
// routes, durations, statuses, cache entries and fingerprint specs,
// settings without effect, and rules that overlap or can never match are
// all errors.
//
// Parse reports every problem it finds, not only the first: the error is a
// [*ParseError] listing the first [MaxFindings] in document order, each
// with its JSON Pointer and byte offset, and counting all of them. A rule
// that overlaps earlier rules is one problem, naming the first. A document
// that is not strict JSON is reported as one problem wrapping the
// [*canonical.Error], so that [errors.As] finds it through the ParseError;
// the problem's message is the canonical error's without its location,
// which the Finding carries.
//
// Its time grows near-linearly with the size of the file, up to the limit
// of 1 MiB, whatever the file holds: many rules that all share paths, long
// lists, wide fingerprint specs. The overlap check has a bound on its work
// that no policy written by hand approaches (see [ErrTooComplex]).
func Parse(data []byte) (*Policy, error) {
	if _, err := (canonical.Options{MaxBytes: maxPolicyBytes, MaxDepth: maxPolicyDepth}).Transform(data); err != nil {
		p := Finding{Err: err}
		var ce *canonical.Error
		if errors.As(err, &ce) {
			p = Finding{Pointer: ce.Pointer, Offset: ce.Offset, Err: &located{ce}}
		}
		return nil, &ParseError{Findings: []Finding{p}, Total: 1}
	}
	root, err := decodeTree(data)
	if err != nil { // not reached: canonical accepted data
		return nil, &ParseError{Findings: []Finding{{Err: errorf(canonical.ErrSyntax, "%v", err)}}, Total: 1}
	}
	p := &parser{routes: newRouteIndex()}
	pol := p.policy(root)
	if p.total > 0 {
		p.trim()
		return nil, &ParseError{Findings: slices.Clip(p.problems), Total: p.total}
	}
	return pol, nil
}

// located wraps a *canonical.Error whose location a Finding already
// carries: its message is the error's without the location, and it unwraps
// to the *canonical.Error (and through it to the sentinel).
type located struct{ err *canonical.Error }

func (l *located) Error() string { return l.err.Err.Error() }
func (l *located) Unwrap() error { return l.err }

// parser walks a decoded policy document and collects its problems.
type parser struct {
	problems []Finding // the first in document order, and some after them
	total    int       // the problems found
	routes   *routeIndex

	wholeBody *fingerprint.Fingerprinter // the empty spec, compiled
}

func (p *parser) fail(ptr string, n *node, err error) {
	p.add(Finding{Pointer: ptr, Offset: n.off, Err: err})
}

// add records a problem. It keeps at most 2*MaxFindings, trimming them to
// the first MaxFindings in document order when there are more.
func (p *parser) add(pr Finding) {
	p.total++
	p.problems = append(p.problems, pr)
	if len(p.problems) == 2*MaxFindings {
		p.trim()
	}
}

// trim sorts the problems by offset, stably, and keeps the first
// MaxFindings. Those it drops come after MaxFindings others in any order
// of the whole list, and those it keeps were found before any found later,
// so trimming as it goes keeps what one sort at the end would.
func (p *parser) trim() {
	slices.SortStableFunc(p.problems, func(a, b Finding) int { return cmp.Compare(a.Offset, b.Offset) })
	if len(p.problems) > MaxFindings {
		clear(p.problems[MaxFindings:])
		p.problems = p.problems[:MaxFindings]
	}
}

func (p *parser) policy(root *node) *Policy {
	if !p.object("", root, "defaults", "rules") {
		return nil
	}
	defaults := settings{ptr: "/defaults"}
	methods := defaultMethods
	if n := root.get("defaults"); n != nil {
		if p.object("/defaults", n, append(settingMembers(), "methods")...) {
			defaults = p.settings("/defaults", n)
			if m := n.get("methods"); m != nil {
				methods = p.methods("/defaults/methods", m)
			}
		}
	}
	base := settings{}
	p.check(&defaults, &base)
	pol := &Policy{}
	for _, m := range methods {
		r := p.rule(&defaults, &base, "/defaults", m)
		r.route = m + " *"
		pol.fallback = append(pol.fallback, r)
	}

	rules := root.get("rules")
	if rules == nil {
		p.fail("/rules", root, errorf(ErrMissing, `missing field "rules" (an array of rules, which may be empty)`))
		return pol
	}
	if rules.kind != kindArray {
		p.fail("/rules", rules, typeError(rules, kindArray))
		return pol
	}
	for i, n := range rules.elems {
		ptr := "/rules/" + strconv.Itoa(i)
		if !p.object(ptr, n, append(settingMembers(), "route")...) {
			continue
		}
		route := n.get("route")
		if route == nil {
			p.fail(ptr, n, errorf(ErrMissing, `missing field "route" (such as "POST /v1/payments")`))
			continue
		}
		s, ok := p.str(ptr+"/route", route)
		if !ok {
			continue
		}
		method, pat, err := parseRoute(s)
		if err != nil {
			p.fail(ptr+"/route", route, err)
			continue
		}
		own := p.settings(ptr, n)
		p.check(&own, &defaults)
		r := p.rule(&own, &defaults, ptr, method)
		r.pattern, r.route, r.endpoint = pat, s, method+" "+pat.endpoint()
		p.overlap(r, route)
		pol.rules = append(pol.rules, r)
	}
	return pol
}

// overlap reports r (whose route is at n) when it is unreachable or, under
// first-match order, some path it matches goes to an earlier rule that is
// not strictly more specific than r: a later rule may only be the general
// case of earlier exceptions. It is exact (a path that r shares with an
// earlier rule e but that a rule before e takes is no overlap with e), and
// reports each rule once; see routeIndex. It then adds r to the index.
func (p *parser) overlap(r *Rule, n *node) {
	x := p.routes
	defer x.add(r)
	if x.exhausted() {
		return // reported at the rule that used the bound up
	}
	// Its overlaps with other rules do not matter when it is unreachable.
	if e := x.firstCover(r.method, r.pattern, len(x.rules)); e >= 0 {
		p.fail(r.pointer+"/route", n, errorf(ErrUnreachable,
			"unreachable: %s (%s) comes first and matches every path this route matches", x.rules[e].pointer, shorten(x.rules[e].route, maxEcho)))
	} else if e := x.firstOverlap(r); e >= 0 {
		p.fail(r.pointer+"/route", n, errorf(ErrOverlap,
			"overlaps %s (%s): some paths match both and neither route is the more specific", x.rules[e].pointer, shorten(x.rules[e].route, maxEcho)))
	}
	if x.exhausted() {
		p.fail(r.pointer+"/route", n, errorf(ErrTooComplex,
			"too complex to check: the overlap check reached its bound of %d steps at this rule, after %d rules; no later rule was checked",
			maxOverlapSteps, len(x.rules)))
	}
}

// maxEcho bounds what a problem message quotes of the policy, such as
// another rule's route: messages do not repeat large parts of the input.
const maxEcho = 120

// rule resolves s over parent over the built-in defaults.
func (p *parser) rule(s, parent *settings, ptr, method string) *Rule {
	r := &Rule{pointer: ptr, method: method}
	for i := range settingTable {
		st := &settingTable[i]
		st.set(r, resolvedAny(st, s, parent))
	}
	if r.fp == nil {
		if p.wholeBody == nil { // compiled once, shared by the rules without a spec
			fp, err := fingerprint.Compile(fingerprint.Spec{})
			if err != nil { // not reached: the empty spec is the whole body
				p.fail(ptr, s.node, err)
			}
			p.wholeBody = fp
		}
		r.fp = p.wholeBody
	}
	if r.fp != nil {
		r.fpHost = slices.ContainsFunc(r.fp.Spec().Headers, func(h string) bool { return strings.EqualFold(h, "Host") })
	}
	return r
}

// check reports the settings of s that have no effect once resolved over
// parent: each is reported where s sets it.
func (p *parser) check(s, parent *settings) {
	if s.node == nil {
		return
	}
	at := func(name string) (string, *node) {
		field := "/" + strings.ReplaceAll(name, ".", "/")
		return s.ptr + field, s.node.lookup(field)
	}
	onMismatch := resolved[Resolution]("on_mismatch", s, parent)
	if s.has("mismatch_status") && onMismatch != ResolveReject {
		ptr, n := at("mismatch_status")
		p.fail(ptr, n, errorf(ErrIneffective, "mismatch_status has no effect: on_mismatch is %q, not \"reject\"", onMismatch))
	}
	if s.has("key.max_length") && resolved[keySyntax]("key.syntax", s, parent) == syntaxUUID {
		ptr, n := at("key.max_length")
		p.fail(ptr, n, errorf(ErrIneffective, `max_length has no effect: the key syntax is "uuid"`))
	}
	ttl, lease := resolved[time.Duration]("ttl", s, parent), resolved[time.Duration]("lease", s, parent)
	if (s.has("ttl") || s.has("lease")) && lease >= ttl {
		name := "lease"
		if !s.has("lease") {
			name = "ttl"
		}
		ptr, n := at(name)
		p.fail(ptr, n, errorf(ErrIneffective, "the lease (%v) must be shorter than the ttl (%v): a reservation would outlive its record", lease, ttl))
	}
	// Settings bounded by the lease, reported where s sets one of the two.
	for _, d := range [...]struct{ name, why string }{
		{"retry_after", "a client would wait past a reservation's end"},
		{"wait", "once the lease is over the reservation is stale, and the waiting request takes it over instead of waiting"},
	} {
		if v := resolved[time.Duration](d.name, s, parent); (s.has(d.name) || s.has("lease")) && v > lease {
			name := d.name
			if !s.has(d.name) {
				name = "lease"
			}
			ptr, n := at(name)
			p.fail(ptr, n, errorf(ErrIneffective, "%s (%v) is longer than the lease (%v): %s", d.name, v, lease, d.why))
		}
	}
	if intent, ok := s.set["store_intent"].(bool); ok && intent && onMismatch != ResolveReject {
		ptr, n := at("store_intent")
		p.fail(ptr, n, errorf(ErrIneffective, "store_intent has no effect: on_mismatch is %q, not \"reject\", so no rejection lists differing fields", onMismatch))
	}
}

// keyHeader parses the name of the key's header.
func (p *parser) keyHeader(ptr string, n *node) *string {
	h, ok := p.str(ptr, n)
	if !ok {
		return nil
	}
	switch why := unreadableHeader(h); {
	case !httpsyntax.IsToken(h):
		p.fail(ptr, n, errorf(ErrInvalid, "invalid header name %q", shorten(h, maxEcho)))
	case why != "":
		p.fail(ptr, n, errorf(ErrInvalid, "the key cannot be carried in %s: %s", h, why))
	default:
		return &h
	}
	return nil
}

// keySyntax parses the syntax of a key's content.
func (p *parser) keySyntax(ptr string, n *node) *keySyntax {
	t, ok := p.str(ptr, n)
	if !ok {
		return nil
	}
	var k keySyntax
	switch t {
	case "printable":
		k = syntaxPrintable
	case "uuid":
		k = syntaxUUID
	default:
		p.fail(ptr, n, errorf(ErrInvalid, `invalid key syntax %q: want "printable" or "uuid"`, t))
		return nil
	}
	return &k
}

// keyMaxLength parses the longest key a rule accepts.
func (p *parser) keyMaxLength(ptr string, n *node) *int {
	c, ok := p.integer(ptr, n)
	if !ok {
		return nil
	}
	if c < 1 || c > maxKeyLength {
		p.fail(ptr, n, errorf(ErrInvalid, "max_length %d is out of range 1 to %d", c, maxKeyLength))
		return nil
	}
	return &c
}

// mismatchStatus parses the status of a key-reuse rejection.
func (p *parser) mismatchStatus(ptr string, n *node) *int {
	c, ok := p.integer(ptr, n)
	if !ok {
		return nil
	}
	if c != 400 && c != 409 && c != 422 {
		p.fail(ptr, n, errorf(ErrInvalid, "mismatch_status %d is not allowed: want 422 (the IETF draft), 409 or 400", c))
		return nil
	}
	return &c
}

// retryAfter parses a Retry-After: a positive duration of whole seconds.
func (p *parser) retryAfter(ptr string, n *node) *time.Duration {
	d := p.duration(ptr, n, false)
	if d != nil && *d%time.Second != 0 {
		p.fail(ptr, n, errorf(ErrDuration, "invalid retry_after %q: Retry-After counts whole seconds", n.str))
		return nil
	}
	return d
}

func (p *parser) positiveDuration(ptr string, n *node) *time.Duration {
	return p.duration(ptr, n, false)
}

func (p *parser) nonNegativeDuration(ptr string, n *node) *time.Duration {
	return p.duration(ptr, n, true)
}

// spec parses a fingerprint spec and compiles it. Its fields are those of
// fingerprint.Spec, found by their JSON names.
func (p *parser) spec(ptr string, n *node) *fingerprint.Fingerprinter {
	var spec fingerprint.Spec
	sv := reflect.ValueOf(&spec).Elem()
	fields := map[string]reflect.Value{}
	var names []string
	for i := 0; i < sv.NumField(); i++ {
		name, _, _ := strings.Cut(sv.Type().Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			fields[name] = sv.Field(i)
			names = append(names, name)
		}
	}
	if !p.object(ptr, n, names...) {
		return nil
	}
	before := p.total
	for _, m := range n.members {
		f, ok := fields[m.name]
		if !ok {
			continue
		}
		fp := appendToken(ptr, m.name)
		switch f.Kind() {
		case reflect.String:
			if s, ok := p.str(fp, m.val); ok {
				f.SetString(s)
			}
		case reflect.Slice:
			if ss, ok := p.strings(fp, m.val); ok {
				f.Set(reflect.ValueOf(ss))
			}
		}
	}
	if p.total > before {
		return nil
	}
	fpr, err := fingerprint.Compile(spec)
	if err != nil {
		var se *fingerprint.SpecError
		if errors.As(err, &se) {
			p.fail(ptr+se.Pointer, n.lookup(se.Pointer), se.Err)
		} else {
			p.fail(ptr, n, err)
		}
		return nil
	}
	// Host reaches the fingerprint through Fingerprinter.HTTPRequest, which
	// puts Request.Host back; the others never reach a handler's header.
	bad := false
	for i, h := range spec.Headers {
		if why := unreadableHeader(h); why != "" && !strings.EqualFold(h, "Host") {
			hp := ptr + "/headers/" + strconv.Itoa(i)
			p.fail(hp, n.lookup("/headers/"+strconv.Itoa(i)), errorf(ErrInvalid, "%s cannot be part of the intent: %s", h, why))
			bad = true
		}
	}
	if bad {
		return nil
	}
	return fpr
}

// unreadableHeader says why a request header of this name does not reach
// a handler in its Request.Header, or "" when it does.
func unreadableHeader(name string) string {
	switch http.CanonicalHeaderKey(name) {
	case "Host":
		return "net/http moves it out of the header map, into Request.Host"
	case "Content-Length":
		return "net/http reads it into Request.ContentLength, and removes it from a chunked request"
	case "Transfer-Encoding":
		return "net/http moves it out of the header map, into Request.TransferEncoding"
	case "Trailer":
		return "net/http moves it out of the header map of a chunked request, into Request.Trailer"
	case "Connection", "Keep-Alive", "Proxy-Connection", "Te", "Upgrade":
		return "it is hop-by-hop (RFC 9110 §7.6.1): a proxy removes it, and HTTP/2 forbids it or restricts its value"
	}
	return ""
}

func (p *parser) resolution(ptr string, n *node) *Resolution {
	s, ok := p.str(ptr, n)
	if !ok {
		return nil
	}
	var r Resolution
	switch s {
	case "reject":
		r = ResolveReject
	case "replay":
		r = ResolveReplay
	case "new":
		r = ResolveNew
	default:
		p.fail(ptr, n, errorf(ErrInvalid, `invalid value %q: want "reject", "replay" or "new"`, s))
		return nil
	}
	return &r
}

// cache parses a list of statuses to store: classes and codes, each
// possibly negated. A status is cached when a positive entry holds it and no
// negated one does.
func (p *parser) cache(ptr string, n *node) *statusSet {
	if n.kind != kindArray {
		p.fail(ptr, n, typeError(n, kindArray))
		return nil
	}
	if len(n.elems) == 0 {
		p.fail(ptr, n, errorf(ErrCache, `an empty cache stores nothing: list the statuses to replay, such as ["2xx"]`))
		return nil
	}
	before := p.total
	entries := make([]cacheEntry, len(n.elems))
	valid := make([]bool, len(n.elems))
	for i, e := range n.elems {
		s, ok := p.str(ptr+"/"+strconv.Itoa(i), e)
		if !ok {
			continue
		}
		ce, err := parseCacheEntry(s)
		if err != nil {
			p.fail(ptr+"/"+strconv.Itoa(i), e, err)
			continue
		}
		entries[i], valid[i] = ce, true
	}
	// A repeated entry is reported as such; the others are compared in
	// pairs, and there are at most 808 of them (four classes and 400 codes,
	// each perhaps negated), whatever the length of the list.
	var distinct []int
	seen := map[cacheEntry]int{}
	for i, e := range entries {
		if !valid[i] {
			continue
		}
		if j, ok := seen[e]; ok {
			p.fail(ptr+"/"+strconv.Itoa(i), n.elems[i], errorf(ErrCache, "%q repeats entry %d", shorten(n.elems[i].str, maxEcho), j))
			continue
		}
		seen[e] = i
		distinct = append(distinct, i)
	}
	for _, i := range distinct {
		e := entries[i]
		ep, en := ptr+"/"+strconv.Itoa(i), n.elems[i]
		covered, touched := false, false
		for _, j := range distinct {
			f := entries[j]
			if j == i {
				continue
			}
			if f.not == e.not && f.contains(e) {
				p.fail(ep, en, errorf(ErrCache, "%q is redundant: %q holds it", n.elems[i].str, n.elems[j].str))
			}
			if f.not != e.not && (f.contains(e) || e.contains(f)) {
				if e.not {
					touched = true
				} else if f.contains(e) {
					covered = true
				}
			}
		}
		switch {
		case e.not && !touched:
			p.fail(ep, en, errorf(ErrCache, "%q has no effect: no entry caches those statuses", n.elems[i].str))
		case !e.not && covered:
			p.fail(ep, en, errorf(ErrCache, "%q has no effect: a negated entry excludes all of it", n.elems[i].str))
		}
	}
	if p.total > before {
		return nil
	}
	var set statusSet
	for _, e := range entries {
		if !e.not {
			set.add(e.lo, e.hi)
		}
	}
	for _, e := range entries {
		if e.not {
			set.remove(e.lo, e.hi)
		}
	}
	return &set
}

func (p *parser) replayHeader(ptr string, n *node) *[2]string {
	s, ok := p.str(ptr, n)
	if !ok {
		return nil
	}
	if s == "" {
		return &[2]string{}
	}
	name, value, ok := strings.Cut(s, ":")
	value = strings.Trim(value, " \t")
	if !ok || !httpsyntax.IsToken(name) || value == "" || !isFieldValue(value) {
		p.fail(ptr, n, errorf(ErrInvalid, `invalid replay_header %q: want "Name: value", such as "Idempotent-Replayed: true", or "" for none`, s))
		return nil
	}
	name = http.CanonicalHeaderKey(name)
	if reservedReplayName(name) {
		p.fail(ptr, n, errorf(ErrInvalid, "invalid replay_header %q: %s describes the stored response or its connection; the replay header may not replace it", s, name))
		return nil
	}
	return &[2]string{name, value}
}

// reservedReplayName reports whether the canonical header name is one the
// replay header may not replace in a stored response: a hop-by-hop field
// (RFC 9110 §7.6.1, and those RFC 7230 §6.1 listed) or one that describes
// the representation or its framing (RFC 9110 §8: Content-*, and the
// validators ETag and Last-Modified).
func reservedReplayName(name string) bool {
	switch name {
	case "Connection", "Keep-Alive", "Proxy-Connection", "Proxy-Authenticate", "Proxy-Authorization",
		"Te", "Trailer", "Transfer-Encoding", "Upgrade", "Etag", "Last-Modified":
		return true
	}
	return strings.HasPrefix(name, "Content-")
}

// isFieldValue reports whether s is a header field value of visible ASCII,
// spaces and tabs (RFC 9110 §5.5, without obsolete text).
func isFieldValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 0x20 || c > 0x7e) && c != '\t' {
			return false
		}
	}
	return true
}

// excludeHeaders parses a list of response header names never to store:
// tokens, each once (in any case), none that is never stored anyway.
func (p *parser) excludeHeaders(ptr string, n *node) *[]string {
	ss, ok := p.strings(ptr, n)
	if !ok {
		return nil
	}
	out := []string{}
	seen := map[string]int{}
	for i, h := range ss {
		ep, name := ptr+"/"+strconv.Itoa(i), http.CanonicalHeaderKey(h)
		j, dup := seen[name]
		switch {
		case !httpsyntax.IsToken(h):
			p.fail(ep, n.elems[i], errorf(ErrInvalid, "invalid header name %q", shorten(h, maxEcho)))
		case dup:
			p.fail(ep, n.elems[i], errorf(ErrInvalid, "header %q is listed twice, as entry %d and here (names are case-insensitive)", shorten(h, maxEcho), j))
		case neverStored(name):
			p.fail(ep, n.elems[i], errorf(ErrIneffective, "%s is never stored for replay, whatever exclude_headers says", name))
		default:
			seen[name] = i
			out = append(out, name)
		}
	}
	return &out
}

func (p *parser) methods(ptr string, n *node) []string {
	ss, ok := p.strings(ptr, n)
	if !ok {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for i, m := range ss {
		ep := ptr + "/" + strconv.Itoa(i)
		switch {
		case !httpsyntax.IsToken(m) || strings.ToUpper(m) != m:
			p.fail(ep, n.elems[i], errorf(ErrInvalid, "invalid method %q: want an upper-case HTTP method such as \"POST\"", shorten(m, maxEcho)))
		case seen[m]:
			p.fail(ep, n.elems[i], errorf(ErrInvalid, "method %q is listed twice", shorten(m, maxEcho)))
		default:
			seen[m] = true
			out = append(out, m)
		}
	}
	return out
}

// object reports whether n is an object, and reports each member not named
// in known.
func (p *parser) object(ptr string, n *node, known ...string) bool {
	if n.kind != kindObject {
		p.fail(ptr, n, typeError(n, kindObject))
		return false
	}
	for _, m := range n.members {
		if slices.Contains(known, m.name) {
			continue
		}
		msg := "unknown field " + strconv.Quote(shorten(m.name, maxEcho))
		if s := suggest(m.name, known); s != "" {
			msg += " (did you mean " + strconv.Quote(s) + "?)"
		}
		p.add(Finding{Pointer: appendToken(ptr, m.name), Offset: m.off, Err: errorf(ErrUnknownField, "%s", msg)})
	}
	return true
}

// suggest returns the known name that name may be a misspelling of, by
// case, dashes and underscores.
func suggest(name string, known []string) string {
	norm := func(s string) string {
		return strings.Map(func(r rune) rune {
			if r == '_' || r == '-' {
				return -1
			}
			return unicode.ToLower(r)
		}, s)
	}
	if len(name) > 2*maxEcho { // longer than any known name, however spelt
		return ""
	}
	n := norm(name)
	for _, k := range known {
		if norm(k) == n {
			return k
		}
	}
	return ""
}

func (p *parser) str(ptr string, n *node) (string, bool) {
	if n.kind != kindString {
		p.fail(ptr, n, typeError(n, kindString))
		return "", false
	}
	return n.str, true
}

func (p *parser) strings(ptr string, n *node) ([]string, bool) {
	if n.kind != kindArray {
		p.fail(ptr, n, typeError(n, kindArray))
		return nil, false
	}
	ok := true
	ss := make([]string, len(n.elems))
	for i, e := range n.elems {
		if s, good := p.str(ptr+"/"+strconv.Itoa(i), e); good {
			ss[i] = s
		} else {
			ok = false
		}
	}
	return ss, ok
}

func (p *parser) boolean(ptr string, n *node) *bool {
	if n.kind != kindBool {
		p.fail(ptr, n, typeError(n, kindBool))
		return nil
	}
	b := n.boolean
	return &b
}

func (p *parser) integer(ptr string, n *node) (int, bool) {
	if n.kind != kindNumber {
		p.fail(ptr, n, typeError(n, kindNumber))
		return 0, false
	}
	c, err := strconv.Atoi(n.str)
	if err != nil {
		p.fail(ptr, n, errorf(ErrType, "wrong type: want an integer, got %s", n.str))
		return 0, false
	}
	return c, true
}

// duration parses a positive Go duration string, or with zero a
// non-negative one.
func (p *parser) duration(ptr string, n *node, zero bool) *time.Duration {
	s, ok := p.str(ptr, n)
	if !ok {
		return nil
	}
	d, err := time.ParseDuration(s)
	switch {
	case strings.HasPrefix(s, "+"):
		p.fail(ptr, n, errorf(ErrDuration, `invalid duration %q: no sign: write it as %q`, s, s[1:]))
		return nil
	case err != nil && strings.HasSuffix(s, "d"):
		p.fail(ptr, n, errorf(ErrDuration, `invalid duration %q: Go durations have no days; write hours, such as "24h"`, s))
		return nil
	case err != nil:
		p.fail(ptr, n, errorf(ErrDuration, `invalid duration %q: want a Go duration such as "24h", "30s" or "1h30m"`, s))
		return nil
	case d < 0 && zero:
		p.fail(ptr, n, errorf(ErrDuration, "invalid duration %q: must not be negative", s))
		return nil
	case d <= 0 && !zero:
		p.fail(ptr, n, errorf(ErrDuration, "invalid duration %q: must be positive", s))
		return nil
	}
	return &d
}

func typeError(n *node, want kind) error {
	return errorf(ErrType, "wrong type: want %s, got %s", want, n.kind)
}

func itoa(i int) string { return strconv.Itoa(i) }
