package store

import (
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
	// Clock is the store's clock; nil means this process's, as time.Now
	// reads it (a step of the wall clock is followed within a second).
	// Leases and TTLs are judged by it. A test or a replay of a traffic
	// log passes its own.
	Clock func() time.Time
}

// Memory is a [Store] for one process, kept in its memory. Records whose
// life has ended are removed as the store is used (a few per operation,
// and all of a shard before anything is refused), so the memory held is
// bounded by the records still alive.
//
// A Memory is safe for concurrent use. It shares nothing between
// processes: two instances of a service need a shared store (redisstore,
// pgstore) to exclude each other.
type Memory struct {
	shards []shard
	seed   maphash.Seed
	max    int64
	// count is the number of records, but for what shards have not added
	// yet: each adds its changes a batch at a time (see counted), so that
	// cores writing records in different shards do not write one cache
	// line at every record.
	count atomic.Int64
	clock func() time.Time
	// ownClock says that clock is this process's, whose readings
	// Acquire can use as its own.
	ownClock bool
}

type shard struct {
	mu    sync.Mutex
	seed  maphash.Seed // the store's, for the index
	ix    index        // storage key -> slot
	slots []*[chunkSize]entry
	used  int32   // slots ever handed out, free ones included
	free  []int32 // slots of removed entries, for reuse
	ends  ends    // its records by end of life, for sweeping
	names names   // makes its entries' handles of routes and spec digests
	// lastGen is the highest generation the shard gave or wrote.
	lastGen uint64
	// size is the number of its records (ix.n), an atomic for Len and
	// room, which read it without the lock; unadded is what of its changes the
	// shard has not added to the store's count yet.
	size    atomic.Int64
	unadded int64
	_       [64]byte // keep shards' locks on separate cache lines
}

// chunkSize is the number of entries allocated at once: a new record
// costs no allocation of its own, and the store's memory holds few
// objects for the garbage collector to visit. 63 entries fill an 8 KiB
// size class of the allocator (TestChunkSize holds it so).
const chunkSize = 63

// sweepPerOp is how many ended records an operation removes on its way,
// so that sweeping keeps pace with writing without a goroutine.
const sweepPerOp = 4

// NewMemory returns an empty Memory store. It is an error wrapping
// [ErrInvalid] when an option is negative.
func NewMemory(opts MemoryOptions) (*Memory, error) {
	if opts.Shards < 0 || opts.MaxRecords < 0 {
		return nil, &Error{Op: "new", Kind: ErrInvalid}
	}
	n := opts.Shards
	if n == 0 {
		n = 64
	}
	m := &Memory{shards: make([]shard, n), seed: maphash.MakeSeed(), max: int64(opts.MaxRecords), clock: opts.Clock}
	if m.max == 0 {
		m.max = 1 << 20
	}
	if m.clock == nil {
		m.clock, m.ownClock = newProcessClock().now, true
	}
	for i := range m.shards {
		m.shards[i].seed = m.seed
	}
	return m, nil
}

// now returns the store's time at the precision every store keeps.
func (m *Memory) now() time.Time { return storeTime(m.clock()) }

// reading returns the store's time as now does, and the clock reading it
// comes from when the clock is this process's own (monotonic reading and
// all), for Outcome.read.
func (m *Memory) reading() (now, read time.Time) {
	t := m.clock()
	if m.ownClock {
		read = t
	}
	return storeTime(t), read
}

// storeTime drops what a backend cannot keep: the monotonic reading,
// the location and nanoseconds below the microsecond.
func storeTime(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	if !farTime(t) {
		// UnixMicro floors as Truncate does (the zero time is a whole
		// number of seconds before 1970), without Truncate's division.
		return time.UnixMicro(t.UnixMicro()).UTC()
	}
	return t.Truncate(time.Microsecond).UTC()
}

// maxMicroSeconds bounds the seconds since 1970 whose microseconds fit in
// an int64.
const maxMicroSeconds = math.MaxInt64/1_000_000 - 1

// shardOf returns the shard of a storage key: that of its primary key, so
// that a request's two keys share a lock.
func (m *Memory) shardOf(storageKey string) *shard {
	if p, ok := policy.PrimaryKey(storageKey); ok {
		storageKey = p
	}
	sh, _ := m.shard(storageKey)
	return sh
}

// shard returns the shard of a primary storage key, and the key's hash,
// which the shard's index uses too.
func (m *Memory) shard(primary string) (*shard, uint64) {
	h := maphash.String(m.seed, primary)
	return &m.shards[h%uint64(len(m.shards))], h
}

// Reserve implements [Store.Reserve].
func (m *Memory) Reserve(ctx context.Context, r Reservation) (out Outcome, err error) {
	// out is the result itself, so that returning it copies none of its
	// hundreds of bytes.
	key := r.Record.StorageKey
	if err := ctx.Err(); err != nil {
		return Outcome{}, &Error{Op: "reserve", StorageKey: key, Kind: err}
	}
	if err := r.Validate(); err != nil {
		return Outcome{}, err
	}
	sh, h := m.shard(key) // a primary key
	for attempt := 0; ; attempt++ {
		now, read := m.reading()
		sh.mu.Lock()
		sh.sweep(m, now, sweepPerOp)
		pe := sh.lookupHashed(h, key)
		p, n := pe.aliveAt(now), sh.alive(r.NewIdentity, now)
		if p != nil && p.binds(now) || n != nil && n.binds(now) {
			out.Now, out.read = now, read
			if p != nil {
				out.Primary = p.record()
			}
			if n != nil {
				out.NewIdentity = n.record()
			}
			sh.mu.Unlock()
			return out, nil
		}
		if pe == nil && !m.room(sh, now) {
			sh.mu.Unlock()
			if attempt == 0 && m.sweepAll(now) > 0 {
				continue
			}
			return Outcome{}, &Error{Op: "reserve", StorageKey: key, Kind: ErrFull}
		}
		rec := &r.Record // r is this call's copy
		if p != nil {
			rec.Generation = p.gen + 1
		} else {
			rec.Generation = sh.firstGeneration(now)
		}
		rec.LeaseExpiry = now.Add(r.Lease)
		rec.ExpiresAt = now.Add(r.TTL)
		out.Reserved, out.Now, out.read = true, now, read
		sh.put(m, key, h, pe, rec).recordTo(&out.Record)
		sh.mu.Unlock()
		return out, nil
	}
}

// firstGeneration returns the generation of a first record under a key
// of sh: the store's time in microseconds, or above every generation the
// shard ever wrote, whichever is higher, so that it is above every
// generation an earlier record under the key reached, whatever the clock
// does. A key never changes shards, so the shard's bound is enough, and
// it needs no atomic: the caller holds sh.mu.
func (sh *shard) firstGeneration(now time.Time) uint64 {
	g := max(uint64(max(micros(now), 1)), sh.lastGen+1)
	sh.lastGen = g
	return g
}

// wrote notes that generation g was written in sh. The caller holds sh.mu.
func (sh *shard) wrote(g uint64) { sh.lastGen = max(sh.lastGen, g) }

// Write implements [Store.Write].
func (m *Memory) Write(ctx context.Context, rec policy.Record, guard Guard) error {
	key := rec.StorageKey
	if err := ctx.Err(); err != nil {
		return &Error{Op: "write", StorageKey: key, Kind: err}
	}
	primary, err := validateWrite(&rec, guard)
	if err != nil {
		return err
	}
	sh, h := m.shard(primary)
	if key != primary {
		h = maphash.String(m.seed, key)
	}
	for attempt := 0; ; attempt++ {
		now := m.now()
		sh.mu.Lock()
		sh.sweep(m, now, sweepPerOp)
		ce := sh.lookupHashed(h, key)
		cur := ce.aliveAt(now)
		var curGen uint64
		if cur != nil {
			curGen = cur.gen
			if curGen == rec.Generation && rec.State != policy.StateInFlight && cur.equal(&rec) {
				sh.mu.Unlock()
				return nil // a retried write that happened
			}
		}
		if curGen != rec.Generation-1 || !sh.guardHolds(guard, now) {
			sh.mu.Unlock()
			return &Error{Op: "write", StorageKey: key, Kind: ErrConflict}
		}
		if ce == nil && !m.room(sh, now) {
			sh.mu.Unlock()
			if attempt == 0 && m.sweepAll(now) > 0 {
				continue
			}
			return &Error{Op: "write", StorageKey: key, Kind: ErrFull}
		}
		sh.put(m, key, h, ce, &rec)
		sh.wrote(rec.Generation) // under the lock: a Delete and Reserve of key must see it
		sh.mu.Unlock()
		return nil
	}
}

// Read implements [Store.Read].
func (m *Memory) Read(ctx context.Context, storageKey string) (*policy.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, &Error{Op: "read", StorageKey: storageKey, Kind: err}
	}
	now := m.now()
	sh := m.shardOf(storageKey)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if e := sh.alive(storageKey, now); e != nil {
		return e.record(), nil
	}
	return nil, nil
}

// Delete implements [Store.Delete].
func (m *Memory) Delete(ctx context.Context, storageKey string) error {
	if err := ctx.Err(); err != nil {
		return &Error{Op: "delete", StorageKey: storageKey, Kind: err}
	}
	now := m.now()
	sh := m.shardOf(storageKey)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	e := sh.alive(storageKey, now)
	if e == nil {
		return &Error{Op: "delete", StorageKey: storageKey, Kind: ErrNotFound}
	}
	sh.remove(m, e)
	return nil
}

// Ping implements [Pinger]; a Memory store always answers.
func (m *Memory) Ping(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return &Error{Op: "ping", Kind: err}
	}
	return nil
}

// Sweep implements [Sweeper]. Sweeping also happens as the store is used;
// calling Sweep only returns memory sooner.
func (m *Memory) Sweep(ctx context.Context, limit int) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, &Error{Op: "sweep", Kind: err}
	}
	now := m.now()
	n := 0
	for i := range m.shards {
		if n >= limit {
			break
		}
		sh := &m.shards[i]
		sh.mu.Lock()
		n += sh.sweep(m, now, limit-n)
		sh.mu.Unlock()
	}
	return n, nil
}

// PurgeTenant implements [TenantPurger].
func (m *Memory) PurgeTenant(ctx context.Context, tenant string) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, &Error{Op: "purge", Kind: err}
	}
	n := 0
	for i := range m.shards {
		sh := &m.shards[i]
		sh.mu.Lock()
		for slot := range sh.used { // a free slot's entry is zeroed: no key
			if e := sh.entry(slot); e.key != "" && e.tenant() == tenant {
				sh.remove(m, e)
				n++
			}
		}
		sh.mu.Unlock()
	}
	return n, nil
}

// Len returns the number of records held, including those whose life has
// ended but that are not swept yet.
func (m *Memory) Len() int { return int(m.size()) }

// size counts the records of every shard.
func (m *Memory) size() int64 {
	var n int64
	for i := range m.shards {
		n += m.shards[i].size.Load()
	}
	return n
}

// countBatch is how far a shard's records change before it adds the
// change to the store's count.
const countBatch = 64

// counted notes that sh has d records more (or fewer). The caller holds
// sh.mu.
func (m *Memory) counted(sh *shard, d int64) {
	sh.size.Add(d)
	sh.unadded += d
	if sh.unadded >= countBatch || sh.unadded <= -countBatch {
		m.count.Add(sh.unadded)
		sh.unadded = 0
	}
}

// room reports whether a new record fits, sweeping sh first when the
// store is full. The caller holds sh.mu.
func (m *Memory) room(sh *shard, now time.Time) bool {
	// Far from full, the batched count tells; near it, only the shards'
	// own counts do. Each shard has added all but less than a batch.
	slack := int64(len(m.shards)) * (countBatch - 1)
	if m.count.Load() < m.max-slack || m.size() < m.max {
		return true
	}
	sh.sweep(m, now, -1)
	return m.size() < m.max
}

// sweepAll sweeps every shard and returns how many records it removed.
// The caller holds no shard's lock.
func (m *Memory) sweepAll(now time.Time) int {
	n := 0
	for i := range m.shards {
		sh := &m.shards[i]
		sh.mu.Lock()
		n += sh.sweep(m, now, -1)
		sh.mu.Unlock()
	}
	return n
}

// entry returns the entry in slot. The caller holds sh.mu.
func (sh *shard) entry(slot int32) *entry {
	return &sh.slots[uint32(slot)/chunkSize][uint32(slot)%chunkSize]
}

// lookup returns the entry under key, whether or not its record's life
// has ended, or nil. The caller holds sh.mu.
func (sh *shard) lookup(key string) *entry {
	if key == "" {
		return nil
	}
	return sh.lookupHashed(maphash.String(sh.seed, key), key)
}

// lookupHashed is lookup of a key whose hash is h.
func (sh *shard) lookupHashed(h uint64, key string) *entry {
	slot := sh.find(h, key)
	if slot < 0 {
		return nil
	}
	return sh.entry(slot)
}

// aliveAt returns e when it is not nil and its record's life has not
// ended at now.
func (e *entry) aliveAt(now time.Time) *entry {
	if e == nil || micros(now) >= e.end() {
		return nil
	}
	return e
}

// alive returns the entry under key when its record's life has not ended
// at now. The caller holds sh.mu.
func (sh *shard) alive(key string, now time.Time) *entry {
	return sh.lookup(key).aliveAt(now)
}

// put stores rec under key, whose hash is h, in e, the entry under key
// whether its record's life ended or not, or in a new entry when e is nil,
// and returns the entry. The caller holds sh.mu.
func (sh *shard) put(m *Memory, key string, h uint64, e *entry, rec *policy.Record) *entry {
	if e == nil {
		var slot int32
		if n := len(sh.free); n > 0 {
			slot, sh.free = sh.free[n-1], sh.free[:n-1]
		} else {
			if int(sh.used) == len(sh.slots)*chunkSize {
				sh.slots = append(sh.slots, new([chunkSize]entry))
			}
			slot = sh.used
			sh.used++
		}
		e = sh.entry(slot)
		end := e.set(rec, slot, &sh.names)
		sh.ix.add(h, slot)
		sh.ends.push(sh, end, slot)
		m.counted(sh, 1)
		return e
	}
	if was, end := e.end(), e.set(rec, e.slot, &sh.names); end != was {
		sh.ends.change(sh, e.slot, was, end)
	}
	return e
}

// remove deletes e from the shard and frees its slot. The caller holds
// sh.mu.
func (sh *shard) remove(m *Memory, e *entry) {
	slot := e.slot // its items in ends go stale
	sh.ix.remove(maphash.String(sh.seed, e.key), slot)
	*e = entry{} // drop what the record refers to
	sh.free = append(sh.free, slot)
	m.counted(sh, -1)
	sh.ends.trim(sh)
}

// sweep removes up to limit records whose life ended by now (limit < 0:
// all of them) and returns how many. The caller holds sh.mu.
func (sh *shard) sweep(m *Memory, now time.Time, limit int) int {
	n := 0
	for t := micros(now); n != limit; {
		it, ok := sh.ends.popEnded(t)
		if !ok {
			break
		}
		if sh.live(it) {
			sh.remove(m, sh.entry(it.slot))
			n++
		}
	}
	return n
}

// guardHolds reports whether g holds at now. The caller holds sh.mu.
func (sh *shard) guardHolds(g Guard, now time.Time) bool {
	if g.StorageKey == "" {
		return true
	}
	e := sh.alive(g.StorageKey, now)
	binds := e != nil && e.binds(now)
	if g.Generation == 0 {
		return !binds
	}
	return binds && e.gen == g.Generation
}
