package store

import (
	"cmp"
	"container/heap"
	"context"
	"hash/maphash"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idemprint/idemprint/policy"
)

// MemoryOptions configures a [Memory] store. The zero value is a useful
// default.
type MemoryOptions struct {
	// Shards is the number of independently locked parts the records are
	// spread over; 0 means 64. Both storage keys of one request are always
	// in the same shard.
	Shards int
	// MaxRecords bounds the number of records kept, in flight, completed
	// or released; 0 means 1,048,576. When it is reached and no record's
	// life has ended, new records are refused with [ErrFull]: a live or
	// in-flight record is never evicted to make room.
	MaxRecords int
	// Clock is the store's clock, by which leases and TTLs are judged;
	// nil means time.Now. A test or a replay of a traffic log passes its
	// own. It is called at every operation, from any goroutine.
	Clock func() time.Time
}

// Memory is a [Store] for one process, kept in its memory: shards, each a
// map under a mutex with a heap of its records by end of life. Records
// whose life has ended are removed as the store is used (a few per
// operation, and all of them before anything is refused), so the records
// held are bounded by those still alive.
//
// A Memory is safe for concurrent use. It shares nothing between
// processes: two instances of a service need a shared store (redisstore,
// pgstore) to exclude each other.
type Memory struct {
	shards []shard
	seed   maphash.Seed
	max    int64
	clock  func() time.Time
	_      [64]byte     // keep count apart from what every operation reads
	count  atomic.Int64 // the records of every shard
}

type shard struct {
	mu      sync.Mutex
	recs    map[string]*entry
	ends    ends     // the same entries by end of life, for sweeping
	lastGen uint64   // the highest generation the shard gave or wrote
	_       [64]byte // keep shards' locks on separate cache lines
}

// entry is a record of a shard, written in place (the store hands out
// copies), with the end of its life and its place in the shard's ends.
type entry struct {
	rec policy.Record
	end time.Time
	at  int
}

// ends is a min-heap of entries by end of life, for container/heap.
type ends []*entry

func (h ends) Len() int           { return len(h) }
func (h ends) Less(i, j int) bool { return h[i].end.Before(h[j].end) }
func (h ends) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].at, h[j].at = i, j
}

func (h *ends) Push(x any) {
	e := x.(*entry)
	e.at = len(*h)
	*h = append(*h, e)
}

func (h *ends) Pop() any {
	old, n := *h, len(*h)-1
	e := old[n]
	old[n] = nil
	*h = old[:n]
	if cap(old) > 1024 && n < cap(old)/4 {
		*h = append(ends(nil), old[:n]...) // give back what a burst grew
	}
	return e
}

// sweepPerOp is how many ended records an operation removes on its way,
// so that sweeping keeps pace with writing without a goroutine.
const sweepPerOp = 4

// NewMemory returns an empty Memory store. It is an error wrapping
// [ErrInvalid] when an option is negative.
func NewMemory(opts MemoryOptions) (*Memory, error) {
	if opts.Shards < 0 || opts.MaxRecords < 0 {
		return nil, &Error{Op: "new", Kind: ErrInvalid}
	}
	m := &Memory{
		shards: make([]shard, cmp.Or(opts.Shards, 64)),
		seed:   maphash.MakeSeed(),
		max:    int64(cmp.Or(opts.MaxRecords, 1<<20)),
		clock:  opts.Clock,
	}
	if m.clock == nil {
		m.clock = time.Now
	}
	for i := range m.shards {
		m.shards[i].recs = make(map[string]*entry)
	}
	return m, nil
}

// now returns the store's time at the precision every store keeps.
func (m *Memory) now() time.Time { return storeTime(m.clock()) }

// shard returns the shard of a primary storage key.
func (m *Memory) shard(primary string) *shard {
	return &m.shards[maphash.String(m.seed, primary)%uint64(len(m.shards))]
}

// shardOf returns the shard of a storage key: that of its primary key, so
// that a request's two keys share a lock.
func (m *Memory) shardOf(storageKey string) *shard {
	if p, ok := policy.PrimaryKey(storageKey); ok {
		storageKey = p
	}
	return m.shard(storageKey)
}

// Reserve implements [Store.Reserve].
func (m *Memory) Reserve(ctx context.Context, r Reservation) (out Outcome, err error) {
	if err := r.Validate(); err != nil {
		return out, err
	}
	key := r.Record.StorageKey
	sh := m.shard(key)
	err = m.do(ctx, "reserve", key, sh, func(now time.Time) error {
		pe, p := sh.get(key, now)
		_, n := sh.get(r.NewIdentity, now)
		if p != nil && p.Binds(now) || n != nil && n.Binds(now) {
			out = Outcome{Primary: clone(p), NewIdentity: clone(n), Now: now}
			return nil
		}
		if pe == nil && !m.room() {
			return ErrFull
		}
		rec := &r.Record // r is this call's copy
		if p != nil {
			rec.Generation = p.Generation + 1
		} else {
			rec.Generation = sh.firstGeneration(now)
		}
		rec.LeaseExpiry, rec.ExpiresAt = now.Add(r.Lease), now.Add(r.TTL)
		sh.put(pe, rec)
		out = Outcome{Reserved: true, Record: *rec, Now: now}
		return nil
	})
	return out, err
}

// firstGeneration returns the generation of a first record under a key
// of sh: the store's time in microseconds (clamped to an int64), or above
// every generation the shard ever wrote, whichever is higher, so that it
// is above every generation an earlier record under the key reached,
// whatever the clock does. A key never changes shards, so the shard's
// bound is enough. The caller holds sh.mu.
func (sh *shard) firstGeneration(now time.Time) uint64 {
	us := int64(math.MaxInt64)
	if now.Unix() < math.MaxInt64/1_000_000-1 { // else its microseconds overflow
		us = max(now.UnixMicro(), 1)
	}
	sh.lastGen = max(uint64(us), sh.lastGen+1)
	return sh.lastGen
}

// Write implements [Store.Write].
func (m *Memory) Write(ctx context.Context, rec policy.Record, guard Guard) error {
	primary, err := validateWrite(&rec, guard)
	if err != nil {
		return err
	}
	key, sh := rec.StorageKey, m.shard(primary)
	return m.do(ctx, "write", key, sh, func(now time.Time) error {
		ce, cur := sh.get(key, now)
		var curGen uint64
		if cur != nil {
			curGen = cur.Generation
			if curGen == rec.Generation && rec.State != policy.StateInFlight && Equal(cur, &rec) {
				return nil // a retried write that happened
			}
		}
		if curGen != rec.Generation-1 || !sh.guardHolds(guard, now) {
			return ErrConflict
		}
		if ce == nil && !m.room() {
			return ErrFull
		}
		sh.put(ce, &rec)
		sh.lastGen = max(sh.lastGen, rec.Generation) // a Reserve after a Delete must pass it
		return nil
	})
}

// Read implements [Store.Read].
func (m *Memory) Read(ctx context.Context, storageKey string) (rec *policy.Record, err error) {
	sh := m.shardOf(storageKey)
	err = m.do(ctx, "read", storageKey, sh, func(now time.Time) error {
		_, p := sh.get(storageKey, now)
		rec = clone(p)
		return nil
	})
	return rec, err
}

// Delete implements [Store.Delete].
func (m *Memory) Delete(ctx context.Context, storageKey string) error {
	sh := m.shardOf(storageKey)
	return m.do(ctx, "delete", storageKey, sh, func(now time.Time) error {
		e, rec := sh.get(storageKey, now)
		if rec == nil {
			return ErrNotFound
		}
		sh.remove(m, e)
		return nil
	})
}

// do runs f under sh's lock at the store's time, after sweeping a few
// ended records of sh. When f finds the store full (ErrFull), do sweeps
// every shard and, when that removed a record, runs f once more. An error
// of f or of the context is returned as op's [*Error].
func (m *Memory) do(ctx context.Context, op, key string, sh *shard, f func(now time.Time) error) error {
	if err := ctx.Err(); err != nil {
		return &Error{Op: op, StorageKey: key, Kind: err}
	}
	for attempt := 0; ; attempt++ {
		now := m.now()
		sh.mu.Lock()
		sh.sweep(m, now, sweepPerOp)
		err := f(now)
		sh.mu.Unlock()
		if err == ErrFull && attempt == 0 && m.sweepAll(now) > 0 {
			continue
		}
		if err != nil {
			return &Error{Op: op, StorageKey: key, Kind: err}
		}
		return nil
	}
}

// Ping implements [Pinger]; a Memory store always answers.
func (m *Memory) Ping(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return &Error{Op: "ping", Kind: err}
	}
	return nil
}

// InProcess implements [InProcess]: it returns true.
func (m *Memory) InProcess() bool { return true }

// Sweep implements [Sweeper]. Sweeping also happens as the store is used;
// calling Sweep only returns memory sooner.
func (m *Memory) Sweep(ctx context.Context, limit int) (int, error) {
	return m.each(ctx, "sweep", func(sh *shard, now time.Time, n int) int {
		return sh.sweep(m, now, max(limit-n, 0))
	})
}

// PurgeTenant implements [TenantPurger].
func (m *Memory) PurgeTenant(ctx context.Context, tenant string) (int, error) {
	return m.each(ctx, "purge", func(sh *shard, _ time.Time, _ int) (n int) {
		for _, e := range sh.recs {
			if e.rec.Tenant == tenant {
				sh.remove(m, e)
				n++
			}
		}
		return n
	})
}

// each runs f on every shard in turn, under its lock, with the store's
// time and the sum of what f returned so far, and returns the sum.
func (m *Memory) each(ctx context.Context, op string, f func(sh *shard, now time.Time, n int) int) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, &Error{Op: op, Kind: err}
	}
	now, n := m.now(), 0
	for i := range m.shards {
		sh := &m.shards[i]
		sh.mu.Lock()
		n += f(sh, now, n)
		sh.mu.Unlock()
	}
	return n, nil
}

// Len returns the number of records held, including those whose life has
// ended but that are not swept yet.
func (m *Memory) Len() int { return int(m.count.Load()) }

// room takes a place in the count for a new record and reports whether
// there was one.
func (m *Memory) room() bool {
	if m.count.Add(1) <= m.max {
		return true
	}
	m.count.Add(-1)
	return false
}

// sweepAll sweeps every shard and returns how many records it removed.
// The caller holds no shard's lock.
func (m *Memory) sweepAll(now time.Time) int {
	n, _ := m.each(context.Background(), "sweep", func(sh *shard, _ time.Time, _ int) int {
		return sh.sweep(m, now, -1)
	})
	return n
}

// clone returns a copy of rec, or nil for nil.
func clone(rec *policy.Record) *policy.Record {
	if rec != nil {
		c := *rec
		rec = &c
	}
	return rec
}

// lifeEnd returns when rec's life ends: when it stops binding, and for a
// released record the end of its TTL, so that its generation goes on
// counting while a late holder might still write.
func lifeEnd(rec *policy.Record) time.Time {
	if rec.LeaseExpiry.After(rec.ExpiresAt) {
		return rec.LeaseExpiry
	}
	return rec.ExpiresAt
}

// get returns the entry under key, whether its record's life has ended
// or not, and its record when it has not at now; nil for none. The caller
// holds sh.mu.
func (sh *shard) get(key string, now time.Time) (*entry, *policy.Record) {
	if key == "" {
		return nil, nil // a reservation without a new identity
	}
	e := sh.recs[key]
	if e == nil || !now.Before(e.end) {
		return e, nil
	}
	return e, &e.rec
}

// put stores a copy of rec in e, the entry under its storage key, or in a
// new entry when e is nil, whose place in the store's count the caller
// has taken. It sets the record's times to the store's precision, in rec
// too. The caller holds sh.mu.
func (sh *shard) put(e *entry, rec *policy.Record) {
	rec.LeaseExpiry, rec.ExpiresAt = storeTime(rec.LeaseExpiry), storeTime(rec.ExpiresAt)
	// A capacity of the length: an append to a record handed out never
	// writes into the bytes of another.
	rec.Header, rec.Body = rec.Header[:len(rec.Header):len(rec.Header)], rec.Body[:len(rec.Body):len(rec.Body)]
	if e == nil {
		e = &entry{rec: *rec, end: lifeEnd(rec)}
		sh.recs[rec.StorageKey] = e
		heap.Push(&sh.ends, e)
		return
	}
	e.rec = *rec
	if end := lifeEnd(rec); !end.Equal(e.end) {
		e.end = end
		heap.Fix(&sh.ends, e.at)
	}
}

// remove deletes e. The caller holds sh.mu.
func (sh *shard) remove(m *Memory, e *entry) {
	delete(sh.recs, e.rec.StorageKey)
	heap.Remove(&sh.ends, e.at)
	m.count.Add(-1)
}

// sweep removes up to limit records whose life ended by now (limit < 0:
// all of them) and returns how many. The caller holds sh.mu.
func (sh *shard) sweep(m *Memory, now time.Time, limit int) int {
	n := 0
	for ; n != limit && len(sh.ends) > 0 && !now.Before(sh.ends[0].end); n++ {
		sh.remove(m, sh.ends[0])
	}
	return n
}

// guardHolds reports whether g holds at now. The caller holds sh.mu.
func (sh *shard) guardHolds(g Guard, now time.Time) bool {
	if g.StorageKey == "" {
		return true
	}
	_, rec := sh.get(g.StorageKey, now)
	binds := rec != nil && rec.Binds(now)
	if g.Generation == 0 {
		return !binds
	}
	return binds && rec.Generation == g.Generation
}
