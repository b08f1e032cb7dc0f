package pgstore_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/idemprint/idemprint/policy"
	"github.com/idemprint/idemprint/store"
	"github.com/idemprint/idemprint/store/pgstore"
)

// writeAt writes a first record of the given state and times under a key
// of its own and returns its storage key.
func writeAt(t *testing.T, s *pgstore.Store, rule *policy.Rule, key string, state policy.State, lease, expires time.Time) string {
	t.Helper()
	d, err := rule.Decide(payRequest(t, rule, key), nil, nil, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	rec := *d.Reserve
	rec.State, rec.LeaseExpiry, rec.ExpiresAt = state, lease, expires
	if err := s.Write(context.Background(), rec, store.Guard{}); err != nil {
		t.Fatalf("Write: %v", err)
	}
	return rec.StorageKey
}

// The sweeper deletes the rows whose life ended, at most a batch at a
// time, and nothing else: not a released record before its expiry, nor a
// reservation whose lease outlives its expiry.
func TestSweep(t *testing.T) {
	pool := testPool(t, "idemprint-pgstore-sweep", 4)
	s := newStore(t, pool, storeOptions())
	rule := payRule(t)
	ctx := context.Background()
	now := time.Now()
	past, future := now.Add(-time.Hour), now.Add(time.Hour)
	var alive []string
	for i := range 25 {
		writeAt(t, s, rule, fmt.Sprintf("ended-completed-%d", i), policy.StateCompleted, past.Add(-time.Minute), past)
	}
	for i := range 2 {
		writeAt(t, s, rule, fmt.Sprintf("ended-released-%d", i), policy.StateNone, time.Time{}, past)
	}
	for i := range 5 {
		alive = append(alive, writeAt(t, s, rule, fmt.Sprintf("completed-%d", i), policy.StateCompleted, past, future))
	}
	for i := range 3 {
		alive = append(alive, writeAt(t, s, rule, fmt.Sprintf("released-%d", i), policy.StateNone, time.Time{}, future))
	}
	for i := range 2 {
		alive = append(alive, writeAt(t, s, rule, fmt.Sprintf("leased-%d", i), policy.StateInFlight, future, past))
	}
	var got []int
	for {
		n, err := s.Sweep(ctx, 10)
		if err != nil {
			t.Fatalf("Sweep: %v", err)
		}
		got = append(got, n)
		if n < 10 {
			break
		}
	}
	if want := []int{10, 10, 7}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Sweep(10) until it deletes fewer = %v, want %v", got, want)
	}
	var n int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM "+s.Table()).Scan(&n); err != nil || n != len(alive) {
		t.Errorf("%d rows left (%v), want the %d alive ones", n, err, len(alive))
	}
	for _, k := range alive {
		if rec, err := s.Read(ctx, k); err != nil || rec == nil {
			t.Errorf("an alive record after sweeping: %v, %v", rec, err)
		}
	}
	if _, err := s.Sweep(ctx, 0); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("Sweep(0): error %v, want ErrInvalid", err)
	}
}

// RunSweeper sweeps in rounds until its context ends, then returns nil.
func TestRunSweeper(t *testing.T) {
	pool := testPool(t, "idemprint-pgstore-runsweeper", 4)
	s := newStore(t, pool, storeOptions())
	rule := payRule(t)
	past := time.Now().Add(-time.Hour)
	for i := range 7 {
		writeAt(t, s, rule, fmt.Sprintf("ended-%d", i), policy.StateCompleted, past, past)
	}
	keep := writeAt(t, s, rule, "alive", policy.StateCompleted, past, time.Now().Add(time.Hour))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.RunSweeper(ctx, 10*time.Millisecond, 2) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var n int
		if err := pool.QueryRow(context.Background(), "SELECT count(*) FROM "+s.Table()).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d rows left after 10s of sweeping, want 1", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("RunSweeper after its context ended = %v, want nil", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("RunSweeper did not return after its context ended")
	}
	if rec, err := s.Read(context.Background(), keep); err != nil || rec == nil {
		t.Errorf("the alive record after sweeping: %v, %v", rec, err)
	}
	if err := s.RunSweeper(context.Background(), 0, 1); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("RunSweeper with no period: error %v, want ErrInvalid", err)
	}
}

// What PostgreSQL cannot hold is refused with ErrInvalid and writes
// nothing: a storage key beyond the index's row size, a time beyond the
// year 9999.
func TestLimits(t *testing.T) {
	pool := testPool(t, "idemprint-pgstore-limits", 2)
	s := newStore(t, pool, storeOptions())
	rule := payRule(t)
	ctx := context.Background()
	long := make([]byte, 10000)
	rand.Read(long) // incompressible
	req := payRequest(t, rule, "k1")
	req.Tenant = string(long)
	d, err := rule.Decide(req, nil, nil, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	res := store.Reservation{Record: *d.Reserve, Lease: rule.Lease(), TTL: rule.TTL()}
	if _, err := s.Reserve(ctx, res); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("Reserve of a 10 kB tenant: error %v, want ErrInvalid", err)
	}
	rec := *d.Reserve
	rec.Tenant = "acme"
	rec.StorageKey, _, _ = rule.StorageKeys(payRequest(t, rule, "k2"))
	rec.ExpiresAt = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := s.Write(ctx, rec, store.Guard{}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("Write of a time in the year 10000: error %v, want ErrInvalid", err)
	}
	if rec, err := s.Read(ctx, rec.StorageKey); rec != nil || err != nil {
		t.Errorf("Read after refused writes = %v, %v; want none", rec, err)
	}
}
