package pgstore_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/idemprint/idemprint/internal/testenv"
	"github.com/idemprint/idemprint/store/pgstore"
	"github.com/idemprint/idemprint/store/storetest"
)

const exampleURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// testPool returns a pool on the database of IDEMPRINT_TEST_POSTGRES with
// at most maxConns connections, named appName in pg_stat_activity, in the
// query mode mode (0: pgx's default), closed when the test ends.
func testPoolMode(t testing.TB, appName string, maxConns int32, mode pgx.QueryExecMode) *pgxpool.Pool {
	t.Helper()
	url := testenv.Lookup(t, testenv.Postgres, exampleURL)
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatalf("%s: %v", testenv.Postgres, err)
	}
	cfg.MaxConns = maxConns
	cfg.ConnConfig.RuntimeParams["application_name"] = appName
	if mode != 0 {
		cfg.ConnConfig.DefaultQueryExecMode = mode
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if err := pool.Ping(context.Background()); err != nil {
		t.Fatalf("PostgreSQL at %s: %v", testenv.Postgres, err)
	}
	return pool
}

// testPool returns a pool in pgx's default query mode.
func testPool(t testing.TB, appName string, maxConns int32) *pgxpool.Pool {
	t.Helper()
	return testPoolMode(t, appName, maxConns, 0)
}

// newStore returns a store whose table is in a schema of its own, created
// for the test and dropped when it ends.
func newStore(t testing.TB, pool *pgxpool.Pool, opts pgstore.Options) *pgstore.Store {
	t.Helper()
	ctx := context.Background()
	opts.Table = newSchema(t, pool) + ".records"
	s, err := pgstore.New(pool, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateTable(ctx); err != nil {
		t.Fatalf("CreateTable: %v", err)
	}
	return s
}

// newSchema creates a schema for the test, dropped when it ends, and
// returns its name.
func newSchema(t testing.TB, pool *pgxpool.Pool) string {
	t.Helper()
	var b [8]byte
	rand.Read(b[:])
	schema := "idemprint_test_" + hex.EncodeToString(b[:])
	if _, err := pool.Exec(context.Background(), "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := pool.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("dropping the test's schema: %v", err)
		}
	})
	return schema
}

func TestConformance(t *testing.T) {
	conformance(t, testPool(t, "idemprint-pgstore-conformance", 24))
}

// The store keeps its contract in the query modes that PgBouncer's
// transaction pooling needs: unnamed statements with text parameters
// (QueryExecModeExec) and the simple protocol.
func TestConformanceQueryExecModes(t *testing.T) {
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeExec, pgx.QueryExecModeSimpleProtocol} {
		t.Run(mode.String(), func(t *testing.T) {
			conformance(t, testPoolMode(t, "idemprint-pgstore-conformance-"+mode.String(), 12, mode))
		})
	}
}

func conformance(t *testing.T, pool *pgxpool.Pool) {
	storetest.Run(t, func(t *testing.T) storetest.Subject {
		s := newStore(t, pool, pgstore.Options{})
		return storetest.Subject{
			Store: s,
			Corrupt: func(storageKey string) error {
				_, err := pool.Exec(context.Background(), "UPDATE "+s.Table()+" SET payload = $2 WHERE storage_key = $1",
					[]byte(storageKey), []byte("\x01not a payload"))
				return err
			},
		}
	})
}

// CreateTable may be called again, and by several processes at once.
func TestCreateTableIdempotent(t *testing.T) {
	pool := testPool(t, "idemprint-pgstore-create", 8)
	s := newStore(t, pool, pgstore.Options{})
	errs := make(chan error, 4)
	for range 4 {
		go func() { errs <- s.CreateTable(context.Background()) }()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Errorf("CreateTable again: %v", err)
		}
	}
	var n int
	if err := pool.QueryRow(context.Background(), "SELECT count(*) FROM "+s.Table()).Scan(&n); err != nil || n != 0 {
		t.Errorf("the table after CreateTable again: %d rows, %v", n, err)
	}
}

// storeOptions are the options of the tests' stores.
func storeOptions() pgstore.Options { return pgstore.Options{} }
