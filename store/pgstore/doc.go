// Package pgstore is a [store.Store] in PostgreSQL, through a
// github.com/jackc/pgx/v5 pool ([pgxpool.Pool]): the records of any number
// of processes in one table, each operation one round trip and one
// transaction, leases and TTLs judged by the database's clock. It also
// sweeps lapsed rows ([Store.Sweep], [Store.RunSweeper]), purges a
// tenant ([Store.PurgeTenant]) and answers readiness checks
// ([Store.Ping]).
//
// It needs PostgreSQL 11 or later (hashtextextended) and is tested with
// PostgreSQL 15.
//
// # The table
//
// [Store.CreateTable] creates it, with its indexes and functions, and
// may be called at every start; a migration tool may run the same DDL,
// here for the default name (the functions are in the source,
// schema.go):
//
//	CREATE TABLE IF NOT EXISTS "idemprint_records" (
//	    storage_key  bytea       PRIMARY KEY,
//	    tenant       bytea       NOT NULL,
//	    generation   bigint      NOT NULL CHECK (generation > 0),
//	    state        smallint    NOT NULL CHECK (state BETWEEN 0 AND 2),
//	    lease_expiry timestamptz NOT NULL,
//	    expires_at   timestamptz NOT NULL,
//	    payload      bytea       NOT NULL
//	);
//	CREATE INDEX IF NOT EXISTS "idemprint_records_tenant_idx"
//	    ON "idemprint_records" (tenant);
//	CREATE INDEX IF NOT EXISTS "idemprint_records_life_end_idx"
//	    ON "idemprint_records" (GREATEST(expires_at, lease_expiry));
//
// Storage keys and tenants are bytea because they are arbitrary bytes: a
// text column cannot hold NUL or invalid UTF-8. The tenant has a column
// and an index of its own so that an operator can purge a tenant
// ([Store.PurgeTenant], or DELETE … WHERE tenant = …). state is
// [policy.State] (0 released, 1 in flight, 2 completed); lease_expiry
// and expires_at are kept to the microsecond, as timestamptz is, and a
// record without a lease (a released one) has lease_expiry -infinity.
// payload is the record's encoding by [store.AppendPayload]: everything
// but the columns. A payload that does not decode, or whose tenant is not
// the tenant column's, is [store.ErrCorrupt], never a replay.
//
// A row's life ends at GREATEST(expires_at, lease_expiry), by the
// database's clock; a row whose life ended counts, to every operation, as
// no row at all, and the sweeper deletes it. btree limits an index entry
// to about 2.7 kB, so a storage key or tenant longer than that (after
// compression) is refused with [store.ErrInvalid].
//
// # Operations and round trips
//
// Each method is one statement in its own transaction, so one round trip
// (pgx's default query mode prepares each statement once per connection,
// the first time it runs there):
//
//   - [Store.Reserve] calls the function <table>_reserve(key, tenant,
//     payload, lease µs, TTL µs, new identity). At clock_timestamp(), it
//     reads the rows under the new identity and the primary key; if either
//     binds (as [policy.Record.Binds] says: not released, and before its
//     expiry or, in flight, before the end of its lease), it returns both
//     and the time. Otherwise it inserts the reservation with
//     INSERT … ON CONFLICT (storage_key) DO NOTHING; when a row is there,
//     it reads it again and, if it still does not bind, upserts with
//     INSERT … ON CONFLICT (storage_key) DO UPDATE … WHERE the conflicting
//     row does not bind. An upsert locks the row it conflicts with even
//     when its WHERE is false, so a row that binds is never upserted over:
//     duplicates that all missed the first one's uncommitted row would
//     otherwise queue on its lock, each committing in turn, and delay the
//     holder's completion past its lease. A new key gets the database's time in
//     microseconds as its generation, an alive row its generation + 1, a
//     lapsed row the greater of the two, and the lease and expiry are the
//     database's time plus the rule's lease and TTL.
//   - [Store.Write] calls <table>_write(record columns, guard key, guard
//     generation, primary key). It judges the guard's row at
//     clock_timestamp(), then writes by compare-and-set: generation 1 by
//     an upsert over a row whose life ended, any other by an UPDATE of the
//     alive row of the previous generation. When nothing was written, a
//     row identical to the record (generation, state, times and payload)
//     makes the write succeed; anything else is [store.ErrConflict].
//   - [Store.Read] is a SELECT of the alive row; [Store.Delete] a DELETE
//     (a lapsed row is deleted too, and reported as [store.ErrNotFound]).
//   - [Store.Sweep] deletes at most limit lapsed rows, oldest first,
//     through the index on the end of life, skipping rows locked by other
//     transactions (FOR UPDATE SKIP LOCKED); [Store.PurgeTenant] deletes
//     by the tenant index.
//
// A first request costs two round trips (reserve, complete), a replay or
// a rejection one, and a takeover or an execution as new two, as
// [store.Acquire] documents.
//
// # Locking
//
// Under READ COMMITTED, PostgreSQL's default, each statement sees the
// rows committed before it began, and INSERT … ON CONFLICT DO UPDATE …
// WHERE re-checks its condition on the latest version of the one row it
// conflicts with, after locking it. That makes every operation on one key
// atomic: a reservation, a compare-and-set or a deletion of a row sees
// and replaces its latest version. It does not protect a decision about
// one key taken by reading another: the row read may change, or be
// inserted, before the writer commits, and a row that does not exist
// cannot be locked.
//
// The race that matters is between a request's two storage keys. Request
// B executes as new under its new identity N because the record under
// the primary key P binds with generation g (a Write to N guarded by P);
// meanwhile P's holder releases it, and B's retry reserves P because P no
// longer binds (a Reserve of P that reads N). Each transaction reads the
// key the other writes: with plain statements, both can read the old
// state and both commit, and B runs twice.
//
// So every operation that reads one of a request's keys to write the
// other — a Reserve with a new identity, a Write with a guard — first
// takes a transaction-scoped advisory lock derived from the request's
// primary storage key (pg_advisory_xact_lock of hashtextextended of it,
// seeded by the table's name), then reads with a fresh snapshot (each
// statement of a PL/pgSQL function takes one), and holds the lock until
// it commits. Two such operations on one request are serialized, and the
// later one reads what the earlier one wrote. Operations on one key
// (completions, renewals, releases, deletions, and everything of a rule
// without a new identity) take no advisory lock: a release can only make
// a guard fail or let a serialized reservation see the key free, and no
// single-key write turns a key that does not bind into one that does. The
// lock is an advisory lock so that it exists before either row does;
// locks of different requests collide only by a 64-bit hash, which
// delays one without changing what either does.
//
// TestTwoKeysRaceDirect plays that race 300 times and
// TestTwoKeysRaceAcquire races six [store.Acquire] retries against a
// release, an uncached completion or a delete; without the lock, between
// a sixth and a third of the direct rounds ran B under both keys.
//
// The functions refuse to run under REPEATABLE READ, where a statement
// after a lock wait would still read the snapshot taken before it (SQLSTATE
// 25000). Under SERIALIZABLE they are safe (PostgreSQL aborts one of two
// transactions that read each other's writes), and a serialization failure
// is [store.ErrConflict] for a write and [store.ErrUnavailable] otherwise.
//
// # Clock
//
// Every judgement uses the database's clock: clock_timestamp(), read once
// by each function after its lock, so a reservation's lease runs from the
// moment it is written, not from when its transaction began waiting; the
// sweeper uses now(). [store.Outcome].Now is that time. A first
// generation is that time in microseconds, so a key deleted or expired and
// reserved again starts above every generation of its earlier record, as
// long as the database's clock does not step back by more than that
// record's lifetime.
//
// # Sweeping
//
// Lapsed rows stay until they are deleted; Reserve and Write replace one
// in place, so the table's size is bounded by the keys alive plus those
// that lapsed since the last sweep. Run [Store.RunSweeper] in one
// goroutine of one or more processes (their sweeps skip each other's
// rows), or call [Store.Sweep] from a scheduler:
//
//	go s.RunSweeper(ctx, time.Minute, 1000)
//
// # PgBouncer and other poolers
//
// The store keeps no session state: no SET, no temporary table, no
// session-level advisory lock (pg_advisory_lock would stay with a server
// connection that the pooler hands to another client); each operation is
// one transaction whose locks end with it, so PgBouncer's transaction
// pooling is fine. pgx's default query mode uses named prepared
// statements, which PgBouncer supports in transaction mode from version
// 1.21 with max_prepared_statements set above 0. With an older PgBouncer,
// or without that setting, set the pool's
// ConnConfig.DefaultQueryExecMode to pgx.QueryExecModeExec (unnamed
// statements, still one round trip) or QueryExecModeSimpleProtocol; the
// conformance suite runs in both. An unqualified table name is looked up
// through the search_path, so behind a pooler give every role the same
// one, or qualify the name.
//
// # Errors
//
// Every error is a [*store.Error]. A context that ended gives its error as
// the Kind. Errors from the server are classified by their SQLSTATE
// ([*pgconn.PgError].Code), and faults of the connection (a failed dial,
// a connection lost or terminated, a closed pool) are
// [store.ErrUnavailable]; see [Store.Write] for retrying, and the
// unexported kindOf for the table. A terminated backend (57P01) fails the
// statement that was running on it, and only that: the pool replaces the
// connection, and the Store goes on. A backend terminated while idle in
// the pool fails the next statement given to it.
//
// # Specifications
//
// PostgreSQL 15 documentation: INSERT, section "ON CONFLICT Clause"
// (https://www.postgresql.org/docs/15/sql-insert.html#SQL-ON-CONFLICT);
// 13.2.1 Read Committed Isolation Level, for what a statement sees and
// how ON CONFLICT DO UPDATE and UPDATE re-check a concurrently updated
// row; 13.3.5 Advisory Locks and 9.27.10 Advisory Lock Functions, for
// pg_advisory_xact_lock; 38.7 Function Volatility Categories, for the
// fresh snapshot of each statement of a VOLATILE function; SELECT, "The
// Locking Clause", for SKIP LOCKED.
//
// # Security considerations
//
// Keys, tenants and payloads travel as bound parameters (bytea), never in
// SQL text; the only name in SQL text is the table's, which [New] accepts
// only as lowercase letters, digits and underscores and quotes.
//
// The functions are SECURITY INVOKER: they run with the caller's
// privileges, so the service's role needs EXECUTE on the two functions
// and SELECT, INSERT, UPDATE and DELETE on the table, and not the right to
// create anything; give CreateTable's role to a migration instead. An
// unqualified table name, in the statements and in the functions, is
// resolved through the caller's search_path: a role that can create a
// table or function of that name in a schema searched earlier (or a
// temporary table, for the session itself) would receive the records.
// Qualify the name with a schema only trusted roles can create in.
//
// The table holds the stored responses, which may carry personal data or
// secrets, in payload; storage keys and tenants may identify customers.
// Errors never include them (see [store.Error]). PurgeTenant deletes a
// tenant's rows; VACUUM reclaims their space later, and backups and
// replicas keep them as long as they are kept.
//
// Every row's integrity rests on the database: a role that can UPDATE
// the table can forge a record to be replayed. The payload's checksum
// catches damage, not forgery.
package pgstore
