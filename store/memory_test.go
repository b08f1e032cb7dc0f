package store_test

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/idemprint/idemprint/fingerprint"
	"github.com/idemprint/idemprint/policy"
	"github.com/idemprint/idemprint/store"
	"github.com/idemprint/idemprint/store/storetest"
)

// fakeClock is a store clock that moves only when told.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func TestMemoryConformance(t *testing.T) {
	t.Run("FakeClock", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T) storetest.Subject {
			clock := &fakeClock{now: time.Date(2026, 1, 2, 3, 4, 5, 6789, time.UTC)}
			m, err := store.NewMemory(store.MemoryOptions{Clock: clock.Now, Shards: 4})
			if err != nil {
				t.Fatal(err)
			}
			return storetest.Subject{Store: m, Advance: clock.Advance}
		})
	})
	t.Run("RealClock", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T) storetest.Subject {
			m, err := store.NewMemory(store.MemoryOptions{})
			if err != nil {
				t.Fatal(err)
			}
			return storetest.Subject{Store: m}
		})
	})
}

// memoryFixture is a Memory store on a fake clock with one rule.
func newMemoryFixture(t *testing.T, opts store.MemoryOptions) (*store.Memory, *fakeClock, *policy.Rule) {
	t.Helper()
	clock := &fakeClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	opts.Clock = clock.Now
	m, err := store.NewMemory(opts)
	if err != nil {
		t.Fatal(err)
	}
	pol, err := policy.Parse([]byte(`{"defaults": {"ttl": "1h", "lease": "10s"}, "rules": [{"route": "POST /pay"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	rule, _ := pol.Match("POST", "/pay")
	return m, clock, rule
}

func payRequest(t *testing.T, rule *policy.Rule, key string) policy.Request {
	t.Helper()
	req, err := rule.NewRequest("acme", fingerprint.Request{
		Method: "POST", Path: "/pay", Header: http.Header{"Idempotency-Key": {key}}, Body: []byte(`{"amount":1}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// A full store refuses new records instead of evicting live ones, and
// makes room as soon as records' lives end: a small store, and one of
// many shards large enough that its count is kept in batches until it is
// near full.
func TestMemoryFull(t *testing.T) {
	for _, opts := range []store.MemoryOptions{{MaxRecords: 3, Shards: 2}, {MaxRecords: 5000}} {
		t.Run(strconv.Itoa(opts.MaxRecords), func(t *testing.T) { testMemoryFull(t, opts) })
	}
}

func testMemoryFull(t *testing.T, opts store.MemoryOptions) {
	m, clock, rule := newMemoryFixture(t, opts)
	ctx := context.Background()
	full := opts.MaxRecords
	var held []store.Claim
	for i := range full {
		c, err := store.Acquire(ctx, m, rule, payRequest(t, rule, "k"+strconv.Itoa(i)))
		if err != nil || c.Decision.Action != policy.Execute {
			t.Fatalf("Acquire %d = %v, %v", i, c.Decision.Action, err)
		}
		held = append(held, c)
	}
	if m.Len() != full {
		t.Fatalf("Len = %d, want %d", m.Len(), full)
	}
	next := "k" + strconv.Itoa(full)
	_, err := store.Acquire(ctx, m, rule, payRequest(t, rule, next))
	if !errors.Is(err, store.ErrFull) {
		t.Fatalf("Acquire in a full store: error %v, want ErrFull", err)
	}
	// Nothing was evicted: every holder still completes, and a retry of
	// each is still answered from its record.
	for _, c := range held {
		done, err := rule.Complete(&c.Record, policy.Response{Status: 201}, c.Now)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Write(ctx, done, store.Guard{}); err != nil {
			t.Errorf("completing a reservation in a full store: %v", err)
		}
	}
	if c, err := store.Acquire(ctx, m, rule, payRequest(t, rule, "k0")); err != nil || c.Decision.Action != policy.Replay {
		t.Errorf("retry in a full store = %v, %v; want replay", c.Decision.Action, err)
	}
	if m.Len() != full {
		t.Errorf("Len = %d, want %d", m.Len(), full)
	}
	clock.Advance(time.Hour + time.Second)
	if c, err := store.Acquire(ctx, m, rule, payRequest(t, rule, next)); err != nil || c.Decision.Action != policy.Execute {
		t.Errorf("Acquire after every record expired = %v, %v; want execute", c.Decision.Action, err)
	}
	if _, err := m.Sweep(ctx, full+100); err != nil {
		t.Fatal(err)
	}
	if m.Len() != 1 {
		t.Errorf("Len after the expired records were swept = %d, want 1", m.Len())
	}
}

// Memory is bounded by the records alive: records whose life ended are
// swept as the store is used, without a goroutine.
func TestMemorySweepsAsUsed(t *testing.T) {
	m, clock, rule := newMemoryFixture(t, store.MemoryOptions{Shards: 1})
	ctx := context.Background()
	for i := range 1000 {
		c, err := store.Acquire(ctx, m, rule, payRequest(t, rule, "k"+strconv.Itoa(i)))
		if err != nil {
			t.Fatal(err)
		}
		rel, err := rule.Release(&c.Record)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Write(ctx, rel, store.Guard{}); err != nil {
			t.Fatal(err)
		}
		clock.Advance(10 * time.Second) // at most 360 records live within a TTL of 1h
	}
	if n := m.Len(); n > 360+4 {
		t.Errorf("Len = %d after 1000 records with at most 360 alive; want the ended ones swept", n)
	}
	n, err := m.Sweep(ctx, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Len(); got != 359 { // reserved at 6410 s to 9990 s; the clock is at 10000 s
		t.Errorf("Len after Sweep (%d swept) = %d, want the 359 records alive", n, got)
	}
}

func TestNewMemoryInvalid(t *testing.T) {
	for _, opts := range []store.MemoryOptions{{Shards: -1}, {MaxRecords: -1}} {
		if _, err := store.NewMemory(opts); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("NewMemory(%+v): error %v, want ErrInvalid", opts, err)
		}
	}
}
