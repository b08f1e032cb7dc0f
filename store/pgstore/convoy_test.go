package pgstore_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/idemprint/idemprint/store/pgstore"
)

// Duplicates that miss the first request's row because it is not yet
// committed wait for it, then read it: none of them locks it. They used to
// upsert over it, and an upsert locks the row it conflicts with even when
// its WHERE is false, so a burst of duplicates queued on that lock, each
// committing in turn, and the first request's completion waited behind
// them past its lease (serve's load test saw keys execute twice). A row
// left with no locker's transaction id in its xmax was never locked.
func TestDuplicatesDoNotLockTheRow(t *testing.T) {
	pool := testPool(t, "idemprint-pgstore-convoy", 16)
	ctx := context.Background()
	schema := newSchema(t, pool)
	table := schema + ".records"
	s, err := pgstore.New(pool, pgstore.Options{Table: table})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	rule := newRule(t)
	res := reservation(t, rule, newRequest(t, rule, "acme", "k", 10))
	res.NewIdentity = "" // no advisory lock: the row alone decides
	key := []byte(res.Record.StorageKey)

	// A valid payload for the first request's row, which a transaction
	// then inserts and keeps uncommitted.
	if out, err := s.Reserve(ctx, res); err != nil || !out.Reserved {
		t.Fatalf("Reserve = %v, %v", out.Reserved, err)
	}
	var payload []byte
	if err := pool.QueryRow(ctx, "DELETE FROM "+table+" WHERE storage_key = $1 RETURNING payload", key).Scan(&payload); err != nil {
		t.Fatal(err)
	}
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	var reserved bool
	if err := tx.QueryRow(ctx, "SELECT o_reserved FROM "+schema+".records_reserve($1, $2, $3, $4, $5, NULL)",
		key, []byte("acme"), payload, res.Lease.Microseconds(), res.TTL.Microseconds()).Scan(&reserved); err != nil || !reserved {
		t.Fatalf("the first request's reservation = %v, %v", reserved, err)
	}

	const dups = 8
	var wg sync.WaitGroup
	errs := make(chan error, dups)
	gotReserved := make(chan bool, dups)
	for range dups {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			out, err := s.Reserve(ctx, res)
			errs <- err
			gotReserved <- out.Reserved
		})
	}
	time.Sleep(300 * time.Millisecond) // they wait for the first request's transaction
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(errs)
	close(gotReserved)
	for err := range errs {
		if err != nil {
			t.Errorf("a duplicate's Reserve: %v", err)
		}
	}
	for r := range gotReserved {
		if r {
			t.Error("a duplicate reserved the key the first request holds")
		}
	}
	var xmax string
	if err := pool.QueryRow(ctx, "SELECT xmax::text FROM "+table+" WHERE storage_key = $1", key).Scan(&xmax); err != nil {
		t.Fatal(err)
	}
	if xmax != "0" {
		t.Errorf("the row's xmax is %s: a duplicate locked it", xmax)
	}
}
