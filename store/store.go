package store

import (
	"context"
	"time"

	"github.com/idemprint/idemprint/policy"
)

// Store keeps the [policy.Record] values of a policy under their storage
// keys. Every method is one round trip to the backend and is atomic there:
// it either happens entirely or not at all. Leases and TTLs are judged by
// the store's own clock ([policy.Record.Binds] at the store's time), never
// by the caller's.
//
// Implementations must be safe for concurrent use, by goroutines of one
// process and by processes sharing the backend. [storetest.Run] checks an
// implementation against this contract.
//
// Records are shared, not copied, on the way in and out: a store may keep
// the Header, Body and Intent of a record given to Reserve or Write, so
// the caller must not modify them afterwards, and the records a store
// returns are the caller's to read, not to modify. (The engine's records,
// from [policy.Rule.Decide] and [policy.Rule.Complete], are fresh copies.)
type Store interface {
	// Reserve takes the reservation's storage key for a first execution,
	// or tells what holds it, in one round trip. At the store's time now,
	// if no record binds under r.Record.StorageKey nor under r.NewIdentity,
	// it writes r.Record there as an in-flight reservation leased until
	// now+r.Lease and expiring at now+r.TTL, with the next generation of
	// the record it replaces (or, when there is none, a first generation no
	// earlier record under that key had; see the package documentation),
	// and returns it with Reserved set. Otherwise it writes nothing and
	// returns the records under both keys, to be given to
	// [policy.Rule.Decide] with Outcome.Now.
	Reserve(ctx context.Context, r Reservation) (Outcome, error)

	// Write replaces the record under rec.StorageKey with rec if the
	// stored record has generation rec.Generation-1 (no record counts as
	// generation 0) and, when guard names a storage key, the record there
	// is as guard says, judged at the store's time. Otherwise it writes
	// nothing and returns an error wrapping [ErrConflict]. Writing a record
	// that is not in flight (a completion or a release) that is already
	// stored, equal in every field ([Equal]), succeeds without a change, so
	// such a Write retried after a lost reply is safe. An in-flight record
	// (a takeover, a new identity, a renewal) is never taken as already
	// written: two requests racing to take over one key can make identical
	// reservations, and only the first may hold it; a holder whose renewal
	// reply was lost reads the record back. Use it for everything the
	// engine returns but a first
	// reservation: a takeover or new identity from [policy.Rule.Decide],
	// and [policy.Rule.Complete], [policy.Rule.Renew] and
	// [policy.Rule.Release].
	Write(ctx context.Context, rec policy.Record, guard Guard) error

	// Read returns the record under storageKey, or nil when there is none
	// (never written, deleted, or removed after its life ended).
	Read(ctx context.Context, storageKey string) (*policy.Record, error)

	// Delete removes the record under storageKey, whatever it holds: an
	// operator evicting a stuck or poisoned key. It returns an error
	// wrapping [ErrNotFound] when there is none. A holder of a deleted
	// reservation can no longer complete it: its write finds another
	// generation.
	Delete(ctx context.Context, storageKey string) error
}

// Reservation is what [Store.Reserve] writes when nothing binds its key.
type Reservation struct {
	// Record is the reservation: the Reserve of a [policy.Decision] with
	// Action Execute, as [policy.Rule.Decide] returns it for the request
	// with no records. Its StorageKey is where it goes and its State must
	// be in flight. The store sets Generation, LeaseExpiry and ExpiresAt by
	// its own counter and clock; the values given are ignored.
	Record policy.Record
	// Lease and TTL are the rule's ([policy.Rule.Lease] and
	// [policy.Rule.TTL]): the reservation is leased until the store's time
	// plus Lease, and expires at the store's time plus TTL. Both must be
	// positive, Lease at most TTL.
	Lease, TTL time.Duration
	// NewIdentity is the storage key of the request's new identity
	// ([policy.Rule.StorageKeys]), or "" for a rule that resolves nothing
	// with "new". A record binding there also keeps the reservation from
	// being written, and is returned.
	NewIdentity string
}

// Outcome is what [Store.Reserve] did.
type Outcome struct {
	// Reserved reports whether the reservation was written; Record is then
	// the record as written, with the store's generation and times.
	Reserved bool
	Record   policy.Record
	// Primary and NewIdentity are, when nothing was reserved, the records
	// under the reservation's storage key and under its new identity (nil
	// for none). At least one of them binds at Now.
	Primary, NewIdentity *policy.Record
	// Now is the store's time when it judged the records. Pass it to
	// [policy.Rule.Decide].
	Now time.Time
}

// Guard makes a [Store.Write] conditional on a second storage key, in the
// same atomic step, so that the two storage keys of one request never
// both hold an execution. The zero value guards nothing.
type Guard struct {
	// StorageKey is the other key; "" for no guard. It must belong to the
	// same request as the written record: its primary key or its new
	// identity ([policy.PrimaryKey] of both is the same).
	StorageKey string
	// Generation is what the record under StorageKey must be: when
	// positive, a record of this generation that binds at the store's
	// time (it has not been released, expired or replaced since the caller
	// read it); when 0, no record that binds.
	Generation uint64
}

// Pinger is a [Store] that can tell whether its backend answers, for
// readiness checks.
type Pinger interface {
	// Ping returns nil when the backend answers, or an error wrapping
	// [ErrUnavailable].
	Ping(ctx context.Context) error
}

// Sweeper is a [Store] whose records stay after their life ends until
// they are swept.
type Sweeper interface {
	// Sweep deletes at most limit records whose life ended before the
	// store's time and returns how many it deleted. Call it until it
	// returns fewer than limit to sweep everything.
	Sweep(ctx context.Context, limit int) (int, error)
}

// TenantPurger is a [Store] that can delete every record of one tenant.
type TenantPurger interface {
	// PurgeTenant deletes every record whose Tenant is tenant and returns
	// how many it deleted.
	PurgeTenant(ctx context.Context, tenant string) (int, error)
}

// InProcess is a [Store] that may say it keeps its records in this
// process, as [Memory] does: when InProcess returns true, its calls never
// block and read nothing of their context but whether it has ended, so a
// caller need not give them a deadline or a context of their own.
type InProcess interface {
	InProcess() bool
}
