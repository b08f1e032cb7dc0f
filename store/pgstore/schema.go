package pgstore

import (
	"context"
	"hash/fnv"
	"strconv"
	"strings"

	"github.com/idemprint/idemprint/store"
)

// The SQL of a store is generated once, by [New], from the table's name.
// Every expression that judges a record at a time is written by one of the
// functions below, so that the functions, the statements and the sweeper
// judge it alike.

// alive returns the SQL condition that the row r is alive at the time t:
// its life, which ends at the later of its expiry and its lease, has not
// ended. A row that is not alive is, to every operation, no row at all.
func alive(r, t string) string {
	return "GREATEST(" + r + ".expires_at, " + r + ".lease_expiry) > " + t
}

// binds returns the SQL condition that the row r binds its key at the time
// t, as [policy.Record.Binds] says: not released, and before its expiry
// or, in flight, before the end of its lease.
func binds(r, t string) string {
	return "(" + r + ".state <> 0 AND (" + t + " < " + r + ".expires_at OR " + r + ".state = 1 AND " + t + " < " + r + ".lease_expiry))"
}

// micros returns the SQL expression of the time t in microseconds since
// the Unix epoch: the first generation of a key.
func micros(t string) string {
	return "(extract(epoch FROM " + t + ") * 1000000)::bigint"
}

// names are the quoted names of a store's objects.
type names struct {
	table   string // "schema"."table", or "table"
	reserve string // the reservation function
	write   string // the conditional write function
	tenant  string // the tenant index, unqualified
	lifeEnd string // the index of the end of life, unqualified
	seed    string // the advisory locks' seed, a bigint literal
}

func newNames(schema, table string) names {
	q := func(name string) string {
		if schema == "" {
			return quote(name)
		}
		return quote(schema) + "." + quote(name)
	}
	h := fnv.New64a()
	h.Write([]byte(schema + "." + table))
	return names{
		table:   q(table),
		reserve: q(table + "_reserve"),
		write:   q(table + "_write"),
		tenant:  quote(table + "_tenant_idx"),
		lifeEnd: quote(table + "_life_end_idx"),
		seed:    strconv.FormatInt(int64(h.Sum64()), 10),
	}
}

// quote quotes an identifier that [parseTable] accepted: it holds no
// double quote.
func quote(name string) string { return `"` + name + `"` }

// ddl returns the statements that create the table, its indexes and its
// functions. Each is idempotent.
func (n names) ddl() []string {
	return []string{n.createTable(), n.createTenantIndex(), n.createLifeEndIndex(), n.createReserve(), n.createWrite()}
}

func (n names) createTable() string {
	return `CREATE TABLE IF NOT EXISTS ` + n.table + ` (
    storage_key  bytea       PRIMARY KEY,
    tenant       bytea       NOT NULL,
    generation   bigint      NOT NULL CHECK (generation > 0),
    state        smallint    NOT NULL CHECK (state BETWEEN 0 AND 2),
    lease_expiry timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL,
    payload      bytea       NOT NULL
)`
}

func (n names) createTenantIndex() string {
	return `CREATE INDEX IF NOT EXISTS ` + n.tenant + ` ON ` + n.table + ` (tenant)`
}

func (n names) createLifeEndIndex() string {
	return `CREATE INDEX IF NOT EXISTS ` + n.lifeEnd + ` ON ` + n.table + ` (GREATEST(expires_at, lease_expiry))`
}

// isolationCheck refuses to run under REPEATABLE READ, where a statement
// after a lock wait would still read the snapshot taken before it.
const isolationCheck = `IF current_setting('transaction_isolation') = 'repeatable read' THEN
        RAISE EXCEPTION 'idemprint: the store''s functions need READ COMMITTED or SERIALIZABLE, not REPEATABLE READ'
            USING ERRCODE = 'invalid_transaction_state';
    END IF;`

// lock returns the statement that takes the transaction-scoped advisory
// lock of the request whose primary storage key is the bytea key.
func (n names) lock(key string) string {
	return `PERFORM pg_advisory_xact_lock(hashtextextended(encode(` + key + `, 'hex'), ` + n.seed + `));`
}

// createReserve returns the reservation function. Under the lock of the
// primary key when there is a new identity, it reads both keys, each with
// a fresh snapshot, and returns them when either binds; otherwise it
// inserts the reservation, and when a row is there it reads again, then
// upserts the reservation, and the upsert's WHERE re-checks the row it
// conflicts with, locked at its latest version. A row that began to bind
// between the read and the upsert sends it round again. Only a row read
// as not binding is ever locked.
func (n names) createReserve() string {
	r := strings.NewReplacer(
		"{fn}", n.reserve, "{table}", n.table, "{isolation}", isolationCheck, "{lock}", n.lock("p_key"),
		"{n_binds}", binds("v_n", "v_now"), "{p_binds}", binds("v_p", "v_now"),
		"{r_binds}", binds("r", "v_now"), "{r_alive}", alive("r", "v_now"),
		// A replacement is not searched for other names: this one is whole.
		"{insert}", `INSERT INTO `+n.table+` AS r (storage_key, tenant, generation, state, lease_expiry, expires_at, payload)
            VALUES (p_key, p_tenant, `+micros("v_now")+`, 1,
                    v_now + p_lease * interval '1 microsecond', v_now + p_ttl * interval '1 microsecond', p_payload)`,
	)
	return r.Replace(`CREATE OR REPLACE FUNCTION {fn}(
    p_key bytea, p_tenant bytea, p_payload bytea, p_lease bigint, p_ttl bigint, p_new bytea,
    OUT o_reserved boolean, OUT o_now timestamptz, OUT o_generation bigint,
    OUT o_p_tenant bytea, OUT o_p_generation bigint, OUT o_p_state smallint,
    OUT o_p_lease_expiry timestamptz, OUT o_p_expires_at timestamptz, OUT o_p_payload bytea,
    OUT o_n_tenant bytea, OUT o_n_generation bigint, OUT o_n_state smallint,
    OUT o_n_lease_expiry timestamptz, OUT o_n_expires_at timestamptz, OUT o_n_payload bytea)
LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
    v_now timestamptz;
    v_p {table}%ROWTYPE;
    v_n {table}%ROWTYPE;
    v_n_binds boolean := false;
    v_tried boolean := false;
BEGIN
    {isolation}
    IF p_new IS NOT NULL THEN
        {lock}
    END IF;
    FOR attempt IN 1..16 LOOP
        v_now := clock_timestamp();
        IF p_new IS NOT NULL THEN
            SELECT * INTO v_n FROM {table} r WHERE r.storage_key = p_new AND {r_alive};
            v_n_binds := FOUND AND {n_binds};
        END IF;
        SELECT * INTO v_p FROM {table} r WHERE r.storage_key = p_key AND {r_alive};
        IF v_n_binds OR FOUND AND {p_binds} THEN
            o_reserved := false;
            o_now := v_now;
            o_p_tenant := v_p.tenant; o_p_generation := v_p.generation; o_p_state := v_p.state;
            o_p_lease_expiry := v_p.lease_expiry; o_p_expires_at := v_p.expires_at; o_p_payload := v_p.payload;
            o_n_tenant := v_n.tenant; o_n_generation := v_n.generation; o_n_state := v_n.state;
            o_n_lease_expiry := v_n.lease_expiry; o_n_expires_at := v_n.expires_at; o_n_payload := v_n.payload;
            RETURN;
        END IF;
        IF NOT v_tried THEN
            -- First without touching a row that is there: an upsert locks
            -- the row it conflicts with even when its WHERE is false, and
            -- a burst of duplicates that read before the first of them
            -- committed would queue on that lock, committing one by one,
            -- with the holder's completion behind them. A conflict goes
            -- round again, to read the row that is there.
            v_tried := true;
            {insert}
            ON CONFLICT (storage_key) DO NOTHING
            RETURNING r.generation INTO o_generation;
            CONTINUE WHEN NOT FOUND;
        ELSE
            {insert}
            ON CONFLICT (storage_key) DO UPDATE
                SET tenant = EXCLUDED.tenant,
                    generation = CASE WHEN {r_alive} THEN r.generation + 1
                                      ELSE GREATEST(r.generation + 1, EXCLUDED.generation) END,
                    state = 1,
                    lease_expiry = EXCLUDED.lease_expiry,
                    expires_at = EXCLUDED.expires_at,
                    payload = EXCLUDED.payload
                WHERE NOT {r_binds}
            RETURNING r.generation INTO o_generation;
        END IF;
        IF FOUND THEN
            o_reserved := true;
            o_now := v_now;
            RETURN;
        END IF;
    END LOOP;
    RAISE EXCEPTION 'idemprint: the reservation lost the race for its row too often'
        USING ERRCODE = 'serialization_failure';
END
$fn$`)
}

// createWrite returns the conditional write function. With a guard, under
// the lock of the request's primary key, it reads the guard's row with a
// fresh snapshot; then it writes by compare-and-set on the generation (an
// upsert over a row that is not alive for generation 1, an update of the
// alive row of the previous generation otherwise), and when nothing was
// written it tells an identical record already stored (1) from a
// conflict (2).
func (n names) createWrite() string {
	r := strings.NewReplacer(
		"{fn}", n.write, "{table}", n.table, "{isolation}", isolationCheck, "{lock}", n.lock("p_primary"),
		"{r_alive}", alive("r", "v_now"), "{g_binds}", binds("v_g", "v_now"),
	)
	return r.Replace(`CREATE OR REPLACE FUNCTION {fn}(
    p_key bytea, p_tenant bytea, p_generation bigint, p_state smallint,
    p_lease_expiry timestamptz, p_expires_at timestamptz, p_payload bytea,
    p_guard bytea, p_guard_generation bigint, p_primary bytea,
    OUT o_result smallint)
LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
    v_now timestamptz;
    v_g {table}%ROWTYPE;
    v_ok boolean := true;
BEGIN
    {isolation}
    IF p_guard IS NOT NULL THEN
        {lock}
    END IF;
    v_now := clock_timestamp();
    IF p_guard IS NOT NULL THEN
        SELECT * INTO v_g FROM {table} r WHERE r.storage_key = p_guard AND {r_alive};
        IF p_guard_generation = 0 THEN
            v_ok := NOT (FOUND AND {g_binds});
        ELSE
            v_ok := FOUND AND {g_binds} AND v_g.generation = p_guard_generation;
        END IF;
    END IF;
    IF v_ok THEN
        IF p_generation = 1 THEN
            INSERT INTO {table} AS r (storage_key, tenant, generation, state, lease_expiry, expires_at, payload)
            VALUES (p_key, p_tenant, 1, p_state, p_lease_expiry, p_expires_at, p_payload)
            ON CONFLICT (storage_key) DO UPDATE
                SET tenant = EXCLUDED.tenant, generation = 1, state = EXCLUDED.state,
                    lease_expiry = EXCLUDED.lease_expiry, expires_at = EXCLUDED.expires_at, payload = EXCLUDED.payload
                WHERE NOT {r_alive};
        ELSE
            UPDATE {table} r
                SET tenant = p_tenant, generation = p_generation, state = p_state,
                    lease_expiry = p_lease_expiry, expires_at = p_expires_at, payload = p_payload
                WHERE r.storage_key = p_key AND r.generation = p_generation - 1 AND {r_alive};
        END IF;
        IF FOUND THEN
            o_result := 0;
            RETURN;
        END IF;
    END IF;
    -- A completion or release already written succeeds again; a
    -- reservation never does: an identical one may be another request's.
    PERFORM FROM {table} r
        WHERE p_state <> 1 AND r.storage_key = p_key AND r.generation = p_generation AND r.state = p_state
          AND r.lease_expiry = p_lease_expiry AND r.expires_at = p_expires_at AND r.payload = p_payload
          AND {r_alive};
    o_result := CASE WHEN FOUND THEN 1 ELSE 2 END;
END
$fn$`)
}

// statements are the store's SQL statements besides the functions.
type statements struct {
	reserve, write, read, delete, sweep, purge string
}

func (n names) statements() statements {
	return statements{
		reserve: `SELECT * FROM ` + n.reserve + `($1, $2, $3, $4, $5, $6)`,
		write:   `SELECT o_result FROM ` + n.write + `($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		read: `SELECT r.tenant, r.generation, r.state, r.lease_expiry, r.expires_at, r.payload FROM ` + n.table +
			` r WHERE r.storage_key = $1 AND ` + alive("r", "clock_timestamp()"),
		delete: `DELETE FROM ` + n.table + ` r WHERE r.storage_key = $1 RETURNING ` + alive("r", "clock_timestamp()"),
		sweep: `WITH ended AS (SELECT r.storage_key FROM ` + n.table + ` r WHERE NOT ` + alive("r", "now()") +
			` ORDER BY GREATEST(r.expires_at, r.lease_expiry) LIMIT $1 FOR UPDATE SKIP LOCKED)
DELETE FROM ` + n.table + ` r USING ended WHERE r.storage_key = ended.storage_key AND NOT ` + alive("r", "now()"),
		purge: `DELETE FROM ` + n.table + ` WHERE tenant = $1`,
	}
}

// CreateTable creates the store's table, its indexes and its two
// functions when they do not exist, and replaces the functions when they
// do, in one transaction under a transaction-scoped advisory lock, so
// that processes starting together may all call it. It needs the
// privileges to create them; the service itself needs only to execute the
// functions and to select and delete rows (see the package
// documentation).
func (s *Store) CreateTable(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return &store.Error{Op: "create", Kind: err}
	}
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return s.fail(ctx, "create", "", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(`+s.names.seed+`)`); err != nil {
		return s.fail(ctx, "create", "", err)
	}
	for _, stmt := range s.names.ddl() {
		if _, err := tx.Exec(ctx, stmt); err != nil {
			return s.fail(ctx, "create", "", err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return s.fail(ctx, "create", "", err)
	}
	return nil
}
