package idemhttp

import (
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"time"

	"github.com/idemprint/idemprint/fingerprint"
	"github.com/idemprint/idemprint/policy"
)

// Event describes one request a rule governed, as the middleware reports
// it to Options.OnDecision once the request is answered: for metrics and
// logs. It is a plain value: the hook gets its own copy and may keep it.
// The zero value describes no request.
type Event struct {
	// Rule is the rule that governed the request.
	Rule *policy.Rule
	// Tenant is the request's tenant; "" when it could not be determined.
	Tenant string
	// Fingerprint is the request's fingerprint; zero when the request has
	// no key or could not be fingerprinted.
	Fingerprint fingerprint.Fingerprint
	// Action and Reason are the engine's decision; zero when none was
	// reached (an invalid request, a store fault).
	Action policy.Action
	Reason policy.Reason
	// Outcome is what happened.
	Outcome Outcome
	// Status is the status answered: the handler's when it ran.
	Status int
	// StoreCalls and StoreLatency count the store operations made for the
	// request (round trips, including lease renewals and waiting) and the
	// time they took.
	StoreCalls   int
	StoreLatency time.Duration
	// Waited is how long the request waited for a reservation of its key
	// to complete (the rule's wait setting).
	Waited time.Duration
	// Duration is the time from the request's arrival to the end of its
	// answer (and, when it executed, of its record's completion).
	Duration time.Duration
	// Err is the store's or the engine's error behind the outcome, if any.
	Err error

	storageKey string
}

// KeyHash returns a digest of the request's storage key (tenant, key and,
// when scoped, the endpoint) that names the key in logs without revealing
// it: the first 16 bytes of its SHA-256, base64url-encoded. It is "" when
// the request had no valid key.
func (e Event) KeyHash() string {
	if e.storageKey == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(e.storageKey))
	return base64.RawURLEncoding.EncodeToString(sum[:16])
}

// Outcome is what the middleware did with a governed request. The zero
// value is not an outcome.
type Outcome uint8

const (
	// Stored: the handler ran and its response was stored for replay.
	Stored Outcome = iota + 1
	// Released: the handler ran and answered a status the rule does not
	// cache (a 500, say): the key is free again, a retry executes.
	Released
	// NotKept: the handler ran, but its response was too large to keep or
	// it took over the connection: retries are answered with a problem
	// saying so, and never execute.
	NotKept
	// Overtaken: the handler ran, but its reservation was taken over after
	// its lease lapsed, so its response was not stored.
	Overtaken
	// CompletionFailed: the handler ran, but the store failed when its
	// record was written: the reservation holds until its lease lapses.
	CompletionFailed
	// Panicked: the handler panicked; its reservation was released and the
	// panic went on.
	Panicked
	// Replayed: a stored response was replayed.
	Replayed
	// Rejected: the engine rejected the request with a problem (key
	// reuse, missing key, in flight, ...).
	Rejected
	// PassedThrough: the rule's key is optional and the request had none:
	// the handler ran without idempotency.
	PassedThrough
	// Invalid: the request was answered with a problem before any
	// decision: its body was too large or not strict JSON, a required
	// value was missing, or its tenant unknown.
	Invalid
	// StoreFailed: the store failed and the request was answered with a
	// problem, without running the handler (failing closed).
	StoreFailed
	// FailedOpen: the store failed and, as Options.FailOpen allows, the
	// handler ran without idempotency.
	FailedOpen
	// Held: the handler said its outcome is unknown ([HoldReservation]):
	// the reservation holds until its lease lapses.
	Held
)

var outcomeNames = [...]string{
	Stored: "stored", Released: "released", NotKept: "not-kept", Overtaken: "overtaken",
	CompletionFailed: "completion-failed", Panicked: "panicked", Replayed: "replayed",
	Rejected: "rejected", PassedThrough: "passed-through", Invalid: "invalid",
	StoreFailed: "store-failed", FailedOpen: "failed-open", Held: "held",
}

// String returns the outcome's name, such as "stored" or "replayed".
func (o Outcome) String() string {
	if int(o) < len(outcomeNames) && outcomeNames[o] != "" {
		return outcomeNames[o]
	}
	return "Outcome(" + strconv.Itoa(int(o)) + ")"
}

// MarshalText returns the outcome's name.
func (o Outcome) MarshalText() ([]byte, error) { return []byte(o.String()), nil }
