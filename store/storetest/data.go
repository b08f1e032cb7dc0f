package storetest

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/idemprint/idemprint/policy"
	"github.com/idemprint/idemprint/store"
)

var (
	_ = register("Expiry/StoreClock", testExpiry)
	_ = register("Expiry/Released", testReleasedExpiry)
	_ = register("Data/Tenants", testTenants)
	_ = register("Data/Binary", testBinary)
	_ = register("Data/LargeBody", testLargeBody)
	_ = register("Data/MultiValuedHeaders", testMultiValued)
	_ = register("Data/HeaderOutOfOrder", testHeaderOutOfOrder)
	_ = register("Data/Intent", testIntent)
	_ = register("Context/Canceled", testCanceled)
	_ = register("Context/Deadline", testDeadline)
	_ = register("Corrupt", testCorrupt)
	_ = register("Acquire/RoundTrips", testAcquireRoundTrips)
)

// A completed record binds until its TTL by the store's clock, then
// frees the key.
func testExpiry(t *testing.T, f *fixture) {
	req := f.request(f.pay, "acme", "k1", 10)
	first := f.reserve(f.pay, req)
	done := f.complete(f.pay, first.Record, first.Now, `{"a":1}`)
	c, err := store.Acquire(context.Background(), f.s, f.pay, req)
	if err != nil {
		t.Fatal(err)
	}
	if c.Now.Before(done.ExpiresAt) && c.Decision.Action != policy.Replay {
		t.Errorf("a retry before the TTL = %v, want replay", c.Decision.Action)
	}
	f.pass(ttl + margin)
	if rec := f.read(done.StorageKey); rec != nil {
		t.Errorf("Read after the record's life ended = %s, want none", describe(rec))
	}
	c, err = store.Acquire(context.Background(), f.s, f.pay, req)
	if err != nil {
		t.Fatal(err)
	}
	if c.Decision.Action != policy.Execute || c.Decision.Reason != policy.ReasonFirst {
		t.Errorf("a request after the TTL = %v %v, want execute first", c.Decision.Action, c.Decision.Reason)
	}
	if !c.Now.After(done.ExpiresAt) {
		t.Errorf("the store's time %v is not past the expiry %v after waiting", c.Now, done.ExpiresAt)
	}
}

// A released reservation keeps its generation counting until its TTL,
// then is gone.
func testReleasedExpiry(t *testing.T, f *fixture) {
	req := f.request(f.pay, "acme", "k1", 10)
	first := f.reserve(f.pay, req)
	rel, err := f.pay.Release(&first.Record)
	if err != nil {
		t.Fatal(err)
	}
	f.write(rel, store.Guard{})
	if rec := f.read(rel.StorageKey); rec == nil || rec.Generation != rel.Generation {
		t.Errorf("Read of a released reservation before its TTL = %s, want generation %d", describe(rec), rel.Generation)
	}
	f.pass(ttl + margin)
	if rec := f.read(rel.StorageKey); rec != nil {
		t.Errorf("Read of a released reservation after its TTL = %s, want none", describe(rec))
	}
}

// One key string used by two tenants is two records.
func testTenants(t *testing.T, f *fixture) {
	a := f.request(f.pay, "tenant-a", "shared", 10)
	b := f.request(f.pay, "tenant-b", "shared", 99)
	ra := f.reserve(f.pay, a)
	rb := f.reserve(f.pay, b) // fails unless b's key is free
	f.complete(f.pay, ra.Record, ra.Now, `{"tenant":"a"}`)
	f.complete(f.pay, rb.Record, rb.Now, `{"tenant":"b"}`)
	for _, tc := range []struct {
		req  policy.Request
		body string
	}{{a, `{"tenant":"a"}`}, {b, `{"tenant":"b"}`}} {
		c, err := store.Acquire(context.Background(), f.s, f.pay, tc.req)
		if err != nil {
			t.Fatal(err)
		}
		if c.Decision.Action != policy.Replay || string(c.Decision.Response.Body) != tc.body {
			t.Errorf("tenant %s's retry = %v %q, want replay of %s", tc.req.Tenant, c.Decision.Action, c.Decision.Response.Body, tc.body)
		}
	}
	if p, ok := f.s.(store.TenantPurger); ok {
		n, err := p.PurgeTenant(context.Background(), "tenant-a")
		if err != nil || n != 1 {
			t.Errorf("PurgeTenant = %d, %v; want 1 record", n, err)
		}
		pa, _ := f.keys(f.pay, a)
		pb, _ := f.keys(f.pay, b)
		if f.read(pa) != nil || f.read(pb) == nil {
			t.Error("PurgeTenant removed another tenant's record or kept its own")
		}
	}
}

// Tenants, keys and bodies of any bytes are kept exactly.
func testBinary(t *testing.T, f *fixture) {
	var all []byte
	for i := range 256 {
		all = append(all, byte(i))
	}
	tenant := "t\x00{x}\xff\xfe:1:" + string(all[128:]) // NUL, a hash tag, invalid UTF-8, a fake length prefix
	req := f.request(f.pay, tenant, `k{}:"\`, 10)
	first := f.reserve(f.pay, req)
	done, err := f.pay.Complete(&first.Record, policy.Response{
		Status: 200,
		Header: http.Header{"Content-Type": {"application/octet-stream"}, "X-Bin": {"a\x80b", ""}},
		Body:   bytes.Repeat(all, 3),
	}, first.Now)
	if err != nil {
		t.Fatal(err)
	}
	f.write(done, store.Guard{})
	if d := diff(&done, f.read(done.StorageKey)); d != "" {
		t.Errorf("binary record read back differently:%s", d)
	}
	other := f.request(f.pay, strings.ToValidUTF8(tenant, "\uFFFD"), `k{}:"\`, 10)
	if pk, _ := f.keys(f.pay, other); f.read(pk) != nil {
		t.Error("a tenant that differs only in invalid bytes shares the record")
	}
}

// A 1 MiB response is stored and read back byte for byte.
func testLargeBody(t *testing.T, f *fixture) {
	req := f.request(f.pay, "acme", "k1", 10)
	first := f.reserve(f.pay, req)
	body := make([]byte, 1<<20)
	for i := range body {
		body[i] = byte(i*7 + i>>10)
	}
	done, err := f.pay.Complete(&first.Record, policy.Response{Status: 200, Body: body}, first.Now)
	if err != nil {
		t.Fatal(err)
	}
	f.write(done, store.Guard{})
	if d := diff(&done, f.read(done.StorageKey)); d != "" {
		t.Errorf("1 MiB body read back differently:%s", d)
	}
	c, err := store.Acquire(context.Background(), f.s, f.pay, req)
	if err != nil {
		t.Fatal(err)
	}
	if c.Decision.Action != policy.Replay || !bytes.Equal(c.Decision.Response.Body, body) {
		t.Errorf("the retry = %v with %d bytes, want a replay of the 1 MiB body", c.Decision.Action, len(c.Decision.Response.Body))
	}
}

// A header with several values keeps each one, in order: values are never
// joined with commas (Set-Cookie and Content-Disposition break).
func testMultiValued(t *testing.T, f *fixture) {
	req := f.request(f.pay, "acme", "k1", 10)
	first := f.reserve(f.pay, req)
	hdr := http.Header{
		"Link":                {"</a>; rel=next", "</b>; rel=prev"},
		"X-Comma":             {"a, b", "c"},
		"Content-Disposition": {`attachment; filename="a,b.pdf"`},
		"X-Empty-Value":       {""},
	}
	done, err := f.pay.Complete(&first.Record, policy.Response{Status: 201, Header: hdr, Body: []byte("{}")}, first.Now)
	if err != nil {
		t.Fatal(err)
	}
	f.write(done, store.Guard{})
	if d := diff(&done, f.read(done.StorageKey)); d != "" {
		t.Errorf("multi-valued headers read back differently:%s", d)
	}
}

// A record whose header was built by hand out of a policy.Header's order
// is kept whole and read back equal, name by name; writing it again, as
// after a lost reply, is taken as the write that happened.
func testHeaderOutOfOrder(t *testing.T, f *fixture) {
	req := f.request(f.pay, "acme", "k1", 10)
	first := f.reserve(f.pay, req)
	done, err := f.pay.Complete(&first.Record, policy.Response{Status: 201, Body: []byte("{}")}, first.Now)
	if err != nil {
		t.Fatal(err)
	}
	done.Header = policy.Header{{Name: "X-B", Value: "2"}, {Name: "Location", Value: "/p/1"}, {Name: "X-B", Value: "1"}}
	f.write(done, store.Guard{})
	got := f.read(done.StorageKey)
	if d := diff(&done, got); d != "" {
		t.Errorf("a header out of order read back differently:%s", d)
	}
	if got != nil && !store.Equal(&done, got) {
		t.Errorf("store.Equal tells the record from its copy read back: %q and %q", done.Header, got.Header)
	}
	f.write(done, store.Guard{}) // the same write again
}

// A rule that stores intent keeps the projection with the reservation,
// and a mismatch names the differing field from it.
func testIntent(t *testing.T, f *fixture) {
	a := f.request(f.intent, "acme", "k1", 10)
	first := f.reserve(f.intent, a)
	if len(first.Record.Intent) == 0 {
		t.Fatal("the reservation of a rule that stores intent has none")
	}
	if d := diff(&first.Record, f.read(first.Record.StorageKey)); d != "" {
		t.Errorf("Read:%s", d)
	}
	b := f.request(f.intent, "acme", "k1", 20)
	c, err := store.Acquire(context.Background(), f.s, f.intent, b)
	if err != nil {
		t.Fatal(err)
	}
	if c.Decision.Action != policy.Reject || c.Decision.Problem == nil || len(c.Decision.Problem.DifferingPaths) == 0 {
		t.Errorf("a mismatch under store_intent = %v, problem %+v; want a rejection naming the differing paths", c.Decision.Action, c.Decision.Problem)
	}
}

// A canceled context fails every operation with the context's error and
// writes nothing.
func testCanceled(t *testing.T, f *fixture) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	checkContext(t, f, ctx, context.Canceled)
}

// So does a context whose deadline has passed.
func testDeadline(t *testing.T, f *fixture) {
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	checkContext(t, f, ctx, context.DeadlineExceeded)
}

func checkContext(t *testing.T, f *fixture, ctx context.Context, want error) {
	t.Helper()
	req := f.request(f.pay, "acme", "k1", 10)
	held := f.request(f.pay, "acme", "k2", 10)
	h := f.reserve(f.pay, held)
	check := func(op string, err error) {
		t.Helper()
		if !errors.Is(err, want) {
			t.Errorf("%s with an ended context: error %v, want %v", op, err, want)
		}
		var se *store.Error
		if err != nil && !errors.As(err, &se) {
			t.Errorf("%s with an ended context: error %T is not a *store.Error", op, err)
		}
	}
	_, err := f.s.Reserve(ctx, f.reservation(f.pay, req))
	check("Reserve", err)
	done, _ := f.pay.Complete(&h.Record, policy.Response{Status: 201}, h.Now)
	check("Write", f.s.Write(ctx, done, store.Guard{}))
	_, err = f.s.Read(ctx, done.StorageKey)
	check("Read", err)
	check("Delete", f.s.Delete(ctx, done.StorageKey))
	pk, _ := f.keys(f.pay, req)
	if rec := f.read(pk); rec != nil {
		t.Errorf("Reserve with an ended context wrote %s", describe(rec))
	}
	if d := diff(&h.Record, f.read(h.Record.StorageKey)); d != "" {
		t.Errorf("Write or Delete with an ended context changed the record:%s", d)
	}
}

// A record that does not decode is an error wrapping ErrCorrupt, never a
// replay; deleting it recovers the key.
func testCorrupt(t *testing.T, f *fixture) {
	if f.corrupt == nil {
		t.Skip("the store keeps no encoded form to corrupt")
	}
	req := f.request(f.pay, "acme", "k1", 10)
	first := f.reserve(f.pay, req)
	done := f.complete(f.pay, first.Record, first.Now, `{"id":1}`)
	if err := f.corrupt(done.StorageKey); err != nil {
		t.Fatalf("Corrupt: %v", err)
	}
	if _, err := f.s.Read(context.Background(), done.StorageKey); !errors.Is(err, store.ErrCorrupt) {
		t.Errorf("Read of a corrupt record: error %v, want ErrCorrupt", err)
	}
	c, err := store.Acquire(context.Background(), f.s, f.pay, req)
	if !errors.Is(err, store.ErrCorrupt) {
		t.Errorf("Acquire over a corrupt record = %v, error %v; want ErrCorrupt", c.Decision.Action, err)
	}
	if err := f.s.Delete(context.Background(), done.StorageKey); err != nil {
		t.Fatalf("Delete of a corrupt record: %v", err)
	}
	f.reserve(f.pay, req)
}

// The flow costs one round trip to reserve and one to complete; a
// replay, a rejection and an in-flight answer cost one.
func testAcquireRoundTrips(t *testing.T, f *fixture) {
	req := f.request(f.pay, "acme", "k1", 10)
	acquire := func(r policy.Request) store.Claim {
		t.Helper()
		c, err := store.Acquire(context.Background(), f.s, f.pay, r)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	first := acquire(req)
	if first.Decision.Action != policy.Execute || first.Calls != 1 {
		t.Errorf("first request = %v in %d calls, want execute in 1", first.Decision.Action, first.Calls)
	}
	if first.Decision.Reserve != nil { // Record is the reservation
		t.Errorf("a first execution's claim has a Decision.Reserve")
	}
	if c := acquire(req); c.Now.Before(first.Record.LeaseExpiry) && (c.Calls != 1 || c.Decision.Action != policy.Reject) {
		t.Errorf("retry in flight = %v in %d calls, want reject in 1", c.Decision.Action, c.Calls)
	}
	f.complete(f.pay, first.Record, first.Now, `{"id":1}`)
	if c := acquire(req); c.Calls != 1 || c.Decision.Action != policy.Replay {
		t.Errorf("retry = %v in %d calls, want replay in 1", c.Decision.Action, c.Calls)
	}
	if c := acquire(f.request(f.pay, "acme", "k1", 11)); c.Calls != 1 || c.Decision.Action != policy.Reject || c.Decision.Response.Status != 422 {
		t.Errorf("mismatch = %v %d in %d calls, want reject 422 in 1", c.Decision.Action, c.Decision.Response.Status, c.Calls)
	}
	missing, err := f.pay.NewRequest("acme", fingerprintRequestWithoutKey())
	if err != nil {
		t.Fatal(err)
	}
	if c := acquire(missing); c.Calls != 0 || c.Decision.Action != policy.Reject {
		t.Errorf("missing key = %v in %d calls, want reject without the store", c.Decision.Action, c.Calls)
	}
}
