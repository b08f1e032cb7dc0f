package pgstore

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/idemprint/idemprint/store"
)

// fail returns the [*store.Error] of an operation that failed with err:
// the context's error when ctx has ended, and otherwise the kind that
// [kindOf] gives the error.
func (s *Store) fail(ctx context.Context, op, storageKey string, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		if errors.Is(err, cerr) {
			err = nil // pgx's error only repeats the context's
		}
		return &store.Error{Op: op, StorageKey: storageKey, Kind: cerr, Err: err}
	}
	return &store.Error{Op: op, StorageKey: storageKey, Kind: kindOf(op, err), Err: err}
}

// kindOf classifies an error of pgx by what it is, never by its text.
//
// An error from the server ([*pgconn.PgError]) is classified by its
// SQLSTATE: a serialization failure or a deadlock is [store.ErrConflict]
// for a write, whose caller decides again, and [store.ErrUnavailable]
// otherwise; a full disk is [store.ErrFull]; a value the database cannot
// hold (class 22, data exception, such as a time out of its range) or a
// key beyond an index's size (54000, program limit exceeded) is
// [store.ErrInvalid]. Everything else from the server is
// [store.ErrUnavailable]: a terminated backend (57P01 admin_shutdown,
// 57P02 crash_shutdown), a server starting or stopping (57P03), a
// statement or lock timeout (57014, 55P03), a read-only replica after a
// failover (25006), too many connections (53300), a missing table or
// function (42P01, 42883) or privilege (42501).
//
// An error that is not the server's is a fault of the connection: a dial
// that failed ([pgconn.ConnectError]), a connection lost before the
// statement was sent ([pgconn.SafeToRetry]: nothing happened) or while it
// ran (the outcome is unknown), a timeout ([pgconn.Timeout]) or a closed
// pool. All are [store.ErrUnavailable]; [store.Store.Write] is safe to
// retry either way.
func kindOf(op string, err error) error {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return store.ErrUnavailable
	}
	code := pgErr.Code
	switch {
	case code == "40001" || code == "40P01": // serialization_failure, deadlock_detected
		if op == "write" {
			return store.ErrConflict
		}
		return store.ErrUnavailable
	case code == "53100": // disk_full
		return store.ErrFull
	case code == "54000" || len(code) == 5 && code[:2] == "22": // program_limit_exceeded, data_exception
		return store.ErrInvalid
	}
	return store.ErrUnavailable
}
