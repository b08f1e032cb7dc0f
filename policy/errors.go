package policy

import (
	"errors"
	"fmt"
	"strconv"
)

// Sentinel errors of a policy file. Every [Finding] wraps one of them (or a
// sentinel of package canonical or fingerprint), so callers test it with
// [errors.Is] on the [*ParseError] or on one Finding.
var (
	// ErrUnknownField reports a member the policy format does not define.
	ErrUnknownField = errors.New("unknown field")
	// ErrType reports a value of the wrong JSON type.
	ErrType = errors.New("wrong type")
	// ErrMissing reports a required member that is absent.
	ErrMissing = errors.New("missing field")
	// ErrInvalid reports a value of the right type that is not allowed: an
	// unknown mode, a status outside the permitted set, a bad header name.
	ErrInvalid = errors.New("invalid value")
	// ErrDuration reports a duration that is not a positive Go duration
	// string such as "24h" or "30s".
	ErrDuration = errors.New("invalid duration")
	// ErrRoute reports a route that is not "METHOD /pattern".
	ErrRoute = errors.New("invalid route")
	// ErrOverlap reports a rule whose route matches some path that an
	// earlier rule for the same method also matches, without either being
	// the more specific of the two.
	ErrOverlap = errors.New("overlapping rules")
	// ErrUnreachable reports a rule that can never match because an earlier
	// rule for the same method matches every path it matches.
	ErrUnreachable = errors.New("unreachable rule")
	// ErrCache reports an entry of a cache list that is malformed, repeated,
	// redundant or without effect.
	ErrCache = errors.New("invalid cache entry")
	// ErrIneffective reports a setting that can have no effect, such as a
	// mismatch status for a rule that does not reject, or a lease that is
	// not shorter than the TTL.
	ErrIneffective = errors.New("setting has no effect")
	// ErrTooComplex reports a rule whose overlaps with the earlier rules
	// Parse could not check within its bound on work: so many rules of
	// one method and number of segments share paths with each other that
	// checking them all would take longer than a policy may cost to read.
	ErrTooComplex = errors.New("too complex to check")
)

// Errors of the engine. The key errors are returned by [Rule.StorageKeys] and
// turned into rejections by [Rule.Decide]; the others report a caller's
// mistake and are returned by Decide and [Rule.Complete].
var (
	// ErrMissingKey reports a request without the rule's key header.
	ErrMissingKey = errors.New("idempotency key missing")
	// ErrMalformedKey reports a key header that is repeated or whose value
	// breaks the rule's key syntax.
	ErrMalformedKey = errors.New("idempotency key malformed")
	// ErrNoTenant reports a [Request] with an empty Tenant.
	ErrNoTenant = errors.New("empty tenant")
	// ErrNoPath reports a [Request] with an empty Path under a defaults'
	// rule, which keeps the records of each path apart.
	ErrNoPath = errors.New("empty path")
	// ErrNoFingerprint reports a [Request] with a key but a zero Fingerprint.
	ErrNoFingerprint = errors.New("zero fingerprint")
	// ErrForeignRecord reports a [Record] that is not stored under the
	// storage key of the request (or of the rule) it is given with, or whose
	// content contradicts its storage key: a bug in the caller or its store.
	ErrForeignRecord = errors.New("record does not belong to this request")
	// ErrNotInFlight reports a [Rule.Complete] of a record that is not an
	// in-flight reservation.
	ErrNotInFlight = errors.New("record is not in flight")
	// ErrStatus reports a response status outside 200 to 599.
	ErrStatus = errors.New("invalid response status")
)

// Finding is one thing wrong with a policy file, found by [Parse]. (It is
// not an RFC 9457 problem, the body of a rejection: that is
// [ProblemDetails].) The zero value is a finding at the document's root
// with no error; Parse never returns one.
type Finding struct {
	// Pointer is the RFC 6901 JSON Pointer of the offending value in the
	// policy document ("" is the whole document).
	Pointer string
	// Offset is the byte offset of the offending value in the policy file.
	Offset int64
	// Err describes the problem without location or package prefix. It
	// wraps a sentinel of this package, of package canonical (a policy that
	// is not strict JSON) or of package fingerprint (a bad fingerprint
	// spec).
	Err error
}

// Error returns "policy: " followed by the pointer and the problem.
func (p Finding) Error() string {
	ptr := p.Pointer
	if ptr == "" {
		ptr = "(root)"
	}
	return "policy: " + ptr + ": " + p.Err.Error()
}

// Unwrap returns p.Err.
func (p Finding) Unwrap() error { return p.Err }

// MaxFindings is the most findings a [ParseError] lists. A generated or
// hostile policy may have a problem every few bytes; the first ones say
// what is wrong, and the rest are counted.
const MaxFindings = 100

// ParseError is the error of [Parse]: the problems found in the policy
// file. It holds at least one [Finding].
type ParseError struct {
	// Findings are the first findings in document order (by offset; in
	// the order they were found at one offset), at most MaxFindings.
	Findings []Finding
	// Total is the number of findings, those in Findings included.
	// When it is not more than len(Findings) (as in a ParseError built by
	// hand with Total zero), every problem is listed.
	Total int
}

// Omitted returns how many problems were found but not listed.
func (e *ParseError) Omitted() int { return max(e.Total-len(e.Findings), 0) }

// Error returns the first problem and how many more there are.
func (e *ParseError) Error() string {
	if len(e.Findings) == 0 {
		return "policy: invalid policy"
	}
	s := e.Findings[0].Error()
	if n := len(e.Findings) - 1 + e.Omitted(); n == 1 {
		s += " (and 1 more problem)"
	} else if n > 1 {
		s += " (and " + strconv.Itoa(n) + " more problems)"
	}
	return s
}

// Unwrap returns every finding listed, so that [errors.Is] finds a
// sentinel held by any of them and [errors.As] finds a [Finding].
func (e *ParseError) Unwrap() []error {
	errs := make([]error, len(e.Findings))
	for i, p := range e.Findings {
		errs[i] = p
	}
	return errs
}

// detailed is a sentinel with details: its message replaces the sentinel's
// and errors.Is still finds the sentinel.
type detailed struct {
	sentinel error
	msg      string
}

func (d *detailed) Error() string { return d.msg }
func (d *detailed) Unwrap() error { return d.sentinel }

// errorf returns an error wrapping sentinel whose whole message is the
// formatted text.
func errorf(sentinel error, format string, args ...any) error {
	return &detailed{sentinel, fmt.Sprintf(format, args...)}
}
