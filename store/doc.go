// Package store keeps the records behind the policy engine: the contract
// every backend implements ([Store]), the flow that runs the engine against
// it ([Acquire]), an embedded default for one process ([Memory]), and the
// record encoding that backends outside the process share
// ([AppendPayload], [DecodePayload]). The backends for several processes
// are in the sub-packages redisstore (Redis, one node, Sentinel or
// Cluster) and pgstore (PostgreSQL); storetest is the conformance suite
// every backend passes, ours and yours.
//
// # The contract
//
// Idempotency breaks in the store: two instances that check a key and then
// write it both execute; a holder whose lease lapsed and was taken over
// overwrites the newer record; a crashed holder keeps its key for a day
// because its lock lives as long as the response. A Store therefore does
// three things atomically, in the backend itself:
//
//   - [Store.Reserve] takes a key for a first execution, or returns what
//     holds it, in one round trip. A reservation is leased for the rule's
//     lease, not its TTL, so a crashed holder blocks its key only that
//     long.
//   - [Store.Write] replaces a record only if the stored generation is the
//     one it replaces: [policy.Record].Generation is the fencing token. A
//     holder whose lease lapsed and was taken over can never overwrite the
//     newer record. A [Guard] makes the write conditional on the request's
//     other storage key too.
//   - [Store.Read] and [Store.Delete] read a record and evict one.
//
// A first request costs two round trips (reserve, complete); a replay, a
// rejection or an in-flight answer one. The records a store returns are
// never answered directly: [Acquire] gives each to [policy.Rule.Decide],
// which compares fingerprints, specs and endpoints before anything is
// replayed or rejected.
//
// # One clock
//
// Leases and TTLs are judged by the store's clock (Redis TIME, PostgreSQL
// now(), the Memory store's Clock), never by the caller's: Reserve sets a
// reservation's lease and expiry from the store's time and returns that
// time ([Outcome].Now), and a record binds while [policy.Record.Binds] is
// true at the store's time. Two instances whose clocks differ by minutes
// still never both execute one key while its lease runs. The times a
// caller writes later (a completion's expiry, a renewed lease) are the
// store's time it last read plus the time elapsed since on its own
// monotonic clock. Stores keep times to the microsecond.
//
// # Life and generations
//
// A record's life ends when it stops binding: at ExpiresAt, or at
// LeaseExpiry for a reservation whose lease runs longer. A released
// reservation (policy.StateNone) lives until its ExpiresAt, keeping its
// generation counting while a late holder might still write. A record
// whose life has ended is, to every operation, no record at all; a
// backend deletes it then or later.
//
// Generations count the writes under a key. When Reserve writes a key
// that has no record, it starts at the store's time in microseconds, so a
// key deleted by an operator (or expired) and reserved again never
// returns to a generation that a holder of the old record could still
// name: its late write fails instead of overwriting the new reservation.
//
// # The payload encoding
//
// Backends outside the process keep Generation, State, LeaseExpiry and
// ExpiresAt where they can judge them (hash fields, columns), beside an
// opaque payload holding the rest of the record, encoded by
// [AppendPayload]. Version 1 of the payload is, in order:
//
//	byte     version (1)
//	string   tenant
//	string   key
//	string   route
//	string   fingerprint, text form ("" for none)
//	string   spec digest
//	uvarint  intent length + 1 (0: no intent), then the intent
//	uvarint  status
//	uvarint  number of header names, then per name, sorted:
//	         string name, uvarint number of values, each value a string
//	uvarint  body length, then the body
//	uint32   CRC-32C (Castagnoli) of everything before, big-endian
//
// where a string is its uvarint length followed by its bytes, and a
// uvarint is encoding/binary's. Everything is binary-safe, and a header
// with several values (Set-Cookie, Link) keeps each on its own: values
// are never joined with commas. A payload that does not decode exactly is
// [ErrCorrupt], never a replay.
//
// # Errors
//
// Every error is an [*Error] naming the operation and wrapping a sentinel:
// [ErrConflict] (a lost race: decide again), [ErrFull], [ErrCorrupt],
// [ErrNotFound], [ErrUnavailable] (a network or backend fault),
// [ErrInvalid], [ErrContention], or the context's error. A fault never
// leaves a half-written record: each operation is one atomic step in the
// backend.
package store
