// Package teststore gives tests an isolated store on each backend that is
// configured (see package testenv): PostgreSQL in a schema of its own,
// Redis under a key prefix of its own, both removed when the test ends.
// It is for tests only: it imports every backend.
package teststore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/idemprint/idemprint/internal/testenv"
	"github.com/idemprint/idemprint/store/pgstore"
)

// PostgresURL is the example value of testenv.Postgres.
const PostgresURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// Postgres returns a pgstore.Store whose table is in a schema of its own,
// created for the test and dropped when it ends, or skips the test (see
// testenv.Lookup).
func Postgres(t testing.TB) *pgstore.Store {
	t.Helper()
	url := testenv.Lookup(t, testenv.Postgres, PostgresURL)
	pool, err := pgxpool.New(context.Background(), url)
	if err != nil {
		t.Fatalf("%s: %v", testenv.Postgres, err)
	}
	t.Cleanup(pool.Close)
	schema := "idemprint_test_" + suffix()
	ctx := context.Background()
	if _, err := pool.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("PostgreSQL at %s: %v", testenv.Postgres, err)
	}
	t.Cleanup(func() {
		if _, err := pool.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("dropping the test's schema: %v", err)
		}
	})
	s, err := pgstore.New(pool, pgstore.Options{Table: schema + ".records"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateTable(ctx); err != nil {
		t.Fatalf("CreateTable: %v", err)
	}
	return s
}

// suffix returns 16 random hexadecimal digits.
func suffix() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
