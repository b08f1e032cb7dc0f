package store

import (
	"bytes"
	"net/http"
	"slices"
	"time"

	"github.com/idemprint/idemprint/policy"
)

// Equal reports whether two records are the same as a store keeps them:
// every field equal, times to the microsecond, a nil and an empty intent
// told apart (nil means none is kept), header values compared one by one.
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

// sameHeader compares two headers, ignoring names without values.
func sameHeader(a, b http.Header) bool {
	n := 0
	for k, v := range b {
		if len(v) == 0 {
			continue
		}
		n++
		if !slices.Equal(a[k], v) {
			return false
		}
	}
	for _, v := range a {
		if len(v) == 0 {
			n++
		}
	}
	return n == len(a)
}
