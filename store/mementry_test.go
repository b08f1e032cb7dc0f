package store

import (
	"math"
	"net/http"
	"strings"
	"testing"
	"time"
	"unique"
	"unsafe"

	"github.com/google/go-cmp/cmp"

	"github.com/idemprint/idemprint/fingerprint"
	"github.com/idemprint/idemprint/policy"
)

// entryTimes are times an entry must give back as storeTime spells them,
// near and far from 1970.
var entryTimes = []time.Time{
	{},
	time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC),
	time.Unix(-1, 1),
	time.Unix(0, 0),
	time.Date(2026, 12, 1, 12, 0, 0, 123_456_789, time.FixedZone("x", 3600)),
	time.Unix(maxMicroSeconds-1, 999_999_999),
	time.Unix(maxMicroSeconds, 999_999_999),
	time.Unix(-maxMicroSeconds, 1),
	time.Unix(-maxMicroSeconds+1, 0),
	time.Unix(maxMicroSeconds+10, 123_456_789),
	time.Date(292277026596, 12, 4, 15, 30, 7, 999_999_999, time.UTC),
	time.Unix(math.MinInt64/2, 0),
}

// An entry gives back the record it was set to, at the store's
// precision, whatever its times, status, tenant and key: exactly, field
// by field, not only by Equal.
func TestEntryRoundTrip(t *testing.T) {
	key := "idem1:4:acme:17:POST /v1/payments:7:abc-123"
	base := policy.Record{
		StorageKey: key, Generation: 7, Tenant: "acme", Key: "abc-123", Route: "POST /v1/payments",
		State: policy.StateCompleted, SpecDigest: "sha256:00ff", Intent: []byte(`{"a":1}`),
		Status: 201, Header: policy.HeaderOf(http.Header{"Content-Type": {"application/json"}}), Body: []byte(`{"id":1}`),
	}
	var err error
	if base.Fingerprint, err = fingerprint.Parse("v1:sha256:" + strings.Repeat("A", 42) + "E"); err != nil {
		t.Fatal(err)
	}
	var cases []policy.Record
	for _, lease := range entryTimes {
		for _, expires := range entryTimes {
			r := base
			r.LeaseExpiry, r.ExpiresAt = lease, expires
			cases = append(cases, r)
		}
	}
	for _, edit := range []func(*policy.Record){
		func(r *policy.Record) { r.Status = 0 },
		func(r *policy.Record) { r.Status = math.MaxInt16 },
		func(r *policy.Record) { r.Status = math.MaxInt16 + 1 },
		func(r *policy.Record) { r.Status = -1 << 40 },
		func(r *policy.Record) { r.Tenant, r.Key = "other", "not-in-the-key" },
		func(r *policy.Record) { r.Tenant, r.Key = "", "" },
		func(r *policy.Record) { r.Intent = []byte{} },
		func(r *policy.Record) { r.Intent, r.Header, r.Body = nil, nil, nil },
		func(r *policy.Record) { r.Intent, r.Header, r.Body = nil, policy.Header{}, []byte{} },
		func(r *policy.Record) { r.Header, r.Body = policy.Header{}, nil },
		func(r *policy.Record) { r.State = policy.StateInFlight; r.Route = "" },
		func(r *policy.Record) { r.SpecDigest = "" },
		func(r *policy.Record) { r.Route, r.SpecDigest = "", "" },
		func(r *policy.Record) { r.StorageKey = strings.Repeat("k", 1<<16) + key },
	} {
		r := base
		r.LeaseExpiry, r.ExpiresAt = time.Unix(1_800_000_000, 5_000), time.Unix(1_800_086_400, 0)
		edit(&r)
		cases = append(cases, r)
	}
	for _, rec := range cases {
		want := rec
		want.LeaseExpiry, want.ExpiresAt = storeTime(rec.LeaseExpiry), storeTime(rec.ExpiresAt)
		var nm names
		e := entry{slot: 3}
		end := e.set(&rec, 7, &nm)
		if e.slot != 7 {
			t.Errorf("set in slot 7 left the entry saying slot %d", e.slot)
		}
		got := e.record()
		if diff := cmp.Diff(&want, got, cmp.Comparer(func(a, b fingerprint.Fingerprint) bool { return a == b })); diff != "" {
			t.Errorf("lease %v, expires %v, status %d: record (-want +got):\n%s", rec.LeaseExpiry, rec.ExpiresAt, rec.Status, diff)
		}
		if (want.Intent == nil) != (got.Intent == nil) || (want.Header == nil) != (got.Header == nil) || (want.Body == nil) != (got.Body == nil) {
			t.Errorf("intent %q, header %v, body %q came back as %q, %v, %q", want.Intent, want.Header, want.Body, got.Intent, got.Header, got.Body)
		}
		if cap(got.Header) != len(got.Header) || cap(got.Body) != len(got.Body) {
			t.Errorf("header and body came back with capacities %d and %d beyond their lengths %d and %d", cap(got.Header), cap(got.Body), len(got.Header), len(got.Body))
		}
		if got.LeaseExpiry != want.LeaseExpiry || got.ExpiresAt != want.ExpiresAt {
			t.Errorf("times %#v, %#v came back as %#v, %#v", want.LeaseExpiry, want.ExpiresAt, got.LeaseExpiry, got.ExpiresAt)
		}
		if !e.equal(&rec) {
			t.Errorf("lease %v, expires %v: the entry is not Equal to the record it was set to", rec.LeaseExpiry, rec.ExpiresAt)
		}
		if wantEnd := max(micros(rec.LeaseExpiry), micros(rec.ExpiresAt)); end != wantEnd || e.end() != wantEnd {
			t.Errorf("lease %v, expires %v: end %d (entry says %d), want %d", rec.LeaseExpiry, rec.ExpiresAt, end, e.end(), wantEnd)
		}
		for _, now := range entryTimes {
			now = storeTime(now)
			for _, state := range []policy.State{policy.StateNone, policy.StateInFlight, policy.StateCompleted} {
				e.state, want.State = state, state
				if got, want := e.binds(now), want.Binds(now); got != want {
					t.Errorf("lease %v, expires %v, state %v: binds(%v) = %v, want %v", rec.LeaseExpiry, rec.ExpiresAt, state, now, got, want)
				}
			}
		}
	}
}

// A header or body too long for an entry's 32-bit lengths is kept in
// far, whole.
func TestEntryLongBody(t *testing.T) {
	defer func(was uint64) { maxShortLen = was }(maxShortLen)
	maxShortLen = 2
	rec := policy.Record{
		StorageKey: "k", Generation: 1, State: policy.StateCompleted, Status: 200,
		Header: policy.HeaderOf(http.Header{"A": {"1"}, "B": {"2", "3"}}), Body: []byte("four"),
	}
	for _, edit := range []func(*policy.Record){
		func(*policy.Record) {},                            // body too long
		func(r *policy.Record) { r.Body = []byte("ok") },   // header too long
		func(r *policy.Record) { r.Header = r.Header[:1] }, // body too long, header short
	} {
		r := rec
		edit(&r)
		var e entry
		e.set(&r, 0, new(names))
		if e.far == nil || !e.far.long {
			t.Fatalf("header of %d fields, body of %d bytes: not kept in far", len(r.Header), len(r.Body))
		}
		if diff := cmp.Diff(&r, e.record(), cmp.Comparer(func(a, b fingerprint.Fingerprint) bool { return a == b })); diff != "" {
			t.Errorf("record (-want +got):\n%s", diff)
		}
	}
}

// A record's tenant and key spelled in its storage key take no string of
// their own in the entry: they are the storage key's bytes.
func TestEntryTenantKeyWithin(t *testing.T) {
	key := "idem1:4:acme:17:POST /v1/payments:7:abc-123"
	rec := policy.Record{StorageKey: key, Tenant: strings.Clone("acme"), Key: strings.Clone("abc-123"), Generation: 1, State: policy.StateInFlight}
	var e entry
	e.set(&rec, 0, new(names))
	start, end := uintptr(unsafe.Pointer(unsafe.StringData(key))), uintptr(unsafe.Pointer(unsafe.StringData(key)))+uintptr(len(key))
	for name, s := range map[string]string{"tenant": e.tenant(), "key": e.rkey()} {
		if p := uintptr(unsafe.Pointer(unsafe.StringData(s))); p < start || p >= end {
			t.Errorf("the entry's %s %q is not within its storage key", name, s)
		}
	}
	if e.tenant() != "acme" || e.rkey() != "abc-123" || e.far != nil {
		t.Errorf("tenant %q, key %q (far: %v), want acme, abc-123 in the storage key", e.tenant(), e.rkey(), e.far != nil)
	}
}

// names gives equal pairs one handle and other pairs another, whether
// it made the last one or not, and a handle gives back its pair.
func TestNames(t *testing.T) {
	var nm names
	empty := nm.ref("", "")
	a := nm.ref("POST /pay", "d1")
	a2 := nm.ref(strings.Clone("POST /pay"), strings.Clone("d1"))
	b := nm.ref("POST /refund", "d1")
	c := nm.ref("POST /pay", "d2")
	a3 := nm.ref("POST /pay", "d1")
	if a2 != a || a3 != a || b == a || c == a || c == b || empty == a {
		t.Fatalf("handles: want equal pairs alike and others apart")
	}
	for h, want := range map[unique.Handle[namePair]]namePair{
		empty: {}, a: {"POST /pay", "d1"}, b: {"POST /refund", "d1"}, c: {"POST /pay", "d2"},
	} {
		if got := h.Value(); got != want {
			t.Errorf("handle of %q gives back %q", want, got)
		}
	}
}
