package store

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/idemprint/idemprint/fingerprint"
	"github.com/idemprint/idemprint/policy"
)

// PayloadVersion is the first byte of every payload [AppendPayload]
// writes. A payload of another version is [ErrCorrupt] to this package's
// [DecodePayload]: a format change is a new version, decoded side by side.
const PayloadVersion = 1

// castagnoli is the CRC-32C table of the payload checksum.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// AppendPayload appends to dst the encoding of rec's payload: every field
// but StorageKey, Generation, State, LeaseExpiry and ExpiresAt, which a
// backend keeps beside the payload, where it can judge them (see the
// package documentation for the layout). The encoding is binary-safe and
// deterministic: header names are sorted (a header out of a
// [policy.Header]'s order is sorted first), each value is kept on its own.
func AppendPayload(dst []byte, rec *policy.Record) []byte {
	start := len(dst)
	dst = append(dst, PayloadVersion)
	dst = appendString(dst, rec.Tenant)
	dst = appendString(dst, rec.Key)
	dst = appendString(dst, rec.Route)
	dst, _ = appendFingerprint(dst, rec.Fingerprint)
	dst = appendString(dst, rec.SpecDigest)
	if rec.Intent == nil {
		dst = binary.AppendUvarint(dst, 0)
	} else {
		dst = binary.AppendUvarint(dst, uint64(len(rec.Intent))+1)
		dst = append(dst, rec.Intent...)
	}
	dst = binary.AppendUvarint(dst, uint64(rec.Status))
	h := rec.Header.Sorted() // a header built by hand may be out of order
	names := 0
	for range h.Runs() {
		names++
	}
	dst = binary.AppendUvarint(dst, uint64(names))
	for name, run := range h.Runs() {
		dst = appendString(dst, name)
		dst = binary.AppendUvarint(dst, uint64(len(run)))
		for _, f := range run {
			dst = appendString(dst, f.Value)
		}
	}
	dst = binary.AppendUvarint(dst, uint64(len(rec.Body)))
	dst = append(dst, rec.Body...)
	return binary.BigEndian.AppendUint32(dst, crc32.Checksum(dst[start:], castagnoli))
}

func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// appendFingerprint appends the fingerprint's text form ("" for none) as a
// string.
func appendFingerprint(dst []byte, fp fingerprint.Fingerprint) ([]byte, error) {
	var buf [64]byte
	text, err := fp.AppendText(buf[:0])
	return appendString(dst, string(text)), err
}

// DecodePayload sets the payload fields of rec (every field but
// StorageKey, Generation, State, LeaseExpiry and ExpiresAt) from b, the
// encoding of [AppendPayload]. A payload that is truncated, has trailing
// bytes, fails its checksum, is of another version or holds an invalid
// fingerprint is an error wrapping [ErrCorrupt], and rec's payload fields
// are then unchanged. The record shares no memory with b.
func DecodePayload(rec *policy.Record, b []byte) error {
	if len(b) < 5 {
		return corrupt("payload of %d bytes is too short", len(b))
	}
	body, sum := b[:len(b)-4], binary.BigEndian.Uint32(b[len(b)-4:])
	if crc32.Checksum(body, castagnoli) != sum {
		return corrupt("payload checksum mismatch")
	}
	if body[0] != PayloadVersion {
		return corrupt("payload version %d is not %d", body[0], PayloadVersion)
	}
	d := decoder{b: body[1:]}
	var out policy.Record
	out.Tenant = d.string()
	out.Key = d.string()
	out.Route = d.string()
	if fp := d.string(); fp != "" && d.err == nil {
		var err error
		if out.Fingerprint, err = fingerprint.Parse(fp); err != nil {
			return corrupt("payload fingerprint: %v", err)
		}
	}
	out.SpecDigest = d.string()
	if n := d.uvarint(); n > 0 {
		out.Intent = d.bytes(n - 1)
	}
	status := d.uvarint()
	if status > 999 {
		d.fail("status %d", status)
	}
	out.Status = int(status)
	if n := d.count(); n > 0 {
		prev := ""
		for i := uint64(0); i < n && d.err == nil; i++ {
			name := d.string()
			if i > 0 && name <= prev {
				d.fail("header names out of order")
			}
			prev = name
			values := d.count()
			if values == 0 {
				d.fail("header %q without values", name)
			}
			for k := uint64(0); k < values && d.err == nil; k++ {
				out.Header = append(out.Header, policy.HeaderField{Name: name, Value: d.string()})
			}
		}
	}
	out.Body = d.bytes(d.uvarint())
	if d.err == nil && len(d.b) > 0 {
		d.fail("%d trailing bytes", len(d.b))
	}
	if d.err != nil {
		return d.err
	}
	rec.Tenant, rec.Key, rec.Route = out.Tenant, out.Key, out.Route
	rec.Fingerprint, rec.SpecDigest, rec.Intent = out.Fingerprint, out.SpecDigest, out.Intent
	rec.Status, rec.Header, rec.Body = out.Status, out.Header, out.Body
	return nil
}

// decoder reads a payload; the first error sticks and makes every further
// read return a zero value.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = corrupt("payload: "+format, args...)
	}
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("bad length")
		return 0
	}
	d.b = d.b[n:]
	return v
}

// count reads a number of items, each at least one byte long, so that a
// corrupt count never makes the decoder allocate more than the payload
// could hold.
func (d *decoder) count() uint64 {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail("count %d exceeds the payload", n)
		return 0
	}
	return n
}

func (d *decoder) bytes(n uint64) []byte {
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)) {
		d.fail("length %d exceeds the payload", n)
		return nil
	}
	out := make([]byte, n)
	copy(out, d.b)
	d.b = d.b[n:]
	return out
}

func (d *decoder) string() string { return string(d.bytes(d.uvarint())) }

func corrupt(format string, args ...any) error {
	return &Error{Op: "decode", Kind: ErrCorrupt, Err: fmt.Errorf(format, args...)}
}
