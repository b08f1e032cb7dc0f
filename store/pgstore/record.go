package pgstore

import (
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/idemprint/idemprint/policy"
	"github.com/idemprint/idemprint/store"
)

// row is a record as its columns hold it; every column is NULL when there
// is no record.
type row struct {
	tenant      []byte
	generation  pgtype.Int8
	state       pgtype.Int2
	leaseExpiry pgtype.Timestamptz
	expiresAt   pgtype.Timestamptz
	payload     []byte
}

// dest returns the scan destinations of the columns tenant, generation,
// state, lease_expiry, expires_at and payload, in that order.
func (r *row) dest() []any {
	return []any{&r.tenant, &r.generation, &r.state, &r.leaseExpiry, &r.expiresAt, &r.payload}
}

// record returns the record the row holds under storageKey, nil when the
// row is NULL, or an error wrapping [store.ErrCorrupt] when its payload
// does not decode or its columns contradict each other or the payload.
func (r *row) record(op, storageKey string) (*policy.Record, error) {
	if !r.generation.Valid {
		return nil, nil
	}
	bad := func(format string, args ...any) error {
		return &store.Error{Op: op, StorageKey: storageKey, Kind: store.ErrCorrupt, Err: fmt.Errorf("pgstore: "+format, args...)}
	}
	rec := &policy.Record{StorageKey: storageKey}
	switch {
	case r.generation.Int64 <= 0:
		return nil, bad("generation %d", r.generation.Int64)
	case !r.state.Valid || r.state.Int16 < int16(policy.StateNone) || r.state.Int16 > int16(policy.StateCompleted):
		return nil, bad("state %d", r.state.Int16)
	}
	rec.Generation = uint64(r.generation.Int64)
	rec.State = policy.State(r.state.Int16)
	var ok bool
	if rec.LeaseExpiry, ok = fromTimestamptz(r.leaseExpiry); !ok {
		return nil, bad("lease_expiry is not a time")
	}
	if rec.ExpiresAt, ok = fromTimestamptz(r.expiresAt); !ok {
		return nil, bad("expires_at is not a time")
	}
	if err := store.DecodePayload(rec, r.payload); err != nil {
		var se *store.Error
		if errors.As(err, &se) && se.Err != nil {
			err = se.Err // the decoder's own cause, without its prefix
		}
		return nil, &store.Error{Op: op, StorageKey: storageKey, Kind: store.ErrCorrupt, Err: err}
	}
	if rec.Tenant != string(r.tenant) {
		return nil, bad("the tenant column differs from the payload's tenant")
	}
	return rec, nil
}

// timestamptz returns t as a timestamptz parameter, to the microsecond
// (truncated, as Go's Truncate does, whatever protocol pgx uses); the zero
// time is -infinity, which sorts before every time: "none".
func timestamptz(t time.Time) pgtype.Timestamptz {
	if t.IsZero() {
		return pgtype.Timestamptz{InfinityModifier: pgtype.NegativeInfinity, Valid: true}
	}
	return pgtype.Timestamptz{Time: t.Truncate(time.Microsecond), Valid: true}
}

// storable reports whether t is the zero time or within the years 1 to
// 9999, which every protocol of pgx encodes exactly.
func storable(t time.Time) bool {
	y := t.UTC().Year()
	return t.IsZero() || y >= 1 && y <= 9999
}

// fromTimestamptz is the inverse of [timestamptz]; ok is false for NULL
// and +infinity, which this package never writes.
func fromTimestamptz(ts pgtype.Timestamptz) (t time.Time, ok bool) {
	switch {
	case !ts.Valid || ts.InfinityModifier == pgtype.Infinity:
		return time.Time{}, false
	case ts.InfinityModifier == pgtype.NegativeInfinity:
		return time.Time{}, true
	}
	return ts.Time.UTC(), true
}
