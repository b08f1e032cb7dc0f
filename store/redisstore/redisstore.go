package redisstore

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"strings"
	"sync/atomic"
	"time"

	"github.com/idemprint/idemprint/policy"
	"github.com/idemprint/idemprint/store"
	"github.com/redis/go-redis/v9"
)

// Options configures a [Store]. The zero value is a useful default.
type Options struct {
	// Prefix starts every Redis key the store writes, to keep its records
	// apart from other data in the same database, such as "idemprint:".
	// The zero value adds nothing: keys start with the hash tag. It must
	// not contain '{' or '}', which would move the hash tag.
	Prefix string
	// ScanCount is the COUNT of each SCAN that [Store.PurgeTenant] sends;
	// 0 means 1000. It bounds the work of one command on the server, not
	// the total.
	ScanCount int
}

// Store is a [store.Store] kept in Redis: one node, Sentinel or Cluster,
// through any [redis.UniversalClient]. It also implements [store.Pinger]
// and [store.TenantPurger]. A Store is safe for concurrent use, by
// goroutines and by processes sharing the Redis deployment. The zero
// value has no client: create a Store with [New].
type Store struct {
	client    redis.UniversalClient
	prefix    string
	scanCount int64
	// nonce names each Reserve call: a random part fixed per Store and a
	// counter.
	nonceBase [8]byte
	nonceSeq  atomic.Uint64
}

var (
	_ store.Store        = (*Store)(nil)
	_ store.Pinger       = (*Store)(nil)
	_ store.TenantPurger = (*Store)(nil)
)

// maxMicros bounds the times and generations the store keeps: below 2^53
// they are exact in the doubles of Redis's Lua (up to the year 2255).
const maxMicros = 1 << 53

var (
	errNoClient     = errors.New("nil client")
	errPrefixBraces = errors.New("the prefix contains '{' or '}'")
	errScanCount    = errors.New("negative scan count")
	errTimeRange    = errors.New("a time of the record is before 1970 or after 2255")
	errGeneration   = errors.New("the generation is beyond 2^53")
)

// New returns a Store that keeps its records through client. It does no
// I/O: use [Store.Ping] to check the server. It is an error wrapping
// [store.ErrInvalid] when client is nil or an option is invalid. The
// client stays the caller's: close it after the last use of the Store.
//
// Configure the client so that a context's deadline bounds each call
// (ContextTimeoutEnabled in go-redis's options), and leave retries on:
// a retried Reserve finds its own reservation and a retried Write finds
// its record written, so both are safe.
func New(client redis.UniversalClient, opts Options) (*Store, error) {
	bad := func(err error) (*Store, error) {
		return nil, &store.Error{Op: "new", Kind: store.ErrInvalid, Err: err}
	}
	switch {
	case client == nil:
		return bad(errNoClient)
	case strings.ContainsAny(opts.Prefix, "{}"):
		return bad(errPrefixBraces)
	case opts.ScanCount < 0:
		return bad(errScanCount)
	}
	s := &Store{client: client, prefix: opts.Prefix, scanCount: int64(opts.ScanCount)}
	if s.scanCount == 0 {
		s.scanCount = 1000
	}
	if _, err := rand.Read(s.nonceBase[:]); err != nil {
		return nil, &store.Error{Op: "new", Kind: store.ErrUnavailable, Err: err}
	}
	return s, nil
}

// tagLen is the length of a hash tag: 48 bits of SHA-256, base64url.
const tagLen = 8

// Key returns the Redis key of a storage key: the prefix, the hash tag of
// the request the storage key belongs to ("{" tagLen characters "}"),
// then the storage key itself. Both storage keys of one request have the
// same hash tag, so they are in one hash slot of a Redis Cluster.
func (s *Store) Key(storageKey string) string {
	primary, ok := policy.PrimaryKey(storageKey)
	if !ok {
		primary = storageKey // not a storage key: its own slot
	}
	sum := sha256.Sum256([]byte(primary))
	var b strings.Builder
	b.Grow(len(s.prefix) + tagLen + 2 + len(storageKey))
	b.WriteString(s.prefix)
	b.WriteByte('{')
	var tag [tagLen]byte
	base64.RawURLEncoding.Encode(tag[:], sum[:tagLen*6/8])
	b.Write(tag[:])
	b.WriteByte('}')
	b.WriteString(storageKey)
	return b.String()
}

// nonceLen is the length of a nonce in bytes: the Store's random part and
// a counter.
const nonceLen = 16

// nonce returns a value no other Reserve call of any Store has, in hex:
// the scripts read it from a value's header, which is text.
func (s *Store) nonce() string {
	var b [nonceLen]byte
	copy(b[:8], s.nonceBase[:])
	binary.BigEndian.PutUint64(b[8:], s.nonceSeq.Add(1))
	var h [2 * nonceLen]byte
	hex.Encode(h[:], b[:])
	return string(h[:])
}

// Reserve implements [store.Store.Reserve] in one script: it loads the
// records under both keys, judges them at the server's TIME and writes
// the reservation when neither binds.
func (s *Store) Reserve(ctx context.Context, r store.Reservation) (store.Outcome, error) {
	const op = "reserve"
	sk := r.Record.StorageKey
	if err := ctx.Err(); err != nil {
		return store.Outcome{}, &store.Error{Op: op, StorageKey: sk, Kind: err}
	}
	if err := r.Validate(); err != nil {
		return store.Outcome{}, err
	}
	keys := []string{s.Key(sk)}
	if r.NewIdentity != "" {
		keys = append(keys, s.Key(r.NewIdentity))
	}
	payload := appendPayload(&r.Record)
	v, err := reserveScript.Run(ctx, s.client, keys,
		int64(r.Lease/time.Microsecond), int64(r.TTL/time.Microsecond), payload, s.nonce()).Result()
	if err != nil {
		return store.Outcome{}, classify(ctx, op, sk, err)
	}
	if v, ok := v.(string); ok {
		return reserved(op, r.Record, v)
	}
	reply, ok := v.([]any)
	if !ok || len(reply) < 2 {
		return store.Outcome{}, unexpected(op, sk)
	}
	code, ok1 := reply[0].(int64)
	now, ok2 := micros(reply[1])
	if !ok1 || !ok2 {
		return store.Outcome{}, unexpected(op, sk)
	}
	out := store.Outcome{Now: now}
	switch {
	case code == codeConflict && len(reply) == 4:
		if out.Primary, err = record(op, sk, reply[2]); err != nil {
			return store.Outcome{}, err
		}
		if out.NewIdentity, err = record(op, r.NewIdentity, reply[3]); err != nil {
			return store.Outcome{}, err
		}
		if out.Primary == nil && out.NewIdentity == nil {
			return store.Outcome{}, unexpected(op, sk)
		}
		return out, nil
	case code == codeCorrupt && len(reply) == 3:
		which := sk
		if i, _ := reply[2].(int64); i == 2 {
			which = r.NewIdentity
		}
		return store.Outcome{}, corruptFields(op, which)
	case code == codeExhausted:
		return store.Outcome{}, &store.Error{Op: op, StorageKey: sk, Kind: store.ErrFull, Err: errGeneration}
	case code == codeOutOfRange:
		return store.Outcome{}, &store.Error{Op: op, StorageKey: sk, Kind: store.ErrInvalid, Err: errTimeRange}
	}
	return store.Outcome{}, unexpected(op, sk)
}

// reserved returns the Outcome of a reservation of rec from the reply
// "now g l e" of the reserve script.
func reserved(op string, rec policy.Record, reply string) (store.Outcome, error) {
	now, rest, _ := strings.Cut(reply, " ")
	g, rest, _ := strings.Cut(rest, " ")
	l, e, _ := strings.Cut(rest, " ")
	var okN, okG, okL, okE bool
	out := store.Outcome{Reserved: true, Record: rec}
	out.Now, okN = micros(now)
	out.Record.Generation, okG = generation(g)
	out.Record.LeaseExpiry, okL = micros(l)
	out.Record.ExpiresAt, okE = micros(e)
	if !okN || !okG || !okL || !okE {
		return store.Outcome{}, unexpected(op, rec.StorageKey)
	}
	return out, nil
}

// Write implements [store.Store.Write] in one script: a compare-and-set
// on the generation, with the guard judged at the server's TIME.
func (s *Store) Write(ctx context.Context, rec policy.Record, guard store.Guard) error {
	const op = "write"
	sk := rec.StorageKey
	if err := ctx.Err(); err != nil {
		return &store.Error{Op: op, StorageKey: sk, Kind: err}
	}
	if err := store.ValidateWrite(&rec, guard); err != nil {
		return err
	}
	if rec.Generation > maxMicros {
		return &store.Error{Op: op, StorageKey: sk, Kind: store.ErrInvalid, Err: errGeneration}
	}
	value, ok := appendValue(&rec)
	if !ok {
		return &store.Error{Op: op, StorageKey: sk, Kind: store.ErrInvalid, Err: errTimeRange}
	}
	// The end of the record's life, in µs (-1: the zero time) and in ms
	// rounded up, for PXAT.
	end := int64(-1)
	for _, t := range []time.Time{rec.LeaseExpiry, rec.ExpiresAt} {
		if !t.IsZero() {
			end = max(end, t.UnixMicro())
		}
	}
	keys := []string{s.Key(sk)}
	if guard.StorageKey != "" {
		keys = append(keys, s.Key(guard.StorageKey))
	}
	reply, err := writeScript.Run(ctx, s.client, keys,
		value, rec.Generation, rec.Generation-1, int(rec.State),
		guard.Generation, end, max(0, (end+999)/1000)).Int64()
	if err != nil {
		return classify(ctx, op, sk, err)
	}
	switch reply {
	case codeOK:
		return nil
	case codeConflict:
		return &store.Error{Op: op, StorageKey: sk, Kind: store.ErrConflict}
	case codeCorrupt:
		return corruptFields(op, sk)
	case -2:
		return corruptFields(op, guard.StorageKey)
	}
	return unexpected(op, sk)
}

// Read implements [store.Store.Read] in one script, which judges the
// record's life at the server's TIME.
func (s *Store) Read(ctx context.Context, storageKey string) (*policy.Record, error) {
	const op = "read"
	if err := ctx.Err(); err != nil {
		return nil, &store.Error{Op: op, StorageKey: storageKey, Kind: err}
	}
	reply, err := readScript.Run(ctx, s.client, []string{s.Key(storageKey)}).Result()
	if err != nil {
		return nil, classify(ctx, op, storageKey, err)
	}
	if reply == int64(codeCorrupt) {
		return nil, corruptFields(op, storageKey)
	}
	return record(op, storageKey, reply)
}

// Delete implements [store.Store.Delete] in one script. A record that
// does not parse is deleted like any other.
func (s *Store) Delete(ctx context.Context, storageKey string) error {
	const op = "delete"
	if err := ctx.Err(); err != nil {
		return &store.Error{Op: op, StorageKey: storageKey, Kind: err}
	}
	n, err := deleteScript.Run(ctx, s.client, []string{s.Key(storageKey)}).Int64()
	if err != nil {
		return classify(ctx, op, storageKey, err)
	}
	if n == 0 {
		return &store.Error{Op: op, StorageKey: storageKey, Kind: store.ErrNotFound}
	}
	return nil
}

// Ping implements [store.Pinger] with PING.
func (s *Store) Ping(ctx context.Context) error {
	const op = "ping"
	if err := ctx.Err(); err != nil {
		return &store.Error{Op: op, Kind: err}
	}
	if err := s.client.Ping(ctx).Err(); err != nil {
		return classify(ctx, op, "", err)
	}
	return nil
}
