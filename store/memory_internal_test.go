package store

import (
	"context"
	"hash/maphash"
	"math"
	"math/rand/v2"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"testing"
	"time"
	"unsafe"

	"github.com/google/go-cmp/cmp"

	"github.com/idemprint/idemprint/fingerprint"
	"github.com/idemprint/idemprint/policy"
)

// checkShards verifies the layout of every shard: each indexed record in
// one slot that it knows, each slot in use or free, the ends in order
// with an item for each record's end, and no more items than their
// limit, the count the number of records.
func checkShards(t *testing.T, m *Memory) {
	t.Helper()
	total := 0
	var unadded int64
	for i := range m.shards {
		sh := &m.shards[i]
		if got := sh.ix.n + len(sh.free); got != int(sh.used) {
			t.Fatalf("shard %d: %d indexed + %d free slots, %d used", i, sh.ix.n, len(sh.free), sh.used)
		}
		inUse := 0
		for _, c := range sh.ix.cells {
			if c.slot != 0 {
				inUse++
				if e := sh.entry(c.slot - 1); e.key == "" || tagOf(maphash.String(sh.seed, e.key)) != c.tag {
					t.Fatalf("shard %d: cell of slot %d has tag %x, its entry's key %q another", i, c.slot-1, c.tag, e.key)
				}
			}
		}
		if inUse != sh.ix.n {
			t.Fatalf("shard %d: %d cells in use, the index counts %d", i, inUse, sh.ix.n)
		}
		checkEnds(t, i, sh)
		if got := sh.size.Load(); got != int64(sh.ix.n) {
			t.Fatalf("shard %d: size %d, %d indexed", i, got, sh.ix.n)
		}
		if sh.unadded <= -countBatch || sh.unadded >= countBatch {
			t.Fatalf("shard %d: %d changes not added to the count", i, sh.unadded)
		}
		unadded += sh.unadded
		for _, slot := range sh.free {
			if e := sh.entry(slot); !reflect.ValueOf(*e).IsZero() {
				t.Fatalf("shard %d: free slot %d still holds a record", i, slot)
			}
		}
		total += sh.ix.n
	}
	if m.Len() != total {
		t.Fatalf("Len = %d, want %d", m.Len(), total)
	}
	if got := m.count.Load() + unadded; got != int64(total) {
		t.Fatalf("the count and what shards have not added make %d, want %d", got, total)
	}
}

// checkEnds verifies shard i's ends: runs in order in as many blocks as
// they need, the heap a heap, the count and limit kept, and every record
// of the shard with a live item.
func checkEnds(t *testing.T, i int, sh *shard) {
	t.Helper()
	s := &sh.ends
	live := map[int32]bool{}
	n := 0
	if s.k < 0 || s.k > endRuns {
		t.Fatalf("shard %d: %d runs in use", i, s.k)
	}
	for ri := range s.runs {
		r := &s.runs[ri]
		if (ri < s.k) != (r.n > 0) {
			t.Fatalf("shard %d: run %d holds %d items, %d runs in use", i, ri, r.n, s.k)
		}
		if r.head < 0 || r.head >= endBlock || r.n < 0 {
			t.Fatalf("shard %d run %d: head %d, %d items", i, ri, r.head, r.n)
		}
		if want := (r.head + r.n + endBlock - 1) / endBlock; r.n > 0 && len(r.blocks) != want || r.n == 0 && len(r.blocks) != 0 {
			t.Fatalf("shard %d run %d: %d blocks for %d items from %d", i, ri, len(r.blocks), r.n, r.head)
		}
		for j := range r.n {
			it := *r.at(j)
			if j > 0 && r.at(j-1).end > it.end {
				t.Fatalf("shard %d run %d: out of order at %d", i, ri, j)
			}
			if sh.live(it) {
				live[it.slot] = true
			}
		}
		n += r.n
	}
	for j, it := range s.heap {
		if j > 0 && s.heap[(j-1)/2].end > it.end {
			t.Fatalf("shard %d: heap out of order at %d", i, j)
		}
		if sh.live(it) {
			live[it.slot] = true
		}
	}
	n += len(s.heap)
	if n != s.n {
		t.Fatalf("shard %d: %d items, ends counts %d", i, n, s.n)
	}
	if s.n > max(s.limit, minEndLimit) && s.n > 2*sh.ix.n {
		t.Fatalf("shard %d: %d items above the limit %d and twice the %d records", i, s.n, s.limit, sh.ix.n)
	}
	for slot := range sh.used {
		e := sh.entry(slot)
		if e.key == "" {
			continue
		}
		if e.slot != slot {
			t.Fatalf("shard %d: the entry of slot %d says slot %d", i, slot, e.slot)
		}
		if !live[slot] {
			t.Fatalf("shard %d: the record of slot %d, ending at %d, has no item in ends", i, slot, e.end())
		}
		if got := sh.find(maphash.String(sh.seed, e.key), e.key); got != slot {
			t.Fatalf("shard %d: slot %d is not indexed under its key", i, slot)
		}
	}
}

// Random reservations, completions, releases, deletions, purges and
// sweeps keep the shards' slots, index and ends consistent: with one TTL
// and a clock that only moves on, where ends mostly grow and keep to one
// run, and with two TTLs and a clock that steps back now and then, where
// a new record's end may come before others'.
func TestMemoryLayout(t *testing.T) {
	for _, tc := range []struct {
		name   string
		policy string
		back   bool // the clock sometimes steps back
	}{
		{"OneTTL", `{"defaults": {"ttl": "1h", "lease": "10s"}, "rules": [{"route": "POST /pay"}]}`, false},
		{"TwoTTLsClockBack", `{"defaults": {"ttl": "1h", "lease": "10s"}, "rules": [{"route": "POST /pay"}, {"route": "POST /refund", "ttl": "5m", "lease": "20s"}]}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) { testMemoryLayout(t, tc.policy, tc.back) })
	}
}

func testMemoryLayout(t *testing.T, policyJSON string, back bool) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	m, err := NewMemory(MemoryOptions{Shards: 2, MaxRecords: 200, Clock: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	pol, err := policy.Parse([]byte(policyJSON))
	if err != nil {
		t.Fatal(err)
	}
	var rules []*policy.Rule
	var paths []string
	for _, path := range []string{"/pay", "/refund"} {
		if rule, ok := pol.Match("POST", path); ok && (len(rules) == 0 || rule != rules[0]) {
			rules, paths = append(rules, rule), append(paths, path)
		}
	}
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	type held struct {
		rule  *policy.Rule
		claim Claim
	}
	var holding []held
	for i := range 5000 {
		tenant := "t" + strconv.Itoa(rng.IntN(3))
		r := rng.IntN(len(rules))
		rule := rules[r]
		req, err := rule.NewRequest(tenant, fingerprint.Request{
			Method: "POST", Path: paths[r], Body: []byte(`{"amount":1}`),
			Header: http.Header{"Idempotency-Key": {"k" + strconv.Itoa(rng.IntN(400))}},
		})
		if err != nil {
			t.Fatal(err)
		}
		switch op := rng.IntN(10); {
		case op < 5:
			c, err := Acquire(ctx, m, rule, req)
			if err == nil && (c.Decision.Action == policy.Execute || c.Decision.Action == policy.ExecuteAsNew) {
				holding = append(holding, held{rule, c})
			}
		case op < 8 && len(holding) > 0:
			j := rng.IntN(len(holding))
			h := holding[j]
			holding = append(holding[:j], holding[j+1:]...)
			var rec policy.Record
			if op == 5 {
				rec, err = h.rule.Release(&h.claim.Record)
			} else {
				rec, err = h.rule.Complete(&h.claim.Record, policy.Response{Status: 201, Header: http.Header{"A": {"b"}}, Body: []byte("{}")}, now)
			}
			if err != nil {
				t.Fatal(err)
			}
			m.Write(ctx, rec, Guard{}) // may have been taken over or deleted
		case op == 8:
			pk, _, _ := rule.StorageKeys(req)
			m.Delete(ctx, pk)
		case rng.IntN(20) == 0:
			m.PurgeTenant(ctx, tenant)
		default:
			m.Sweep(ctx, rng.IntN(5))
		}
		step := time.Duration(rng.IntN(int(30 * time.Second)))
		if back && rng.IntN(8) == 0 {
			step = -10 * step
		}
		now = now.Add(step)
		if i%7 == 0 {
			checkShards(t, m)
		}
	}
	checkShards(t, m)
}

// oneShard returns a Memory store of one shard whose clock reads *now,
// starting at base, and put, which writes a completed record under key
// ending at end straight into the shard.
func oneShard(t *testing.T, base time.Time) (m *Memory, sh *shard, now *time.Time, put func(key string, end time.Time)) {
	t.Helper()
	now = new(time.Time)
	*now = base
	m, err := NewMemory(MemoryOptions{Shards: 1, Clock: func() time.Time { return *now }})
	if err != nil {
		t.Fatal(err)
	}
	sh = &m.shards[0]
	put = func(key string, end time.Time) {
		h := maphash.String(sh.seed, key)
		rec := policy.Record{StorageKey: key, State: policy.StateCompleted, ExpiresAt: end}
		sh.put(m, key, h, sh.lookupHashed(h, key), &rec)
	}
	return m, sh, now, put
}

// Sweeping removes records in order of their ends however they were
// written: in one run, across runs, in the heap when no run fits, with
// ends moved later or earlier, which leaves stale items behind.
func TestMemoryEndsOrder(t *testing.T) {
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	at := func(s int) time.Time { return base.Add(time.Duration(s) * time.Second) }
	for _, tc := range []struct {
		name string
		ops  [][2]int // {record, its end in seconds}: a new record or a new end
	}{
		{"Ascending", [][2]int{{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}}},
		{"Descending", [][2]int{{0, 9}, {1, 8}, {2, 7}, {3, 6}, {4, 5}, {5, 4}, {6, 3}, {7, 2}, {8, 1}}},
		{"LaterEndThenEarlierRecord", [][2]int{{0, 10}, {0, 100}, {1, 20}, {2, 30}}},
		{"EarlierEnd", [][2]int{{0, 10}, {1, 20}, {2, 30}, {2, 5}, {1, 1}}},
		{"EndBackAndForth", [][2]int{{0, 10}, {0, 20}, {0, 10}, {1, 15}, {0, 30}}},
		{"SixTTLs", [][2]int{{0, 60}, {1, 50}, {2, 40}, {3, 30}, {4, 20}, {5, 10}, {6, 61}, {7, 51}, {8, 41}, {9, 31}, {10, 21}, {11, 11}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, sh, now, put := oneShard(t, base)
			final := map[string]int{}
			for _, op := range tc.ops {
				key := "k" + strconv.Itoa(op[0])
				put(key, at(op[1]))
				final[key] = op[1]
				checkShards(t, m)
			}
			for s := 0; s <= 101; s++ {
				*now = at(s)
				if _, err := m.Sweep(context.Background(), 1<<20); err != nil {
					t.Fatal(err)
				}
				checkShards(t, m)
				var left, want []string
				for key, end := range final {
					if end > s {
						want = append(want, key)
					}
					if sh.lookup(key) != nil {
						left = append(left, key)
					}
				}
				slices.Sort(left)
				slices.Sort(want)
				if diff := cmp.Diff(want, left); diff != "" {
					t.Fatalf("at %d s, records left (-want +got):\n%s", s, diff)
				}
			}
		})
	}
}

// A run grows across its blocks' boundaries, to and fro, in order, and
// gives back its blocks as it empties, all of them once empty.
func TestMemoryEndsBlocks(t *testing.T) {
	m, sh, now, putKey := oneShard(t, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	put := func(i int, end time.Time) { putKey("k"+strconv.Itoa(i), end) }
	n := 0
	for range 3*endBlock + 7 {
		put(n, now.Add(time.Duration(1000+n)*time.Millisecond))
		n++
		if n%97 == 0 {
			checkShards(t, m)
		}
	}
	checkShards(t, m)
	if r := &sh.ends.runs[0]; r.n != n || len(r.blocks) != 4 || len(sh.ends.heap) != 0 {
		t.Fatalf("%d ascending ends: %d in the first run, in %d blocks, %d in the heap; want all in 4 blocks", n, r.n, len(r.blocks), len(sh.ends.heap))
	}
	// Sweep a tenth of a second at a time, writing a new record and a new
	// end of an old one every few steps, until nothing is left.
	for i := 0; sh.ends.n > 0; i++ {
		if i > 20000 {
			t.Fatalf("%d items left after %d steps", sh.ends.n, i)
		}
		*now = now.Add(100 * time.Millisecond)
		if i < 600 && i%3 == 0 {
			put(n, now.Add(time.Second))
			put(i, now.Add(2*time.Second)) // a new end, or a new record
			n++
		}
		m.Sweep(context.Background(), 1<<20)
		if i%13 == 0 {
			checkShards(t, m)
		}
	}
	checkShards(t, m)
	if m.Len() != 0 {
		t.Fatalf("%d records left with no items", m.Len())
	}
	for i, r := range sh.ends.runs {
		if len(r.blocks) != 0 || r.spare != nil {
			t.Errorf("run %d: empty, keeps %d blocks and spare %v", i, len(r.blocks), r.spare != nil)
		}
	}
}

// Ends changed again and again leave stale items, which compaction keeps
// below the limit without losing a record's live item.
func TestMemoryEndsCompact(t *testing.T) {
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	m, sh, now, put := oneShard(t, base)
	const records = 10
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range 20 * minEndLimit {
		// Ascending, descending and repeated ends.
		put("k"+strconv.Itoa(i%records), base.Add(time.Duration(1+rng.IntN(3600))*time.Second))
		if sh.ends.n > minEndLimit {
			t.Fatalf("after %d writes of %d records, %d items", i+1, records, sh.ends.n)
		}
		if i%101 == 0 {
			checkShards(t, m)
		}
	}
	checkShards(t, m)
	*now = base.Add(time.Hour)
	if got, err := m.Sweep(context.Background(), 1<<20); err != nil || got != records {
		t.Fatalf("Sweep at the last end = %d, %v; want %d", got, err, records)
	}
	if sh.ends.n != 0 {
		t.Fatalf("%d items left after every record was swept", sh.ends.n)
	}
}

// storeTime's fast path must agree with Truncate everywhere, before 1970
// and at the ends of the range too.
func TestStoreTimeAgreesWithTruncate(t *testing.T) {
	for _, tm := range []time.Time{
		time.Date(2026, 11, 30, 23, 59, 59, 999_999_999, time.UTC),
		time.Date(1969, 12, 31, 23, 59, 59, 999_999_999, time.UTC),
		time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC),
		time.Unix(-1, 1),
		time.Unix(0, 0),
		time.Unix(maxMicroSeconds, 999_999_999),
		time.Unix(-maxMicroSeconds, 1),
		time.Unix(maxMicroSeconds+10, 123_456_789),
		time.Date(292277026596, 12, 4, 15, 30, 7, 999_999_999, time.UTC),
		time.Now(),
		time.Now().In(time.FixedZone("x", 3600)),
	} {
		want := tm.Truncate(time.Microsecond).UTC()
		if got := storeTime(tm); !got.Equal(want) || got.Location() != time.UTC || got != want {
			t.Errorf("storeTime(%v) = %v, want %v", tm, got, want)
		}
	}
}

// A chunk of entries fills the 8 KiB size class and no more: a field
// added to entry must change chunkSize with it.
func TestChunkSize(t *testing.T) {
	// An object with pointers of more than 512 bytes takes an 8-byte
	// header of the allocator's besides.
	const header = 8
	size, one := unsafe.Sizeof([chunkSize]entry{}), unsafe.Sizeof(entry{})
	if size+header > 8192 || size+one+header <= 8192 {
		t.Errorf("%d entries of %d bytes take %d bytes: chunkSize should be %d", chunkSize, one, size, (8192-header)/one)
	}
}

// With its own clock, Memory hands Acquire the reading the store's time
// came from, so that StoreTime needs no reading of Acquire's; with a
// caller's clock it does not (time.Since of a fake time means nothing),
// and Acquire reads the process's clock.
func TestAcquireClockReading(t *testing.T) {
	pol, err := policy.Parse([]byte(`{"rules": [{"route": "POST /pay"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	rule, _ := pol.Match("POST", "/pay")
	req, err := rule.NewRequest("acme", fingerprint.Request{
		Method: "POST", Path: "/pay", Body: []byte(`{}`), Header: http.Header{"Idempotency-Key": {"k"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	fake := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name  string
		clock func() time.Time
	}{{"own", nil}, {"caller's", func() time.Time { return fake }}} {
		m, err := NewMemory(MemoryOptions{Clock: tc.clock})
		if err != nil {
			t.Fatal(err)
		}
		before := time.Now()
		c, err := Acquire(context.Background(), m, rule, req)
		if err != nil || c.Decision.Action != policy.Execute {
			t.Fatalf("%s: Acquire = %v, %v", tc.name, c.Decision.Action, err)
		}
		if c.at.Before(before) || c.at.After(time.Now()) {
			t.Errorf("%s: Acquire's reading %v is not between %v and now", tc.name, c.at, before)
		}
		if got := c.StoreTime(); got.Before(c.Now) || got.Sub(c.Now) > time.Second {
			t.Errorf("%s: StoreTime %v, the store's time %v", tc.name, got, c.Now)
		}
		if tc.clock == nil && !storeTime(c.at).Equal(c.Now) {
			t.Errorf("%s: Acquire's reading %v is not the one the store's time %v came from", tc.name, c.at, c.Now)
		}
		if tc.clock != nil && !c.Now.Equal(fake) {
			t.Errorf("%s: the store's time is %v, want the clock's %v", tc.name, c.Now, fake)
		}
	}
}

// Sweeping reads the time as an entry keeps its ends, clamped: at a
// clock beyond what an int64 of microseconds holds, an ended record is
// still removed (Unix microseconds of that time would wrap negative and
// end nothing).
func TestMemorySweepFarClock(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	m, err := NewMemory(MemoryOptions{Shards: 1, Clock: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	sh := &m.shards[0]
	rec := policy.Record{StorageKey: "k", State: policy.StateCompleted, ExpiresAt: now.Add(time.Hour)}
	h := maphash.String(sh.seed, "k")
	sh.mu.Lock()
	sh.put(m, "k", h, nil, &rec)
	sh.mu.Unlock()
	now = time.Unix(maxMicroSeconds+10, 0)
	sh.mu.Lock()
	n := sh.sweep(m, now, -1)
	sh.mu.Unlock()
	if n != 1 || m.Len() != 0 {
		t.Errorf("at %v, sweep removed %d records and %d are left, want the ended one removed", now, n, m.Len())
	}
	if g := sh.firstGeneration(now); g != math.MaxInt64 {
		t.Errorf("first generation at %v = %d, want the clamped time, %d", now, g, int64(math.MaxInt64))
	}
}
