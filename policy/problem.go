package policy

import (
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/idemprint/idemprint/fingerprint"
	"github.com/idemprint/idemprint/internal/problem"
)

// ProblemBase is the base of the problem type URIs. The URIs are stable: a
// client may match on them.
const ProblemBase = problem.Base

// Problem types of a rejection.
const (
	// TypeMissingKey: the rule requires a key and the request has none (400).
	TypeMissingKey = ProblemBase + "idempotency-key-missing"
	// TypeMalformedKey: the key header is repeated or breaks the syntax (400).
	TypeMalformedKey = ProblemBase + "idempotency-key-malformed"
	// TypeKeyReuse: the key was first used with a request of another intent
	// (422 by default; 409 or 400 as the rule declares).
	TypeKeyReuse = ProblemBase + "idempotency-key-reuse"
	// TypeInFlight: a request with the key is still executing (409, with
	// Retry-After).
	TypeInFlight = ProblemBase + "idempotency-key-in-flight"
	// TypeSpecChanged: the key was first used under another fingerprint spec,
	// so the requests cannot be compared (409).
	TypeSpecChanged = ProblemBase + "idempotency-spec-changed"
	// TypeOtherRoute: the key was first used on another endpoint; whatever
	// the rule's on_mismatch, a key never names operations of two endpoints
	// (422, or the rule's mismatch status).
	TypeOtherRoute = ProblemBase + "idempotency-key-other-route"
	// TypeResponseNotKept: the first request with the key was executed, but
	// its response could not be kept for replay (too large, or the
	// connection was taken over); it is not executed again (409, no
	// Retry-After). See [Rule.CompleteWithoutResponse].
	TypeResponseNotKept = ProblemBase + "idempotency-response-not-kept"
)

// ProblemDetails is an RFC 9457 problem: the body of a rejection.
// The zero value encodes as an empty problem object.
type ProblemDetails struct {
	// Type is one of the Type constants; Title is constant per type.
	Type   string
	Title  string
	Status int
	// Detail explains this occurrence.
	Detail string
	// DifferingPaths lists what a reused key's request differs in from the
	// first one, as [DiffLabel] names it, when the rule stores intent. It is
	// the extension member "differing_paths". It holds at most
	// [fingerprint.MaxDifferences] paths, the first in the order
	// [fingerprint.Diff] lists them (method, path, headers, query, then the
	// body by path), and a path longer than 128 bytes is cut there and ends
	// in "…": a client controls how many fields differ and how deep, and
	// the answer stays small whatever it sends.
	DifferingPaths []string
}

// AppendJSON appends the problem as a JSON object to dst, with the members
// type, title, status, detail and differing_paths, each only when set.
func (p *ProblemDetails) AppendJSON(dst []byte) []byte {
	d := problem.Details{Type: p.Type, Title: p.Title, Status: p.Status, Detail: p.Detail, DifferingPaths: p.DifferingPaths}
	return d.AppendJSON(dst)
}

// MarshalJSON returns p.AppendJSON(nil).
func (p *ProblemDetails) MarshalJSON() ([]byte, error) { return p.AppendJSON(nil), nil }

func problemMissingKey(header string) *ProblemDetails {
	return &ProblemDetails{
		Type:   TypeMissingKey,
		Title:  "Idempotency key missing",
		Status: http.StatusBadRequest,
		Detail: "This operation requires an idempotency key in the " + header + " header.",
	}
}

func problemMalformedKey(err error) *ProblemDetails {
	return &ProblemDetails{
		Type:   TypeMalformedKey,
		Title:  "Idempotency key malformed",
		Status: http.StatusBadRequest,
		Detail: problem.Sentence(err.Error(), "policy: "),
	}
}

func problemInFlight(retryAfter int64) *ProblemDetails {
	return &ProblemDetails{
		Type:   TypeInFlight,
		Title:  "Request with this idempotency key in progress",
		Status: http.StatusConflict,
		Detail: "A request with this key is still being processed; retry after " + strconv.FormatInt(retryAfter, 10) + " s.",
	}
}

func problemSpecChanged() *ProblemDetails {
	return &ProblemDetails{
		Type:   TypeSpecChanged,
		Title:  "Idempotency key recorded under another fingerprint spec",
		Status: http.StatusConflict,
		Detail: "The request first sent with this key was fingerprinted under an earlier version of this endpoint's policy, so this one cannot be compared with it. Use a new key only if this is a new operation.",
	}
}

func problemOtherRoute(status int) *ProblemDetails {
	return &ProblemDetails{
		Type:   TypeOtherRoute,
		Title:  "Idempotency key used on another endpoint",
		Status: status,
		Detail: "This key was first used with a request to another endpoint, whose response is not this one's. Use a new key for this operation.",
	}
}

// problemKeyReuse builds the mismatch problem; with both intent projections,
// it lists the paths at which they differ.
func problemKeyReuse(status int, first, second []byte) *ProblemDetails {
	p := &ProblemDetails{
		Type:   TypeKeyReuse,
		Title:  "Idempotency key reused with a different request",
		Status: status,
		Detail: "This key was first used with a request of another intent. Retry with the original request, or use a new key for a new operation.",
	}
	if first != nil && second != nil {
		if diffs, err := fingerprint.Diff(first, second); err == nil {
			p.DifferingPaths = make([]string, len(diffs))
			for i, d := range diffs {
				p.DifferingPaths[i] = shorten(DiffLabel(d), maxLabelBytes)
			}
		}
		if n := len(p.DifferingPaths); n > 0 {
			at := strings.Join(p.DifferingPaths[:min(n, maxDetailPaths)], ", ")
			if n > maxDetailPaths {
				at += " and more (see differing_paths)"
			}
			p.Detail = "This key was first used with a request that differs at " + at +
				". Retry with the original request, or use a new key for a new operation."
		}
	}
	return p
}

// Bounds of a key-reuse problem, whose paths the client controls.
const (
	maxLabelBytes  = 128 // the longest path listed whole
	maxDetailPaths = 5   // the paths the detail text names
)

// shorten returns s, or when it is longer than n bytes its first n bytes
// or fewer (whole UTF-8 sequences) followed by "…".
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// DiffLabel names what a difference between two intent documents is about:
// the body path ("amountCents", "destination.iban"), "method", "path", or
// "header " or "query " followed by the name. It is how a key-reuse problem
// lists the differing paths.
func DiffLabel(d fingerprint.Difference) string {
	switch d.Part {
	case "body":
		return d.Path
	case "header", "query":
		return d.Part + " " + d.Path
	}
	return d.Part
}

func problemResponseNotKept(status int, size int64) *ProblemDetails {
	what := "its response"
	if status != 0 {
		what = "it answered " + strconv.Itoa(status) + ", but its response"
	}
	why := "could not be kept"
	if size > 0 {
		why = "(" + strconv.FormatInt(size, 10) + " bytes or more) was too large to keep"
	}
	return &ProblemDetails{
		Type:   TypeResponseNotKept,
		Title:  "Response of the request with this idempotency key not kept",
		Status: http.StatusConflict,
		Detail: "The request first sent with this key was executed: " + what + " " + why + " for replay. It is not executed again.",
	}
}
