package policy

import (
	"net/http"
)

// Action is what the caller does with a request. The zero value is not an
// action (its String is "none": no decision was reached); Decide never
// returns it.
type Action uint8

const (
	// Execute runs the handler after writing Decision.Reserve.
	Execute Action = iota + 1
	// Replay answers with Decision.Response, the stored one, without
	// running the handler.
	Replay
	// ExecuteAsNew runs the handler as a new operation (on_mismatch or
	// on_spec_change "new"), or runs again one whose reservation under the
	// new identity went stale, after writing Decision.Reserve under the new
	// identity, Decision.StorageKey.
	ExecuteAsNew
	// Reject answers with Decision.Response, an RFC 9457 problem, without
	// running the handler.
	Reject
	// PassThrough runs the handler without idempotency: the key is
	// optional and absent.
	PassThrough
)

// String returns the action's name: "execute", "replay", "execute-as-new",
// "reject" or "pass-through", or "none" for the zero value.
func (a Action) String() string {
	switch a {
	case 0:
		return "none"
	case Execute:
		return "execute"
	case Replay:
		return "replay"
	case ExecuteAsNew:
		return "execute-as-new"
	case Reject:
		return "reject"
	case PassThrough:
		return "pass-through"
	}
	return "Action(" + itoa(int(a)) + ")"
}

// MarshalText returns the action's name.
func (a Action) MarshalText() ([]byte, error) { return []byte(a.String()), nil }

// Reason says how the request relates to the stored record. The zero value
// is not a reason (its String is "none"); Decide never returns it.
type Reason uint8

const (
	// ReasonMissingKey: the request has no key.
	ReasonMissingKey Reason = iota + 1
	// ReasonMalformedKey: the key header is repeated or breaks the syntax.
	ReasonMalformedKey
	// ReasonFirst: no record binds the key (none, released or expired).
	ReasonFirst
	// ReasonRetry: the record was made by a request with an equal
	// fingerprint under the same spec: this is a retry.
	ReasonRetry
	// ReasonMismatch: the record was made by a request with another
	// fingerprint: the key is being reused.
	ReasonMismatch
	// ReasonSpecChanged: the record was fingerprinted under another spec,
	// so the two requests cannot be compared.
	ReasonSpecChanged
	// ReasonOtherRoute: the record was made by a request to another
	// endpoint (compared with parameter names erased): the key is being
	// reused across endpoints, which is always rejected.
	ReasonOtherRoute
)

// String returns the reason's name: "missing-key", "malformed-key",
// "first", "retry", "mismatch", "spec-changed" or "other-route", or "none"
// for the zero value.
func (r Reason) String() string {
	switch r {
	case 0:
		return "none"
	case ReasonMissingKey:
		return "missing-key"
	case ReasonMalformedKey:
		return "malformed-key"
	case ReasonFirst:
		return "first"
	case ReasonRetry:
		return "retry"
	case ReasonMismatch:
		return "mismatch"
	case ReasonSpecChanged:
		return "spec-changed"
	case ReasonOtherRoute:
		return "other-route"
	}
	return "Reason(" + itoa(int(r)) + ")"
}

// MarshalText returns the reason's name.
func (r Reason) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// Response is an HTTP response: what a handler produced ([Rule.Complete]) or
// what to answer ([Decision].Response). The zero value has no status, which
// Complete rejects.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Decision is what [Rule.Decide] tells the caller to do. Decide returns a
// complete Decision or an error, never the zero value, whose Action is
// invalid.
type Decision struct {
	// Action is what to do; Reason why.
	Action Action
	Reason Reason
	// StorageKey is where the decision was made: where Reserve goes for
	// Execute and ExecuteAsNew, where the record came from for Replay and
	// Reject. It is empty when the key is missing or malformed.
	StorageKey string
	// Reserve is the in-flight record to write, conditionally, before
	// executing (Execute, ExecuteAsNew); nil otherwise. When the write
	// fails because another request wrote first, read the records under
	// both storage keys again and call Decide again with them.
	Reserve *Record
	// Response is what to answer with for Replay and Reject: the stored
	// response with the replay header added, or a problem.
	Response Response
	// Problem is the problem of a Reject, also encoded in Response.Body.
	Problem *ProblemDetails
}
