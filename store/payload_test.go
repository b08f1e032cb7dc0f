package store_test

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash/crc32"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/idemprint/idemprint/fingerprint"
	"github.com/idemprint/idemprint/policy"
	"github.com/idemprint/idemprint/store"
)

func testFingerprint(t testing.TB) fingerprint.Fingerprint {
	fp, err := fingerprint.Parse("v1:sha256:XnefcDg3c6ULEaqd-8sDaH5HStH63MhJSELh2GGEhwE")
	if err != nil {
		t.Fatal(err)
	}
	return fp
}

// payloadRecords are records whose payloads must round-trip exactly.
func payloadRecords(t testing.TB) map[string]policy.Record {
	fp := testFingerprint(t)
	return map[string]policy.Record{
		"Empty":             {},
		"Reservation":       {Tenant: "acme", Key: "k1", Route: "POST /v1/payments", Fingerprint: fp, SpecDigest: "sha256:abc"},
		"IntentEmptyNotNil": {Tenant: "acme", Key: "k1", Fingerprint: fp, Intent: []byte{}},
		"Completed": {
			Tenant: "acme", Key: "k1", Route: "POST /v1/payments", Fingerprint: fp, SpecDigest: "d",
			Intent: []byte(`{"amountCents":1000}`), Status: 201,
			Header: policy.HeaderOf(http.Header{"Content-Type": {"application/json"}, "Link": {"</a>; rel=next", "</b>; rel=prev"}, "X-Empty": {""}}),
			Body:   []byte(`{"id":"pay_1"}`),
		},
		"Binary": {
			Tenant: "t\x00\xff{}", Key: "k", Status: 200,
			Header: policy.Header{{Name: "X-B", Value: "a\x00b, c"}},
			Body:   []byte{0, 1, 2, 0xff, 0xfe, '\n'},
		},
	}
}

func TestPayloadRoundTrip(t *testing.T) {
	for name, rec := range payloadRecords(t) {
		t.Run(name, func(t *testing.T) {
			b := store.AppendPayload([]byte("prefix"), &rec)
			if string(b[:6]) != "prefix" {
				t.Fatalf("AppendPayload overwrote dst")
			}
			// The control fields are the backend's: DecodePayload keeps them.
			got := policy.Record{StorageKey: "sk", Generation: 7, State: policy.StateCompleted, ExpiresAt: time.Unix(5, 0)}
			if err := store.DecodePayload(&got, b[6:]); err != nil {
				t.Fatalf("DecodePayload: %v", err)
			}
			want := rec
			want.StorageKey, want.Generation, want.State, want.ExpiresAt = "sk", 7, policy.StateCompleted, time.Unix(5, 0)
			if len(want.Body) == 0 {
				want.Body = got.Body // nil and empty are one body
			}
			if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b fingerprint.Fingerprint) bool { return a == b })); diff != "" {
				t.Errorf("DecodePayload(AppendPayload(rec)) mismatch (-want +got):\n%s", diff)
			}
			if (got.Intent == nil) != (rec.Intent == nil) {
				t.Errorf("intent nil = %v, want %v", got.Intent == nil, rec.Intent == nil)
			}
		})
	}
}

// TestPayloadGolden holds the encoding of version 1 to the bytes in
// testdata/payload.golden, which the encoder wrote when records kept their
// header in an http.Header: records already in a store must decode the
// same, and a record must encode as it did.
func TestPayloadGolden(t *testing.T) {
	text, err := os.ReadFile("testdata/payload.golden")
	if err != nil {
		t.Fatal(err)
	}
	recs := payloadRecords(t)
	seen := 0
	for line := range strings.Lines(string(text)) {
		name, hexPayload, _ := strings.Cut(strings.TrimSpace(line), " ")
		rec, ok := recs[name]
		if !ok {
			t.Errorf("golden payload %q names no record", name)
			continue
		}
		seen++
		if got := hex.EncodeToString(store.AppendPayload(nil, &rec)); got != hexPayload {
			t.Errorf("%s: encoding changed:\n got %s\nwant %s", name, got, hexPayload)
		}
	}
	if seen != len(recs) {
		t.Errorf("the golden file holds %d of %d records", seen, len(recs))
	}
}

// A header out of its order encodes as the sorted one does: the encoding
// is deterministic whatever order the fields were built in.
func TestPayloadHeaderOrder(t *testing.T) {
	rec := payloadRecords(t)["Completed"]
	want := store.AppendPayload(nil, &rec)
	shuffled := rec
	h := rec.Header // Content-Type, Link, Link, X-Empty
	shuffled.Header = policy.Header{h[3], h[1], h[0], h[2]}
	if got := store.AppendPayload(nil, &shuffled); string(got) != string(want) {
		t.Errorf("a header out of order encodes differently")
	}
	if len(rec.Header) != 4 || rec.Header[0].Name != "Content-Type" {
		t.Fatalf("the record changed: %v", rec.Header)
	}
}

func TestPayloadCorrupt(t *testing.T) {
	rec := payloadRecords(t)["Completed"]
	good := store.AppendPayload(nil, &rec)
	cases := map[string][]byte{
		"Empty":     {},
		"Short":     good[:4],
		"Truncated": good[:len(good)-1],
		"Trailing":  append(append([]byte{}, good...), 0),
		"BitFlip":   flip(good, len(good)/2),
		"Checksum":  flip(good, len(good)-1),
	}
	// A wrong version, a bad fingerprint, a header without values, names
	// out of order: each with a valid checksum.
	cases["Version"] = reseal(append([]byte{2}, good[1:len(good)-4]...))
	cases["Fingerprint"] = reseal([]byte{1, 0, 0, 0, 5, 'v', '9', ':', 'x', 'y', 0, 0, 0, 0, 0})
	cases["HeaderWithoutValues"] = reseal([]byte{1, 0, 0, 0, 0, 0, 0, 0, 1, 1, 'A', 0, 0})
	cases["HeadersOutOfOrder"] = reseal([]byte{1, 0, 0, 0, 0, 0, 0, 0, 2, 1, 'B', 1, 0, 1, 'A', 1, 0, 0})
	cases["HugeCount"] = reseal([]byte{1, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f, 0})
	cases["HugeLength"] = reseal([]byte{1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f})
	cases["Status"] = reseal([]byte{1, 0, 0, 0, 0, 0, 0, 0xe8, 0x07, 0, 0})
	for name, payload := range cases {
		t.Run(name, func(t *testing.T) {
			got := policy.Record{Tenant: "unchanged"}
			err := store.DecodePayload(&got, payload)
			if !errors.Is(err, store.ErrCorrupt) {
				t.Fatalf("DecodePayload: error %v, want ErrCorrupt", err)
			}
			var se *store.Error
			if !errors.As(err, &se) {
				t.Errorf("error %T is not a *store.Error", err)
			}
			if got.Tenant != "unchanged" {
				t.Errorf("a failed decode changed the record")
			}
		})
	}
}

func flip(b []byte, i int) []byte {
	c := append([]byte{}, b...)
	c[i] ^= 0x40
	return c
}

// reseal appends a valid checksum to b.
func reseal(b []byte) []byte {
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)))
}
