package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/idemprint/idemprint/policy"
	"github.com/idemprint/idemprint/store"
)

var (
	_ = register("Reserve/First", testReserveFirst)
	_ = register("Reserve/Held", testReserveHeld)
	_ = register("Reserve/SkewedCallerClocks", testSkewedCallers)
	_ = register("Reserve/AfterRelease", testReserveAfterRelease)
	_ = register("Reserve/NewIdentityBinds", testNewIdentityBinds)
	_ = register("Reserve/Invalid", testReserveInvalid)
)

// A free key is reserved with the store's generation and times, and read
// back as written.
func testReserveFirst(t *testing.T, f *fixture) {
	req := f.request(f.pay, "acme", "k1", 10)
	res := f.reservation(f.pay, req)
	out := f.reserve(f.pay, req)
	if out.Now.IsZero() {
		t.Fatal("Reserve returned no store time")
	}
	want := res.Record
	want.Generation = out.Record.Generation
	want.LeaseExpiry = out.Now.Add(lease)
	want.ExpiresAt = out.Now.Add(ttl)
	if out.Record.Generation == 0 {
		t.Error("the reservation's generation is 0")
	}
	if d := diff(&want, &out.Record); d != "" {
		t.Errorf("Reserve wrote a record unlike the reservation at the store's time:%s", d)
	}
	if out.Primary != nil || out.NewIdentity != nil {
		t.Errorf("a successful Reserve returned records: %s, %s", describe(out.Primary), describe(out.NewIdentity))
	}
	if d := diff(&want, f.read(want.StorageKey)); d != "" {
		t.Errorf("Read after Reserve:%s", d)
	}
}

// A key held by a reservation is not reserved again: Reserve returns the
// holder, and the engine answers 409 while its lease runs.
func testReserveHeld(t *testing.T, f *fixture) {
	req := f.request(f.pay, "acme", "k1", 10)
	first := f.reserve(f.pay, req)
	out, err := f.s.Reserve(context.Background(), f.reservation(f.pay, req))
	if err != nil {
		t.Fatalf("second Reserve: %v", err)
	}
	if out.Reserved {
		t.Fatal("a key held by a live reservation was reserved again")
	}
	if d := diff(&first.Record, out.Primary); d != "" {
		t.Errorf("second Reserve returned another primary record:%s", d)
	}
	if out.Now.Before(first.Now) {
		t.Errorf("the store's time went back from %v to %v", first.Now, out.Now)
	}
	d, err := f.pay.Decide(req, out.Primary, out.NewIdentity, out.Now)
	if err != nil {
		t.Fatalf("Decide on the returned records: %v", err)
	}
	if out.Now.Before(first.Record.LeaseExpiry) && (d.Action != policy.Reject || d.Response.Status != 409) {
		t.Errorf("a retry during the lease = %v %d, want reject 409", d.Action, d.Response.Status)
	}
}

// The times a caller puts in a reservation are ignored: the store's clock
// sets them, so callers whose clocks are an hour apart still exclude each
// other.
func testSkewedCallers(t *testing.T, f *fixture) {
	req := f.request(f.pay, "acme", "k1", 10)
	ahead := f.reservation(f.pay, req)
	ahead.Record.LeaseExpiry = time.Now().Add(-time.Hour) // a caller whose clock is an hour behind
	ahead.Record.ExpiresAt = time.Now().Add(-time.Hour)
	out, err := f.s.Reserve(context.Background(), ahead)
	if err != nil || !out.Reserved {
		t.Fatalf("Reserve = %v, %v; want reserved", out.Reserved, err)
	}
	if !sameTime(out.Record.LeaseExpiry, out.Now.Add(lease)) || !sameTime(out.Record.ExpiresAt, out.Now.Add(ttl)) {
		t.Errorf("lease %v and expiry %v are not the store's time %v plus %v and %v", out.Record.LeaseExpiry, out.Record.ExpiresAt, out.Now, lease, ttl)
	}
	behind := f.reservation(f.pay, req)
	behind.Record.LeaseExpiry = time.Now().Add(time.Hour) // and one an hour ahead
	behind.Record.ExpiresAt = time.Now().Add(time.Hour)
	again, err := f.s.Reserve(context.Background(), behind)
	if err != nil {
		t.Fatalf("second Reserve: %v", err)
	}
	if again.Now.Before(out.Record.LeaseExpiry) && again.Reserved {
		t.Error("a second caller with another clock reserved a key whose lease runs")
	}
}

// A released reservation frees its key: the next reservation replaces it
// with the next generation.
func testReserveAfterRelease(t *testing.T, f *fixture) {
	req := f.request(f.pay, "acme", "k1", 10)
	first := f.reserve(f.pay, req)
	released, err := f.pay.Release(&first.Record)
	if err != nil {
		t.Fatal(err)
	}
	f.write(released, store.Guard{})
	if d := diff(&released, f.read(released.StorageKey)); d != "" {
		t.Errorf("Read of the released record:%s", d)
	}
	second := f.reserve(f.pay, req)
	if second.Record.Generation != released.Generation+1 {
		t.Errorf("reservation after a release has generation %d, want %d", second.Record.Generation, released.Generation+1)
	}
}

// A record binding under the request's new identity keeps its primary key
// from being reserved, and is returned: the request is its retry.
func testNewIdentityBinds(t *testing.T, f *fixture) {
	a := f.request(f.newRule, "acme", "k1", 10)
	b := f.request(f.newRule, "acme", "k1", 20)
	first := f.reserve(f.newRule, a)
	f.complete(f.newRule, first.Record, first.Now, `{"a":1}`)
	// b meets a's record: it executes as new, under its new identity.
	c, err := store.Acquire(context.Background(), f.s, f.newRule, b)
	if err != nil {
		t.Fatalf("Acquire of a mismatch: %v", err)
	}
	if c.Decision.Action != policy.ExecuteAsNew {
		t.Fatalf("a mismatch under on_mismatch new = %v, want execute-as-new", c.Decision.Action)
	}
	if c.Decision.Reserve != nil || c.Record.StorageKey == "" {
		t.Errorf("a new identity's claim: Decision.Reserve %v, Record under %q; want nil and the record", c.Decision.Reserve, c.Record.StorageKey)
	}
	// The primary record goes away (an operator deletes it); b's retry
	// must still find b's own record and not take the primary key.
	pk, nk := f.keys(f.newRule, b)
	if err := f.s.Delete(context.Background(), pk); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	out, err := f.s.Reserve(context.Background(), f.reservation(f.newRule, b))
	if err != nil {
		t.Fatalf("Reserve: %v", err)
	}
	if out.Reserved {
		t.Fatal("the primary key was reserved although the request's new identity holds its execution")
	}
	if out.NewIdentity == nil || out.NewIdentity.StorageKey != nk {
		t.Fatalf("Reserve returned new identity %s, want the record under the new identity", describe(out.NewIdentity))
	}
	d, err := f.newRule.Decide(b, out.Primary, out.NewIdentity, out.Now)
	if err != nil {
		t.Fatal(err)
	}
	if d.Action == policy.Execute || d.Action == policy.ExecuteAsNew && out.Now.Before(c.Record.LeaseExpiry) {
		t.Errorf("the retry of an execution as new = %v, want a 409 while it runs", d.Action)
	}
}

// Reservations that break the contract are refused before anything is
// written.
func testReserveInvalid(t *testing.T, f *fixture) {
	req := f.request(f.pay, "acme", "k1", 10)
	for _, tc := range []struct {
		reason string
		change func(r *store.Reservation)
	}{
		{"not in flight", func(r *store.Reservation) { r.Record.State = policy.StateCompleted }},
		{"no storage key", func(r *store.Reservation) { r.Record.StorageKey = "" }},
		{"zero lease", func(r *store.Reservation) { r.Lease = 0 }},
		{"lease above TTL", func(r *store.Reservation) { r.Lease = r.TTL + time.Second }},
		{"foreign new identity", func(r *store.Reservation) {
			other := f.request(f.newRule, "acme", "other", 10)
			_, r.NewIdentity = f.keys(f.newRule, other)
		}},
	} {
		res := f.reservation(f.pay, req)
		tc.change(&res)
		_, err := f.s.Reserve(context.Background(), res)
		if !errors.Is(err, store.ErrInvalid) {
			t.Errorf("Reserve with %s: error %v, want ErrInvalid", tc.reason, err)
		}
		var se *store.Error
		if !errors.As(err, &se) || se.Op != "reserve" {
			t.Errorf("Reserve with %s: error %#v is not a *store.Error of op reserve", tc.reason, err)
		}
	}
	pk, _ := f.keys(f.pay, req)
	if rec := f.read(pk); rec != nil {
		t.Errorf("an invalid reservation wrote %s", describe(rec))
	}
}
