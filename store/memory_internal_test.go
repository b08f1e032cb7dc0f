package store

import (
	"context"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/idemprint/idemprint/fingerprint"
	"github.com/idemprint/idemprint/policy"
)

// checkShards verifies every shard: the store's count the number of
// records, and the ends a heap of the same entries, each knowing its
// place and its record's end of life.
func checkShards(t *testing.T, m *Memory) {
	t.Helper()
	total := 0
	for i := range m.shards {
		sh := &m.shards[i]
		if len(sh.ends) != len(sh.recs) {
			t.Fatalf("shard %d: %d ends for %d records", i, len(sh.ends), len(sh.recs))
		}
		for j, e := range sh.ends {
			if j > 0 && e.end.Before(sh.ends[(j-1)/2].end) {
				t.Fatalf("shard %d: heap out of order at %d", i, j)
			}
			if e.at != j || sh.recs[e.rec.StorageKey] != e || !e.end.Equal(lifeEnd(&e.rec)) {
				t.Fatalf("shard %d: the entry at %d of ends says %d, ends at %v (its record at %v), is under its key %v", i, j, e.at, e.end, lifeEnd(&e.rec), sh.recs[e.rec.StorageKey] == e)
			}
		}
		total += len(sh.recs)
	}
	if m.Len() != total {
		t.Fatalf("Len = %d, want %d", m.Len(), total)
	}
}

// Random reservations, completions, releases, deletions, purges and
// sweeps keep the shards' records, count and ends consistent: with one
// TTL and a clock that only moves on, and with two TTLs and a clock that
// steps back now and then, where a new record's end may come before
// others'.
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
		e := sh.recs[key]
		if e == nil && !m.room() {
			t.Fatalf("no room for %q", key)
		}
		sh.put(e, &policy.Record{StorageKey: key, State: policy.StateCompleted, ExpiresAt: end})
	}
	return m, sh, now, put
}

// Sweeping removes records in order of their ends however they were
// written: ascending, descending, with ends moved later or earlier, which
// leaves stale items behind.
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
					if _, held := sh.recs[key]; held {
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

// Ends changed again and again, later, earlier and the same, keep one
// item for each record, and each is swept at its last end.
func TestMemoryEndsChanged(t *testing.T) {
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	m, sh, now, put := oneShard(t, base)
	const records = 10
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range 20000 {
		// Ascending, descending and repeated ends.
		put("k"+strconv.Itoa(i%records), base.Add(time.Duration(1+rng.IntN(3600))*time.Second))
		if len(sh.ends) != min(i+1, records) {
			t.Fatalf("after %d writes of %d records, %d items", i+1, records, len(sh.ends))
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
	if len(sh.ends) != 0 {
		t.Fatalf("%d items left after every record was swept", len(sh.ends))
	}
}

// Acquire reads this process's clock when the store's time comes back,
// so that StoreTime adds the time elapsed since: with Memory's default
// clock (time.Now) and with a caller's, whose time the store's is.
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
		if tc.clock == nil && (c.Now.After(c.at) || c.Now.Before(storeTime(before))) {
			t.Errorf("%s: the store's time %v is not between %v and Acquire's reading %v", tc.name, c.Now, before, c.at)
		}
		if tc.clock != nil && !c.Now.Equal(fake) {
			t.Errorf("%s: the store's time is %v, want the clock's %v", tc.name, c.Now, fake)
		}
	}
}

// At a clock beyond what an int64 of microseconds holds, an ended record
// is still swept, and a first generation is the clamped time.
func TestMemorySweepFarClock(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	m, sh, clock, put := oneShard(t, now)
	put("k", now.Add(time.Hour))
	*clock = time.Unix(math.MaxInt64/1_000_000+10, 0)
	n, err := m.Sweep(context.Background(), 10)
	if err != nil || n != 1 || m.Len() != 0 {
		t.Errorf("at %v, Sweep = %d, %v and %d are left, want the ended one removed", *clock, n, err, m.Len())
	}
	if g := sh.firstGeneration(*clock); g != math.MaxInt64 {
		t.Errorf("first generation at %v = %d, want the clamped time, %d", *clock, g, int64(math.MaxInt64))
	}
}
