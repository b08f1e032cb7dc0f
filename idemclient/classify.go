package idemclient

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
)

// Verdict is what an answer means for its operation. The zero value,
// Unknown, leaves the decision to the built-in dialects.
type Verdict uint8

const (
	// Unknown: the classifier does not know this answer; the built-in
	// dialects decide.
	Unknown Verdict = iota
	// Final: the answer is the operation's outcome; it is returned as it
	// is.
	Final
	// InFlight: a request with the key is still executing; retry later
	// with the same key.
	InFlight
	// Overloaded: the server did not execute the request now (a 429, a
	// 503 store outage); retry later.
	Overloaded
	// KeyReused: the key was first used with another request; the
	// operation ends with [ErrKeyReused].
	KeyReused
)

var verdictNames = [...]string{"unknown", "final", "in flight", "overloaded", "key reused"}

// String returns the verdict's name.
func (v Verdict) String() string {
	if int(v) < len(verdictNames) {
		return verdictNames[v]
	}
	return "verdict(" + strconv.Itoa(int(v)) + ")"
}

// Problem types of idemprint's answers. Their URIs are stable.
const (
	idemprintBase        = "https://idemprint.dev/problems/"
	typeInFlight         = idemprintBase + "idempotency-key-in-flight"
	typeKeyReuse         = idemprintBase + "idempotency-key-reuse"
	typeOtherRoute       = idemprintBase + "idempotency-key-other-route"
	typeStoreUnavailable = idemprintBase + "idempotency-store-unavailable"
	typeOutcomeUnknown   = idemprintBase + "upstream-outcome-unknown"
	typeUnreachable      = idemprintBase + "upstream-unreachable"
)

// answer is what the dialects read in a body: an RFC 9457 problem, or a
// Stripe error object.
type answer struct {
	Problem
	Error *struct {
		Type string `json:"type"`
		Code string `json:"code"`
	} `json:"error"`
}

// parseAnswer decodes body when it is a JSON object; ok is false
// otherwise.
func parseAnswer(body []byte) (a answer, ok bool) {
	b := bytes.TrimLeft(body, " \t\r\n")
	if len(b) == 0 || b[0] != '{' {
		return a, false
	}
	if json.Unmarshal(b, &a) != nil {
		return answer{}, false
	}
	return a, true
}

// classify is the built-in dialects' verdict on an answer to a request
// that carried a key.
func classify(status int, a answer, parsed bool) Verdict {
	if parsed {
		switch a.Type {
		case typeInFlight:
			return InFlight
		case typeKeyReuse, typeOtherRoute:
			return KeyReused
		case typeStoreUnavailable, typeOutcomeUnknown, typeUnreachable:
			return Overloaded
		}
		if strings.HasPrefix(a.Type, idemprintBase) {
			// Every other idemprint problem is final: a key without its
			// response kept, another fingerprint spec, a missing body.
			return Final
		}
		if e := a.Error; e != nil {
			switch {
			case e.Code == "idempotency_key_in_use":
				return InFlight
			case e.Type == "idempotency_error":
				return KeyReused
			}
		}
	}
	switch status {
	case http.StatusConflict:
		// The IETF draft's 409: a request with the key is outstanding.
		// Only an answer that says so is retried; another conflict is
		// the resource's.
		if parsed && namesIdempotency(a) {
			return InFlight
		}
		return Final
	case http.StatusUnprocessableEntity:
		// The IETF draft's 422: the key was used with another payload,
		// when the answer says so; otherwise a validation error.
		if parsed && namesIdempotency(a) {
			return KeyReused
		}
		return Final
	case http.StatusTooManyRequests, http.StatusServiceUnavailable:
		return Overloaded
	case http.StatusBadGateway, http.StatusGatewayTimeout:
		return Overloaded
	}
	return Final
}

// namesIdempotency reports whether a problem's type or title is about
// idempotency, as the IETF draft's examples are ("Idempotency-Key is
// already used").
func namesIdempotency(a answer) bool {
	return containsFold(a.Type, "idempotency") || containsFold(a.Title, "idempotency")
}

func containsFold(s, sub string) bool {
	return strings.Contains(strings.ToLower(s), sub)
}
