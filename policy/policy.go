package policy

import (
	"net/http"
	"slices"
	"time"

	"github.com/idemprint/idemprint/fingerprint"
)

// Policy is a parsed policy file: ordered rules, each for a method and a
// route pattern, and the defaults that govern the methods no rule matches.
//
// A Policy is created by [Parse] and never changes afterwards; it is safe
// for concurrent use. The zero value matches no request.
type Policy struct {
	rules    []*Rule
	fallback []*Rule // one per method of "defaults"/"methods"
}

// Match returns the rule for a request with the given method and path: the
// first rule whose method equals method and whose pattern matches path, or
// else, for a method listed in the defaults' methods (POST and PATCH unless
// the policy says otherwise), the defaults' rule for that method. It returns
// false when the request passes through without idempotency.
//
// The path is matched as given, segment by segment: pass the decoded path
// that the router matched (URL.Path), without the query. A literal segment
// matches itself only, a parameter any one non-empty segment; an empty
// segment (as in a trailing slash) never matches a rule. Match does not
// allocate.
func (p *Policy) Match(method, path string) (*Rule, bool) {
	if p == nil {
		return nil, false
	}
	for _, r := range p.rules {
		if r.method == method && r.pattern.match(path) {
			return r, true
		}
	}
	for _, r := range p.fallback {
		if r.method == method {
			return r, true
		}
	}
	return nil, false
}

// Rules returns the policy's rules in document order, without the defaults'
// rules. The slice is a copy; the rules are shared.
func (p *Policy) Rules() []*Rule { return slices.Clone(p.rules) }

// Resolution is what a rule does when a key comes back with a request that
// cannot be treated as a retry of the one stored. The zero value is
// [ResolveReject].
type Resolution uint8

const (
	// ResolveReject answers with a problem and executes nothing: the IETF
	// Idempotency-Key draft, Stripe, AWS (IdempotentParameterMismatch).
	ResolveReject Resolution = iota
	// ResolveReplay answers with the stored response, whatever the new
	// request says: the key alone names the operation (Qonto).
	ResolveReplay
	// ResolveNew executes the request as a new operation whose identity is
	// the key together with its fingerprint (Checkbook).
	ResolveNew
)

// String returns "reject", "replay" or "new", as written in a policy file.
func (r Resolution) String() string {
	switch r {
	case ResolveReject:
		return "reject"
	case ResolveReplay:
		return "replay"
	case ResolveNew:
		return "new"
	}
	return "Resolution(" + itoa(int(r)) + ")"
}

// MarshalText returns the resolution as written in a policy file.
func (r Resolution) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// Rule is the declared behaviour of one route: how its key is read and
// scoped, how its requests are fingerprinted, what a mismatch does, which
// responses are stored and for how long. Its methods [Rule.StorageKeys],
// [Rule.Decide] and [Rule.Complete] are the engine.
//
// A Rule is created by [Parse] and never changes afterwards; it is safe for
// concurrent use. The zero value is not usable.
type Rule struct {
	pointer string // "/rules/3", or "/defaults" for a defaults' rule
	method  string
	pattern pattern // nil for a defaults' rule, which matches any path
	route   string  // "POST /v1/payments/{id}", or "POST *" for a defaults' rule
	// endpoint is the route with parameter names erased, "POST
	// /v1/payments/{}": what records are compared and scoped by. It is ""
	// for a defaults' rule, whose endpoint is the method and the request's
	// path.
	endpoint string

	keyHeader    string // in canonical form
	keyRequired  bool
	keySyntax    keySyntax
	keyMaxLength int
	scopeRoute   bool

	fp             *fingerprint.Fingerprinter
	fpHost         bool // fp's spec declares the Host header
	onMismatch     Resolution
	mismatchStatus int
	onSpecChange   Resolution
	cache          statusSet
	ttl            time.Duration
	lease          time.Duration
	retryAfter     time.Duration // 0: the rest of the lease
	wait           time.Duration
	replayName     string // "" for no replay header
	replayValue    string
	storeIntent    bool
	exclude        map[string]bool // canonical names of response headers not stored; nil for none
}

// Pointer returns the JSON Pointer of the rule in its policy file:
// "/rules/N", or "/defaults" for the rule that governs a method no rule
// matches.
func (r *Rule) Pointer() string { return r.pointer }

// Route returns "METHOD /pattern" as written in the policy file, or
// "METHOD *" for a defaults' rule.
func (r *Rule) Route() string { return r.route }

// Fingerprinter returns the compiled fingerprint spec of the rule.
func (r *Rule) Fingerprinter() *fingerprint.Fingerprinter { return r.fp }

// KeyHeader returns the name, in canonical form, of the header that carries
// the key.
func (r *Rule) KeyHeader() string { return r.keyHeader }

// KeyRequired reports whether a request without a key is rejected (true) or
// passes through without idempotency (false).
func (r *Rule) KeyRequired() bool { return r.keyRequired }

// OnMismatch returns what the rule does when a key comes back with a request
// of another fingerprint.
func (r *Rule) OnMismatch() Resolution { return r.onMismatch }

// MismatchStatus returns the status of a key-reuse rejection: 422 (the IETF
// draft, the default), 409 or 400.
func (r *Rule) MismatchStatus() int { return r.mismatchStatus }

// OnSpecChange returns what the rule does when the stored record was
// fingerprinted under another spec than the rule's (a deploy changed the
// intent mid-retry), so that the two fingerprints cannot be compared.
func (r *Rule) OnSpecChange() Resolution { return r.onSpecChange }

// TTL returns how long a completed response is kept and replayed.
func (r *Rule) TTL() time.Duration { return r.ttl }

// Lease returns how long an in-flight reservation excludes other executions
// of its key; after it, a stale reservation may be taken over.
func (r *Rule) Lease() time.Duration { return r.lease }

// Caches reports whether a response with this status is stored and
// replayed. Any other response releases its reservation, so that a retry
// executes again.
func (r *Rule) Caches(status int) bool { return r.cache.has(status) }

// StoresIntent reports whether records keep the intent projection of their
// request (see [fingerprint.Fingerprinter.AppendIntent]), which lets a
// key-reuse rejection list the fields that differ. It is off by default (a
// projection may hold personal data), and off whatever the defaults say
// when the rule does not reject a mismatch, since nothing would read it.
func (r *Rule) StoresIntent() bool { return r.storeIntent }

// ReplayHeader returns the header added to every replayed response, or two
// empty strings when the rule adds none.
func (r *Rule) ReplayHeader() (name, value string) { return r.replayName, r.replayValue }

// Wait returns how long a request that Decide answers with an in-flight
// problem ([TypeInFlight]: it met the running reservation of an equal
// request) may wait for that request's result before it is answered with
// the problem: the "wait" setting, 0 (answer at once) by default, at most
// the lease. The engine does not wait, having no clock: a caller that
// waits reads the records again and calls Decide again, now and then,
// until the answer is another or Wait has passed since the first one, and
// then answers the last decision.
func (r *Rule) Wait() time.Duration { return r.wait }

// StoresHeader reports whether [Rule.Complete] keeps a response header of
// this name (compared case-insensitively) in the record it stores for
// replay. It never keeps Set-Cookie, Set-Cookie2, Authorization,
// Proxy-Authorization, the hop-by-hop headers (Connection, Keep-Alive,
// Proxy-Connection, TE, Trailer, Transfer-Encoding, Upgrade) nor
// Content-Length, and not those the rule's exclude_headers lists. Nor does
// it keep, from one response, the headers that its Connection header
// names, which StoresHeader cannot know.
func (r *Rule) StoresHeader(name string) bool {
	name = http.CanonicalHeaderKey(name)
	return !neverStored(name) && !r.exclude[name]
}

// neverStored reports whether a response header (its canonical name) is
// never stored for replay: it belongs to one client (a cookie set for it,
// credentials), to one connection (hop-by-hop, RFC 9110 §7.6.1), or to one
// encoding of the body (Content-Length, which the replay computes again).
func neverStored(name string) bool {
	return mayBeNeverStored(name) && slices.Contains(neverStoredNames[:], name)
}

// neverStoredNames are the names neverStored refuses, in canonical form.
var neverStoredNames = [...]string{
	"Set-Cookie", "Set-Cookie2", "Authorization", "Proxy-Authorization",
	"Connection", "Keep-Alive", "Proxy-Connection", "Te", "Trailer", "Transfer-Encoding", "Upgrade",
	"Content-Length",
}

// neverStoredLens has bit n%64 set when a name of neverStoredNames is n
// bytes long.
var neverStoredLens = func() (m uint64) {
	for _, name := range neverStoredNames {
		m |= 1 << (len(name) % 64)
	}
	return m
}()

// mayBeNeverStored reports whether a header name, in any spelling, may be
// one neverStored refuses: false tells, without putting the name in
// canonical form, that it is not.
func mayBeNeverStored(name string) bool {
	return neverStoredLens&(1<<(len(name)%64)) != 0
}
