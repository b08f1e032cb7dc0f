package pgstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/idemprint/idemprint/store"
)

func TestKindOf(t *testing.T) {
	for _, tc := range []struct {
		reason string
		op     string
		err    error
		want   error
	}{
		{"a terminated backend", "reserve", &pgconn.PgError{Code: "57P01"}, store.ErrUnavailable},
		{"a crashed server", "write", &pgconn.PgError{Code: "57P02"}, store.ErrUnavailable},
		{"a server starting", "read", &pgconn.PgError{Code: "57P03"}, store.ErrUnavailable},
		{"a statement timeout", "read", &pgconn.PgError{Code: "57014"}, store.ErrUnavailable},
		{"a read-only replica", "write", &pgconn.PgError{Code: "25006"}, store.ErrUnavailable},
		{"a missing table", "read", &pgconn.PgError{Code: "42P01"}, store.ErrUnavailable},
		{"a serialization failure of a write", "write", &pgconn.PgError{Code: "40001"}, store.ErrConflict},
		{"a deadlock of a write", "write", &pgconn.PgError{Code: "40P01"}, store.ErrConflict},
		{"a serialization failure of a reservation", "reserve", &pgconn.PgError{Code: "40001"}, store.ErrUnavailable},
		{"a full disk", "write", &pgconn.PgError{Code: "53100"}, store.ErrFull},
		{"a time out of range", "write", &pgconn.PgError{Code: "22008"}, store.ErrInvalid},
		{"an index row too large", "reserve", &pgconn.PgError{Code: "54000"}, store.ErrInvalid},
		{"a wrapped server error", "write", fmt.Errorf("x: %w", &pgconn.PgError{Code: "40001"}), store.ErrConflict},
		{"a lost connection", "read", io.ErrUnexpectedEOF, store.ErrUnavailable},
		{"a failed dial", "read", &pgconn.ConnectError{}, store.ErrUnavailable},
	} {
		if got := kindOf(tc.op, tc.err); got != tc.want {
			t.Errorf("kindOf(%s, %s) = %v, want %v", tc.op, tc.reason, got, tc.want)
		}
	}
}

// An operation that failed because its context ended reports the
// context's error as its kind, whatever pgx wrapped it in.
func TestFailContext(t *testing.T) {
	s := &Store{}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := s.fail(ctx, "read", "k", fmt.Errorf("timeout: %w", context.Canceled))
	var se *store.Error
	if !errors.As(err, &se) || se.Kind != context.Canceled || se.Err != nil || se.Op != "read" || se.StorageKey != "k" {
		t.Errorf("fail with a canceled context = %#v, want kind context.Canceled and no cause", err)
	}
	err = s.fail(context.Background(), "write", "k", &pgconn.PgError{Code: "57P01"})
	if !errors.Is(err, store.ErrUnavailable) || !errors.As(err, new(*pgconn.PgError)) {
		t.Errorf("fail with a server error = %v, want ErrUnavailable wrapping the *pgconn.PgError", err)
	}
}
