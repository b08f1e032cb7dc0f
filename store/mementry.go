package store

import (
	"math"
	"strings"
	"time"
	"unique"
	"unsafe"

	"github.com/idemprint/idemprint/fingerprint"
	"github.com/idemprint/idemprint/policy"
)

// entry is one record of a Memory store, kept in fewer bytes than a
// policy.Record: a store of a million records holds a million of them,
// and each byte of a new one is memory a growing store touches for the
// first time. Times are Unix microseconds (what every store keeps) rather
// than time.Time, the status is an int16, the tenant and key are spans of
// the storage key (where the engine's records always spell them), the
// header and body a pointer and a 32-bit length each, the route and spec
// digest one handle, and the end of life and the key's hash are computed
// rather than kept. What does not fit, far holds, and so does the intent
// projection, which only rules that opt in keep. The record is written in
// place, under the shard's lock; callers get copies.
type entry struct {
	key string // the StorageKey; "" in a free slot
	// The Header and Body are unsafe.Slice(header, headerLen) and
	// unsafe.Slice(body, bodyLen), unless far holds them: a length, not
	// a slice, so that 16 bytes are not kept for their capacities.
	header *policy.HeaderField
	body   *byte
	far    *farFields
	pair   unique.Handle[namePair] // the Route and SpecDigest
	gen    uint64
	// lease and expires are LeaseExpiry and ExpiresAt in Unix
	// microseconds, clamped to an int64 (far holds a time beyond it).
	lease, expires     int64
	slot               int32 // its own, for its items in the shard's ends
	headerLen, bodyLen uint32
	// The Tenant and Key are key[tenantAt:][:tenantLen] and
	// key[keyAt:][:keyLen], unless far holds them.
	tenantAt, tenantLen, keyAt, keyLen uint16
	status                             int16
	state                              policy.State
	fp                                 fingerprint.Fingerprint
}

// farFields are a record's values that an entry's compact fields cannot
// hold: a time more than 292,000 years from 1970, a status beyond an
// int16, a tenant or key its storage key does not spell, a header or body
// of 2^32 elements or more; and its intent projection. No record the
// engine writes has one, unless its rule stores intent.
type farFields struct {
	leaseExpiry, expiresAt time.Time // when far from 1970, else zero (never far)
	status                 int
	tenant, key            string // when apart
	apart                  bool
	long                   bool // header and body are the record's
	header                 policy.Header
	body                   []byte
	intent                 []byte
}

// maxShortLen is the longest header or body an entry keeps in itself;
// a variable, so that a test can reach the fallback without 4 GiB.
var maxShortLen uint64 = math.MaxUint32

// set writes rec into e at the precision every store keeps, with slot as
// its own and the handle nm makes of its route and spec
// digest, and returns the end of its life. The caller holds the shard's
// lock. set reads nothing of e: a
// new entry may lie in memory the process never touched, where a read
// before the write would cost a second page fault (the read maps the
// kernel's shared zero page, and the write then replaces it).
func (e *entry) set(rec *policy.Record, slot int32, nm *names) int64 {
	key := rec.StorageKey
	tAt, tLen, tOK := span(key, rec.Tenant)
	kAt, kLen, kOK := span(key, rec.Key)
	long := uint64(len(rec.Header)) > maxShortLen || uint64(len(rec.Body)) > maxShortLen
	*e = entry{
		key:       key,
		gen:       rec.Generation,
		lease:     micros(rec.LeaseExpiry),
		expires:   micros(rec.ExpiresAt),
		slot:      slot,
		pair:      nm.ref(rec.Route, rec.SpecDigest),
		tenantAt:  tAt,
		tenantLen: tLen,
		keyAt:     kAt,
		keyLen:    kLen,
		status:    int16(rec.Status),
		state:     rec.State,
		fp:        rec.Fingerprint,
	}
	if !long {
		e.header, e.headerLen = unsafe.SliceData(rec.Header), uint32(len(rec.Header))
		e.body, e.bodyLen = unsafe.SliceData(rec.Body), uint32(len(rec.Body))
	}
	farLease, farExpires := farTime(rec.LeaseExpiry), farTime(rec.ExpiresAt)
	if farLease || farExpires || int(e.status) != rec.Status || !tOK || !kOK || long || rec.Intent != nil {
		e.far = &farFields{status: rec.Status, intent: rec.Intent}
		if long {
			e.far.long, e.far.header, e.far.body = true, rec.Header, rec.Body
		}
		if farLease {
			e.far.leaseExpiry = storeTime(rec.LeaseExpiry)
		}
		if farExpires {
			e.far.expiresAt = storeTime(rec.ExpiresAt)
		}
		if !tOK || !kOK {
			e.far.tenant, e.far.key, e.far.apart = rec.Tenant, rec.Key, true
		}
	}
	return e.end()
}

// span returns where key spells s, so that an entry keeps no string of
// its own for it; ok is false when it does not, or not within what a
// uint16 places. A primary storage key ends with the client's key: that
// place is tried first.
func span(key, s string) (at, n uint16, ok bool) {
	if len(key) > math.MaxUint16 {
		return 0, 0, false
	}
	i := len(key) - len(s)
	if !strings.HasSuffix(key, s) {
		i = strings.Index(key, s)
	}
	if i < 0 {
		return 0, 0, false
	}
	return uint16(i), uint16(len(s)), true
}

// tenant returns the record's Tenant.
func (e *entry) tenant() string {
	if e.far != nil && e.far.apart {
		return e.far.tenant
	}
	at := int(e.tenantAt)
	return e.key[at : at+int(e.tenantLen)]
}

// rkey returns the record's Key.
func (e *entry) rkey() string {
	if e.far != nil && e.far.apart {
		return e.far.key
	}
	at := int(e.keyAt)
	return e.key[at : at+int(e.keyLen)]
}

// record returns a copy of the entry's record.
// The caller holds the shard's lock.
func (e *entry) record() *policy.Record {
	r := new(policy.Record)
	e.recordTo(r)
	return r
}

// recordTo writes the entry's record to r.
func (e *entry) recordTo(r *policy.Record) {
	p := e.pair.Value()
	*r = policy.Record{
		StorageKey:  e.key,
		Generation:  e.gen,
		Tenant:      e.tenant(),
		Key:         e.rkey(),
		Route:       p.route,
		State:       e.state,
		Fingerprint: e.fp,
		SpecDigest:  p.digest,
		LeaseExpiry: fromMicros(e.lease),
		ExpiresAt:   fromMicros(e.expires),
		Status:      int(e.status),
		// A capacity of the length: an append to a record handed out
		// never writes into the stored bytes.
		Header: unsafe.Slice(e.header, e.headerLen),
		Body:   unsafe.Slice(e.body, e.bodyLen),
	}
	if f := e.far; f != nil {
		r.Status, r.Intent = f.status, f.intent
		if f.long {
			r.Header, r.Body = f.header, f.body
		}
		if !f.leaseExpiry.IsZero() {
			r.LeaseExpiry = f.leaseExpiry
		}
		if !f.expiresAt.IsZero() {
			r.ExpiresAt = f.expiresAt
		}
	}
}

// end returns when the record's life ends, in Unix microseconds: when it
// stops binding, and for a released record the end of its TTL, so that
// its generation goes on counting while a late holder might still write.
func (e *entry) end() int64 { return max(e.lease, e.expires) }

// binds is [policy.Record.Binds] of the entry's record at now, which has
// the store's precision.
func (e *entry) binds(now time.Time) bool {
	if f := e.far; f != nil && (!f.leaseExpiry.IsZero() || !f.expiresAt.IsZero()) || farTime(now) {
		var r policy.Record
		e.recordTo(&r)
		return r.Binds(now)
	}
	us := now.UnixMicro()
	return e.state != policy.StateNone && (us < e.expires || e.state == policy.StateInFlight && us < e.lease)
}

// equal is [Equal] of the entry's record and rec.
func (e *entry) equal(rec *policy.Record) bool {
	var r policy.Record
	e.recordTo(&r)
	return Equal(&r, rec)
}

// micros returns t in Unix microseconds, clamped to an int64: a time
// before or after what an int64 holds compares as the least or greatest.
func micros(t time.Time) int64 {
	switch {
	case !farTime(t):
		return t.UnixMicro() // floored, as storeTime does
	case t.Unix() > 0:
		return math.MaxInt64
	}
	return math.MinInt64
}

// farTime reports whether micros cannot hold t exactly.
func farTime(t time.Time) bool {
	sec := t.Unix()
	return sec >= maxMicroSeconds || sec <= -maxMicroSeconds
}

// fromMicros returns the time of us Unix microseconds as storeTime
// spells it.
func fromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }
