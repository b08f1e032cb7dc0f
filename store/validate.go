package store

import (
	"errors"

	"github.com/idemprint/idemprint/policy"
)

var (
	errNotPrimary     = errors.New("the reservation's storage key is not a primary storage key")
	errNotInFlight    = errors.New("the reservation is not in flight")
	errLease          = errors.New("the lease must be positive and at most the TTL")
	errNotSameRequest = errors.New("the two storage keys do not belong to one request")
	errStorageKey     = errors.New("the record's storage key is not a storage key")
	errGeneration     = errors.New("the record's generation is 0")
	errState          = errors.New("the record's state is unknown")
)

// Validate returns an error wrapping [ErrInvalid] when r breaks the
// contract of [Store.Reserve]: its storage key is not a primary storage
// key, its record is not in flight, its lease is not positive or longer
// than its TTL, or its new identity is not of the same request. Backends
// call it first.
func (r *Reservation) Validate() error {
	key := r.Record.StorageKey
	bad := func(err error) error { return &Error{Op: "reserve", StorageKey: key, Kind: ErrInvalid, Err: err} }
	switch {
	case !isPrimary(key):
		return bad(errNotPrimary)
	case r.Record.State != policy.StateInFlight:
		return bad(errNotInFlight)
	case r.Lease <= 0 || r.TTL < r.Lease:
		return bad(errLease)
	case r.NewIdentity != "" && (r.NewIdentity == key || !sameRequest(key, r.NewIdentity)):
		return bad(errNotSameRequest)
	}
	return nil
}

// ValidateWrite returns an error wrapping [ErrInvalid] when a
// [Store.Write] of rec with guard breaks the contract: the record's
// storage key is not a storage key, its generation is 0, its state is
// unknown, or the guard's key is not the other key of the same request.
// Backends call it first.
func ValidateWrite(rec *policy.Record, guard Guard) error {
	_, err := validateWrite(rec, guard)
	return err
}

// validateWrite is ValidateWrite, returning the primary key of the
// record's storage key when it is valid.
func validateWrite(rec *policy.Record, guard Guard) (primary string, err error) {
	bad := func(err error) error {
		return &Error{Op: "write", StorageKey: rec.StorageKey, Kind: ErrInvalid, Err: err}
	}
	primary, ok := policy.PrimaryKey(rec.StorageKey)
	switch {
	case !ok:
		return "", bad(errStorageKey)
	case rec.Generation == 0:
		return "", bad(errGeneration)
	case rec.State > policy.StateCompleted:
		return "", bad(errState)
	case guard.StorageKey != "" && (guard.StorageKey == rec.StorageKey || !hasPrimary(guard.StorageKey, primary)):
		return "", bad(errNotSameRequest)
	}
	return primary, nil
}

// hasPrimary reports whether the storage key k belongs to primary.
func hasPrimary(k, primary string) bool {
	p, ok := policy.PrimaryKey(k)
	return ok && p == primary
}

func isPrimary(k string) bool {
	p, ok := policy.PrimaryKey(k)
	return ok && p == k
}

// sameRequest reports whether two storage keys belong to one request:
// they have the same primary key.
func sameRequest(a, b string) bool {
	pa, oka := policy.PrimaryKey(a)
	pb, okb := policy.PrimaryKey(b)
	return oka && okb && pa == pb
}
