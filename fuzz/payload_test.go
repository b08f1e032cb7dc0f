package fuzz

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/idemprint/idemprint/fingerprint"
	"github.com/idemprint/idemprint/policy"
	"github.com/idemprint/idemprint/store"
)

// payloadSeeds are records whose encodings seed FuzzPayload.
func payloadSeeds(t testing.TB) []policy.Record {
	fp, err := fingerprint.Parse("v1:sha256:XnefcDg3c6ULEaqd-8sDaH5HStH63MhJSELh2GGEhwE")
	if err != nil {
		t.Fatal(err)
	}
	return []policy.Record{
		{},
		{Tenant: "acme", Key: "k1", Route: "POST /v1/payments", Fingerprint: fp, SpecDigest: "sha256:x", Intent: []byte(`{"a":1}`)},
		{Tenant: "t\x00\xff", Key: "k", Status: 201, Fingerprint: fp,
			Header: policy.HeaderOf(http.Header{"Content-Type": {"application/json"}, "Link": {"</a>", "</b>"}, "X-E": {""}}),
			Body:   []byte{0, 1, 2, 0xff}},
	}
}

// FuzzPayload checks the record encoding that the Redis and PostgreSQL
// stores keep: whatever bytes a store hands back, DecodePayload returns a
// record or an error wrapping store.ErrCorrupt, never panics, and a record
// it returns encodes to a payload that decodes to the same record. Each
// input is tried as it is and with a valid checksum appended: mutated
// bytes almost never keep their checksum, and the decoder behind it must
// be explored too.
func FuzzPayload(f *testing.F) {
	for _, rec := range payloadSeeds(f) {
		b := store.AppendPayload(nil, &rec)
		body := b[:len(b)-4] // the checksum is appended while fuzzing
		f.Add(body)
		f.Add(body[:len(body)/2])
	}
	castagnoli := crc32.MakeTable(crc32.Castagnoli)
	f.Fuzz(func(t *testing.T, b []byte) {
		checkPayload(t, b)
		checkPayload(t, binary.BigEndian.AppendUint32(b[:len(b):len(b)], crc32.Checksum(b, castagnoli)))
	})
}

func checkPayload(t *testing.T, b []byte) {
	var rec policy.Record
	if err := store.DecodePayload(&rec, b); err != nil {
		if !errors.Is(err, store.ErrCorrupt) {
			t.Fatalf("DecodePayload: error %v does not wrap ErrCorrupt", err)
		}
		return
	}
	again := store.AppendPayload(nil, &rec)
	var back policy.Record
	if err := store.DecodePayload(&back, again); err != nil {
		t.Fatalf("DecodePayload of a re-encoded record: %v", err)
	}
	if diff := cmp.Diff(rec, back, cmp.Comparer(func(a, b fingerprint.Fingerprint) bool { return a == b })); diff != "" {
		t.Errorf("decode(encode(decode(b))) mismatch (-first +second):\n%s", diff)
	}
}
