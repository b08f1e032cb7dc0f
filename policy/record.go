package policy

import (
	"time"

	"github.com/idemprint/idemprint/fingerprint"
)

// State is the state of a stored [Record]. The zero value is [StateNone].
type State uint8

const (
	// StateNone is a released reservation: its response was not cached, so
	// the key is free again. The record only keeps the Generation counting,
	// so that a holder whose reservation was released and reused cannot
	// overwrite the new one. A missing record means the same.
	StateNone State = iota
	// StateInFlight is a reservation: a request holds the key and is
	// executing until LeaseExpiry.
	StateInFlight
	// StateCompleted is a stored response, replayed until ExpiresAt.
	StateCompleted
)

// String returns "none", "in-flight" or "completed".
func (s State) String() string {
	switch s {
	case StateNone:
		return "none"
	case StateInFlight:
		return "in-flight"
	case StateCompleted:
		return "completed"
	}
	return "State(" + itoa(int(s)) + ")"
}

// Record is what a store keeps under one storage key. The engine creates
// records ([Decision].Reserve, [Rule.Complete]); a store keeps them as they
// are and hands them back to [Rule.Decide].
//
// A store must write records conditionally: a record with Generation g
// replaces the stored one only if that one has Generation g-1 (g = 1: only if
// there is none). Every record the engine returns for a storage key has the
// next generation of the record it was decided from, so of two requests
// racing for one key exactly one write succeeds; the loser reads the
// records again and calls Decide again.
//
// The zero value is a released reservation of no key.
type Record struct {
	// StorageKey is the key under which the record is stored.
	StorageKey string
	// Generation counts the writes under StorageKey, from 1.
	Generation uint64
	// State is the record's state.
	State State
	// Tenant and Key are the tenant and the key (its content, unquoted) of
	// the request that created the record.
	Tenant, Key string
	// Route is the endpoint of the request that created the record: the
	// rule's route with its parameter names erased ("POST
	// /v1/payments/{}"), or, under a defaults' rule, the method and the
	// request's path ("POST /v1/orders").
	Route string
	// Fingerprint is the fingerprint of the request that created the
	// record, computed under the spec whose digest is SpecDigest.
	Fingerprint fingerprint.Fingerprint
	SpecDigest  string
	// Intent is the request's intent projection (the document of
	// [fingerprint.Fingerprinter.AppendIntent]), kept only when the rule
	// stores intent; nil otherwise.
	Intent []byte
	// LeaseExpiry is when an in-flight reservation becomes stale and may be
	// taken over.
	LeaseExpiry time.Time
	// ExpiresAt is when the record stops binding its key: for a completed
	// record, the TTL after completion; for a reservation, the TTL after it
	// was made. A store may delete a record after ExpiresAt.
	ExpiresAt time.Time
	// Status, Header and Body are the stored response of a completed
	// record. Header holds what the rule stores of the response's header
	// ([Rule.StoresHeader]).
	Status int
	Header Header
	Body   []byte
}

// Binds reports whether rec still binds its storage key at now: a
// completed record until ExpiresAt, an in-flight reservation until both
// its LeaseExpiry and its ExpiresAt are over (Parse keeps the lease shorter
// than the TTL, but a record is judged as it is), a released record
// (StateNone) never, nor a nil one. Instants are compared with
// [time.Time.Before]: a record stops binding at ExpiresAt itself.
//
// It is the rule by which [Rule.Decide] tells whether a record holds its
// key at the time it is given. A store that judges by its own clock
// whether a record still binds (to expire it, to delete it, to refuse or
// allow a write) must judge with exactly this rule, or it and the engine
// will disagree about who holds a key.
func (rec *Record) Binds(now time.Time) bool {
	if rec == nil || rec.State == StateNone {
		return false
	}
	return now.Before(rec.ExpiresAt) || rec.State == StateInFlight && now.Before(rec.LeaseExpiry)
}
