package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/idemprint/idemprint/policy"
	"github.com/idemprint/idemprint/store"
)

var (
	_ = register("Write/Fencing", testFencing)
	_ = register("Write/Retried", testWriteRetried)
	_ = register("Write/IdenticalReservations", testIdenticalReservations)
	_ = register("Write/Guard", testGuard)
	_ = register("Write/Invalid", testWriteInvalid)
	_ = register("Delete", testDelete)
)

// A holder whose lease lapsed and was taken over can never write: its
// generation is no longer the stored one.
func testFencing(t *testing.T, f *fixture) {
	req := f.request(f.pay, "acme", "k1", 10)
	first := f.reserve(f.pay, req)
	f.pass(lease + margin)
	c, err := store.Acquire(context.Background(), f.s, f.pay, req)
	if err != nil {
		t.Fatalf("Acquire after the lease lapsed: %v", err)
	}
	if c.Decision.Action != policy.Execute {
		t.Fatalf("a retry after the lease lapsed = %v %v, want a takeover (execute)", c.Decision.Action, c.Decision.Reason)
	}
	if c.Decision.Reserve != nil { // Record is the reservation
		t.Errorf("a takeover's claim has a Decision.Reserve")
	}
	if c.Now.Before(first.Record.ExpiresAt) && c.Record.Generation != first.Record.Generation+1 {
		t.Errorf("the takeover has generation %d, want %d", c.Record.Generation, first.Record.Generation+1)
	}
	// The first holder wakes up and completes: refused.
	late, err := f.pay.Complete(&first.Record, policy.Response{Status: 201, Body: []byte("late")}, first.Now)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.s.Write(context.Background(), late, store.Guard{}); !errors.Is(err, store.ErrConflict) {
		t.Errorf("a stale holder's completion: error %v, want ErrConflict", err)
	}
	// Generations that skip ahead or go back are refused too.
	for _, gen := range []uint64{c.Record.Generation + 2, c.Record.Generation, 1} {
		rec := c.Record
		rec.Generation = gen
		rec.State = policy.StateNone
		if err := f.s.Write(context.Background(), rec, store.Guard{}); !errors.Is(err, store.ErrConflict) {
			t.Errorf("a write of generation %d over %d: error %v, want ErrConflict", gen, c.Record.Generation, err)
		}
	}
	if d := diff(&c.Record, f.read(c.Record.StorageKey)); d != "" {
		t.Errorf("refused writes changed the record:%s", d)
	}
	// The new holder completes normally.
	done := f.complete(f.pay, c.Record, c.Now, `{"ok":true}`)
	if d := diff(&done, f.read(done.StorageKey)); d != "" {
		t.Errorf("Read after the completion:%s", d)
	}
}

// A write retried after its reply was lost finds itself stored and
// succeeds; a different record of the same generation does not.
func testWriteRetried(t *testing.T, f *fixture) {
	req := f.request(f.pay, "acme", "k1", 10)
	first := f.reserve(f.pay, req)
	done := f.complete(f.pay, first.Record, first.Now, `{"id":1}`)
	if err := f.s.Write(context.Background(), done, store.Guard{}); err != nil {
		t.Errorf("the same write again: %v, want success", err)
	}
	other := done
	other.Body = []byte(`{"id":2}`)
	if err := f.s.Write(context.Background(), other, store.Guard{}); !errors.Is(err, store.ErrConflict) {
		t.Errorf("another record of the stored generation: error %v, want ErrConflict", err)
	}
	if d := diff(&done, f.read(done.StorageKey)); d != "" {
		t.Errorf("the record changed:%s", d)
	}
}

// Two retries that find the same lapsed reservation at the same store
// time make identical takeover records: only the first write may win,
// since the second is another request's, not a retry of the first write.
func testIdenticalReservations(t *testing.T, f *fixture) {
	req := f.request(f.pay, "acme", "k1", 10)
	first := f.reserve(f.pay, req)
	f.pass(lease + margin)
	out, err := f.s.Reserve(context.Background(), f.reservation(f.pay, req))
	if err != nil {
		t.Fatal(err)
	}
	if out.Reserved {
		t.Skip("the store's clock passed the record's TTL: nothing to take over")
	}
	d, err := f.pay.Decide(req, out.Primary, out.NewIdentity, out.Now)
	if err != nil || d.Action != policy.Execute {
		t.Fatalf("Decide on a lapsed reservation = %v, %v; want a takeover", d.Action, err)
	}
	if err := f.s.Write(context.Background(), *d.Reserve, store.Guard{}); err != nil {
		t.Fatalf("the first takeover: %v", err)
	}
	if err := f.s.Write(context.Background(), *d.Reserve, store.Guard{}); !errors.Is(err, store.ErrConflict) {
		t.Errorf("an identical second takeover of generation %d: error %v, want ErrConflict", first.Record.Generation, err)
	}
}

// A guard makes a write depend on the request's other storage key.
func testGuard(t *testing.T, f *fixture) {
	a := f.request(f.newRule, "acme", "k1", 10)
	b := f.request(f.newRule, "acme", "k1", 20)
	pk, nk := f.keys(f.newRule, b)
	first := f.reserve(f.newRule, a)
	done := f.complete(f.newRule, first.Record, first.Now, `{"a":1}`)

	d, err := f.newRule.Decide(b, f.read(pk), f.read(nk), first.Now)
	if err != nil || d.Action != policy.ExecuteAsNew {
		t.Fatalf("Decide of a mismatch = %v, %v; want execute-as-new", d.Action, err)
	}
	// The primary record is no longer the one b decided on: refused.
	for _, g := range []store.Guard{
		{StorageKey: pk, Generation: done.Generation - 1},
		{StorageKey: pk, Generation: done.Generation + 1},
	} {
		if err := f.s.Write(context.Background(), *d.Reserve, g); !errors.Is(err, store.ErrConflict) {
			t.Errorf("write guarded by primary generation %d (stored %d): error %v, want ErrConflict", g.Generation, done.Generation, err)
		}
	}
	// A guard that no record binds: refused while the primary binds.
	if err := f.s.Write(context.Background(), *d.Reserve, store.Guard{StorageKey: pk}); !errors.Is(err, store.ErrConflict) {
		t.Errorf("write guarded by 'nothing binds' while the primary binds: error %v, want ErrConflict", err)
	}
	if rec := f.read(nk); rec != nil {
		t.Fatalf("refused guarded writes wrote %s", describe(rec))
	}
	f.write(*d.Reserve, store.Guard{StorageKey: pk, Generation: done.Generation})
	// Now the new identity binds: a takeover of the primary key guarded by
	// "nothing binds under the new identity" is refused.
	takeover := done
	takeover.Generation++
	takeover.State = policy.StateNone
	if err := f.s.Write(context.Background(), takeover, store.Guard{StorageKey: nk}); !errors.Is(err, store.ErrConflict) {
		t.Errorf("write guarded by an empty new identity that binds: error %v, want ErrConflict", err)
	}
	if d := diff(&done, f.read(pk)); d != "" {
		t.Errorf("a refused write changed the primary record:%s", d)
	}
	// Once the primary record is released, a guard naming its binding
	// generation fails: a released record binds nothing.
	f.write(takeover, store.Guard{})
	other := *d.Reserve
	other.Generation++
	other.State = policy.StateNone
	if err := f.s.Write(context.Background(), other, store.Guard{StorageKey: pk, Generation: takeover.Generation}); !errors.Is(err, store.ErrConflict) {
		t.Errorf("write guarded by a released record's generation: error %v, want ErrConflict", err)
	}
}

// Writes that break the contract are refused before anything is written.
func testWriteInvalid(t *testing.T, f *fixture) {
	req := f.request(f.pay, "acme", "k1", 10)
	first := f.reserve(f.pay, req)
	for _, tc := range []struct {
		reason string
		change func(r *policy.Record, g *store.Guard)
	}{
		{"generation 0", func(r *policy.Record, g *store.Guard) { r.Generation = 0 }},
		{"no storage key", func(r *policy.Record, g *store.Guard) { r.StorageKey = "" }},
		{"not a storage key", func(r *policy.Record, g *store.Guard) { r.StorageKey = "payments:k1" }},
		{"unknown state", func(r *policy.Record, g *store.Guard) { r.State = 9 }},
		{"guard of another request", func(r *policy.Record, g *store.Guard) {
			other := f.request(f.pay, "acme", "other", 10)
			g.StorageKey, _ = f.keys(f.pay, other)
		}},
		{"guard on itself", func(r *policy.Record, g *store.Guard) { g.StorageKey = r.StorageKey }},
	} {
		rec := first.Record
		rec.Generation++
		var g store.Guard
		tc.change(&rec, &g)
		if err := f.s.Write(context.Background(), rec, g); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("Write with %s: error %v, want ErrInvalid", tc.reason, err)
		}
	}
	if d := diff(&first.Record, f.read(first.Record.StorageKey)); d != "" {
		t.Errorf("invalid writes changed the record:%s", d)
	}
}

// An operator deletes a stuck key: it is free at once, its holder can no
// longer complete, and the next reservation's generation is above the
// deleted one's, so the old holder's generation never comes back.
func testDelete(t *testing.T, f *fixture) {
	req := f.request(f.pay, "acme", "k1", 10)
	first := f.reserve(f.pay, req)
	key := first.Record.StorageKey
	if err := f.s.Delete(context.Background(), key); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if rec := f.read(key); rec != nil {
		t.Fatalf("Read after Delete = %s, want none", describe(rec))
	}
	if err := f.s.Delete(context.Background(), key); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Delete of a key without a record: error %v, want ErrNotFound", err)
	}
	late, err := f.pay.Complete(&first.Record, policy.Response{Status: 201}, first.Now)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.s.Write(context.Background(), late, store.Guard{}); !errors.Is(err, store.ErrConflict) {
		t.Errorf("completion of a deleted reservation: error %v, want ErrConflict", err)
	}
	second := f.reserve(f.pay, req)
	if second.Record.Generation <= first.Record.Generation {
		t.Errorf("reservation after Delete has generation %d, not above the deleted record's %d", second.Record.Generation, first.Record.Generation)
	}
	if err := f.s.Write(context.Background(), late, store.Guard{}); !errors.Is(err, store.ErrConflict) {
		t.Errorf("completion of a deleted reservation over the new one: error %v, want ErrConflict", err)
	}

	// A completed record's generation counts as well: the key's next
	// first reservation is above it, whatever the clock did meanwhile.
	req = f.request(f.pay, "acme", "k2", 10)
	res := f.reserve(f.pay, req)
	done, err := f.pay.Complete(&res.Record, policy.Response{Status: 201}, res.Now)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.s.Write(context.Background(), done, store.Guard{}); err != nil {
		t.Fatalf("completion: %v", err)
	}
	if err := f.s.Delete(context.Background(), done.StorageKey); err != nil {
		t.Fatalf("Delete of a completed record: %v", err)
	}
	if again := f.reserve(f.pay, req); again.Record.Generation <= done.Generation {
		t.Errorf("reservation after Delete of a completed record has generation %d, not above its %d", again.Record.Generation, done.Generation)
	}
}
