package pgstore

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/idemprint/idemprint/policy"
	"github.com/idemprint/idemprint/store"
)

// DefaultTable is the table of a store whose [Options] name none.
const DefaultTable = "idemprint_records"

// maxNameLen bounds each part of the table's name, so that the names of
// its functions and indexes ("_life_end_idx" is the longest suffix) stay
// within PostgreSQL's 63 bytes, which it would otherwise cut silently.
const maxNameLen = 48

// Options configures a [Store]. The zero value is a useful default.
type Options struct {
	// Table is the name of the table, optionally qualified by its schema:
	// "idemprint_records" or "billing.idemprint_records". Each part is
	// 1 to 48 bytes of lowercase ASCII letters, digits and underscores,
	// not starting with a digit, so that it means the same quoted or not.
	// "" means [DefaultTable], found through the search_path. The
	// functions are named after the table, with the suffixes _reserve and
	// _write, in its schema.
	Table string
	// Logger receives the errors of [Store.RunSweeper]; nil discards them.
	Logger *slog.Logger
}

// Store is a [store.Store] in a PostgreSQL table, through a pgx pool. It
// also implements [store.Sweeper], [store.TenantPurger] and
// [store.Pinger]. Every method is one round trip and one transaction.
//
// A Store is safe for concurrent use, by goroutines and by processes
// sharing the table. It holds no connection of its own: closing the pool
// is the caller's.
type Store struct {
	pool   *pgxpool.Pool
	names  names
	sql    statements
	logger *slog.Logger
}

var (
	_ store.Store        = (*Store)(nil)
	_ store.Sweeper      = (*Store)(nil)
	_ store.TenantPurger = (*Store)(nil)
	_ store.Pinger       = (*Store)(nil)
)

// New returns a store keeping its records in the table opts names, through
// pool. It does not talk to the database: create the table with
// [Store.CreateTable] or with the DDL of the package documentation. It is
// an error wrapping [store.ErrInvalid] when pool is nil or the table's
// name is not valid.
func New(pool *pgxpool.Pool, opts Options) (*Store, error) {
	if pool == nil {
		return nil, &store.Error{Op: "new", Kind: store.ErrInvalid, Err: errors.New("pgstore: nil pool")}
	}
	schema, table, err := parseTable(opts.Table)
	if err != nil {
		return nil, &store.Error{Op: "new", Kind: store.ErrInvalid, Err: err}
	}
	n := newNames(schema, table)
	return &Store{pool: pool, names: n, sql: n.statements(), logger: opts.Logger}, nil
}

// parseTable splits a table's name into its schema ("" for none) and its
// name.
func parseTable(name string) (schema, table string, err error) {
	if name == "" {
		return "", DefaultTable, nil
	}
	schema, table, qualified := strings.Cut(name, ".")
	if !qualified {
		schema, table = "", name
	}
	if qualified && !validName(schema) || !validName(table) {
		return "", "", errors.New("pgstore: the table's name must be one or two dot-separated parts of 1 to 48 lowercase letters, digits and underscores, not starting with a digit")
	}
	return schema, table, nil
}

func validName(s string) bool {
	if s == "" || len(s) > maxNameLen || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// Table returns the quoted, possibly schema-qualified name of the table,
// as it appears in the store's statements.
func (s *Store) Table() string { return s.names.table }

// Reserve implements [store.Store.Reserve]: one call of the table's
// _reserve function.
func (s *Store) Reserve(ctx context.Context, r store.Reservation) (store.Outcome, error) {
	key := r.Record.StorageKey
	if err := ctx.Err(); err != nil {
		return store.Outcome{}, &store.Error{Op: "reserve", StorageKey: key, Kind: err}
	}
	if err := r.Validate(); err != nil {
		return store.Outcome{}, err
	}
	var newKey []byte
	if r.NewIdentity != "" {
		newKey = []byte(r.NewIdentity)
	}
	var (
		reserved bool
		now      time.Time
		gen      pgtype.Int8
		p, n     row
	)
	dest := append(append([]any{&reserved, &now, &gen}, p.dest()...), n.dest()...)
	err := s.pool.QueryRow(ctx, s.sql.reserve,
		[]byte(key), []byte(r.Record.Tenant), store.AppendPayload(nil, &r.Record),
		r.Lease.Microseconds(), r.TTL.Microseconds(), newKey,
	).Scan(dest...)
	if err != nil {
		return store.Outcome{}, s.fail(ctx, "reserve", key, err)
	}
	out := store.Outcome{Now: now.UTC()}
	if reserved {
		if !gen.Valid || gen.Int64 <= 0 {
			return store.Outcome{}, &store.Error{Op: "reserve", StorageKey: key, Kind: store.ErrCorrupt, Err: errors.New("pgstore: the reservation has no generation")}
		}
		out.Reserved = true
		out.Record = r.Record
		out.Record.Generation = uint64(gen.Int64)
		out.Record.LeaseExpiry = out.Now.Add(r.Lease).Truncate(time.Microsecond)
		out.Record.ExpiresAt = out.Now.Add(r.TTL).Truncate(time.Microsecond)
		return out, nil
	}
	if out.Primary, err = p.record("reserve", key); err != nil {
		return store.Outcome{}, err
	}
	if out.NewIdentity, err = n.record("reserve", r.NewIdentity); err != nil {
		return store.Outcome{}, err
	}
	if !out.Primary.Binds(out.Now) && !out.NewIdentity.Binds(out.Now) {
		return store.Outcome{}, &store.Error{Op: "reserve", StorageKey: key, Kind: store.ErrCorrupt, Err: errors.New("pgstore: nothing was reserved, yet no record binds")}
	}
	return out, nil
}

// Write implements [store.Store.Write]: one call of the table's _write
// function. Generations above 2^63-1, which a bigint cannot hold, and
// times outside the years 1 to 9999 (but the zero time, "none") are an
// error wrapping [store.ErrInvalid].
func (s *Store) Write(ctx context.Context, rec policy.Record, guard store.Guard) error {
	key := rec.StorageKey
	if err := ctx.Err(); err != nil {
		return &store.Error{Op: "write", StorageKey: key, Kind: err}
	}
	if err := store.ValidateWrite(&rec, guard); err != nil {
		return err
	}
	if rec.Generation > math.MaxInt64 || guard.Generation > math.MaxInt64 {
		return &store.Error{Op: "write", StorageKey: key, Kind: store.ErrInvalid, Err: errors.New("pgstore: a generation above 2^63-1")}
	}
	if !storable(rec.LeaseExpiry) || !storable(rec.ExpiresAt) {
		return &store.Error{Op: "write", StorageKey: key, Kind: store.ErrInvalid, Err: errors.New("pgstore: a time outside the years 1 to 9999")}
	}
	primary, _ := policy.PrimaryKey(key) // ValidateWrite checked it
	var guardKey []byte
	if guard.StorageKey != "" {
		guardKey = []byte(guard.StorageKey)
	}
	var result int16
	err := s.pool.QueryRow(ctx, s.sql.write,
		[]byte(key), []byte(rec.Tenant), int64(rec.Generation), int16(rec.State),
		timestamptz(rec.LeaseExpiry), timestamptz(rec.ExpiresAt), store.AppendPayload(nil, &rec),
		guardKey, int64(guard.Generation), []byte(primary),
	).Scan(&result)
	if err != nil {
		return s.fail(ctx, "write", key, err)
	}
	switch result {
	case 0, 1: // written, or already stored
		return nil
	case 2:
		return &store.Error{Op: "write", StorageKey: key, Kind: store.ErrConflict}
	}
	return &store.Error{Op: "write", StorageKey: key, Kind: store.ErrUnavailable, Err: errors.New("pgstore: the write function returned an unknown result")}
}

// Read implements [store.Store.Read]: one SELECT.
func (s *Store) Read(ctx context.Context, storageKey string) (*policy.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, &store.Error{Op: "read", StorageKey: storageKey, Kind: err}
	}
	var r row
	err := s.pool.QueryRow(ctx, s.sql.read, []byte(storageKey)).Scan(r.dest()...)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, s.fail(ctx, "read", storageKey, err)
	}
	return r.record("read", storageKey)
}

// Delete implements [store.Store.Delete]: one DELETE. A row whose life
// ended is deleted too, as the sweeper would, and reported as
// [store.ErrNotFound].
func (s *Store) Delete(ctx context.Context, storageKey string) error {
	if err := ctx.Err(); err != nil {
		return &store.Error{Op: "delete", StorageKey: storageKey, Kind: err}
	}
	var alive bool
	err := s.pool.QueryRow(ctx, s.sql.delete, []byte(storageKey)).Scan(&alive)
	if errors.Is(err, pgx.ErrNoRows) || err == nil && !alive {
		return &store.Error{Op: "delete", StorageKey: storageKey, Kind: store.ErrNotFound}
	}
	if err != nil {
		return s.fail(ctx, "delete", storageKey, err)
	}
	return nil
}

// Ping implements [store.Pinger]: it acquires a connection from the pool
// and sends it an empty statement.
func (s *Store) Ping(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return &store.Error{Op: "ping", Kind: err}
	}
	if err := s.pool.Ping(ctx); err != nil {
		return s.fail(ctx, "ping", "", err)
	}
	return nil
}
