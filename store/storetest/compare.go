package storetest

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/idemprint/idemprint/policy"
)

// diff returns what differs between two records, as "field: want … got …"
// lines, or "" when they are equal. Times are compared to the microsecond,
// the precision every store keeps; a nil and an empty header, body or
// intent are different only for the intent, where nil means "not kept".
func diff(want, got *policy.Record) string {
	if want == nil || got == nil {
		if want == got {
			return ""
		}
		return fmt.Sprintf("record: want %s, got %s", describe(want), describe(got))
	}
	var b strings.Builder
	add := func(field string, w, g any) { fmt.Fprintf(&b, "\n\t%s: want %v, got %v", field, w, g) }
	if want.StorageKey != got.StorageKey {
		add("StorageKey", quote(want.StorageKey), quote(got.StorageKey))
	}
	if want.Generation != got.Generation {
		add("Generation", want.Generation, got.Generation)
	}
	if want.State != got.State {
		add("State", want.State, got.State)
	}
	if want.Tenant != got.Tenant {
		add("Tenant", quote(want.Tenant), quote(got.Tenant))
	}
	if want.Key != got.Key {
		add("Key", quote(want.Key), quote(got.Key))
	}
	if want.Route != got.Route {
		add("Route", want.Route, got.Route)
	}
	if want.Fingerprint != got.Fingerprint {
		add("Fingerprint", want.Fingerprint, got.Fingerprint)
	}
	if want.SpecDigest != got.SpecDigest {
		add("SpecDigest", want.SpecDigest, got.SpecDigest)
	}
	if !bytes.Equal(want.Intent, got.Intent) || (want.Intent == nil) != (got.Intent == nil) {
		add("Intent", quote(string(want.Intent)), quote(string(got.Intent)))
	}
	if !sameTime(want.LeaseExpiry, got.LeaseExpiry) {
		add("LeaseExpiry", want.LeaseExpiry, got.LeaseExpiry)
	}
	if !sameTime(want.ExpiresAt, got.ExpiresAt) {
		add("ExpiresAt", want.ExpiresAt, got.ExpiresAt)
	}
	if want.Status != got.Status {
		add("Status", want.Status, got.Status)
	}
	if d := headerDiff(want.Header, got.Header); d != "" {
		add("Header", "", d)
	}
	if !bytes.Equal(want.Body, got.Body) {
		add("Body", fmt.Sprintf("%d bytes", len(want.Body)), fmt.Sprintf("%d bytes (first difference at byte %d)", len(got.Body), firstDifference(want.Body, got.Body)))
	}
	return b.String()
}

// sameTime compares two times to the microsecond.
func sameTime(a, b time.Time) bool {
	return a.Truncate(time.Microsecond).Equal(b.Truncate(time.Microsecond))
}

// headerDiff describes how two headers differ, name by name, in a
// [policy.Header]'s order.
func headerDiff(want, got policy.Header) string {
	w, g := want.HTTP(), got.HTTP()
	var out []string
	names := map[string]bool{}
	for k := range w {
		names[k] = true
	}
	for k := range g {
		names[k] = true
	}
	for k := range names {
		if !slices.Equal(w[k], g[k]) {
			out = append(out, fmt.Sprintf("%s: want %q, got %q", k, w[k], g[k]))
		}
	}
	if out == nil && !slices.Equal(want.Sorted(), got.Sorted()) {
		out = append(out, fmt.Sprintf("want %q, got %q", want, got)) // names in another order
	}
	slices.Sort(out)
	return strings.Join(out, "; ")
}

func firstDifference(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// quote quotes s, shortened: storage keys and tenants may be long.
func quote(s string) string {
	if len(s) > 80 {
		return fmt.Sprintf("%q…(%d bytes)", s[:80], len(s))
	}
	return fmt.Sprintf("%q", s)
}
