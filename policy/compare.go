package policy

import (
	"fmt"
	"slices"
)

// Impact is what deploying one policy in place of another does to the
// records already stored for a route's requests: whether a retry that
// spans the deploy still finds the record of its first attempt, and what
// is made of it. The zero value is [Unchanged]; the constants are ordered
// from harmless to harmful.
type Impact uint8

const (
	// Unchanged: a retry finds its record and is answered as before.
	Unchanged Impact = iota
	// FingerprintsChange: a retry finds its record, but the record was
	// fingerprinted under another spec, so the two cannot be compared:
	// the new rule's on_spec_change answers ("reject": a 409; "replay":
	// the stored response; "new": the retry executes again, as a new
	// operation).
	FingerprintsChange
	// RetriesRejected: a retry finds its record but is rejected, never
	// replayed: the endpoint changed (a key never names operations of two
	// endpoints), its key is now malformed, or the record it executed as
	// new under is no longer read.
	RetriesRejected
	// KeysChange: the storage keys change, or the requests are no longer
	// governed at all: the stored records are orphaned, and a retry within
	// their TTL executes again.
	KeysChange
)

// String returns "unchanged", "fingerprints change", "retries rejected" or
// "storage keys change".
func (i Impact) String() string {
	switch i {
	case Unchanged:
		return "unchanged"
	case FingerprintsChange:
		return "fingerprints change"
	case RetriesRejected:
		return "retries rejected"
	case KeysChange:
		return "storage keys change"
	}
	return "Impact(" + itoa(int(i)) + ")"
}

// MarshalText returns the impact's name.
func (i Impact) MarshalText() ([]byte, error) { return []byte(i.String()), nil }

// RouteChange is what deploying one policy in place of another does to
// the records stored for one route's requests.
type RouteChange struct {
	// Route and Pointer name a rule of the new policy ("METHOD /pattern",
	// or "METHOD *" for the defaults' rule of a method) or, when
	// Ungoverned, of the old one.
	Route, Pointer string
	// Ungoverned reports a route of the old policy some of whose requests
	// the new one no longer governs: they pass through, and a retry
	// executes again. Its Impact is KeysChange.
	Ungoverned bool
	// Impact is the worst impact on the records of the requests the route
	// governs, over the routes of the old policy that governed them.
	Impact Impact
	// From names the route of the old policy ("METHOD /pattern" or
	// "METHOD *") whose records suffer Impact, the first in the old
	// policy's order; "" when Impact is Unchanged, or for an Ungoverned
	// route.
	From string
	// Reasons say what changed for those records, one sentence each.
	Reasons []string
}

// Compare tells, route by route, what deploying the policy next in place
// of prev does to the records that prev's rules stored and that a retry
// spanning the deploy looks for. A storage key holds the tenant, the key
// as the key header and syntax read it, and, with scope.route, the
// endpoint; a record also holds its endpoint and spec digest. So
// changing scope.route, key.header or key.syntax (or, under scope.route,
// the endpoint) orphans the records: the retry finds nothing and executes
// again. Changing a route's endpoint otherwise, lowering key.max_length or
// dropping a "new" resolution gets retries rejected; changing the
// fingerprint spec hands them to on_spec_change. TTLs, leases, caches,
// replay and stored headers apply to new records only.
//
// It returns a RouteChange for every rule of next, in order, and for the
// defaults' rule of each of next's methods: the worst impact over the
// requests it governs that a rule of prev governed (a request no rule of
// prev governed has no record). Then one for each route of prev some of
// whose requests next does not govern (Ungoverned). Paths are compared as
// Parse checks overlaps, exactly and without enumerating them, and the
// work is bounded the same way: policies too many and alike to compare
// within the bound are an error wrapping [ErrTooComplex]. A nil or zero
// Policy has no rules and no defaults.
func Compare(prev, next *Policy) ([]RouteChange, error) {
	old, cur := newSide(prev), newSide(next)
	tooComplex := func() bool { return old.x.exhausted() || cur.x.exhausted() }
	var out []RouteChange
	var g pattern // scratch
	for ni, n := range cur.x.rules {
		if tooComplex() {
			break
		}
		c := RouteChange{Route: n.route, Pointer: n.pointer}
		// Paths of n that a rule of prev governed: they share paths with
		// n, and the generic path of the paths they share goes to both.
		for o := range old.x.sharing(n.method, n.pattern) {
			g = appendShared(g[:0], old.x.rules[o].pattern, n.pattern)
			if old.first(n.method, g) == o && cur.first(n.method, g) == ni {
				c.worsen(old.x.rules[o], n, old.x.rules[o].endpoint == n.endpoint)
			}
		}
		// Paths of n that no rule of prev governed: its defaults did.
		if d := old.fallback(n.method); d != nil && old.first(n.method, generic(n.pattern)) < 0 {
			c.worsen(d, n, !hasParam(n.pattern))
		}
		out = append(out, c)
	}
	for _, d := range cur.defaults {
		c := RouteChange{Route: d.route, Pointer: d.pointer}
		// Paths of prev's rules that no rule of next governs.
		for _, o := range old.byMethod[d.method] {
			if tooComplex() {
				break
			}
			if cur.first(o.method, generic(o.pattern)) < 0 {
				c.worsen(o, d, !hasParam(o.pattern))
			}
		}
		if od := old.fallback(d.method); od != nil {
			c.worsen(od, d, true)
		}
		out = append(out, c)
	}
	for _, o := range old.x.rules {
		if cur.fallback(o.method) == nil && cur.first(o.method, generic(o.pattern)) < 0 {
			out = append(out, ungoverned(o))
		}
	}
	for _, od := range old.defaults {
		if cur.fallback(od.method) == nil {
			out = append(out, ungoverned(od))
		}
	}
	if tooComplex() {
		return nil, errorf(ErrTooComplex, "policy: the policies are too complex to compare within %d steps", maxOverlapSteps)
	}
	return out, nil
}

// side is one policy of a comparison, its rules indexed.
type side struct {
	x         *routeIndex
	byMethod  map[string][]*Rule
	defaults  []*Rule
	fallbacks map[string]*Rule // the defaults by method
}

func newSide(p *Policy) *side {
	s := &side{x: newRouteIndex(), byMethod: map[string][]*Rule{}, fallbacks: map[string]*Rule{}}
	if p != nil {
		for _, r := range p.rules {
			s.x.add(r)
			s.byMethod[r.method] = append(s.byMethod[r.method], r)
		}
		s.defaults = p.fallback
		for _, r := range p.fallback {
			s.fallbacks[r.method] = r
		}
	}
	return s
}

// fallback returns the defaults' rule for the method, or nil.
func (s *side) fallback(method string) *Rule { return s.fallbacks[method] }

// first returns the number of the rule that governs the paths of q, a
// pattern of literals and generic segments, or -1 for none.
func (s *side) first(method string, q pattern) int {
	return s.x.firstCover(method, q, len(s.x.rules))
}

// genericSegment stands for a path segment that no literal of any rule
// names: "{" is not a literal byte.
const genericSegment = "{}"

// generic returns the path of p with, at each parameter, a segment no
// literal names, as a pattern of literals: the rules that match it are
// exactly those that match every path of p.
func generic(p pattern) pattern { return appendShared(nil, p, p) }

// appendShared appends to dst the generic path (see generic) of the paths
// that a and b, which share paths, both match.
func appendShared(dst, a, b pattern) pattern {
	for i := range a {
		switch {
		case !a[i].param:
			dst = append(dst, a[i])
		case !b[i].param:
			dst = append(dst, b[i])
		default:
			dst = append(dst, segment{text: genericSegment})
		}
	}
	return dst
}

func hasParam(p pattern) bool {
	return slices.ContainsFunc(p, func(s segment) bool { return s.param })
}

func ungoverned(o *Rule) RouteChange {
	return RouteChange{
		Route: o.route, Pointer: o.pointer, Ungoverned: true, Impact: KeysChange,
		Reasons: []string{fmt.Sprintf("the new policy no longer governs some of its requests: they pass through, and a retry within the ttl (%v) executes again", o.ttl)},
	}
}

// worsen records the impact on records that o stored of requests that n
// now governs, when it is worse than what c holds. sameEndpoint tells
// whether those requests have the same endpoint under both rules.
func (c *RouteChange) worsen(o, n *Rule, sameEndpoint bool) {
	if impact, _ := compareRules(o, n, sameEndpoint, false); impact > c.Impact {
		c.Impact, c.Reasons = compareRules(o, n, sameEndpoint, true)
		c.From = o.route
	}
}

// compareRules returns the impact on the records that o stored of requests
// that n now governs and, when explain is set, why.
func compareRules(o, n *Rule, sameEndpoint, explain bool) (Impact, []string) {
	impact, reasons := Unchanged, []string(nil)
	say := func(level Impact, format string, args ...any) {
		impact = max(impact, level)
		if explain {
			reasons = append(reasons, fmt.Sprintf(format, args...))
		}
	}
	const orphaned = ": its records are orphaned, and a retry within the ttl (%v) executes again"
	switch {
	case o.scopeRoute != n.scopeRoute:
		say(KeysChange, "scope.route changes from %v to %v"+orphaned, o.scopeRoute, n.scopeRoute, o.ttl)
	case o.scopeRoute && !sameEndpoint:
		say(KeysChange, "the endpoint, part of its storage keys, changes from %s to %s"+orphaned, endpointName(o), endpointName(n), o.ttl)
	}
	if o.keyHeader != n.keyHeader {
		say(KeysChange, "key.header changes from %s to %s"+orphaned, o.keyHeader, n.keyHeader, o.ttl)
	}
	if o.keySyntax != n.keySyntax {
		say(KeysChange, "key.syntax changes from %q to %q"+orphaned, o.keySyntax, n.keySyntax, o.ttl)
	}
	if impact == KeysChange {
		return impact, reasons
	}
	if !sameEndpoint {
		say(RetriesRejected, "the endpoint changes from %s to %s: a retry is rejected as made on another endpoint (%d)",
			endpointName(o), endpointName(n), n.mismatchStatus)
	}
	if n.keySyntax == syntaxPrintable && n.keyMaxLength < o.keyMaxLength {
		say(RetriesRejected, "key.max_length falls from %d to %d: a retry with a longer key is rejected as malformed (400)", o.keyMaxLength, n.keyMaxLength)
	}
	if o.resolvesNew() && !n.resolvesNew() {
		say(RetriesRejected, "no resolution is \"new\" any more: a retry of a request that executed as new no longer finds its record, and on_mismatch %q answers it", n.onMismatch)
	}
	if impact == RetriesRejected {
		return impact, reasons
	}
	if o.fp.SpecDigest() != n.fp.SpecDigest() {
		say(FingerprintsChange, "the fingerprint spec changes: a retry cannot be compared with its record, and on_spec_change %q %s", n.onSpecChange, map[Resolution]string{
			ResolveReject: "rejects it (409)",
			ResolveReplay: "replays the stored response",
			ResolveNew:    "executes it again, as a new operation",
		}[n.onSpecChange])
	}
	return impact, reasons
}

// endpointName names a rule's endpoint in a reason: the route with
// parameter names erased, or for a defaults' rule the method and each path.
func endpointName(r *Rule) string {
	if r.endpoint == "" {
		return r.method + " and each path"
	}
	return r.endpoint
}

// String returns "printable" or "uuid", as written in a policy file.
func (k keySyntax) String() string {
	if k == syntaxUUID {
		return "uuid"
	}
	return "printable"
}
