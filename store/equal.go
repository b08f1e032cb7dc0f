package store

import (
	"bytes"
	"slices"
	"time"

	"github.com/idemprint/idemprint/policy"
)

// Equal reports whether two records are the same as a store keeps them:
// every field equal, times to the microsecond, a nil and an empty intent
// told apart (nil means none is kept), header fields compared one by one in a
// [policy.Header]'s order.
// A holder uses it to recognize its own write after a reply was lost.
func Equal(a, b *policy.Record) bool {
	return a.StorageKey == b.StorageKey && a.Generation == b.Generation && a.State == b.State &&
		sameTime(a.LeaseExpiry, b.LeaseExpiry) && sameTime(a.ExpiresAt, b.ExpiresAt) &&
		a.Tenant == b.Tenant && a.Key == b.Key && a.Route == b.Route &&
		a.Fingerprint == b.Fingerprint && a.SpecDigest == b.SpecDigest &&
		bytes.Equal(a.Intent, b.Intent) && (a.Intent == nil) == (b.Intent == nil) &&
		a.Status == b.Status && bytes.Equal(a.Body, b.Body) && sameHeader(a.Header, b.Header)
}

func sameTime(a, b time.Time) bool { return storeTime(a).Equal(storeTime(b)) }

// sameHeader compares two headers field by field, in a Header's order.
func sameHeader(a, b policy.Header) bool {
	return len(a) == len(b) && slices.Equal(a.Sorted(), b.Sorted())
}

// storeTime drops what a backend cannot keep: the monotonic reading, the
// location and nanoseconds below the microsecond.
func storeTime(t time.Time) time.Time { return t.Truncate(time.Microsecond).UTC() }
