package store

import (
	"math"
	"strings"
	"time"

	"github.com/idemprint/idemprint/fingerprint"
	"github.com/idemprint/idemprint/policy"
)

// entry is one record of a Memory store, kept in fewer bytes than a
// policy.Record: a store of a million records holds a million of them,
// and each byte of a new one is memory a growing store touches for the
// first time. Times are Unix microseconds (what every store keeps) rather
// than time.Time, the status is an int16, the tenant and key are
// substrings of the storage key when they are spelled in it (as the
// engine's records always are, so they hold no string of their own), and
// the end of life and the key's hash are computed rather than kept. What
// does not fit, far holds. The record is written in place, under the
// shard's lock; callers get copies.
type entry struct {
	key    string // the StorageKey; "" in a free slot
	tenant string
	rkey   string // the record's Key
	route  string
	digest string // the SpecDigest
	intent []byte
	header policy.Header
	body   []byte
	far    *farFields
	gen    uint64
	// lease and expires are LeaseExpiry and ExpiresAt in Unix
	// microseconds, clamped to an int64 (far holds a time beyond it).
	lease, expires int64
	pos            int32 // in the shard's heap
	status         int16
	state          policy.State
	fp             fingerprint.Fingerprint
}

// farFields are a record's values that an entry's compact fields cannot
// hold: a time more than 292,000 years from 1970, a status beyond an
// int16. No record the engine writes has one.
type farFields struct {
	leaseExpiry, expiresAt time.Time // when far from 1970, else zero (never far)
	status                 int
}

// set writes rec into e at the precision every store keeps, with pos as
// its heap position, and returns the end of its life. The caller holds
// the shard's lock. set reads nothing of e: a new entry may lie in memory
// the process never touched, where a read before the write would cost a
// second page fault (the read maps the kernel's shared zero page, and
// the write then replaces it).
func (e *entry) set(rec *policy.Record, pos int32) int64 {
	key := rec.StorageKey
	*e = entry{
		key:     key,
		tenant:  within(key, rec.Tenant),
		rkey:    within(key, rec.Key),
		route:   rec.Route,
		digest:  rec.SpecDigest,
		intent:  rec.Intent,
		header:  rec.Header,
		body:    rec.Body,
		gen:     rec.Generation,
		lease:   micros(rec.LeaseExpiry),
		expires: micros(rec.ExpiresAt),
		pos:     pos,
		status:  int16(rec.Status),
		state:   rec.State,
		fp:      rec.Fingerprint,
	}
	farLease, farExpires := farTime(rec.LeaseExpiry), farTime(rec.ExpiresAt)
	if farLease || farExpires || int(e.status) != rec.Status {
		e.far = &farFields{status: rec.Status}
		if farLease {
			e.far.leaseExpiry = storeTime(rec.LeaseExpiry)
		}
		if farExpires {
			e.far.expiresAt = storeTime(rec.ExpiresAt)
		}
	}
	return e.end()
}

// within returns s, as a substring of key when key holds it, so that an
// entry keeps no string of its own for it.
func within(key, s string) string {
	if i := strings.Index(key, s); i >= 0 {
		return key[i : i+len(s)]
	}
	return s
}

// record returns a copy of the entry's record. The caller holds the
// shard's lock.
func (e *entry) record() *policy.Record {
	r := new(policy.Record)
	e.recordTo(r)
	return r
}

// recordTo writes the entry's record to r.
func (e *entry) recordTo(r *policy.Record) {
	*r = policy.Record{
		StorageKey:  e.key,
		Generation:  e.gen,
		Tenant:      e.tenant,
		Key:         e.rkey,
		Route:       e.route,
		State:       e.state,
		Fingerprint: e.fp,
		SpecDigest:  e.digest,
		Intent:      e.intent,
		LeaseExpiry: fromMicros(e.lease),
		ExpiresAt:   fromMicros(e.expires),
		Status:      int(e.status),
		Header:      e.header,
		Body:        e.body,
	}
	if f := e.far; f != nil {
		r.Status = f.status
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
	if e.far != nil || farTime(now) {
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
