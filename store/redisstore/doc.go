// Package redisstore keeps idempotency records in Redis: a [store.Store]
// over any [redis.UniversalClient] of github.com/redis/go-redis/v9, so
// one node, Sentinel and Redis Cluster all work. Create one with [New];
// it also implements [store.Pinger] and [store.TenantPurger].
//
// Every operation is one Lua script, run atomically by the server in one
// round trip (EVALSHA, or EVAL when the server has not cached the script
// yet): no WATCH/MULTI loops, no lock held between round trips. Leases
// and expiries are judged by the server's clock (TIME inside the script),
// never by the caller's.
//
// # Keys and values
//
// One Redis key holds one record, a string:
//
//	Options.Prefix "{" tag "}" storage key
//
// where the storage key is the [policy.Rule.StorageKeys] one, kept as it
// is (binary-safe: tenants and keys may hold any bytes), and tag is 8
// characters of base64url (RFC 4648 §5) of the first 6 bytes of the
// SHA-256 of [policy.PrimaryKey] of the storage key. The primary key of a
// request and its new identity have the same tag, so one script reads
// and writes both, on a Redis Cluster too; the prefix must not hold '{'
// or '}', which would move the tag. [Store.Key] returns the key of a
// storage key, for an operator's redis-cli.
//
// The value is a header line, its fields separated by single spaces,
// then the payload (layout 2):
//
//	"2 " g " " s " " l " " e " " n "\n" r
//
//	2  the layout's version
//	g  generation, 1 to 2^53, decimal without leading zeros
//	s  state: 0 released, 1 in flight, 2 completed (policy.State)
//	l  lease expiry, decimal µs since the Unix epoch; "" for none
//	e  expiry, decimal µs since the Unix epoch; "" for none
//	n  the Reserve call that wrote a reservation, in hex (a random
//	   8-byte part fixed per Store and a counter); "" once another write
//	   replaced it
//	r  the payload: every other field of the record, store.AppendPayload,
//	   any bytes to the end of the value
//
// A completion, which has no lease, starts for example
//
//	"2 1796055276929540 2  1796141676929540 \n"
//
// Times are below 2^53 µs (the year 2255) and generations at most 2^53,
// where Lua's doubles are exact; a Write of anything outside is refused
// with [store.ErrInvalid]. A value whose header does not match exactly,
// a v1 hash whose fields do not parse, and a key of another type are
// [store.ErrCorrupt] for every operation: never replayed, never written
// over. The scripts judge the header and leave the payload to Go: a
// payload that does not decode is [store.ErrCorrupt] wherever a record
// is returned (Read, Reserve), and a Write fenced by the record's
// generation replaces it. [Store.Delete] removes any such record.
//
// # Records of layout 1
//
// Before layout 2, a record was a hash (v1) of the fields g, s, l, e, r and n
// above (n then held the nonce's 16 bytes). Every script still reads such
// a hash, by the rules it was written under, and judges it as every
// record is judged; the next write to its key replaces it with a value.
// A deployment can thus be upgraded in place: no record is lost, and no
// request whose record was written before executes again.
//
// Processes of the old version do not read values: for them a key that
// holds one is WRONGTYPE, [store.ErrCorrupt], which fails the request and
// never executes it (idemhttp answers 500, failing open or not). While
// old and new processes share one Redis, requests that meet a key written
// by a new one fail on an old one: upgrade all processes together, or
// accept those failures for the length of the rollout. Going back to the
// old version fails the keys written since, until they expire.
//
// # Scripts
//
// Each script reads TIME once, then loads the keys it names with GET and
// judges them at that time: a record whose life has ended (its time is
// past both l and e) counts as no record, and a record binds exactly as
// [policy.Record.Binds] says. GET is sent with redis.pcall: when the key
// is a hash (WRONGTYPE), the script loads it with HMGET as layout 1 did,
// and a key of another type fails the script there, before anything is
// written. A write is one SET of the whole value with PXAT.
//
//   - Reserve (keys: the primary and, when the rule has one, the new
//     identity): when neither record binds, it writes the reservation with
//     l and e set from TIME plus the lease and the TTL, and generation g+1
//     over a record that is still there, or TIME in µs for a key without
//     one, so a deleted or expired key never returns to an old generation
//     (the server's clock must not step back by more than the time between
//     two such writes). Otherwise it writes nothing and returns both
//     records. A reservation that carries the call's own nonce, unchanged
//     since and with its lease running, is returned as reserved: the same
//     call sent again by the client after a lost reply finds itself and
//     does not answer itself 409.
//   - Write (keys: the record and, for a guard, the other key of the
//     request; Go sends the whole value): it succeeds without a change
//     when the identical record is there (its value, or a v1 hash of the
//     same fields); otherwise it writes only if the live record's
//     generation is the written one minus 1 (no record counts as 0) and
//     the guard holds at TIME, and replaces the value, clearing the
//     nonce. The caller passes the end of the record's life, computed
//     from the record's own times.
//   - Read returns the live record's value; Delete deletes the key and
//     reports whether it held a live or corrupt record.
//
// # Expiry
//
// Every write sets the key's expiry (PXAT) to the end of the record's
// life, the later of l and e rounded up to the millisecond, so Redis
// frees the memory of records nobody reads again, and no sweeper is
// needed. A released
// reservation has no lease and lives until its expiry: its generation
// goes on counting while a late holder might still write. The scripts
// judge life to the µs, so a record is gone for them up to a millisecond
// before Redis removes it.
//
// # Configuration
//
// The store is configured by its [Options] (a key prefix, the SCAN batch
// of PurgeTenant) and through the client the caller passes and keeps:
//
//   - ContextTimeoutEnabled on go-redis's options, so that a context's
//     deadline bounds each call; the context's error is then the error's
//     Kind ([store.Error]).
//   - Retries (MaxRetries) can stay on: a retried Reserve finds its own
//     reservation, a retried Write its own record.
//   - PoolSize at least the number of concurrent requests, or calls queue
//     for a connection.
//
// The server: maxmemory-policy noeviction (an evicting policy removes live
// records, and a request then executes twice; at maxmemory, writes fail
// with [store.ErrFull] and reads go on), and persistence (AOF) if records
// must survive a restart. Redis 6.2 or later (SET with PXAT, scripts
// replicated by their effects), a 64-bit build (the scripts format µs
// with Lua's %d, a C long); tested with 7.0.
//
// # Round trips
//
// Reserve, Write, Read, Delete and Ping are one round trip each, so
// [store.Acquire] costs one for a first execution, a replay, a rejection
// or an in-flight answer, and two for a takeover; completing costs one
// more. A script's first call on a server that has not cached it costs a
// second (EVALSHA answers NOSCRIPT, then EVAL). PurgeTenant walks the
// keyspace: see [Store.PurgeTenant].
//
// # Errors
//
// Every error is a [*store.Error]. Its Kind is the context's error when
// the context ended; [store.ErrFull] for a server at maxmemory;
// [store.ErrCorrupt] for a record that does not parse; [store.ErrConflict],
// [store.ErrNotFound] and [store.ErrInvalid] as the contract says; and
// [store.ErrUnavailable] for every other failure, with go-redis's error as
// Err: a network fault, a closed client, a server that is loading,
// read-only or without a cluster, and also a refused command (NOPERM) or
// a script error, which mean a misconfiguration or a bug rather than a
// fault. redis.Nil is never an error of this package.
//
// # Specifications
//
//   - Scripting with Lua, EVAL and EVALSHA:
//     https://redis.io/docs/latest/develop/interact/programmability/eval-intro/
//     and https://redis.io/docs/latest/commands/evalsha/
//   - Lua 5.1 numbers (doubles) and string.format:
//     https://www.lua.org/manual/5.1/manual.html §2.2 and §5.4
//   - TIME, GET, SET (PXAT), HMGET (layout 1), DEL, SCAN, UNLINK, PING:
//     https://redis.io/docs/latest/commands/
//   - Hash tags and hash slots: the Redis Cluster specification,
//     https://redis.io/docs/latest/operate/oss_and_stack/reference/cluster-spec/
//   - Key eviction (maxmemory-policy):
//     https://redis.io/docs/latest/develop/reference/eviction/
//   - base64url: RFC 4648 §5; SHA-256: FIPS 180-4.
//
// # Security considerations
//
// Whoever can write the store's keys can make the service replay any
// response for any tenant: the payload's CRC-32C detects damage, not
// forgery. Give the service a Redis user of its own, limited by an ACL to
// the prefix's keys (~prefix*) and the commands above, and use TLS where
// the network is shared. Key names hold tenants and idempotency keys in
// clear: they appear in SCAN, MONITOR, keyspace notifications and slow
// logs; bodies of stored responses are kept whole in the payload.
//
// Redis replicates asynchronously: a record written to a primary that
// fails before a replica has it is lost, and so is every record of a
// server restarted without persistence. A retry after such a loss
// executes again, as after an operator's Delete; the holder of a lost
// reservation cannot complete it (its write finds another generation). A
// failover to a server whose clock differs moves every lease and expiry
// by the difference.
//
// Leases and expiries come from the server's TIME, so a caller's clock
// cannot extend or shorten them. Record sizes are bounded only by the
// server (proto-max-bulk-len, maxmemory): bound response bodies before
// they are stored.
package redisstore
